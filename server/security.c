/*  security: CURVE on the push, fetch and control sockets.

    With security.curve.server_cert set, every socket the server binds is
    a CURVE server with that certificate: traffic is encrypted, and a peer
    must complete the CURVE handshake before anything it sends reaches
    the poll loop. Who may complete it is decided here, as libzmq's ZAP
    handler (RFC 27, inproc://zeromq.zap.01), served from the poll loop:
    a public key in the allowlist (the certificates of the directory
    security.curve.clients, re-read by the control command RELOAD), or
    any key with security.curve.allow_any, or the server's own (for
    fasgd-ctl on the server's host). A key allowed is the User-Id of
    every message its connection brings; the registry binds a client id
    to it at JOIN. The keys of guard.trusted (a directory of certificates
    too) are those whose pushes serve as the guard's reference where the
    server computes none: this file says which keys they are, the guard
    what it makes of their pushes. This file gives verdicts on keys and owns no client:
    after a reload the registry forgets the clients whose key it no
    longer allows.

    Handshakes that fail before ZAP is asked (a plain peer, a client with
    the wrong server key) are seen on the monitor sockets of
    connections.c, and counted and logged here with the endpoint. Log lines about refusals are bounded: a peer that
    retries forever costs a line a second, not a line a try.  */
#include "security.h"

#include "clock.h"
#include "curve.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define S_ZAP_DOMAIN "fasgd"
#define S_LOG_PER_SECOND 5              /* refusal log lines a second, then a count */
#define S_MAX_CERTS 100000              /* files read from the allowlist directory */

struct fasgd_srv_security_t {
    const fasgd_server_cfg_t *cfg;
    fasgd_srv_stats_t *st;              /* auth_refused, handshake_failed */
    zcert_t *cert;                      /* NULL: CURVE off */
    zsock_t *zap;                       /* the ZAP handler */
    zhashx_t *allowed;                  /* public key (Z85) → name; NULL with allow_any */
    zhashx_t *trusted;                  /* guard.trusted's keys → name; NULL without */
    int64_t log_ms;                     /* refusal log lines: this second's start, */
    int log_count;                      /* lines in it, */
    uint64_t log_dropped;               /* and those left out */
};

void
fasgd_srv_security_refusal_log (fasgd_srv_security_t *self, const char *fmt, ...)
{
    int64_t now = fasgd_srv_now_ms ();
    if (now - self->log_ms >= 1000) {
        self->log_ms = now;
        self->log_count = 0;
    }
    if (self->log_count++ >= S_LOG_PER_SECOND) {
        self->log_dropped++;
        return;
    }
    char line [512];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (line, sizeof line, fmt, ap);
    va_end (ap);
    if (self->log_dropped)
        fasgd_log_notice ("%s (and %llu refusals not logged)", line,
                          (unsigned long long) self->log_dropped);
    else
        fasgd_log_notice ("%s", line);
    self->log_dropped = 0;
}

/*  A list of keys: every certificate file in dir, keyed by its public key
    (Z85), each named by its metadata's name or else its file name; what
    is the configuration key that names dir. NULL with the reason in err
    when the directory cannot be read.  */
