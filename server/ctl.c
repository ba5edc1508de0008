/*  fasgd-ctl: asks a running fasgd-server how it is doing (STATUS), for
    a checkpoint now (CHECKPOINT) or to re-read its allowlist of CURVE
    keys (RELOAD), on the server's control socket; and makes CURVE
    certificates (keygen), which needs no server. The
    control protocol is specified in proto/PROTOCOL.md: one text frame
    each way, the reply a list of key=value lines headed by status=CODE.

    The endpoint comes from -e, from the server's own configuration file
    (-c, read through the same key table the server loads it with), or
    from the control= line of the server's --port-file (-p). Never waits
    longer than --timeout-ms for an answer. A CURVE server is asked with
    --server-key and --cert, or with the server's own certificate when
    its configuration names one this user can read.  */
#include "server.h"

#include "curve.h"

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
#define S_TAU_BAR 40            /* width of the fullest histogram bar */

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
    if (strspn (port, "0123456789") != strlen (port)) {
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
        fprintf (stderr, "fasgd-ctl: cannot read the port file %s: %s\n", path, strerror (errno));
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
    if (why) {
        fprintf (stderr, "fasgd-ctl: %s: %s\n", endpoint, why);
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
/*  The reply: key=value lines                                          */

typedef struct {
    const char *key, *value;
} s_kv_t;

typedef struct {
    s_kv_t *kv;
    size_t n;
} s_reply_t;

/*  Splits text (modified in place) into its lines. Returns 0, or -1 after
    saying which line is not key=value.  */
static int
s_reply_parse (char *text, size_t len, s_reply_t *r)
{
    r->kv = NULL;
    r->n = 0;
    if (memchr (text, 0, len)) {
        fputs ("fasgd-ctl: malformed reply: it holds a NUL byte\n", stderr);
        return -1;
    }
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text [i] == '\n';
    if (!(r->kv = calloc (lines, sizeof *r->kv))) {
        fputs ("fasgd-ctl: out of memory for the reply\n", stderr);
        return -1;
    }
    char *line = text;
    for (size_t no = 1; line && *line; no++) {
        char *nl = strchr (line, '\n');
        if (nl)
            *nl = 0;
        size_t l = strlen (line);
        if (l > 0 && line [l - 1] == '\r')
            line [--l] = 0;
        if (l > 0) {
            char *eq = strchr (line, '=');
            if (!eq || eq == line) {
                fprintf (stderr, "fasgd-ctl: malformed reply: line %zu is not key=value\n", no);
                free (r->kv);
                r->kv = NULL;
                return -1;
            }
            *eq = 0;
            r->kv [r->n].key = line;
            r->kv [r->n].value = eq + 1;
            r->n++;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

static const char *
s_get (const s_reply_t *r, const char *key)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp (r->kv [i].key, key) == 0)
            return r->kv [i].value;
    return NULL;
}

static double
s_num (const s_reply_t *r, const char *key)
{
    const char *v = s_get (r, key);
    if (!v || !*v)
        return NAN;
    char *end;
    double d = strtod (v, &end);
    return *end ? NAN : d;
}

/*  The status code of the first line; -1 when there is none.  */
static int
s_reply_status (const s_reply_t *r)
{
    if (r->n == 0 || strcmp (r->kv [0].key, "status") != 0)
        return -1;
    char *end;
    errno = 0;
    long code = strtol (r->kv [0].value, &end, 10);
    if (errno || *end || end == r->kv [0].value || code < 100 || code > 999)
        return -1;
    return (int) code;
}

/* ------------------------------------------------------------------ */
/*  JSON                                                                */

/*  A JSON string: quotes, backslashes and control characters escaped,
    and any byte that is not part of well-formed UTF-8 replaced by
    U+FFFD, so the output is valid JSON whatever the server sent.  */
static void
s_json_string (FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *) s;
    fputc ('"', out);
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            fputc ('\\', out);
            fputc (c, out);
            p++;
        }
        else if (c == '\n') { fputs ("\\n", out); p++; }
        else if (c == '\t') { fputs ("\\t", out); p++; }
        else if (c == '\r') { fputs ("\\r", out); p++; }
        else if (c < 0x20 || c == 0x7f) {
            fprintf (out, "\\u%04x", c);
            p++;
        }
        else if (c < 0x80) {
            fputc (c, out);
            p++;
        }
        else {
            /*  The length of the sequence c starts, and the smallest code
                point it may encode (overlong forms are invalid).  */
            int n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
            unsigned long cp = n == 2 ? c & 0x1fu : n == 3 ? c & 0x0fu : c & 0x07u;
            int ok = n > 0;
            for (int i = 1; ok && i < n; i++) {
                if ((p [i] & 0xc0) != 0x80)
                    ok = 0;
                else
                    cp = (cp << 6) | (p [i] & 0x3fu);
            }
            if (ok && ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)
                       || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)))
                ok = 0;
            if (ok) {
                fwrite (p, 1, (size_t) n, out);
                p += n;
            }
            else {
                fputs ("\\ufffd", out);
                p++;
            }
        }
    }
    fputc ('"', out);
}

