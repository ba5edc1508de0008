/*  curve: certificates, keys and handshake events (see curve.h).  */
#include "curve.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
s_readable (const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat (path, &st) != 0) {
        int e = errno;
        char shown [8192];
        return fasgd_errbuf (err, errlen, "cannot read %s: %s", fasgd_path_shown (path, shown, sizeof shown),
                             strerror (e));
    }
    if (!S_ISREG (st.st_mode))
        return fasgd_errbuf (err, errlen, "%s is not a file", path);
    /*  A certificate is a few hundred bytes.  */
    if (st.st_size > 65536)
        return fasgd_errbuf (err, errlen, "%s is not a certificate (%lld bytes)", path, (long long) st.st_size);
    return 0;
}

/*  path for a message: printable ASCII only (anything else as '?') and
    at most 160 characters, so that a file name cannot write into the
    log what its owner likes.  */
static const char *
s_shown (const char *path, char buf [168])
{
    size_t k = 0, n = strlen (path);
    for (size_t i = 0; i < n && k < 160; i++)
        buf [k++] = path [i] >= 32 && path [i] < 127 ? path [i] : '?';
    if (n > 160)
        memcpy (buf + k, "...", 3), k += 3;
    buf [k] = 0;
    return buf;
}

/*  A key's value: 40 Z85 characters that decode. 0 or -1.  */
static int
s_key_ok (const char *v, size_t len, uint8_t bin [32])
{
    char text [FASGD_CURVE_KEY_LEN + 1];
    if (len != FASGD_CURVE_KEY_LEN)
        return -1;
    memcpy (text, v, len);
    text [len] = 0;
    return zmq_z85_decode (bin, text) ? 0 : -1;
}

static int s_cert_parse (const char *path, char *text, size_t len, fasgd_curve_cert_t *out, char *err,
                         size_t errlen);

/*  Reads one certificate file as czmq writes it (ZPL, RFC 4: a `curve`
    section with `public-key` and, in a secret half, `secret-key`; a
    `metadata` section with `name`) without czmq's loader, which leaks
    what it read of a file it cannot parse and logs the file's bytes as
    they are. Only printable text is taken; the reason for a refusal
    names the line, never its content.  */
static int
s_cert_read (const char *path, fasgd_curve_cert_t *out, char *err, size_t errlen)
{
    char shown [168];
    if (s_readable (path, err, errlen) != 0)
        return -1;
    FILE *f = fopen (path, "r");
    if (!f)
        return fasgd_errbuf (err, errlen, "cannot read %s: %s", s_shown (path, shown), strerror (errno));
    char *text = malloc (65536 + 1);
    if (!text) {
        fclose (f);
        return fasgd_errbuf (err, errlen, "out of memory");
    }
    size_t len = fread (text, 1, 65536, f);
    fclose (f);
    text [len] = 0;
    int rc = s_cert_parse (path, text, len, out, err, errlen);
    memset (text, 0, len);              /* a secret key may be in it */
    free (text);
    return rc;
}

/*  The parse of s_cert_read, on the file's text (len bytes, NUL ended,
    changed in place).  */
