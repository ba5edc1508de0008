/*  curve: the transport security of the wire protocol (proto/PROTOCOL.md,
    "Security"): ZeroMQ's CURVE with czmq's certificates. Certificates
    and keys are read here, and the handshake failures that ZeroMQ's
    socket monitor reports are decoded and explained here, for the
    server, its clients and fasgd-ctl alike. The codec knows nothing of
    this; this knows nothing of models.  */
#ifndef FASGD_CURVE_H_INCLUDED
#define FASGD_CURVE_H_INCLUDED

#include <czmq.h>
#include <stddef.h>
#include <stdint.h>

#define FASGD_CURVE_KEY_LEN 40          /* a public key in Z85 */

/*  A certificate file's keys (binary) and its metadata name (printable,
    bounded).  */
typedef struct {
    uint8_t public_key [32], secret_key [32];   /* secret_key all 0 without one */
    int has_secret;
    char name [64];
} fasgd_curve_cert_t;

/*  Reads the certificate at path (its secret half path_secret instead,
    when that is beside it and sound), checking it as text before using
    any of it: a file of at most 64 KiB of printable ASCII, a curve
    public-key of 40 Z85 characters. 0, or -1 with a bounded reason in err
    that never quotes the file's content.  */
int fasgd_curve_cert_read (const char *path, fasgd_curve_cert_t *out, char *err, size_t errlen);

/*  A public key from a certificate file (either half), or given as its 40
    Z85 characters. 0, or -1 with the reason in err.  */
int fasgd_curve_public_key_load (const char *arg, char out [FASGD_CURVE_KEY_LEN + 1], char *err, size_t errlen);

/*  A certificate with its secret key, from the secret file or the public
    file beside it; NULL with the reason in err.  */
zcert_t *fasgd_curve_secret_cert_load (const char *path, char *err, size_t errlen);

/*  Writes a new key pair as path (public) and path_secret (secret, mode
    0600), named by path's file name; refuses to overwrite either. 0, or
    -1 with the reason in err.  */
int fasgd_curve_keygen (const char *path, char *err, size_t errlen);

/*  Makes sock, not yet bound or connected, report its failed handshakes
    and the other events of the mask `also` (ZMQ_EVENT_*: e.g.
    HANDSHAKE_SUCCEEDED, or a server's ACCEPTED and DISCONNECTED) on a new
    PAIR socket, *monitor_p. 0, or -1 with errno set.  */
int fasgd_curve_monitor (zsock_t *sock, int also, zsock_t **monitor_p);

/*  Stops sock's monitor and destroys *monitor_p (NULL accepted). Must
    come before sock is closed: libzmq's I/O thread blocks for good on an
    event for a monitor nobody reads any more.  */
void fasgd_curve_monitor_stop (zsock_t *sock, zsock_t **monitor_p);

/*  Reads one event from a monitor without waiting: 0 with the event and
    its value, -1 when none was waiting.  */
int fasgd_curve_event_recv (zsock_t *monitor, int *event, uint32_t *value);

/*  Why a connection's handshake failed, from the event and its value, for
    the side that speaks (is_client) and whether it uses CURVE; NULL for
    an event that retrying may cure (a connection closed mid-handshake,
    or a success).  */
const char *fasgd_curve_why (int event, uint32_t value, int is_client, int curve);

/*  Whether a handshake failed because the server reset the connection:
    libzmq reports the errno of a connection closed mid-handshake, and
    fasgd-server resets (it does not close) those it turns away when it
    is full.  */
int fasgd_curve_turned_away (int event, uint32_t value);

/*  Follows a client's handshakes, one event at a time: why its
    connection cannot succeed by retrying, or NULL. Besides what
    fasgd_curve_why says, a server closes a handshake it cannot go on
    with (it cannot decrypt ours: the wrong server key; or it requires
    CURVE and we speak none) often before we read why: *drops counts
    such closes in a row (a success resets it, start it at 0), and
    FASGD_CURVE_DROPS of them are a verdict too. A reset
    (fasgd_curve_turned_away) is no verdict and starts the count again:
    the caller retries.  */
const char *fasgd_curve_judge (int event, uint32_t value, int curve, int *drops);

#define FASGD_CURVE_DROPS 3

#endif