/*  1 when s is a number as JSON writes them.  */
static int
s_json_number_ok (const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return 0;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == 0;
}

/*  Values that are text whatever they look like: a client named 42 is
    still called "42".  */
static int
s_is_text_key (const char *key)
{
    static const char *const text [] = { "version", "rule", "name", "error", "file", "checkpoint_file", "security",
                                         "key", "key_name", NULL };
    for (int i = 0; text [i]; i++)
        if (strcmp (key, text [i]) == 0)
            return 1;
    return 0;
}

static void
s_json_value (FILE *out, const char *key, const char *value)
{
    if (s_is_text_key (key))
        s_json_string (out, value);
    else if (s_json_number_ok (value))
        fputs (value, out);
    else if (!strcmp (value, "nan") || !strcmp (value, "-nan") || !strcmp (value, "inf")
             || !strcmp (value, "-inf"))
        fputs ("null", out);            /* JSON has no NaN or infinity */
    else
        s_json_string (out, value);
}

/*  "client.ID.FIELD": ID into *id, the field returned; NULL otherwise.  */
static const char *
s_client_key (const char *key, unsigned long *id)
{
    if (strncmp (key, "client.", 7) != 0 || !(key [7] >= '0' && key [7] <= '9'))
        return NULL;
    char *end;
    errno = 0;
    unsigned long v = strtoul (key + 7, &end, 10);
    if (errno || *end != '.' || !end [1])
        return NULL;
    *id = v;
    return end + 1;
}

/*  Whether key i of the reply is the first of a client's keys (the
    server lists a client's keys together, but a reader need not rely on
    it): 1 with the client's id in *id, 0 otherwise.  */
static int
s_client_first_key (const s_reply_t *r, size_t i, unsigned long *id)
{
    unsigned long other;
    if (!s_client_key (r->kv [i].key, id))
        return 0;
    for (size_t j = 0; j < i; j++)
        if (s_client_key (r->kv [j].key, &other) && other == *id)
            return 0;
    return 1;
}

/*  "tau.LO", "tau.LO-HI" or "tau.LO+": the bucket's bounds (hi -1: no
    bound). Returns 0, or -1 for any other key.  */
static int
s_tau_key (const char *key, unsigned long long *lo, long long *hi)
{
    if (strncmp (key, "tau.", 4) != 0 || !(key [4] >= '0' && key [4] <= '9'))
        return -1;
    char *end;
    errno = 0;
    *lo = strtoull (key + 4, &end, 10);
    if (errno)
        return -1;
    if (*end == 0) {
        *hi = (long long) *lo;
        return 0;
    }
    if (end [0] == '+' && end [1] == 0) {
        *hi = -1;
        return 0;
    }
    if (*end != '-' || !(end [1] >= '0' && end [1] <= '9'))
        return -1;
    char *end2;
    *hi = strtoll (end + 1, &end2, 10);
    return errno || *end2 ? -1 : 0;
}

/*  The whole reply as one object: plain keys as members, in the order
    the server sent them; for STATUS (arrays), client.ID.* as the array
    "per_client" and tau.* as the array "tau_histogram".  */