static zhashx_t *
s_allowlist_load (const char *dir, const char *what, char *err, size_t errlen)
{
    DIR *d = opendir (dir);
    if (!d) {
        int e = errno;
        char shown [8192];
        snprintf (err, errlen, "%s: cannot read %s: %s", what, fasgd_path_shown (dir, shown, sizeof shown),
                  strerror (e));
        return NULL;
    }
    zhashx_t *keys = zhashx_new ();
    if (!keys) {
        closedir (d);
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    zhashx_set_destructor (keys, (zhashx_destructor_fn *) zstr_free);
    zhashx_set_duplicator (keys, (zhashx_duplicator_fn *) strdup);
    struct dirent *e;
    int files = 0;
    while ((e = readdir (d)) && files < S_MAX_CERTS) {
        const char *name = e->d_name;
        size_t len = strlen (name);
        /*  Dot files, and the secret halves (czmq's NAME_secret) that
            do not belong here.  */
        if (name [0] == '.' || (len > 7 && strcmp (name + len - 7, "_secret") == 0))
            continue;
        char path [FASGD_PATH_LEN + 256];
        snprintf (path, sizeof path, "%s/%s", dir, name);
        struct stat st;
        if (stat (path, &st) != 0 || !S_ISREG (st.st_mode) || st.st_size > 65536)
            continue;
        files++;
        fasgd_curve_cert_t cert;
        char why [512];
        if (fasgd_curve_cert_read (path, &cert, why, sizeof why) != 0) {
            fasgd_log_warn ("%s: %s; skipped", what, why);
            continue;
        }
        memset (cert.secret_key, 0, sizeof cert.secret_key);
        char shown [64], key [FASGD_CURVE_KEY_LEN + 1];
        size_t k = 0;
        for (const char *p = *cert.name ? cert.name : name; *p && k < sizeof shown - 1; p++)
            shown [k++] = (*p > 32 && *p < 127 && *p != '=') ? *p : '_';
        shown [k] = 0;
        zmq_z85_encode (key, cert.public_key, 32);
        zhashx_update (keys, key, shown);
    }
    closedir (d);
    return keys;
}

/*  guard.trusted's keys; a key that the allowlist does not hold (it can
    never connect) is warned about. NULL with the reason in err.  */
static zhashx_t *
s_trusted_load (fasgd_srv_security_t *self, char *err, size_t errlen)
{
    zhashx_t *keys = s_allowlist_load (self->cfg->guard_trusted, "guard.trusted", err, errlen);
    if (!keys)
        return NULL;
    for (const char *name = zhashx_first (keys); name; name = zhashx_next (keys)) {
        const char *key = zhashx_cursor (keys);
        if (self->allowed && !zhashx_lookup (self->allowed, key))
            fasgd_log_warn ("guard.trusted: %s (%s) is not in security.curve.clients: it cannot connect", name,
                            key);
    }
    if (zhashx_size (keys) == 0)
        fasgd_log_warn ("guard.trusted: no certificate in %s: no push serves as the reference until one is "
                        "added and the server reloads", self->cfg->guard_trusted);
    else
        fasgd_log_notice ("guard.trusted: %zu keys trusted, whose pushes serve as the guard's reference where "
                          "the server computes none", zhashx_size (keys));
    return keys;
}

fasgd_srv_security_t *
fasgd_srv_security_new (const fasgd_server_cfg_t *cfg, fasgd_srv_stats_t *st, char *err, size_t errlen)
{
    fasgd_srv_security_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, errlen, "out of memory");
        return NULL;
    }
    self->cfg = cfg;
    self->st = st;
    if (!*cfg->curve_cert) {
        if (*cfg->curve_clients || cfg->curve_allow_any || *cfg->guard_trusted) {
            snprintf (err, errlen, "%s needs security.curve.server_cert%s", *cfg->curve_clients
                      ? "security.curve.clients" : cfg->curve_allow_any ? "security.curve.allow_any"
                      : "guard.trusted", *cfg->guard_trusted && !*cfg->curve_clients && !cfg->curve_allow_any
                      ? ": without CURVE a push's key is not known, and anyone could claim a trusted one" : "");
            goto fail;
        }
        return self;
    }
    if (!zsys_has_curve ()) {
        snprintf (err, errlen, "security.curve: this libzmq was built without CURVE");
        goto fail;
    }
    if (!*cfg->curve_clients == !cfg->curve_allow_any) {
        snprintf (err, errlen, "security.curve: give either clients (a directory of allowed "
                  "certificates) or allow_any: true, not %s", *cfg->curve_clients ? "both" : "neither");
        goto fail;
    }
    char why [FASGD_PATH_LEN + 128];
    if (!(self->cert = fasgd_curve_secret_cert_load (cfg->curve_cert, why, sizeof why))) {
        snprintf (err, errlen, "security.curve.server_cert: %s", why);
        goto fail;
    }
    /*  The secret half: the file named, or NAME_secret beside it.  */
    char secret [FASGD_PATH_LEN + 8];
    snprintf (secret, sizeof secret, "%s_secret", cfg->curve_cert);
    struct stat sb;
    const char *which = access (secret, F_OK) == 0 ? secret : cfg->curve_cert;
    if (stat (which, &sb) == 0 && (sb.st_mode & 077))
        fasgd_log_warn ("security.curve.server_cert: %s can be read by other users (mode %03o): "
                        "chmod 600 it", which, (unsigned) (sb.st_mode & 0777));
    if (*cfg->curve_clients) {
        if (!(self->allowed = s_allowlist_load (cfg->curve_clients, "security.curve.clients", err, errlen)))
            goto fail;
        if (zhashx_size (self->allowed) == 0)
            fasgd_log_warn ("security.curve.clients: no certificate in %s: no client can join "
                            "until one is added and the server reloads", cfg->curve_clients);
    }
    if (*cfg->guard_trusted && !(self->trusted = s_trusted_load (self, err, errlen)))
        goto fail;
    /*  The handler must be bound before the first CURVE socket.  */
    self->zap = zsock_new (ZMQ_REP);
    if (!self->zap || zsock_bind (self->zap, S_ZAP_ENDPOINT) != 0) {
        snprintf (err, errlen, "security.curve: cannot bind the ZAP handler: %s", zmq_strerror (zmq_errno ()));
        goto fail;
    }
    fasgd_log_notice ("CURVE on: server key %s, %s", zcert_public_txt (self->cert),
                      self->allowed ? "clients from the allowlist" : "any client key (allow_any)");
    return self;
