/*  registry: the clients the server knows, and the record of each. Ids
    come from JOIN and are never reused, each bound to a session token
    drawn at random that its later requests must carry (proto/PROTOCOL.md,
    "Identity"); a client is forgotten when it leaves, has been silent for
    heartbeat.expiry_ms, is refused by the guard too often, or its key
    leaves the allowlist.

    The registry is the only owner of client records: it allocates them
    at JOIN and is the only one that frees them. The guard and the
    allowlist give verdicts (forget this client; this key is no longer
    allowed), and the file that asked them asks the registry to act.  */
#ifndef FASGD_SERVER_REGISTRY_H_INCLUDED
#define FASGD_SERVER_REGISTRY_H_INCLUDED

#include "greeting.h"
#include "server.h"
#include "snapshot.h"
#include "stats.h"
#include "turn_slow.h"
#include "verdict.h"

#include <stddef.h>
#include <stdint.h>

/*  A client's record. Handlers read and count in it; the guard keeps its
    vote in it; only the registry creates and frees it.  */
typedef struct {
    uint32_t id;
    uint64_t session;                   /* the WELCOME's token, which its requests must carry */
    char name [64];
    int64_t joined_ms, last_seen_ms;
    uint64_t pushes, repeats, fetches, not_modified;
    uint64_t last_tau;
    int has_pushed;                     /* a push of it was applied (dispatch.c; the guard reads it) */
    float *last;                        /* resend-last cache */
    int has_last;                       /* it holds an accepted gradient */
    uint64_t last_ts;
    double last_norm;                   /* its norm */
    uint64_t refused, clipped;          /* gradients the guard refused, clipped */
    uint64_t refused_in_row;
    uint64_t ignored, weighted;         /* pushes the guard applied with weight 0, with less than 1 */
    int over_left_out;                  /* its last push was above the norm bound and left out (guard.c) */
    fasgd_verdict_record_t verdict;     /* its record with the guard (common/verdict.h) */
    /*  Its record with the guard's loss check (guard_loss.c): the rise
        of the held-out loss (log) its applied pushes were followed by,
        aged at each push judged; its pushes applied
        since the last measure (weight, count), its share, and whether it
        is on the list of those with a share.  */
    double loss_rise;
    double loss_pending_w, loss_pending_n;
    double loss_share;                  /* its share of the weight applied, averaged */
    int loss_pending;
    double credit;                      /* a weight below 1 applies a share of its pushes: what it is owed */
    double loss_weight;                 /* the weight the guard gave its push being applied */
    uint64_t loss_cut;                  /* pushes whose weight the loss check took (some of) away */
    double norm_typical;                /* its vote in the guard's median (guard.c) */
    int typical_kept;                   /* norm_typical is its key's, kept: its first push moves it */
    size_t key_slot;                    /* the guard's record of its key, + 1; 0: none yet */
    int has_typical;                    /* it votes: the guard's voters [vote_slot] is it */
    size_t vote_slot;
    fasgd_snapshot_t *snap;             /* θ_used, for the rules that need it */
    int turn_cuts;                      /* its turns cut: a reply to it held the next for the turn's bound */
    int64_t turn_skips;                 /* its replies still to go without a turn (in their order, holding no one) */
    fasgd_srv_turn_pace_t turn_pace;    /* its turns that ended by themselves (turn_slow.h) */
    int turn_slower;                    /* whether its last one found its path slower than the others' */
    char key [41];                      /* CURVE: the public key (Z85) it joined with; "" off */
    char addr [FASGD_SRV_ADDR_LEN];     /* the address it joined from (greeting.c's text); "?" unknown */
    char key_name [64];                 /* that key's name in the allowlist */
    int trusted;                        /* that key is one of guard.trusted's: its pushes are the guard's reference */
} fasgd_srv_client_t;

typedef struct fasgd_srv_registry_t fasgd_srv_registry_t;
typedef struct fasgd_srv_guard_t fasgd_srv_guard_t;
typedef struct fasgd_srv_security_t fasgd_srv_security_t;

/*  The registry for cfg's limits (limits.clients, limits.cache_bytes,
    heartbeat.expiry_ms), whose clients push n values; cache_last: each
    keeps a resend-last cache of n floats (counted against
    limits.cache_bytes, allocated by its first push); needs_used: each
    may hold a snapshot of n floats, the θ it fetched (counted against
    limits.snapshot_bytes). guard (may be NULL)
    is told when a client goes; st counts joins, refusals, expiries and
    revocations. cfg, guard and st are borrowed. NULL out of memory.  */
fasgd_srv_registry_t *fasgd_srv_registry_new (const fasgd_server_cfg_t *cfg, size_t n, int cache_last,
                                              int needs_used, fasgd_srv_guard_t *guard, fasgd_srv_stats_t *st);
/*  Frees every client, then the registry.  */
void fasgd_srv_registry_destroy (fasgd_srv_registry_t **self_p);
/*  Registers a client named by body (len bytes, sanitised), bound to a
    new session token and to key (NULL without CURVE) allowed under
    key_name; trusted: that key is one of guard.trusted's. Returns it,
    borrowed, or NULL with the reason to refuse the JOIN with (503) in
    why.  */
fasgd_srv_client_t *fasgd_srv_registry_join (fasgd_srv_registry_t *self, const char *body, size_t len,
                                             const char *key, const char *key_name, int trusted, char *why,
                                             size_t whylen);
/*  The client with this id; NULL when unknown (never joined, left,
    expired). Borrowed.  */
fasgd_srv_client_t *fasgd_srv_registry_lookup (const fasgd_srv_registry_t *self, uint32_t id);
/*  The highest id given so far: every client's id is 1 to this.  */
uint32_t fasgd_srv_registry_last_id (const fasgd_srv_registry_t *self);
/*  Clients joined now.  */
size_t fasgd_srv_registry_live (const fasgd_srv_registry_t *self);
/*  Gives c its resend-last cache unless it has one: 0, or -1 out of
    memory.  */
int fasgd_srv_registry_cache (fasgd_srv_registry_t *self, fasgd_srv_client_t *c);
/*  Frees c, which the registry owns: after this, c is gone.  */
void fasgd_srv_registry_free (fasgd_srv_registry_t *self, fasgd_srv_client_t *c);
/*  Expires every client silent for longer than heartbeat.expiry_ms at
    now (ms).  */
void fasgd_srv_registry_expire (fasgd_srv_registry_t *self, int64_t now);
/*  Forgets every client whose key security no longer allows (after a
    reload of its allowlist), and marks the others trusted or not as
    guard.trusted now says; returns how many were forgotten.  */
size_t fasgd_srv_registry_revoke (fasgd_srv_registry_t *self, fasgd_srv_security_t *security);

#endif