static void
s_print_json (FILE *out, const s_reply_t *r, const char *endpoint, int arrays)
{
    fputs ("{\n  \"endpoint\": ", out);
    s_json_string (out, endpoint);
    for (size_t i = 0; i < r->n; i++) {
        const char *key = r->kv [i].key;
        unsigned long id;
        unsigned long long lo;
        long long hi;
        if (s_client_key (key, &id) || s_tau_key (key, &lo, &hi) == 0 || !strcmp (key, "endpoint"))
            continue;
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = strcmp (r->kv [j].key, key) == 0;
        if (dup)
            continue;
        fputs (",\n  ", out);
        s_json_string (out, key);
        fputs (": ", out);
        s_json_value (out, key, r->kv [i].value);
    }
    if (!arrays) {
        fputs ("\n}\n", out);
        return;
    }
    /*  Clients: in the order their first key came.  */
    fputs (",\n  \"per_client\": [", out);
    int first_client = 1;
    for (size_t i = 0; i < r->n; i++) {
        unsigned long id, other;
        if (!s_client_first_key (r, i, &id))
            continue;
        fprintf (out, "%s\n    { \"id\": %lu", first_client ? "" : ",", id);
        first_client = 0;
        for (size_t j = i; j < r->n; j++) {
            const char *field = s_client_key (r->kv [j].key, &other);
            if (!field || other != id || !strcmp (field, "id"))
                continue;
            fputs (", ", out);
            s_json_string (out, field);
            fputs (": ", out);
            s_json_value (out, field, r->kv [j].value);
        }
        fputs (" }", out);
    }
    fputs (first_client ? "]" : "\n  ]", out);
    fputs (",\n  \"tau_histogram\": [", out);
    int first_bucket = 1;
    for (size_t i = 0; i < r->n; i++) {
        unsigned long long lo;
        long long hi;
        if (s_tau_key (r->kv [i].key, &lo, &hi) != 0)
            continue;
        fprintf (out, "%s\n    { \"bucket\": ", first_bucket ? "" : ",");
        s_json_string (out, r->kv [i].key + 4);
        fprintf (out, ", \"min\": %llu, \"max\": ", lo);
        if (hi < 0)
            fputs ("null", out);
        else
            fprintf (out, "%lld", hi);
        fputs (", \"count\": ", out);
        s_json_value (out, "count", r->kv [i].value);
        fputs (" }", out);
        first_bucket = 0;
    }
    fputs (first_bucket ? "]" : "\n  ]", out);
    fputs ("\n}\n", out);
}

/* ------------------------------------------------------------------ */
/*  Human-readable output                                               */

/*  A byte count with an SI unit: "12.3 MB".  */
static const char *
s_bytes (double b, char *buf, size_t len)
{
    static const char *const units [] = { "B", "kB", "MB", "GB", "TB", "PB" };
    int u = 0;
    while (fabs (b) >= 1000 && u < 5) {
        b /= 1000;
        u++;
    }
    if (isnan (b))
        snprintf (buf, len, "?");
    else
        snprintf (buf, len, u ? "%.2f %s" : "%.0f %s", b, units [u]);
    return buf;
}

/*  Text from the server as it may be shown on a terminal: printable
    ASCII kept, everything else '?', at most width characters.  */
static const char *
s_safe (const char *s, size_t width, char *buf, size_t len)
{
    size_t k = 0;
    for (; s && *s && k < width && k + 1 < len; s++)
        buf [k++] = (*s >= 32 && *s < 127) ? *s : '?';
    buf [k] = 0;
    return buf;
}