fail:
    fasgd_srv_security_destroy (&self);
    return NULL;
}

void
fasgd_srv_security_apply (fasgd_srv_security_t *self, zsock_t *sock)
{
    if (!self->cert)
        return;
    zsock_set_zap_domain (sock, S_ZAP_DOMAIN);
    zsock_set_curve_server (sock, 1);
    zcert_apply (self->cert, sock);
}

void
fasgd_srv_security_destroy (fasgd_srv_security_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_srv_security_t *self = *self_p;
    zsock_destroy (&self->zap);
    zhashx_destroy (&self->allowed);
    zhashx_destroy (&self->trusted);
    zcert_destroy (&self->cert);
    free (self);
    *self_p = NULL;
}

int
fasgd_srv_security_curve (const fasgd_srv_security_t *self)
{
    return self->cert != NULL;
}

int
fasgd_srv_security_has_allowlist (const fasgd_srv_security_t *self)
{
    return self->allowed != NULL;
}

zsock_t *
fasgd_srv_security_zap_socket (fasgd_srv_security_t *self)
{
    return self->zap;
}

const char *
fasgd_srv_security_allowed (fasgd_srv_security_t *self, const char *key)
{
    if (!self->cert || !key)
        return NULL;
    if (strcmp (key, zcert_public_txt (self->cert)) == 0)
        return "server";
    if (!self->allowed)
        return "any";
    return zhashx_lookup (self->allowed, key);
}

const char *
fasgd_srv_security_key (fasgd_srv_security_t *self, zmq_msg_t *msg)
{
    if (!self->cert)
        return NULL;
    const char *key = zmq_msg_gets (msg, "User-Id");
    return key && strlen (key) == 40 ? key : NULL;
}

/*  Sends the ZAP reply (RFC 27): version, request id, status code and
    text, user id, metadata.  */
static void
s_zap_reply (fasgd_srv_security_t *self, const char *request_id, size_t id_len, const char *code,
             const char *text, const char *user)
{
    void *s = zsock_resolve (self->zap);
    zmq_send (s, "1.0", 3, ZMQ_SNDMORE);
    zmq_send (s, request_id, id_len, ZMQ_SNDMORE);
    zmq_send (s, code, strlen (code), ZMQ_SNDMORE);
    zmq_send (s, text, strlen (text), ZMQ_SNDMORE);
    zmq_send (s, user, strlen (user), ZMQ_SNDMORE);
    zmq_send (s, "", 0, 0);
}

