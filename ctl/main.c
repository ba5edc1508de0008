/*  fasgd-ctl: asks a running fasgd-server how it is doing (STATUS), for
    a checkpoint now (CHECKPOINT) or to re-read its allowlist of CURVE
    keys (RELOAD), on the server's control socket; and makes CURVE
    certificates (keygen), which needs no server. The
    control protocol is specified in proto/PROTOCOL.md: one text frame
    each way, the reply a list of key=value lines headed by status=CODE.

    The endpoint comes from -e, from the server's own configuration file
    (-c, read through the same key table the server loads it with), or
    from the control= line of the server's --port-file (-p). -e and -p
    may name several servers, the shards of one model: each is asked in
    turn, and STATUS ends with a line for all of them together. Never waits
    longer than --timeout-ms for an answer. A CURVE server is asked with
    --server-key and --cert, or with the server's own certificate when
    its configuration names one this user can read.  */
#include "server.h"

#include "reply.h"
#include "cli.h"
#include "curve.h"
#include "log.h"
#include "shardmap.h"

#include <czmq.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_EXIT_OK       0
#define S_EXIT_SERVER   1       /* an error reply, a failed checkpoint, a malformed reply */
#define S_EXIT_USAGE    2
#define S_EXIT_TIMEOUT  3       /* no answer within the timeout */

#define S_DEFAULT_ENDPOINT "tcp://127.0.0.1:5557"
#define S_DEFAULT_TIMEOUT_MS 3000
#define S_MAX_SETS 64
#define S_MAX_SERVERS 64        /* -e or -p given this many times at most */

/*  STATUS of several servers (shards) summed.  */
typedef struct {
    int answered;
    double T_min, T_max, clients_max, update_rate, bytes_in_rate, bytes_out_rate, shards;
    unsigned char seen [FASGD_SHARDMAP_MAX];    /* shard indices answered */
    int distinct;
} s_total_t;

static void
s_total_add (s_total_t *t, const fasgd_ctl_reply_t *r)
{
    /*  Each shard counts its own T (the updates it applied): summed,
        they would count each step once per shard.  */
    double T = fasgd_ctl_reply_num (r, "T");
    if (t->answered == 0 || T < t->T_min)
        t->T_min = T;
    if (t->answered == 0 || T > t->T_max)
        t->T_max = T;
    t->answered++;
    if (fasgd_ctl_reply_num (r, "clients") > t->clients_max)
        t->clients_max = fasgd_ctl_reply_num (r, "clients");
    t->update_rate += fasgd_ctl_reply_num (r, "update_rate");
    t->bytes_in_rate += fasgd_ctl_reply_num (r, "bytes_in_rate");
    t->bytes_out_rate += fasgd_ctl_reply_num (r, "bytes_out_rate");
    double shards = fasgd_ctl_reply_num (r, "shards"), shard = fasgd_ctl_reply_num (r, "shard");
    if (shards > t->shards)
        t->shards = shards;
    if (shard >= 0 && shard < (double) sizeof t->seen && !t->seen [(int) shard]) {
        t->seen [(int) shard] = 1;
        t->distinct++;
    }
}

static void
s_total_print (const s_total_t *t, int asked)
{
    printf ("\nall %d servers: %d answered; ", asked, t->answered);
    if (t->T_min == t->T_max)
        printf ("T %.0f on each", t->T_min);
    else
        printf ("T %.0f to %.0f (each its own)", t->T_min, t->T_max);
    printf (", %.1f updates/s in all, %.0f B/s in, %.0f B/s out, at most %.0f clients on one",
            t->update_rate, t->bytes_in_rate, t->bytes_out_rate, t->clients_max);
    if (t->shards > 1)
        printf ("; shards: %d of %.0f answered", t->distinct, t->shards);
    printf ("\n");
}

