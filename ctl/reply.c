/*  reply: see reply.h.  */
#include "reply.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_TAU_BAR 40            /* width of the fullest histogram bar */

/* ------------------------------------------------------------------ */
/*  The reply: key=value lines                                          */

/*  Splits text (modified in place) into its lines. Returns 0, or -1 after
    saying which line is not key=value.  */
int
fasgd_ctl_reply_parse (char *text, size_t len, fasgd_ctl_reply_t *r)
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

/*  The getters, short for the printers below, and their public names.  */
static const char *
s_get (const fasgd_ctl_reply_t *r, const char *key)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp (r->kv [i].key, key) == 0)
            return r->kv [i].value;
    return NULL;
}

static double
s_num (const fasgd_ctl_reply_t *r, const char *key)
{
    const char *v = s_get (r, key);
    if (!v || !*v)
        return NAN;
    char *end;
    double d = strtod (v, &end);
    return *end ? NAN : d;
}

const char *
fasgd_ctl_reply_get (const fasgd_ctl_reply_t *r, const char *key)
{
    return s_get (r, key);
}

double
fasgd_ctl_reply_num (const fasgd_ctl_reply_t *r, const char *key)
{
    return s_num (r, key);
}

/*  The status code of the first line; -1 when there is none.  */
int
fasgd_ctl_reply_status (const fasgd_ctl_reply_t *r)
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
                                         "key", "key_name", "address", "wire_push", "wire_params", NULL };
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
s_client_first_key (const fasgd_ctl_reply_t *r, size_t i, unsigned long *id)
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
void
fasgd_ctl_reply_print_json (FILE *out, const fasgd_ctl_reply_t *r, const char *endpoint, int arrays)
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

const char *
fasgd_ctl_reply_safe (const char *s, size_t width, char *buf, size_t len)
{
    return s_safe (s, width, buf, len);
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

/*  The status table's rows: the server, its clients and connections,
    the rates of the window, validation, checkpoints and bandwidth.  */
static void
s_print_rows (const fasgd_ctl_reply_t *r, const char *endpoint)
{
    char b1 [64], b2 [64], b3 [64], t [128];
    printf ("fasgd-server %s at %s (protocol %s)\n", s_safe (s_get (r, "version"), 40, b1, sizeof b1), endpoint,
            s_safe (s_get (r, "protocol"), 10, b2, sizeof b2));
    s_row ("timestamp T", "%.0f", s_num (r, "T"));
    s_row ("uptime", "%.1f s", s_num (r, "uptime_s"));
    s_row ("rule", "%s, vbar %.6g", s_safe (s_get (r, "rule"), 20, b1, sizeof b1), s_num (r, "vbar"));
    if (s_get (r, "wire_push"))
        s_row ("wire", "gradients as %s, parameters as %s", s_safe (s_get (r, "wire_push"), 8, b1, sizeof b1),
               s_safe (s_get (r, "wire_params"), 8, b2, sizeof b2));
    if (s_num (r, "shards") > 1)
        s_row ("shard", "%.0f of %.0f: parameters %.0f to %.0f of %.0f", s_num (r, "shard"), s_num (r, "shards"),
               s_num (r, "offset"), s_num (r, "offset") + s_num (r, "length") - 1, s_num (r, "params"));
    s_row ("clients", "%.0f connected (%.0f joined, %.0f left, %.0f expired since start)", s_num (r, "clients"),
           s_num (r, "joins"), s_num (r, "leaves"), s_num (r, "expired"));
    s_row ("requests refused", "%.0f, %.0f of them naming another's client id", s_num (r, "refused"),
           s_num (r, "forbidden"));
    s_row ("connections", "%.0f open (at most %.0f), %.0f turned away, %.0f accepts failed",
           s_num (r, "connections"), s_num (r, "connections_max"), s_num (r, "connections_shed"),
           s_num (r, "accept_failed"));
    s_row ("replies dropped", "%.0f (unread replies beyond the high-water mark, or the peer gone)",
           s_num (r, "replies_dropped"));
    if (s_get (r, "turns_waiting"))
        s_row ("replies in turn", "%.0f waiting, a turn's bound %.0f ms, a turn lately %.1f ms; %.0f waited, %.0f "
               "went without a turn, %.0f turns cut, %.0f found their client's path slower since start",
               s_num (r, "turns_waiting"), s_num (r, "turns_hold_ms"), s_num (r, "turns_typical_us") / 1000,
               s_num (r, "turns_waited"), s_num (r, "turns_skipped"), s_num (r, "turns_cut"),
               s_num (r, "turns_slower"));
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
}

/*  The client table, in the order the server listed them.  */
static void
s_print_clients (const fasgd_ctl_reply_t *r)
{
    char b1 [64], b2 [64];
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
}

/*  The τ histogram, bars scaled to the fullest bucket.  */
static void
s_print_tau (const fasgd_ctl_reply_t *r)
{
    char b1 [64];
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

void
fasgd_ctl_reply_print_status (const fasgd_ctl_reply_t *r, const char *endpoint)
{
    s_print_rows (r, endpoint);
    s_print_clients (r);
    s_print_tau (r);
}