int
fasgd_srv_security_zap (fasgd_srv_security_t *self)
{
    if (!self->zap)
        return -1;
    zmsg_t *req = zmsg_recv_nowait (self->zap);
    if (!req)
        return -1;
    /*  version, request id, domain, address, routing id, mechanism,
        credentials (CURVE: the client's 32-byte public key).  */
    zframe_t *f [7] = { NULL };
    for (int i = 0; i < 7; i++)
        f [i] = zmsg_pop (req);
    char key [41] = "";
    char addr [64] = "?";
    if (f [3]) {
        size_t n = zframe_size (f [3]) < sizeof addr - 1 ? zframe_size (f [3]) : sizeof addr - 1;
        memcpy (addr, zframe_data (f [3]), n);
        addr [n] = 0;
    }
    const char *id = f [1] ? (const char *) zframe_data (f [1]) : "";
    size_t id_len = f [1] ? zframe_size (f [1]) : 0;
    int curve = f [5] && zframe_streq (f [5], "CURVE") && f [6] && zframe_size (f [6]) == 32;
    if (curve)
        zmq_z85_encode (key, zframe_data (f [6]), 32);
    const char *name = curve ? fasgd_srv_security_allowed (self, key) : NULL;
    fasgd_log_debug ("ZAP: %s key %s from %s: %s", f [5] && zframe_streq (f [5], "CURVE") ? "CURVE" : "other",
                     curve ? key : "-", addr, name ? "allowed" : "refused");
    if (name)
        s_zap_reply (self, id, id_len, "200", "OK", key);
    else {
        self->st->auth_refused++;
        s_zap_reply (self, id, id_len, "400", "key not allowed", "");
        fasgd_srv_security_refusal_log (self, "refused a connection from %s: CURVE key %s is not in the "
                                        "allowlist", addr, curve ? key : "(none)");
    }
    for (int i = 0; i < 7; i++)
        zframe_destroy (&f [i]);
    zmsg_destroy (&req);
    return 0;
}

void
fasgd_srv_security_handshake_failed (fasgd_srv_security_t *self, const char *what, int event, uint32_t value)
{
    /*  ZAP's refusals were counted when it refused; without CURVE a
        handshake fails only on garbage, which is not security's.  */
    if (!self->cert || event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        return;
    const char *why = fasgd_curve_why (event, value, 0, 1);
    self->st->handshake_failed++;
    fasgd_srv_security_refusal_log (self, "refused a connection on the %s socket: %s", what,
                                    why ? why : "the peer closed the connection during the handshake");
}

int
fasgd_srv_security_reload (fasgd_srv_security_t *self, char *err, size_t errlen)
{
    if (!self->cert || (!self->allowed && !self->trusted)) {
        snprintf (err, errlen, self->cert ? "security.curve.allow_any: there is no allowlist to reload"
                                          : "CURVE is off: there is no allowlist to reload");
        return 1;
    }
    zhashx_t *keys = NULL, *trusted = NULL;
    if (self->allowed && !(keys = s_allowlist_load (self->cfg->curve_clients, "security.curve.clients", err,
                                                    errlen)))
        return -1;
    if (keys) {
        zhashx_destroy (&self->allowed);
        self->allowed = keys;
    }
    /*  The trusted keys are checked against the new allowlist.  */
    if (self->trusted) {
        if (!(trusted = s_trusted_load (self, err, errlen)))
            return -1;
        zhashx_destroy (&self->trusted);
        self->trusted = trusted;
    }
    return 0;
}

int
fasgd_srv_security_trusted (fasgd_srv_security_t *self, const char *key)
{
    return self->trusted && key && *key && zhashx_lookup (self->trusted, key) != NULL;
}

size_t
fasgd_srv_security_ntrusted (const fasgd_srv_security_t *self)
{
    return self->trusted ? zhashx_size (self->trusted) : 0;
}

size_t
fasgd_srv_security_nkeys (const fasgd_srv_security_t *self)
{
    return self->allowed ? zhashx_size (self->allowed) : 0;
}

/*  An endpoint reachable from other hosts: anything but loopback,
    ipc:// and inproc://.  */
static int
s_exposed (const char *ep)
{
    if (strncmp (ep, "tcp://", 6) != 0)
        return 0;
    const char *host = ep + 6;
    return !(strncmp (host, "127.", 4) == 0 || strncmp (host, "localhost:", 10) == 0
             || strncmp (host, "[::1]:", 6) == 0);
}

void
fasgd_srv_security_warn_plain (fasgd_srv_security_t *self, const char *endpoint)
{
    if (!self->cert && s_exposed (endpoint))
        fasgd_log_warn ("%s is reachable from other hosts without CURVE: anyone who can reach it can "
                        "read and change the model (security.curve in fasgd.yaml(5))", endpoint);
}
