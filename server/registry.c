/*  registry: the clients the server knows (registry.h), and the only
    owner of their records.  */
#include "registry.h"

#include "clock.h"
#include "guard.h"
#include "log.h"
#include "security.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

struct fasgd_srv_registry_t {
    const fasgd_server_cfg_t *cfg;      /* limits.clients, limits.cache_bytes, heartbeat.expiry_ms */
    size_t n;                           /* values in a gradient */
    int cache_last;                     /* clients keep a resend-last cache */
    int needs_used;                     /* clients hold the θ they fetched (the rule needs θ_used) */
    fasgd_srv_guard_t *guard;           /* told when a client goes; may be NULL */
    fasgd_srv_stats_t *st;
    fasgd_srv_client_t **clients;       /* by id - 1 */
    uint32_t next_id;
    size_t live;
    uint64_t cache_bytes;
};

/*  64 random bits from the kernel, never 0 (a request without a
    session); 0 when the kernel gives none.  */
static uint64_t
s_session_token (void)
{
    uint64_t t = 0;
    for (int tries = 0; t == 0 && tries < 8; tries++) {
        ssize_t got = getrandom (&t, sizeof t, 0);
        if (got < 0 && errno == ENOSYS) {
            int fd = open ("/dev/urandom", O_RDONLY | O_CLOEXEC);
            got = fd < 0 ? -1 : read (fd, &t, sizeof t);
            if (fd >= 0)
                close (fd);
        }
        if (got != (ssize_t) sizeof t)
            t = 0;
    }
    return t;
}

fasgd_srv_registry_t *
fasgd_srv_registry_new (const fasgd_server_cfg_t *cfg, size_t n, int cache_last, int needs_used,
                        fasgd_srv_guard_t *guard, fasgd_srv_stats_t *st)
{
    fasgd_srv_registry_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = cfg;
    self->n = n;
    self->cache_last = cache_last;
    self->needs_used = needs_used;
    self->guard = guard;
    self->st = st;
    return self;
}

void
fasgd_srv_registry_destroy (fasgd_srv_registry_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_srv_registry_t *self = *self_p;
    for (uint32_t i = 0; i < self->next_id; i++)
        if (self->clients [i])
            fasgd_srv_registry_free (self, self->clients [i]);
    free (self->clients);
    free (self);
    *self_p = NULL;
}

fasgd_srv_client_t *
fasgd_srv_registry_lookup (const fasgd_srv_registry_t *self, uint32_t id)
{
    if (id == 0 || id > self->next_id)
        return NULL;
    return self->clients [id - 1];
}

void
fasgd_srv_registry_free (fasgd_srv_registry_t *self, fasgd_srv_client_t *c)
{
    if (self->guard)
        fasgd_srv_guard_forget (self->guard, c);
    self->clients [c->id - 1] = NULL;
    self->live--;
    if (c->last) {
        self->cache_bytes -= self->n * sizeof (float);
        munmap (c->last, self->n * sizeof (float));
    }
    fasgd_snapshot_release (c->snap);
    free (c);
}

void
fasgd_srv_registry_expire (fasgd_srv_registry_t *self, int64_t now)
{
    for (uint32_t i = 0; i < self->next_id; i++) {
        fasgd_srv_client_t *c = self->clients [i];
        if (c && now - c->last_seen_ms > self->cfg->expiry_ms) {
            fasgd_log_notice ("client %u (%s) expired after %d ms of silence", c->id, c->name,
                              self->cfg->expiry_ms);
            self->st->expired++;
            fasgd_srv_registry_free (self, c);
        }
    }
}

size_t
fasgd_srv_registry_revoke (fasgd_srv_registry_t *self, fasgd_srv_security_t *security)
{
    /*  A client whose key is gone is forgotten now: its next request
        gets 401, and its JOIN 403.  */
    size_t revoked = 0;
    for (uint32_t i = 0; i < self->next_id; i++) {
        fasgd_srv_client_t *c = self->clients [i];
        if (c && !fasgd_srv_security_allowed (security, c->key)) {
            fasgd_log_notice ("client %u (%s): key %s revoked", c->id, c->name, c->key);
            self->st->revoked++;
            revoked++;
            fasgd_srv_registry_free (self, c);
        }
        else if (c && c->trusted != fasgd_srv_security_trusted (security, c->key)) {
            c->trusted = !c->trusted;
            fasgd_log_notice ("client %u (%s): key %s is %s trusted (guard.trusted)", c->id, c->name, c->key,
                              c->trusted ? "now" : "no longer");
        }
    }
    return revoked;
}