static void
s_usage (FILE *out)
{
    fputs (
        "Usage: fasgd-ctl [-e ENDPOINT | -c SERVER.yaml | -p PORTFILE] [OPTION]... status|checkpoint|reload\n"
        "       fasgd-ctl keygen NAME\n"
        "Ask a running fasgd-server for its status, to write a checkpoint now or to\n"
        "re-read its allowlist, on its control socket; or make a CURVE certificate.\n"
        "\n"
        "Commands:\n"
        "  status                 clients, rates, bytes/s, staleness histogram, validation\n"
        "  checkpoint             write checkpoint.file now and report its timestamp\n"
        "  reload                 re-read security.curve.clients: keys added may join,\n"
        "                         clients whose key was removed are forgotten at once\n"
        "  keygen NAME            write a new key pair: NAME.key (public: give it to the\n"
        "                         other side) and NAME.key_secret (mode 600: keep it)\n"
        "\n"
        "Options:\n"
        "  -e, --endpoint ENDPOINT\n"
        "                         the control endpoint (default " S_DEFAULT_ENDPOINT ")\n"
        "  -c, --config FILE      take control_endpoint from the server's configuration\n"
        "                         (a * or 0.0.0.0 host is asked at 127.0.0.1)\n"
        "  -p, --port-file FILE   take the control= line of the server's --port-file\n"
        "                         -e and -p may be given up to 64 times, for the shards\n"
        "                         of one model: each is asked in turn (with --json, an\n"
        "                         array), and status ends with a line for all of them\n"
        "  -s, --set KEY=VALUE    override a key of the server's configuration, as\n"
        "                         fasgd-server --set does (repeatable; not with -e or -p)\n"
        "  -k, --server-key FILE  the server's public certificate (or its key in Z85), for a\n"
        "                         server with CURVE (default with -c: its server_cert)\n"
        "      --cert FILE        this operator's secret certificate, allowed by the\n"
        "                         server (default with -c: the server's own)\n"
        "  -j, --json             print the reply as one JSON object\n"
        "  -t, --timeout-ms MS    give up after MS milliseconds without an answer\n"
        "                         (default 3000)\n"
        "  -h, --help             this help\n"
        "  -V, --version          the version\n"
        "\n"
        "Exit status: 0 done, 1 the server refused or the checkpoint failed, 2 bad usage,\n"
        "3 no answer within the timeout.\n"
        "The control protocol: proto/PROTOCOL.md in the source tree.\n", out);
}

static int
s_usage_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

static int
s_usage_error (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fputs ("fasgd-ctl: ", stderr);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputs ("\nTry 'fasgd-ctl --help'.\n", stderr);
    return S_EXIT_USAGE;
}

/* ------------------------------------------------------------------ */
/*  Where to ask                                                        */

/*  A bind endpoint as one to connect to: a wildcard host becomes the
    loopback address. Returns 0, or -1 with the reason in err.  */
static int
s_connectable (const char *bound, char *out, size_t len, char *err, size_t errlen)
{
    if (strncmp (bound, "tcp://", 6) != 0) {
        snprintf (out, len, "%s", bound);
        return 0;
    }
    const char *host = bound + 6;
    const char *colon = strrchr (host, ':');
    if (!colon || colon == host || !colon [1]) {
        snprintf (err, errlen, "'%s' is not a tcp://HOST:PORT endpoint", bound);
        return -1;
    }
    const char *port = colon + 1;
    if (strspn (port, "0123456789") != strlen (port) || strcmp (port, "0") == 0) {
        snprintf (err, errlen, "'%s' has no fixed port (the server picks one when it starts): "
                  "read it from the server's port file with -p FILE", bound);
        return -1;
    }
    size_t hlen = (size_t) (colon - host);
    const char *use = NULL;
    if ((hlen == 1 && host [0] == '*') || (hlen == 7 && strncmp (host, "0.0.0.0", 7) == 0))
        use = "127.0.0.1";
    else if ((hlen == 4 && strncmp (host, "[::]", 4) == 0) || (hlen == 3 && strncmp (host, "[*]", 3) == 0))
        use = "[::1]";
    int k = use ? snprintf (out, len, "tcp://%s:%s", use, port) : snprintf (out, len, "%s", bound);
    if (k < 0 || (size_t) k >= len) {
        snprintf (err, errlen, "endpoint '%s' is too long", bound);
        return -1;
    }
    return 0;
}