static int
s_cert_parse (const char *path, char *text, size_t len, fasgd_curve_cert_t *out, char *err, size_t errlen)
{
    char shown [168];
    memset (out, 0, sizeof *out);
    int line = 1, have_public = 0;
    char section [16] = "";
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char) text [i];
        if (ch == '\n')
            line++;
        else if ((ch < 32 && ch != '\t' && ch != '\r') || ch > 126)
            return fasgd_errbuf (err, errlen, "%s is not a certificate (line %d: a byte 0x%02x that is not text)",
                                 s_shown (path, shown), line, ch);
    }
    line = 0;
    for (char *at = text, *next; at && *at; at = next) {
        next = strchr (at, '\n');
        if (next)
            *next++ = 0;
        line++;
        size_t n = strlen (at);
        while (n > 0 && (at [n - 1] == '\r' || at [n - 1] == ' ' || at [n - 1] == '\t'))
            at [--n] = 0;
        size_t indent = strspn (at, " ");
        char *word = at + indent;
        if (!*word || *word == '#')
            continue;
        size_t wlen = strcspn (word, " =");
        char *rest = word + wlen;
        rest += strspn (rest, " ");
        if (indent == 0) {
            if (*rest && *rest != '=' && *rest != '#')
                return fasgd_errbuf (err, errlen, "%s is not a certificate (line %d: a malformed section)",
                                     s_shown (path, shown), line);
            snprintf (section, sizeof section, "%.*s", (int) (wlen < 15 ? wlen : 15), word);
            continue;
        }
        if (indent % 4 != 0 || *rest != '=')
            continue;                   /* a nested section, or one this does not need */
        rest++;
        rest += strspn (rest, " ");
        size_t vlen;
        if (*rest == '"' || *rest == '\'') {
            char *end = strchr (rest + 1, *rest);
            if (!end)
                return fasgd_errbuf (err, errlen, "%s is not a certificate (line %d: a quote not closed)",
                                     s_shown (path, shown), line);
            vlen = (size_t) (end - rest - 1);
            rest++;
        }
        else
            vlen = strcspn (rest, " #");
        int is_public = !strcmp (section, "curve") && wlen == 10 && !strncmp (word, "public-key", 10);
        int is_secret = !strcmp (section, "curve") && wlen == 10 && !strncmp (word, "secret-key", 10);
        if (is_public || is_secret) {
            uint8_t bin [32];
            if (s_key_ok (rest, vlen, bin) != 0)
                return fasgd_errbuf (err, errlen, "%s is not a certificate (line %d: %s is not 40 Z85 characters)",
                                     s_shown (path, shown), line, is_public ? "public-key" : "secret-key");
            memcpy (is_public ? out->public_key : out->secret_key, bin, 32);
            have_public |= is_public;
            out->has_secret |= is_secret;
        }
        else if (!strcmp (section, "metadata") && wlen == 4 && !strncmp (word, "name", 4)) {
            size_t k = 0;
            for (size_t j = 0; j < vlen && k < sizeof out->name - 1; j++)
                out->name [k++] = rest [j] > 32 && rest [j] < 127 && rest [j] != '=' ? rest [j] : '_';
            out->name [k] = 0;
        }
    }
    if (!have_public)
        return fasgd_errbuf (err, errlen, "%s is not a certificate (no curve public-key)", s_shown (path, shown));
    return 0;
}

int
fasgd_curve_cert_read (const char *path, fasgd_curve_cert_t *out, char *err, size_t errlen)
{
    /*  As czmq's loader: the secret half first when there is one beside.  */
    char secret [4096 + 8];
    if (snprintf (secret, sizeof secret, "%s_secret", path) < (int) sizeof secret && access (secret, F_OK) == 0
        && s_cert_read (secret, out, NULL, 0) == 0)
        return 0;
    return s_cert_read (path, out, err, errlen);
}

/*  A czmq certificate from a file fasgd_curve_cert_read accepts.  */
static zcert_t *
s_cert_load (const char *path, char *err, size_t errlen)
{
    fasgd_curve_cert_t c;
    if (fasgd_curve_cert_read (path, &c, err, errlen) != 0)
        return NULL;
    zcert_t *cert = zcert_new_from (c.public_key, c.secret_key);
    memset (&c.secret_key, 0, sizeof c.secret_key);
    if (!cert) {
        fasgd_errbuf (err, errlen, "out of memory");
        return NULL;
    }
    if (*c.name)
        zcert_set_meta (cert, "name", "%s", c.name);
    return cert;
}

