/*  cli: the programs' common option and configuration opening.  */
#include "cli.h"
#include "log.h"

#include <stdio.h>

int
fasgd_cli_add_set (fasgd_cli_t *self, const char *kv)
{
    if (self->nsets == FASGD_CLI_MAX_SETS) {
        fprintf (stderr, "%s: at most %d --set options\n", self->prog, FASGD_CLI_MAX_SETS);
        return FASGD_CLI_EXIT_USAGE;
    }
    self->sets [self->nsets++] = kv;
    return 0;
}

int
fasgd_cli_log_level (const fasgd_cli_t *self, const char *name)
{
    int level = fasgd_log_level_parse (name);
    if (level < 0)
        fprintf (stderr, "%s: unknown log level '%s' (error, warn, notice, info, debug)\n", self->prog, name);
    return level;
}

int
fasgd_cli_log_level_set (const fasgd_cli_t *self, const char *name)
{
    int level = fasgd_cli_log_level (self, name);
    if (level < 0)
        return FASGD_CLI_EXIT_USAGE;
    fasgd_log_set_level ((fasgd_log_level_t) level);
    return 0;
}

int
fasgd_cli_bad_option (const fasgd_cli_t *self)
{
    fprintf (stderr, "Try '%s --help'.\n", self->prog);
    return FASGD_CLI_EXIT_USAGE;
}

int
fasgd_cli_version (const fasgd_cli_t *self)
{
    printf ("%s %s\n", self->prog, PACKAGE_VERSION);
    return 0;
}

int
fasgd_cli_operands (const fasgd_cli_t *self, int argc, char **argv, int optind)
{
    if (optind < argc) {
        fprintf (stderr, "%s: unexpected argument '%s'\nTry '%s --help'.\n", self->prog, argv [optind], self->prog);
        return FASGD_CLI_EXIT_USAGE;
    }
    return 0;
}

int
fasgd_cli_finish (const fasgd_cli_t *self, int argc, char **argv, int optind)
{
    if (fasgd_cli_operands (self, argc, argv, optind) != 0)
        return FASGD_CLI_EXIT_USAGE;
    if (!self->config) {
        fprintf (stderr, "%s: a configuration file is required (-c FILE)\nTry '%s --help'.\n", self->prog, self->prog);
        return FASGD_CLI_EXIT_USAGE;
    }
    return 0;
}

int
fasgd_cli_config_errors (const fasgd_cli_t *self, int errors)
{
    if (!errors)
        return 0;
    fprintf (stderr, "%s: %d error%s in the configuration\n", self->prog, errors, errors == 1 ? "" : "s");
    return FASGD_CLI_EXIT_CONFIG;
}

int
fasgd_cli_config_load (const fasgd_cli_t *self, const fasgd_cfg_key_t *table, void *cfg)
{
    return fasgd_config_load_all (table, cfg, self->config, self->sets, self->nsets, stderr);
}

int
fasgd_cli_dump (const fasgd_cli_t *self, const fasgd_cfg_key_t *table, const void *cfg)
{
    if (!self->dump)
        return 0;
    fasgd_config_dump (table, cfg, stdout);
    return 1;
}