/*  The control= line of a port file.  */
static int
s_endpoint_from_port_file (const char *path, char *out, size_t len)
{
    FILE *f = fopen (path, "r");
    if (!f) {
        int e = errno;
        char shown [8192];
        fprintf (stderr, "fasgd-ctl: cannot read the port file %s: %s\n",
                 fasgd_path_shown (path, shown, sizeof shown), strerror (e));
        return -1;
    }
    char line [1024];
    int found = 0;
    while (!found && fgets (line, sizeof line, f)) {
        line [strcspn (line, "\r\n")] = 0;
        if (strncmp (line, "control=", 8) == 0 && line [8]) {
            snprintf (out, len, "%s", line + 8);
            found = 1;
        }
    }
    fclose (f);
    if (!found)
        fprintf (stderr, "fasgd-ctl: %s has no control= line (the server's control_endpoint is empty, "
                 "or it is an older server)\n", path);
    return found ? 0 : -1;
}

/*  control_endpoint of the server's configuration: its defaults, the file
    (when given) and the overrides, checked exactly as the server checks
    them.  */
static int
s_endpoint_from_config (const char *path, const char *const *sets, int nsets, char *out, size_t len,
                        char *cert, size_t cert_len)
{
    fasgd_server_cfg_t *cfg = malloc (sizeof *cfg);
    if (!cfg) {
        fputs ("fasgd-ctl: out of memory\n", stderr);
        return -1;
    }
    int errors;
    if (path)
        errors = fasgd_config_load_all (fasgd_server_cfg_keys, cfg, path, sets, nsets, stderr);
    else {
        errors = fasgd_config_defaults (fasgd_server_cfg_keys, cfg, stderr);
        for (int i = 0; i < nsets; i++)
            errors += fasgd_config_set (fasgd_server_cfg_keys, cfg, sets [i], stderr);
    }
    int rc = -1;
    char err [600];
    if (errors)
        fprintf (stderr, "fasgd-ctl: %d error%s in the server's configuration\n", errors, errors == 1 ? "" : "s");
    else if (!*cfg->control_endpoint)
        fprintf (stderr, "fasgd-ctl: control_endpoint is empty%s%s: that server has no control socket\n",
                 path ? " in " : "", path ? path : "");
    else if (s_connectable (cfg->control_endpoint, out, len, err, sizeof err) != 0)
        fprintf (stderr, "fasgd-ctl: control_endpoint%s%s: %s\n", path ? " in " : "", path ? path : "", err);
    else {
        snprintf (cert, cert_len, "%s", cfg->curve_cert);
        rc = 0;
    }
    free (cfg);
    return rc;
}

/* ------------------------------------------------------------------ */
/*  Asking                                                              */

/*  CURVE, when server_key is not empty.  */
typedef struct {
    char server_key [FASGD_CURVE_KEY_LEN + 1];
    zcert_t *cert;
} s_curve_t;

/*  Sends command and waits up to timeout_ms for the reply, returned as a
    NUL-terminated copy in *reply_p (the caller frees it). Returns 0,
    S_EXIT_TIMEOUT or S_EXIT_SERVER after saying why: a failed CURVE
    handshake is said at once.  */