int
fasgd_curve_public_key_load (const char *arg, char out [FASGD_CURVE_KEY_LEN + 1], char *err, size_t errlen)
{
    uint8_t bin [32];
    if (access (arg, F_OK) != 0 && strlen (arg) == FASGD_CURVE_KEY_LEN && zmq_z85_decode (bin, arg)) {
        memcpy (out, arg, FASGD_CURVE_KEY_LEN + 1);
        return 0;
    }
    fasgd_curve_cert_t c;
    if (fasgd_curve_cert_read (arg, &c, err, errlen) != 0)
        return -1;
    memset (&c.secret_key, 0, sizeof c.secret_key);
    zmq_z85_encode (out, c.public_key, 32);
    return 0;
}

zcert_t *
fasgd_curve_secret_cert_load (const char *path, char *err, size_t errlen)
{
    zcert_t *cert = s_cert_load (path, err, errlen);
    if (!cert)
        return NULL;
    const byte *secret = zcert_secret_key (cert);
    int has_secret = 0;
    for (int i = 0; secret && i < 32; i++)
        has_secret |= secret [i];
    if (!has_secret) {
        zcert_destroy (&cert);
        char shown [168];
        fasgd_errbuf (err, errlen, "%s holds no secret key (give NAME.key_secret, or NAME.key with it beside)",
                      s_shown (path, shown));
    }
    return cert;
}

/*  Writes text to path, created exclusively with mode.  */
static int
s_write_new (const char *path, const char *text, mode_t mode, char *err, size_t errlen)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    if (fd < 0)
        return fasgd_errbuf (err, errlen, "cannot create %s: %s", path, strerror (errno));
    size_t len = strlen (text);
    ssize_t w = write (fd, text, len);
    int e = w == (ssize_t) len ? 0 : (w < 0 ? errno : EIO);
    if (fsync (fd) != 0 && e == 0)
        e = errno;
    if (close (fd) != 0 && e == 0)
        e = errno;
    if (e) {
        unlink (path);
        return fasgd_errbuf (err, errlen, "cannot write %s: %s", path, strerror (e));
    }
    return 0;
}

int
fasgd_curve_keygen (const char *path, char *err, size_t errlen)
{
    char secret_path [4096];
    if (!*path || snprintf (secret_path, sizeof secret_path, "%s_secret", path) >= (int) sizeof secret_path)
        return fasgd_errbuf (err, errlen, "a certificate needs a file name");
    const char *slash = strrchr (path, '/');
    char name [256];
    snprintf (name, sizeof name, "%s", slash ? slash + 1 : path);
    size_t n = strlen (name);
    if (n > 4 && strcmp (name + n - 4, ".key") == 0)
        name [n - 4] = 0;
    for (char *p = name; *p; p++)
        if (*p == '"' || *p == '\\' || *p < 32 || *p > 126)
            *p = '_';
    if (!*name)
        return fasgd_errbuf (err, errlen, "%s: a certificate needs a file name", path);
    zcert_t *cert = zcert_new ();
    if (!cert)
        return fasgd_errbuf (err, errlen, "out of memory");
    char text [1024];
    int rc = 0;
    snprintf (text, sizeof text,
              "#   fasgd CURVE certificate '%s': secret key, for its owner only\n"
              "metadata\n    name = \"%s\"\ncurve\n    public-key = \"%s\"\n    secret-key = \"%s\"\n",
              name, name, zcert_public_txt (cert), zcert_secret_txt (cert));
    if (s_write_new (secret_path, text, 0600, err, errlen) != 0)
        rc = -1;
    else {
        snprintf (text, sizeof text,
                  "#   fasgd CURVE certificate '%s': public key, to give to the other side\n"
                  "metadata\n    name = \"%s\"\ncurve\n    public-key = \"%s\"\n",
                  name, name, zcert_public_txt (cert));
        if (s_write_new (path, text, 0644, err, errlen) != 0) {
            unlink (secret_path);
            rc = -1;
        }
    }
    /*  No copy of the secret stays in memory longer than needed.  */
    memset (text, 0, sizeof text);
    zcert_destroy (&cert);
    return rc;
}

