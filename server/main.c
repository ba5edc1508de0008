/*  fasgd-server: the parameter server daemon. Runs in the foreground.  */
#include "server.h"

#include "cli.h"
#include "heap.h"
#include "log.h"

#include <cblas.h>
#include <czmq.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


static fasgd_server_t *s_server;
static volatile sig_atomic_t s_signal;

/*  SIGINT, SIGTERM and SIGHUP: stop cleanly, with a final checkpoint. A
    hangup (the terminal of a foreground server closing) must not lose the
    training since the last checkpoint.  */
static void
s_on_signal (int sig)
{
    s_signal = sig;
    if (s_server)
        fasgd_server_stop (s_server);
}

static void
s_usage (FILE *out)
{
    fputs (
        "Usage: fasgd-server -c FILE [OPTION]...\n"
        "Serve a model's parameters to asynchronous SGD clients over ZeroMQ, applying\n"
        "staleness-aware updates (FASGD) as gradients arrive.\n"
        "\n"
        "  -c, --config FILE      the server's YAML configuration (required)\n"
        "  -s, --set KEY=VALUE    override one configuration key (repeatable)\n"
        "  -n, --check            check the configuration and the data, then exit\n"
        "  -r, --resume           continue from checkpoint.file\n"
        "  -p, --port-file FILE   write the bound endpoints there (atomically) once listening:\n"
        "                         push=, fetch= and, unless control_endpoint is empty, control= lines\n"
        "                         (and metrics= when metrics.endpoint is set)\n"
        "      --log-level LEVEL  error, warn, notice (default), info or debug\n"
        "      --syslog           log to syslog instead of standard error\n"
        "      --keys             list every configuration key with its default and exit\n"
        "      --dump-config      print the effective configuration as YAML and exit\n"
        "  -h, --help             this help\n"
        "  -V, --version          the version\n"
        "\n"
        "SIGINT, SIGTERM and SIGHUP stop it cleanly after a final checkpoint. fasgd-ctl asks a\n"
        "running server for its status, for a checkpoint or to reload its allowlist of CURVE\n"
        "keys, on control_endpoint "
        "(tcp://127.0.0.1:5557).\n"
        "Exit status: 0 clean stop, 1 bad configuration, data or bind, 2 bad usage,\n"
        "3 the final checkpoint failed.\n"
        "Every configuration key, its default and bounds: fasgd-server --keys.\nThe wire protocol: proto/PROTOCOL.md in the source tree.\n", out);
}

