/*  cli: the opening every fasgd program's main shares: -c FILE, repeated
    --set KEY=VALUE, --log-level, --version, no stray operands, and the
    messages and exit statuses for each (2 for bad usage, 1 for a bad
    configuration). fasgd-sim and fasgd-server use all of it, fasgd-client
    the parts it has (it takes no configuration file).  */
#ifndef FASGD_CLI_H_INCLUDED
#define FASGD_CLI_H_INCLUDED

#include "config.h"

#define FASGD_CLI_MAX_SETS 256
#define FASGD_CLI_EXIT_CONFIG 1
#define FASGD_CLI_EXIT_USAGE 2

typedef struct {
    const char *prog;                       /* "fasgd-sim": every message's prefix */
    const char *config;                     /* -c FILE, or NULL */
    const char *sets [FASGD_CLI_MAX_SETS];  /* --set KEY=VALUE, in order */
    int nsets;
    int dump;                               /* --dump-config */
} fasgd_cli_t;

/*  --set kv: 0, or FASGD_CLI_EXIT_USAGE after saying there are too many.  */
int fasgd_cli_add_set (fasgd_cli_t *self, const char *kv);

/*  --log-level name: the level, or -1 after naming the levels.  */
int fasgd_cli_log_level (const fasgd_cli_t *self, const char *name);

/*  --log-level name: sets the log's level; 0, or FASGD_CLI_EXIT_USAGE
    after naming the levels.  */
int fasgd_cli_log_level_set (const fasgd_cli_t *self, const char *name);

/*  An option getopt refused: says where help is; FASGD_CLI_EXIT_USAGE.  */
int fasgd_cli_bad_option (const fasgd_cli_t *self);

/*  --version: prints "PROG VERSION" on stdout; 0, the exit status.  */
int fasgd_cli_version (const fasgd_cli_t *self);

/*  After the options: 0 when no operand is left, else
    FASGD_CLI_EXIT_USAGE after naming the first.  */
int fasgd_cli_operands (const fasgd_cli_t *self, int argc, char **argv, int optind);

/*  After the options: 0 when no operand is left and -c was given, else
    FASGD_CLI_EXIT_USAGE after saying which.  */
int fasgd_cli_finish (const fasgd_cli_t *self, int argc, char **argv, int optind);

/*  The count of errors in the configuration: 0 for none, else
    FASGD_CLI_EXIT_CONFIG after saying how many.  */
int fasgd_cli_config_errors (const fasgd_cli_t *self, int errors);

/*  The configuration into cfg: the table's defaults, the -c file, then
    the --set options in order. The count of errors, each said on stderr.  */
int fasgd_cli_config_load (const fasgd_cli_t *self, const fasgd_cfg_key_t *table, void *cfg);

/*  --dump-config: when asked, prints the effective configuration as YAML
    on stdout and returns 1 (the program then exits 0); else 0.  */
int fasgd_cli_dump (const fasgd_cli_t *self, const fasgd_cfg_key_t *table, const void *cfg);

#endif
