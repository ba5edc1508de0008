/*  security: CURVE on the push, fetch and control sockets (security.c
    says how). It owns the server's certificate, the allowlist, the ZAP
    handler and the bound on refusal log lines; it gives verdicts on keys
    and owns no client.  */
#ifndef FASGD_SERVER_SECURITY_H_INCLUDED
#define FASGD_SERVER_SECURITY_H_INCLUDED

#include "server.h"
#include "stats.h"

#include <czmq.h>

typedef struct fasgd_srv_security_t fasgd_srv_security_t;

/*  Loads the server's certificate and the allowlist, and binds the ZAP
    handler, when cfg's security.curve.server_cert is set; without it,
    an object that says CURVE is off. cfg and st are borrowed. NULL with
    the reason in err.  */
fasgd_srv_security_t *fasgd_srv_security_new (const fasgd_server_cfg_t *cfg, fasgd_srv_stats_t *st, char *err,
                                              size_t errlen);
/*  Before the sockets are closed.  */
void fasgd_srv_security_destroy (fasgd_srv_security_t **self_p);
/*  1 when CURVE is on.  */
int fasgd_srv_security_curve (const fasgd_srv_security_t *self);
/*  1 when the keys allowed come from an allowlist (not allow_any).  */
int fasgd_srv_security_has_allowlist (const fasgd_srv_security_t *self);
/*  The ZAP handler's socket, for the poll; NULL when CURVE is off.  */
zsock_t *fasgd_srv_security_zap_socket (fasgd_srv_security_t *self);
/*  Makes sock (not yet bound) a CURVE server; nothing when CURVE is off.  */
void fasgd_srv_security_apply (fasgd_srv_security_t *self, zsock_t *sock);
/*  Warns that endpoint is bound without CURVE where other hosts reach it.  */
void fasgd_srv_security_warn_plain (fasgd_srv_security_t *self, const char *endpoint);
/*  Serves one ZAP request; -1 when none waited.  */
int fasgd_srv_security_zap (fasgd_srv_security_t *self);
/*  Counts and logs a failed handshake (a ZMQ_EVENT_HANDSHAKE_FAILED_*
    event) on the socket named what; nothing without CURVE.  */
void fasgd_srv_security_handshake_failed (fasgd_srv_security_t *self, const char *what, int event, uint32_t value);
/*  A log line about a refusal, unless this second's five are spent; the
    count of those left out comes with the next line logged.  */
void fasgd_srv_security_refusal_log (fasgd_srv_security_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/*  The CURVE key (Z85) msg's connection was allowed with; NULL when
    CURVE is off.  */
const char *fasgd_srv_security_key (fasgd_srv_security_t *self, zmq_msg_t *msg);
/*  The name under which key is allowed now; NULL when it is not (or
    CURVE is off): the verdict on a key. Borrowed.  */
const char *fasgd_srv_security_allowed (fasgd_srv_security_t *self, const char *key);
/*  Re-reads the allowlist and guard.trusted's keys. 0 done (the caller
    then asks the registry to forget the clients whose key left the
    allowlist, and to mark again those trusted); 1 nothing to reload
    (CURVE off, or allow_any without guard.trusted) and -1 unreadable,
    with the reason in err (a list that cannot be read stays as it was).  */
int fasgd_srv_security_reload (fasgd_srv_security_t *self, char *err, size_t errlen);
/*  1 when key is one of guard.trusted's (whose pushes serve as the
    guard's reference); 0 when not, or without CURVE: the verdict on a
    key's pushes.  */
int fasgd_srv_security_trusted (fasgd_srv_security_t *self, const char *key);
/*  The keys guard.trusted names.  */
size_t fasgd_srv_security_ntrusted (const fasgd_srv_security_t *self);
/*  The keys in the allowlist.  */
size_t fasgd_srv_security_nkeys (const fasgd_srv_security_t *self);

#endif