static int
s_write_port_file (const char *path, const fasgd_server_t *server)
{
    /*  A file is replaced atomically; anything else that exists (a FIFO,
        /dev/stdout) is written in place, never replaced.  */
    char tmp [4096] = "";
    struct stat st;
    if (stat (path, &st) != 0 || S_ISREG (st.st_mode))
        snprintf (tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen (*tmp ? tmp : path, "w");
    if (!f)
        return -1;
    fprintf (f, "push=%s\nfetch=%s\n", fasgd_server_push_endpoint (server),
             fasgd_server_fetch_endpoint (server));
    if (*fasgd_server_control_endpoint (server))
        fprintf (f, "control=%s\n", fasgd_server_control_endpoint (server));
    if (*fasgd_server_metrics_endpoint (server))
        fprintf (f, "metrics=%s\n", fasgd_server_metrics_endpoint (server));
    if (fclose (f) != 0 || (*tmp && rename (tmp, path) != 0)) {
        if (*tmp)
            unlink (tmp);
        return -1;
    }
    return 0;
}

/*  What the command line asks beyond fasgd_cli's part.  */
typedef struct {
    const char *port_file, *level;      /* -p, --log-level: NULL when not given */
    int check, resume, use_syslog;
} s_opts_t;

/*  The command line into cli and o: -1 to go on, else the exit status
    (--help, --version, --keys, or bad usage after saying why).  */
static int
s_options (fasgd_cli_t *cli, s_opts_t *o, int argc, char **argv)
{
    static const struct option longopts [] = {
        { "config", required_argument, NULL, 'c' },
        { "set", required_argument, NULL, 's' },
        { "check", no_argument, NULL, 'n' },
        { "resume", no_argument, NULL, 'r' },
        { "port-file", required_argument, NULL, 'p' },
        { "log-level", required_argument, NULL, 'L' },
        { "syslog", no_argument, NULL, 'S' },
        { "keys", no_argument, NULL, 'K' },
        { "dump-config", no_argument, NULL, 'D' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    int opt, status;
    while ((opt = getopt_long (argc, argv, "c:s:nrp:hV", longopts, NULL)) != -1) {
        switch (opt) {
            case 'c': cli->config = optarg; break;
            case 's':
                if ((status = fasgd_cli_add_set (cli, optarg)) != 0)
                    return status;
                break;
            case 'n': o->check = 1; break;
            case 'r': o->resume = 1; break;
            case 'p': o->port_file = optarg; break;
            case 'L':
                /*  Checked now, applied with the configuration's log.level.  */
                if (fasgd_cli_log_level (cli, optarg) < 0)
                    return FASGD_CLI_EXIT_USAGE;
                o->level = optarg;
                break;
            case 'S': o->use_syslog = 1; break;
            case 'K': fasgd_config_describe (fasgd_server_cfg_keys, stdout); return 0;
            case 'D': cli->dump = 1; break;
            case 'h': s_usage (stdout); return 0;
            case 'V': return fasgd_cli_version (cli);
            default:
                return fasgd_cli_bad_option (cli);
        }
    }
    if ((status = fasgd_cli_finish (cli, argc, argv, optind)) != 0)
        return status;
    return -1;
}

/*  The configuration, checked, with --log-level, --syslog and --resume
    over it. Returns the count of errors, each said on stderr.  */
static int
s_config_load (const fasgd_cli_t *cli, const s_opts_t *o, fasgd_server_cfg_t *cfg)
{
    int errors = fasgd_cli_config_load (cli, fasgd_server_cfg_keys, cfg);
    errors += fasgd_server_cfg_validate (cfg, cli->config, stderr);
    if (o->level)
        cfg->log_level = fasgd_log_level_parse (o->level);
    if (o->use_syslog)
        cfg->log_syslog = 1;
    if (o->resume && !*cfg->checkpoint) {
        fprintf (stderr, "fasgd-server: --resume needs checkpoint.file in the configuration\n");
        errors++;
    }
    return errors;
}

/*  The process around the server: its log, the heap, czmq, BLAS.  */
static void
s_process_setup (const char *argv0, const fasgd_server_cfg_t *cfg)
{
    fasgd_log_open (argv0, cfg->log_syslog, (fasgd_log_level_t) cfg->log_level);
    fasgd_heap_keep_large_blocks ();     /* every push is a ZeroMQ malloc */
    /*  Signals are ours: czmq must not install its own handler.  */
    zsys_handler_set (NULL);
    zsys_init ();
    openblas_set_num_threads (1);
}

/*  -n: binds nothing; checks the configuration and loads the data (and
    with --resume the checkpoint). The exit status.  */
static int
s_check (const char *config, fasgd_server_cfg_t *cfg, int resume)
{
    snprintf (cfg->push_endpoint, sizeof cfg->push_endpoint, "inproc://check-push");
    snprintf (cfg->fetch_endpoint, sizeof cfg->fetch_endpoint, "inproc://check-fetch");
    cfg->control_endpoint [0] = 0;
    cfg->metrics_endpoint [0] = 0;
    cfg->csv [0] = 0;
    fasgd_server_t *server = fasgd_server_new (cfg, resume);
    if (!server)
        return 1;
    printf ("fasgd-server: %s: configuration OK\n", config);
    fasgd_server_destroy (&server);
    return 0;
}

/*  Serves until a signal, then stops with a final checkpoint: the exit
    status (1 no server or port file, 3 the final checkpoint failed).  */
static int
s_serve (const fasgd_server_cfg_t *cfg, const s_opts_t *o)
{
    fasgd_server_t *server = fasgd_server_new (cfg, o->resume);
    if (!server)
        return 1;
    s_server = server;
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGHUP, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);
    if (o->port_file && s_write_port_file (o->port_file, server) != 0) {
        fasgd_log_error ("cannot write the port file %s: %s", o->port_file, strerror (errno));
        s_server = NULL;
        fasgd_server_destroy (&server);
        return 1;
    }
    int rc = fasgd_server_run (server);
    s_server = NULL;
    if (s_signal)
        fasgd_log_notice ("stopped by %s", s_signal == SIGHUP ? "SIGHUP"
                          : s_signal == SIGINT ? "SIGINT" : "SIGTERM");
    fasgd_server_destroy (&server);
    return rc == 0 ? 0 : 3;
}

/*  The options, the configuration, the process, then -n's check or the
    service.  */
int
main (int argc, char **argv)
{
    static fasgd_cli_t cli = { .prog = "fasgd-server" };
    s_opts_t o = { 0 };
    fasgd_log_open (argv [0], 0, FASGD_LOG_NOTICE);
    int status = s_options (&cli, &o, argc, argv);
    if (status >= 0)
        return status;
    fasgd_server_cfg_t cfg;
    if ((status = fasgd_cli_config_errors (&cli, s_config_load (&cli, &o, &cfg))) != 0)
        return status;
    if (fasgd_cli_dump (&cli, fasgd_server_cfg_keys, &cfg))
        return 0;
    s_process_setup (argv [0], &cfg);
    status = o.check ? s_check (cli.config, &cfg, o.resume) : s_serve (&cfg, &o);
    zsys_shutdown ();
    return status;
}