int
fasgd_curve_monitor (zsock_t *sock, int also, zsock_t **monitor_p)
{
    static atomic_uint next = 0;
    char ep [80];
    snprintf (ep, sizeof ep, "inproc://fasgd-handshakes-%d-%u", (int) getpid (), atomic_fetch_add (&next, 1));
    int events = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                 | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | also;
    *monitor_p = NULL;
    if (zmq_socket_monitor (zsock_resolve (sock), ep, events) != 0)
        return -1;
    zsock_t *mon = zsock_new (ZMQ_PAIR);
    if (!mon || zsock_connect (mon, "%s", ep) != 0) {
        int e = zmq_errno ();
        zmq_socket_monitor (zsock_resolve (sock), NULL, 0);
        zsock_destroy (&mon);
        errno = e;
        return -1;
    }
    *monitor_p = mon;
    return 0;
}

void
fasgd_curve_monitor_stop (zsock_t *sock, zsock_t **monitor_p)
{
    if (!*monitor_p)
        return;
    if (sock)
        zmq_socket_monitor (zsock_resolve (sock), NULL, 0);
    zsock_destroy (monitor_p);
}

int
fasgd_curve_event_recv (zsock_t *monitor, int *event, uint32_t *value)
{
    zmsg_t *ev = zmsg_recv_nowait (monitor);
    if (!ev)
        return -1;
    zframe_t *head = zmsg_first (ev);
    *event = 0;
    *value = 0;
    if (head && zframe_size (head) >= 6) {
        const byte *d = zframe_data (head);
        *event = d [0] | d [1] << 8;
        *value = (uint32_t) d [2] | (uint32_t) d [3] << 8 | (uint32_t) d [4] << 16 | (uint32_t) d [5] << 24;
    }
    zmsg_destroy (&ev);
    return 0;
}

const char *
fasgd_curve_why (int event, uint32_t value, int is_client, int curve)
{
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        return is_client ? "the server refused this client's CURVE key (not in its allowlist, or revoked)"
                         : "the peer's CURVE key is not allowed";
    if (event != ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        return NULL;
    if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
        if (!is_client)
            return curve ? "the peer does not use CURVE (a plain client, or the wrong server?)"
                         : "the peer uses CURVE, this endpoint does not";
        return curve ? "the server does not use CURVE, and this client does (drop the server key)"
                     : "the server requires CURVE: give this client the server's public key "
                       "(--server-key, or fasgd_client_set_curve)";
    }
    if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
        return is_client ? "the server's CURVE handshake did not decrypt (the wrong server key?)"
                         : "the peer's CURVE handshake did not decrypt (a client with the wrong server key?)";
    return "malformed handshake";
}

int
fasgd_curve_turned_away (int event, uint32_t value)
{
    return event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL && value == ECONNRESET;
}

const char *
fasgd_curve_judge (int event, uint32_t value, int curve, int *drops)
{
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        *drops = 0;
        return NULL;
    }
    /*  A connection reset is a server turning it away (it is full, or
        under a flood of connections: fasgd-server resets those it will
        not serve), worth retrying and no sign of a wrong key, which
        ends in an orderly close. A reset can also reach the client as
        an orderly close (when it was writing), so the closes counted
        must come in a row with no reset between them.  */
    if (fasgd_curve_turned_away (event, value)) {
        *drops = 0;
        return NULL;
    }
    const char *why = fasgd_curve_why (event, value, 1, curve);
    if (why || event != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || ++*drops < FASGD_CURVE_DROPS)
        return why;
    return curve ? "the server closed the connection during the CURVE handshake three times in a row: "
                   "is the server key right, and does the server use CURVE?"
                 : "the server closed the connection during the handshake three times in a row: "
                   "it requires CURVE (give this client the server's public key: --server-key, or "
                   "fasgd_client_set_curve), or it is turning connections away (limits.connections)";
}