static int
s_ask (const char *endpoint, const s_curve_t *curve, const char *command, int timeout_ms, char **reply_p,
       size_t *len_p)
{
    *reply_p = NULL;
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    if (!sock) {
        fprintf (stderr, "fasgd-ctl: cannot create a ZeroMQ socket: %s\n", zmq_strerror (zmq_errno ()));
        return S_EXIT_SERVER;
    }
    zsock_set_linger (sock, 0);
    zsock_set_sndtimeo (sock, timeout_ms);
    if (strchr (endpoint, '['))
        zsock_set_ipv6 (sock, 1);
    if (*curve->server_key) {
        zcert_apply (curve->cert, sock);
        zsock_set_curve_serverkey (sock, curve->server_key);
    }
    zsock_t *monitor = NULL;
    if (fasgd_curve_monitor (sock, ZMQ_EVENT_HANDSHAKE_SUCCEEDED, &monitor) != 0) {
        fprintf (stderr, "fasgd-ctl: cannot watch the connection: %s\n", zmq_strerror (zmq_errno ()));
        zsock_destroy (&sock);
        return S_EXIT_SERVER;
    }
    if (zsock_connect (sock, "%s", endpoint) < 0) {
        fprintf (stderr, "fasgd-ctl: cannot connect to '%s': %s (an endpoint looks like tcp://HOST:PORT)\n",
                 endpoint, zmq_strerror (zmq_errno ()));
        fasgd_curve_monitor_stop (sock, &monitor);
        zsock_destroy (&sock);
        return S_EXIT_USAGE;
    }
    int64_t deadline = zclock_mono () + timeout_ms;
    void *raw = zsock_resolve (sock);
    if (zmq_send (raw, command, strlen (command), 0) < 0) {
        int e = zmq_errno ();
        fprintf (stderr, "fasgd-ctl: cannot send %s to %s: %s\n", command, endpoint,
                 e == EAGAIN ? "timed out" : zmq_strerror (e));
        fasgd_curve_monitor_stop (sock, &monitor);
        zsock_destroy (&sock);
        return e == EAGAIN ? S_EXIT_TIMEOUT : S_EXIT_SERVER;
    }
    zmq_pollitem_t items [2] = { { raw, 0, ZMQ_POLLIN, 0 }, { zsock_resolve (monitor), 0, ZMQ_POLLIN, 0 } };
    int ready = 0, drops = 0;
    const char *why = NULL;
    while (!why) {
        int64_t left = deadline - zclock_mono ();
        if (left <= 0)
            break;
        int rc = zmq_poll (items, 2, (long) left);
        if (rc > 0 && (items [0].revents & ZMQ_POLLIN)) {
            ready = 1;
            break;
        }
        int event;
        uint32_t value;
        while (!why && fasgd_curve_event_recv (monitor, &event, &value) == 0)
            why = fasgd_curve_judge (event, value, *curve->server_key != 0, &drops);
        if (rc < 0 && zmq_errno () != EINTR)
            break;
    }
    fasgd_curve_monitor_stop (sock, &monitor);
    if (why && !*curve->server_key)
        /*  Without a key of its own, a handshake fails only when the
            server requires CURVE, or turns the connection away.  */
        fprintf (stderr, "fasgd-ctl: %s: the server requires CURVE (or turned the connection away: "
                 "limits.connections): ask it with -c SERVER.yaml (its server_cert, on the server's host) "
                 "or with --server-key SERVER.key --cert OPERATOR.key_secret (a key it allows)\n", endpoint);
    else if (why)
        fprintf (stderr, "fasgd-ctl: %s: %s\n", endpoint, why);
    if (why) {
        zsock_destroy (&sock);
        return S_EXIT_SERVER;
    }
    if (!ready) {
        fprintf (stderr, "fasgd-ctl: no answer from %s within %d ms (is fasgd-server running, with "
                 "control_endpoint there?)\n", endpoint, timeout_ms);
        zsock_destroy (&sock);
        return S_EXIT_TIMEOUT;
    }
    /*  One frame: a server that speaks the protocol sends nothing else.  */
    zmq_msg_t m;
    int frames = 0, rc = 0, more = 1;
    while (more) {
        zmq_msg_init (&m);
        if (zmq_msg_recv (&m, raw, frames ? 0 : ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&m);
            fprintf (stderr, "fasgd-ctl: reading the reply: %s\n", zmq_strerror (zmq_errno ()));
            rc = S_EXIT_SERVER;
            break;
        }
        more = zmq_msg_more (&m);
        if (frames++ == 0) {
            size_t len = zmq_msg_size (&m);
            char *copy = malloc (len + 1);
            if (!copy) {
                fputs ("fasgd-ctl: out of memory for the reply\n", stderr);
                rc = S_EXIT_SERVER;
            }
            else {
                memcpy (copy, zmq_msg_data (&m), len);
                copy [len] = 0;
                *reply_p = copy;
                *len_p = len;
            }
        }
        zmq_msg_close (&m);
    }
    if (rc == 0 && frames != 1) {
        fprintf (stderr, "fasgd-ctl: malformed reply from %s: %d frames, not 1\n", endpoint, frames);
        rc = S_EXIT_SERVER;
    }
    if (rc != 0) {
        free (*reply_p);
        *reply_p = NULL;
    }
    zsock_destroy (&sock);
    return rc;
}

/* ------------------------------------------------------------------ */

/*  Asks one server and prints its answer (in_array: a JSON array's item,
    null when there is no answer); 0, or an exit status.  */