uint32_t
fasgd_srv_registry_last_id (const fasgd_srv_registry_t *self)
{
    return self->next_id;
}

size_t
fasgd_srv_registry_live (const fasgd_srv_registry_t *self)
{
    return self->live;
}

int
fasgd_srv_registry_cache (fasgd_srv_registry_t *self, fasgd_srv_client_t *c)
{
    if (c->last)
        return 0;
    /*  Mapped, not from the heap, so that it goes back to the system
        when the client goes, whatever malloc's thresholds.  */
    void *p = mmap (NULL, self->n * sizeof (float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    c->last = p;
    self->cache_bytes += self->n * sizeof (float);
    return 0;
}

fasgd_srv_client_t *
fasgd_srv_registry_join (fasgd_srv_registry_t *self, const char *body, size_t len, const char *key,
                         const char *key_name, int trusted, char *why, size_t whylen)
{
    if (self->live >= (size_t) self->cfg->max_clients) {
        self->st->refused++;
        snprintf (why, whylen, "limits.clients (%d) are joined: try again later", self->cfg->max_clients);
        return NULL;
    }
    if (self->cache_last && self->cache_bytes + self->n * sizeof (float) > self->cfg->max_cache_bytes) {
        self->st->refused++;
        snprintf (why, whylen, "resend-last caches are at limits.cache_bytes (%llu bytes)",
                  (unsigned long long) self->cfg->max_cache_bytes);
        return NULL;
    }
    /*  Each client may hold a θ of its own (one that no other client
        fetched): the bound counts the worst case, as for the caches.  */
    if (self->needs_used && (self->live + 1) * self->n * sizeof (float) > self->cfg->max_snapshot_bytes) {
        self->st->refused++;
        snprintf (why, whylen, "the copies of theta this rule keeps, one a client, would pass "
                  "limits.snapshot_bytes (%llu bytes, %zu clients)", (unsigned long long) self->cfg->max_snapshot_bytes,
                  self->live);
        return NULL;
    }
    uint64_t session = s_session_token ();
    if (!session) {
        self->st->refused++;
        snprintf (why, whylen, "no random bytes for a session token: %s", strerror (errno));
        return NULL;
    }
    fasgd_srv_client_t *c = calloc (1, sizeof *c);
    if (c && self->next_id % 1024 == 0) {
        /*  Ids are never reused, so the table only grows, 1024 at a time.  */
        fasgd_srv_client_t **grown = realloc (self->clients, (self->next_id + 1024) * sizeof *grown);
        if (grown)
            self->clients = grown;
        else {
            free (c);
            c = NULL;
        }
    }
    if (!c || self->next_id == UINT32_MAX) {
        free (c);
        snprintf (why, whylen, "out of memory");
        return NULL;
    }
    c->id = ++self->next_id;
    c->session = session;
    self->clients [c->id - 1] = c;
    self->live++;
    size_t k = 0;
    for (size_t i = 0; i < len && k < sizeof c->name - 1; i++)
        c->name [k++] = (body [i] >= 32 && body [i] < 127) ? body [i] : '?';
    c->name [k] = 0;
    if (key_name) {
        snprintf (c->key, sizeof c->key, "%s", key);
        snprintf (c->key_name, sizeof c->key_name, "%s", key_name);
        c->trusted = trusted;
    }
    /*  A key's clients start from what the guard knew of it.  */
    if (self->guard)
        fasgd_srv_guard_joined (self->guard, c);
    c->joined_ms = c->last_seen_ms = fasgd_srv_now_ms ();
    self->st->joins++;
    if (key_name)
        fasgd_log_notice ("client %u (%s) joined with key %s (%s%s); %zu connected", c->id,
                          *c->name ? c->name : "-", c->key_name, c->key, c->trusted ? ", trusted" : "",
                          self->live);
    else
        fasgd_log_notice ("client %u (%s) joined; %zu connected", c->id, *c->name ? c->name : "-", self->live);
    return c;
}