static void
s_row (const char *label, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_row (const char *label, const char *fmt, ...)
{
    printf ("%-22s", label);
    va_list ap;
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    putchar ('\n');
}

static void
s_print_status (const s_reply_t *r, const char *endpoint)
{
    char b1 [64], b2 [64], b3 [64], t [128];
    printf ("fasgd-server %s at %s (protocol %s)\n", s_safe (s_get (r, "version"), 40, b1, sizeof b1), endpoint,
            s_safe (s_get (r, "protocol"), 10, b2, sizeof b2));
    s_row ("timestamp T", "%.0f", s_num (r, "T"));
    s_row ("uptime", "%.1f s", s_num (r, "uptime_s"));
    s_row ("rule", "%s, vbar %.6g", s_safe (s_get (r, "rule"), 20, b1, sizeof b1), s_num (r, "vbar"));
    s_row ("clients", "%.0f connected (%.0f joined, %.0f left, %.0f expired since start)", s_num (r, "clients"),
           s_num (r, "joins"), s_num (r, "leaves"), s_num (r, "expired"));
    s_row ("requests refused", "%.0f, %.0f of them naming another's client id", s_num (r, "refused"),
           s_num (r, "forbidden"));
    s_row ("connections", "%.0f open (at most %.0f), %.0f turned away, %.0f accepts failed",
           s_num (r, "connections"), s_num (r, "connections_max"), s_num (r, "connections_shed"),
           s_num (r, "accept_failed"));
    if (s_get (r, "security") && !strcmp (s_get (r, "security"), "curve")) {
        if (s_get (r, "allowed_keys"))
            snprintf (t, sizeof t, "%.0f keys allowed", s_num (r, "allowed_keys"));
        else
            snprintf (t, sizeof t, "any key allowed");
        s_row ("security", "CURVE, %s; refused %.0f keys, %.0f handshakes; %.0f revoked", t,
               s_num (r, "auth_refused"), s_num (r, "handshake_failed"), s_num (r, "revoked"));
    }
    else if (s_get (r, "security"))
        s_row ("security", "off: no encryption, no authentication");
    printf ("over the last %.1f s:\n", s_num (r, "window_s"));
    s_row ("  updates", "%10.1f /s", s_num (r, "update_rate"));
    s_row ("  pushes", "%10.1f /s   total %.0f", s_num (r, "push_rate"), s_num (r, "pushes"));
    s_row ("  repeats", "%10.1f /s   total %.0f   (%.1f%% of the pushes seen were repeats)",
           s_num (r, "repeat_rate"), s_num (r, "repeats"), 100 * s_num (r, "push_repeat_ratio"));
    s_row ("  fetches", "%10.1f /s   total %.0f", s_num (r, "fetch_rate"), s_num (r, "fetches"));
    s_row ("  fetches 304", "%10.1f /s   total %.0f   (%.1f%% of fetches found nothing new)",
           s_num (r, "not_modified_rate"), s_num (r, "not_modified"), 100 * s_num (r, "fetch_not_modified_ratio"));
    s_row ("  bytes in", "%10s/s  total %s", s_bytes (s_num (r, "bytes_in_rate"), b1, sizeof b1),
           s_bytes (s_num (r, "bytes_in"), b2, sizeof b2));
    s_row ("  bytes out", "%10s/s  total %s", s_bytes (s_num (r, "bytes_out_rate"), b1, sizeof b1),
           s_bytes (s_num (r, "bytes_out"), b2, sizeof b2));
    s_row ("  mean tau", "%10.2f      (max %.0f since start)", s_num (r, "tau_mean"), s_num (r, "tau_max"));
    if (s_get (r, "val_T"))
        s_row ("validation", "error %.4f, nll %.4f at T=%.0f (%.1f s ago)", s_num (r, "val_error"),
               s_num (r, "val_nll"), s_num (r, "val_T"), s_num (r, "val_age_s"));
    else
        s_row ("validation", "none yet");
    if (s_get (r, "checkpoint_file")) {
        s_safe (s_get (r, "checkpoint_file"), 80, t, sizeof t);
        if (s_get (r, "checkpoint_T"))
            s_row ("checkpoint", "%s at T=%.0f (%.1f s ago)", t, s_num (r, "checkpoint_T"),
                   s_num (r, "checkpoint_age_s"));
        else
            s_row ("checkpoint", "%s (none written since the start)", t);
    }
    else
        s_row ("checkpoint", "off (checkpoint.file is empty)");
    if (s_get (r, "bandwidth_budget")) {
        s_row ("bandwidth budget", "%s/s, %s/s used (%.1f%%)", s_bytes (s_num (r, "bandwidth_budget"), b1, sizeof b1),
               s_bytes (s_num (r, "bandwidth_used"), b2, sizeof b2), 100 * s_num (r, "bandwidth_used_ratio"));
        if (s_get (r, "more_clients"))
            s_row ("provisioning", "%s/s per client: room for %.0f more client%s",
                   s_bytes (s_num (r, "bandwidth_per_client"), b3, sizeof b3), s_num (r, "more_clients"),
                   s_num (r, "more_clients") == 1 ? "" : "s");
        else if (s_num (r, "clients") > 0)
            s_row ("provisioning", "no estimate (no client traffic in the window)");
        else
            s_row ("provisioning", "no estimate (no client connected)");
    }

    /*  The client table, in the order the server listed them.  */
    int header = 0;
    for (size_t i = 0; i < r->n; i++) {
        unsigned long id, other;
        if (!s_client_first_key (r, i, &id))
            continue;
        if (!header) {
            printf ("\n%6s  %-24s %11s %9s %9s %9s %9s %9s %8s\n", "id", "name", "connected", "idle", "pushes",
                    "repeats", "fetches", "304s", "last tau");
            header = 1;
        }
        const char *name = "", *last_tau = "-", *key_name = NULL;
        double f [6] = { NAN, NAN, NAN, NAN, NAN, NAN };
        static const char *const fields [6] = { "connected_s", "idle_s", "pushes", "repeats", "fetches",
                                                "not_modified" };
        for (size_t j = i; j < r->n; j++) {
            const char *field = s_client_key (r->kv [j].key, &other);
            if (!field || other != id)
                continue;
            if (!strcmp (field, "name"))
                name = r->kv [j].value;
            else if (!strcmp (field, "last_tau"))
                last_tau = r->kv [j].value;
            else if (!strcmp (field, "key_name"))
                key_name = r->kv [j].value;
            for (int k = 0; k < 6; k++)
                if (!strcmp (field, fields [k]))
                    f [k] = strtod (r->kv [j].value, NULL);
        }
        /*  With CURVE, the name of the key it joined with follows its own.  */
        char shown [160];
        snprintf (shown, sizeof shown, "%s%s%s%s", *name ? name : "-", key_name ? " [" : "",
                  key_name ? key_name : "", key_name ? "]" : "");
        printf ("%6lu  %-24s %9.1f s %7.1f s %9.0f %9.0f %9.0f %9.0f %8s\n", id,
                s_safe (shown, 24, b1, sizeof b1), f [0], f [1], f [2], f [3], f [4], f [5],
                s_safe (last_tau, 8, b2, sizeof b2));
    }

    /*  The τ histogram, bars scaled to the fullest bucket.  */
    double total = 0, most = 0;
    for (size_t i = 0; i < r->n; i++) {
        unsigned long long lo;
        long long hi;
        if (s_tau_key (r->kv [i].key, &lo, &hi) == 0) {
            double c = strtod (r->kv [i].value, NULL);
            total += c;
            most = c > most ? c : most;
        }
    }
    int header_tau = 0;
    for (size_t i = 0; i < r->n; i++) {
        unsigned long long lo;
        long long hi;
        if (s_tau_key (r->kv [i].key, &lo, &hi) != 0)
            continue;
        if (!header_tau) {
            printf ("\ntau (staleness) of the gradients applied since the start:\n%-11s %12s %7s\n", "tau",
                    "count", "share");
            header_tau = 1;
        }
        double c = strtod (r->kv [i].value, NULL);
        int bar = most > 0 ? (int) lround (S_TAU_BAR * c / most) : 0;
        printf ("%-11s %12.0f %6.1f%% ", s_safe (r->kv [i].key + 4, 11, b1, sizeof b1), c,
                total > 0 ? 100 * c / total : 0.0);
        for (int k = 0; k < bar; k++)
            putchar ('#');
        putchar ('\n');
    }
}

/* ------------------------------------------------------------------ */

int
main (int argc, char **argv)
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
    const char *endpoint = NULL, *config = NULL, *port_file = NULL, *server_key = NULL, *cert = NULL;
    const char *sets [S_MAX_SETS];
    int nsets = 0, json = 0, timeout_ms = S_DEFAULT_TIMEOUT_MS, opt;
    opterr = 0;
    while ((opt = getopt_long (argc, argv, ":e:c:p:s:jk:t:hV", longopts, NULL)) != -1) {
        switch (opt) {
            case 'k': server_key = optarg; break;
            case 'C': cert = optarg; break;
            case 'e': endpoint = optarg; break;
            case 'c': config = optarg; break;
            case 'p': port_file = optarg; break;
            case 's':
                if (nsets == S_MAX_SETS)
                    return s_usage_error ("at most %d --set options", S_MAX_SETS);
                if (!strchr (optarg, '='))
                    return s_usage_error ("--set takes KEY=VALUE (got '%s')", optarg);
                sets [nsets++] = optarg;
                break;
            case 'j': json = 1; break;
            case 't': {
                char *end;
                errno = 0;
                long v = strtol (optarg, &end, 10);
                if (errno || end == optarg || *end || v < 1 || v > 86400000)
                    return s_usage_error ("--timeout-ms takes milliseconds from 1 to 86400000 (got '%s')", optarg);
                timeout_ms = (int) v;
                break;
            }
            case 'h': s_usage (stdout); return S_EXIT_OK;
            case 'V': printf ("fasgd-ctl %s\n", PACKAGE_VERSION); return S_EXIT_OK;
            case ':': return s_usage_error ("option '%s' needs an argument", argv [optind - 1]);
            default:
                if (optopt)
                    return s_usage_error ("unknown option '-%c'", optopt);
                return s_usage_error ("unknown option '%s'", argv [optind - 1]);
        }
    }
    if (optind >= argc)
        return s_usage_error ("a command is required: status, checkpoint, reload or keygen");
    if (!strcmp (argv [optind], "keygen")) {
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
    if (optind + 1 < argc)
        return s_usage_error ("one command at a time (got '%s' after '%s')", argv [optind + 1], argv [optind]);
    const char *command;
    if (!strcmp (argv [optind], "status"))
        command = "STATUS";
    else if (!strcmp (argv [optind], "checkpoint"))
        command = "CHECKPOINT";
    else if (!strcmp (argv [optind], "reload"))
        command = "RELOAD";
    else
        return s_usage_error ("unknown command '%s' (status, checkpoint, reload or keygen)", argv [optind]);
    if (cert && !server_key)
        return s_usage_error ("--cert needs --server-key: the server's public certificate");
    if (!!endpoint + !!config + !!port_file > 1)
        return s_usage_error ("-e, -c and -p each name the endpoint: give one of them");
    if (nsets && (endpoint || port_file))
        return s_usage_error ("--set changes the server's configuration: use it with -c, or alone");

    char ep [1024], server_cert [FASGD_PATH_LEN] = "";
    if (endpoint) {
        if (!*endpoint)
            return s_usage_error ("-e needs an endpoint such as " S_DEFAULT_ENDPOINT);
        snprintf (ep, sizeof ep, "%s", endpoint);
    }
    else if (port_file) {
        if (s_endpoint_from_port_file (port_file, ep, sizeof ep) != 0)
            return S_EXIT_USAGE;
    }
    else if (s_endpoint_from_config (config, sets, nsets, ep, sizeof ep, server_cert, sizeof server_cert) != 0)
        return S_EXIT_USAGE;

    /*  Signals keep their default meaning: czmq must not take SIGINT.  */
    zsys_handler_set (NULL);
    /*  A CURVE server's own certificate serves its operator on its host.  */
    if (!server_key && *server_cert)
        server_key = cert = server_cert;
    s_curve_t curve = { "", NULL };
    char err [FASGD_PATH_LEN + 128];
    if (server_key) {
        if (fasgd_curve_public_key_load (server_key, curve.server_key, err, sizeof err) != 0) {
            fprintf (stderr, "fasgd-ctl: --server-key: %s\n", err);
            return S_EXIT_USAGE;
        }
        curve.cert = cert ? fasgd_curve_secret_cert_load (cert, err, sizeof err) : zcert_new ();
        if (!curve.cert) {
            fprintf (stderr, "fasgd-ctl: %s: %s%s\n", cert == server_cert ? "the server's certificate" : "--cert",
                     err, cert == server_cert ? " (give --server-key and --cert)" : "");
            return S_EXIT_USAGE;
        }
    }
    char *text = NULL;
    size_t len = 0;
    int rc = s_ask (ep, &curve, command, timeout_ms, &text, &len);
    zcert_destroy (&curve.cert);
    zsys_shutdown ();
    if (rc != 0)
        return rc;
    s_reply_t r;
    if (s_reply_parse (text, len, &r) != 0) {
        free (text);
        return S_EXIT_SERVER;
    }
    int status = s_reply_status (&r);
    if (status < 0) {
        fprintf (stderr, "fasgd-ctl: malformed reply from %s: it does not start with status=CODE\n", ep);
        rc = S_EXIT_SERVER;
    }
    else {
        if (json)
            s_print_json (stdout, &r, ep, status == 200 && !strcmp (command, "STATUS"));
        if (status != 200) {
            char why [300];
            fprintf (stderr, "fasgd-ctl: %s refused %s: %d %s\n", ep, command, status,
                     s_safe (s_get (&r, "error") ? s_get (&r, "error") : "(no reason given)", 280, why,
                             sizeof why));
            rc = S_EXIT_SERVER;
        }
        else if (!json && !strcmp (command, "STATUS"))
            s_print_status (&r, ep);
        else if (!json && !strcmp (command, "RELOAD"))
            printf ("allowlist reloaded: %.0f keys allowed, %.0f clients revoked\n", s_num (&r, "allowed_keys"),
                    s_num (&r, "revoked"));
        else if (!json) {
            char file [FASGD_PATH_LEN];
            printf ("checkpoint written to %s at T=%.0f in %.3f s\n",
                    s_safe (s_get (&r, "file"), sizeof file - 1, file, sizeof file), s_num (&r, "T"),
                    s_num (&r, "seconds"));
        }
    }
    if (fflush (stdout) != 0 || ferror (stdout)) {
        fprintf (stderr, "fasgd-ctl: writing the output: %s\n", strerror (errno));
        rc = rc ? rc : S_EXIT_SERVER;
    }
    free (r.kv);
    free (text);
    return rc;
}