static int
s_one (const char *ep, const s_curve_t *curve, const char *command, int timeout_ms, int json, int in_array,
       s_total_t *total)
{
    char *text = NULL;
    size_t len = 0;
    fasgd_ctl_reply_t r = { 0 };
    int status = -1;
    int rc = s_ask (ep, curve, command, timeout_ms, &text, &len);
    if (rc == 0 && fasgd_ctl_reply_parse (text, len, &r) != 0) {
        r.kv = NULL;                    /* the parser freed what it took */
        rc = S_EXIT_SERVER;
    }
    else
    if (rc == 0 && (status = fasgd_ctl_reply_status (&r)) < 0) {
        fprintf (stderr, "fasgd-ctl: malformed reply from %s: it does not start with status=CODE\n", ep);
        rc = S_EXIT_SERVER;
    }
    if (status < 0) {
        /*  No answer to print: in an array, its place says so.  */
        if (json && in_array)
            printf ("null\n");
    }
    else {
        if (json)
            fasgd_ctl_reply_print_json (stdout, &r, ep, status == 200 && !strcmp (command, "STATUS"));
        if (status != 200) {
            char why [300];
            const char *error = fasgd_ctl_reply_get (&r, "error");
            fprintf (stderr, "fasgd-ctl: %s refused %s: %d %s\n", ep, command, status,
                     fasgd_ctl_reply_safe (error ? error : "(no reason given)", 280, why, sizeof why));
            rc = S_EXIT_SERVER;
        }
        else if (!strcmp (command, "STATUS")) {
            s_total_add (total, &r);
            if (!json)
                fasgd_ctl_reply_print_status (&r, ep);
        }
        else if (!json && !strcmp (command, "RELOAD")) {
            printf ("allowlist reloaded: %.0f keys allowed, %.0f clients revoked",
                    fasgd_ctl_reply_num (&r, "allowed_keys"), fasgd_ctl_reply_num (&r, "revoked"));
            /*  A server with guard.trusted reads those keys again too.  */
            if (fasgd_ctl_reply_num (&r, "trusted_keys") > 0)
                printf (", %.0f keys trusted", fasgd_ctl_reply_num (&r, "trusted_keys"));
            printf ("\n");
        }
        else if (!json) {
            char file [FASGD_PATH_LEN];
            printf ("checkpoint written to %s at T=%.0f in %.3f s\n",
                    fasgd_ctl_reply_safe (fasgd_ctl_reply_get (&r, "file"), sizeof file - 1, file, sizeof file),
                    fasgd_ctl_reply_num (&r, "T"), fasgd_ctl_reply_num (&r, "seconds"));
        }
    }
    free (r.kv);
    free (text);
    return rc;
}

/*  What the command line asks.  */
typedef struct {
    const char *endpoints [S_MAX_SERVERS], *port_files [S_MAX_SERVERS];
    int nendpoints, nport_files;
    const char *config, *server_key, *cert;
    const char *sets [S_MAX_SETS];
    int nsets, json, timeout_ms;
    const char *command;                /* STATUS, CHECKPOINT or RELOAD */
} s_args_t;

/*  One option into a: -1 to go on, else the exit status after saying
    what is wrong.  */
static int
s_option (s_args_t *a, int opt, char **argv)
{
    switch (opt) {
        case 'k': a->server_key = optarg; break;
        case 'C': a->cert = optarg; break;
        case 'e':
            if (a->nendpoints == S_MAX_SERVERS)
                return s_usage_error ("-e at most %d times", S_MAX_SERVERS);
            a->endpoints [a->nendpoints++] = optarg;
            break;
        case 'c': a->config = optarg; break;
        case 'p':
            if (a->nport_files == S_MAX_SERVERS)
                return s_usage_error ("-p at most %d times", S_MAX_SERVERS);
            a->port_files [a->nport_files++] = optarg;
            break;
        case 's':
            if (a->nsets == S_MAX_SETS)
                return s_usage_error ("at most %d --set options", S_MAX_SETS);
            if (!strchr (optarg, '='))
                return s_usage_error ("--set takes KEY=VALUE (got '%s')", optarg);
            a->sets [a->nsets++] = optarg;
            break;
        case 'j': a->json = 1; break;
        case 't': {
            char *end;
            errno = 0;
            long v = strtol (optarg, &end, 10);
            if (errno || end == optarg || *end || v < 1 || v > 86400000)
                return s_usage_error ("--timeout-ms takes milliseconds from 1 to 86400000 (got '%s')", optarg);
            a->timeout_ms = (int) v;
            break;
        }
        case 'h': s_usage (stdout); return S_EXIT_OK;
        case 'V': {
            static const fasgd_cli_t cli = { .prog = "fasgd-ctl" };
            return fasgd_cli_version (&cli);
        }
        case ':': return s_usage_error ("option '%s' needs an argument", argv [optind - 1]);
        default:
            if (optopt)
                return s_usage_error ("unknown option '-%c'", optopt);
            return s_usage_error ("unknown option '%s'", argv [optind - 1]);
    }
    return -1;
}

/*  The options into a: -1 to go on, else the exit status. fasgd-ctl's
    opening is its own, not fasgd_cli's: -c is optional, every usage error
    ends with the --help hint (getopt's own messages are off for that),
    and --set is checked for KEY=VALUE before any configuration is read.  */
static int
s_options (s_args_t *a, int argc, char **argv)
{
    static const struct option longopts [] = {
        { "endpoint", required_argument, NULL, 'e' },
        { "config", required_argument, NULL, 'c' },
        { "port-file", required_argument, NULL, 'p' },
        { "set", required_argument, NULL, 's' },
        { "json", no_argument, NULL, 'j' },
        { "server-key", required_argument, NULL, 'k' },
        { "cert", required_argument, NULL, 'C' },
        { "timeout-ms", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    int opt, status;
    opterr = 0;
    while ((opt = getopt_long (argc, argv, ":e:c:p:s:jk:t:hV", longopts, NULL)) != -1)
        if ((status = s_option (a, opt, argv)) >= 0)
            return status;
    if (optind >= argc)
        return s_usage_error ("a command is required: status, checkpoint, reload or keygen");
    return -1;
}

/*  keygen NAME: writes NAME.key and NAME.key_secret; the exit status.  */
static int
s_keygen (int argc, char **argv)
{
    if (optind + 2 != argc)
        return s_usage_error ("keygen takes one NAME: it writes NAME.key and NAME.key_secret");
    char path [FASGD_PATH_LEN], err [FASGD_PATH_LEN + 128];
    const char *name = argv [optind + 1];
    size_t n = strlen (name);
    if (!n || snprintf (path, sizeof path, "%s%s", name,
                        n > 4 && !strcmp (name + n - 4, ".key") ? "" : ".key") >= (int) sizeof path)
        return s_usage_error ("keygen: NAME must be a file name of at most %d bytes", FASGD_PATH_LEN - 12);
    zsys_handler_set (NULL);
    int rc = fasgd_curve_keygen (path, err, sizeof err);
    zsys_shutdown ();
    if (rc != 0) {
        fprintf (stderr, "fasgd-ctl: keygen: %s\n", err);
        return S_EXIT_SERVER;
    }
    printf ("wrote %s (public: for the allowlist or the clients) and %s_secret (secret: keep it)\n", path, path);
    return S_EXIT_OK;
}

/*  The server command (a->command) and the options that go with it: -1
    to go on, else S_EXIT_USAGE after saying why.  */
static int
s_command (s_args_t *a, int argc, char **argv)
{
    if (optind + 1 < argc)
        return s_usage_error ("one command at a time (got '%s' after '%s')", argv [optind + 1], argv [optind]);
    if (!strcmp (argv [optind], "status"))
        a->command = "STATUS";
    else if (!strcmp (argv [optind], "checkpoint"))
        a->command = "CHECKPOINT";
    else if (!strcmp (argv [optind], "reload"))
        a->command = "RELOAD";
    else
        return s_usage_error ("unknown command '%s' (status, checkpoint, reload or keygen)", argv [optind]);
    if (a->cert && !a->server_key)
        return s_usage_error ("--cert needs --server-key: the server's public certificate");
    if (!!a->nendpoints + !!a->config + !!a->nport_files > 1)
        return s_usage_error ("-e, -c and -p each name the endpoint: give one kind of them");
    if (a->nsets && (a->nendpoints || a->nport_files))
        return s_usage_error ("--set changes the server's configuration: use it with -c, or alone");
    return -1;
}

/*  The endpoints to ask, from -e, -p or the configuration, into eps
    (*neps of them); with the configuration, its server certificate into
    server_cert. -1 to go on, else S_EXIT_USAGE after saying why.  */
static int
s_endpoints (const s_args_t *a, char eps [][1024], int *neps, char *server_cert, size_t cert_len)
{
    *neps = 1;
    if (a->nendpoints) {
        for (int i = 0; i < a->nendpoints; i++) {
            if (!*a->endpoints [i])
                return s_usage_error ("-e needs an endpoint such as " S_DEFAULT_ENDPOINT);
            snprintf (eps [i], 1024, "%s", a->endpoints [i]);
        }
        *neps = a->nendpoints;
    }
    else if (a->nport_files) {
        for (int i = 0; i < a->nport_files; i++)
            if (s_endpoint_from_port_file (a->port_files [i], eps [i], 1024) != 0)
                return S_EXIT_USAGE;
        *neps = a->nport_files;
    }
    else if (s_endpoint_from_config (a->config, a->sets, a->nsets, eps [0], 1024, server_cert, cert_len) != 0)
        return S_EXIT_USAGE;
    return -1;
}

/*  CURVE's keys when the server speaks it: --server-key and --cert, else
    the server's own certificate (server_cert, from its configuration),
    which serves its operator on its host. -1 to go on, else S_EXIT_USAGE
    after saying why.  */
static int
s_curve_load (const s_args_t *a, const char *server_cert, s_curve_t *curve)
{
    const char *server_key = a->server_key, *cert = a->cert;
    if (!server_key && *server_cert)
        server_key = cert = server_cert;
    if (!server_key)
        return -1;
    char err [FASGD_PATH_LEN + 128];
    if (fasgd_curve_public_key_load (server_key, curve->server_key, err, sizeof err) != 0) {
        fprintf (stderr, "fasgd-ctl: --server-key: %s\n", err);
        return S_EXIT_USAGE;
    }
    curve->cert = cert ? fasgd_curve_secret_cert_load (cert, err, sizeof err) : zcert_new ();
    if (!curve->cert) {
        fprintf (stderr, "fasgd-ctl: %s: %s%s\n", cert == server_cert ? "the server's certificate" : "--cert",
                 err, cert == server_cert ? " (give --server-key and --cert)" : "");
        return S_EXIT_USAGE;
    }
    return -1;
}

/*  Asks every server in turn and prints their answers (with --json, an
    array of them when several): the worst exit status, no answer (3)
    over a refusal (1).  */
static int
s_ask_all (const s_args_t *a, char eps [][1024], int neps, const s_curve_t *curve)
{
    int rc = 0;
    s_total_t total;
    memset (&total, 0, sizeof total);
    if (a->json && neps > 1)
        printf ("[\n");
    for (int i = 0; i < neps; i++) {
        if (!a->json && neps > 1 && i > 0)
            printf ("\n");
        int one = s_one (eps [i], curve, a->command, a->timeout_ms, a->json, neps > 1, &total);
        if (a->json && neps > 1 && i + 1 < neps)
            printf (",\n");
        if (one > rc)
            rc = one;
    }
    if (a->json && neps > 1)
        printf ("]\n");
    if (!a->json && neps > 1 && !strcmp (a->command, "STATUS"))
        s_total_print (&total, neps);
    return rc;
}

/*  Each step returns -1 to go on, or the exit status it ends with.  */
int
main (int argc, char **argv)
{
    static s_args_t a = { .timeout_ms = S_DEFAULT_TIMEOUT_MS };
    int status = s_options (&a, argc, argv);
    if (status >= 0)
        return status;
    if (!strcmp (argv [optind], "keygen"))
        return s_keygen (argc, argv);
    if ((status = s_command (&a, argc, argv)) >= 0)
        return status;
    static char eps [S_MAX_SERVERS][1024];
    int neps;
    char server_cert [FASGD_PATH_LEN] = "";
    if ((status = s_endpoints (&a, eps, &neps, server_cert, sizeof server_cert)) >= 0)
        return status;
    /*  Signals keep their default meaning: czmq must not take SIGINT.  */
    zsys_handler_set (NULL);
    s_curve_t curve = { "", NULL };
    if ((status = s_curve_load (&a, server_cert, &curve)) >= 0)
        return status;
    int rc = s_ask_all (&a, eps, neps, &curve);
    zcert_destroy (&curve.cert);
    zsys_shutdown ();
    if (fflush (stdout) != 0 || ferror (stdout)) {
        fprintf (stderr, "fasgd-ctl: writing the output: %s\n", strerror (errno));
        rc = rc ? rc : S_EXIT_SERVER;
    }
    return rc;
}
