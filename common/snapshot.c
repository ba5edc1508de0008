/*  snapshot: see snapshot.h.  */
#include "snapshot.h"

#include "floats.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

/*  Free buffers the pool keeps for reuse: a few, and an eighth of those
    in use, so that steady traffic reuses them while a crowd that leaves
    (clients holding θ_used) gives its memory back.  */
#define S_KEEP_FREE 4

struct fasgd_snapshot_pool_t {
    size_t n;
    pthread_mutex_t lock;
    fasgd_snapshot_t *free_list;
    size_t live, peak, nfree;           /* under lock */
    int closed;                         /* destroyed with snapshots out: the last release frees it */
};

/*  Buffers are mapped, not allocated from the heap, so that one given
    back returns to the system at once, whatever malloc's thresholds.  */
static float *
s_buffer_new (size_t n)
{
    void *p = mmap (NULL, (n ? n : 1) * sizeof (float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void
s_snapshot_free (fasgd_snapshot_t *snap, size_t n)
{
    munmap (snap->theta, (n ? n : 1) * sizeof (float));
    free (snap);
}

fasgd_snapshot_pool_t *
fasgd_snapshot_pool_new (size_t n)
{
    fasgd_snapshot_pool_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->n = n;
    pthread_mutex_init (&self->lock, NULL);
    return self;
}

void
fasgd_snapshot_pool_destroy (fasgd_snapshot_pool_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_snapshot_pool_t *self = *self_p;
    *self_p = NULL;
    pthread_mutex_lock (&self->lock);
    fasgd_snapshot_t *list = self->free_list;
    size_t n = self->n;
    int last = self->live == 0;
    self->free_list = NULL;
    self->nfree = 0;
    self->closed = 1;
    pthread_mutex_unlock (&self->lock);
    /*  Past the unlock, a pool with snapshots out is theirs: the last
        release may free it while its free list is freed here.  */
    while (list) {
        fasgd_snapshot_t *next = list->next_free;
        s_snapshot_free (list, n);
        list = next;
    }
    if (last) {
        pthread_mutex_destroy (&self->lock);
        free (self);
    }
}

size_t
fasgd_snapshot_pool_live (const fasgd_snapshot_pool_t *self)
{
    fasgd_snapshot_pool_t *p = (fasgd_snapshot_pool_t *) self;
    pthread_mutex_lock (&p->lock);
    size_t live = p->live;
    pthread_mutex_unlock (&p->lock);
    return live;
}

size_t
fasgd_snapshot_pool_held (const fasgd_snapshot_pool_t *self)
{
    fasgd_snapshot_pool_t *p = (fasgd_snapshot_pool_t *) self;
    pthread_mutex_lock (&p->lock);
    size_t held = p->live + p->nfree;
    pthread_mutex_unlock (&p->lock);
    return held;
}

size_t
fasgd_snapshot_pool_peak (const fasgd_snapshot_pool_t *self)
{
    fasgd_snapshot_pool_t *p = (fasgd_snapshot_pool_t *) self;
    pthread_mutex_lock (&p->lock);
    size_t peak = p->peak;
    pthread_mutex_unlock (&p->lock);
    return peak;
}

fasgd_snapshot_t *
fasgd_snapshot_new (fasgd_snapshot_pool_t *pool)
{
    pthread_mutex_lock (&pool->lock);
    fasgd_snapshot_t *snap = pool->free_list;
    if (snap) {
        pool->free_list = snap->next_free;
        pool->nfree--;
    }
    pthread_mutex_unlock (&pool->lock);
    if (!snap) {
        snap = calloc (1, sizeof *snap);
        if (!snap || !(snap->theta = s_buffer_new (pool->n))) {
            free (snap);
            return NULL;
        }
        snap->pool = pool;
    }
    snap->refs = 1;
    snap->next_free = NULL;
    pthread_mutex_lock (&pool->lock);
    if (++pool->live > pool->peak)
        pool->peak = pool->live;
    pthread_mutex_unlock (&pool->lock);
    return snap;
}

fasgd_snapshot_t *
fasgd_snapshot_ref (fasgd_snapshot_t *snap)
{
    __atomic_add_fetch (&snap->refs, 1, __ATOMIC_RELAXED);
    return snap;
}

void
fasgd_snapshot_release (fasgd_snapshot_t *snap)
{
    if (!snap || __atomic_sub_fetch (&snap->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    fasgd_snapshot_pool_t *pool = snap->pool;
    pthread_mutex_lock (&pool->lock);
    pool->live--;
    if (pool->closed) {
        int last = pool->live == 0;
        size_t n = pool->n;
        pthread_mutex_unlock (&pool->lock);
        s_snapshot_free (snap, n);
        if (last) {
            pthread_mutex_destroy (&pool->lock);
            free (pool);
        }
        return;
    }
    snap->next_free = pool->free_list;
    pool->free_list = snap;
    pool->nfree++;
    /*  Past what is kept (which shrinks as those in use do): the extra
        buffers, off the list, are unmapped outside the lock.  */
    fasgd_snapshot_t *extra = NULL;
    while (pool->nfree > S_KEEP_FREE + pool->live / 8) {
        fasgd_snapshot_t *e = pool->free_list;
        pool->free_list = e->next_free;
        pool->nfree--;
        e->next_free = extra;
        extra = e;
    }
    pthread_mutex_unlock (&pool->lock);
    while (extra) {
        fasgd_snapshot_t *next = extra->next_free;
        s_snapshot_free (extra, pool->n);
        extra = next;
    }
}

int
fasgd_snapshot_apply (fasgd_snapshot_t **current, fasgd_rule_t *rule, const float *g,
                      uint64_t tau, const float *theta_used)
{
    fasgd_snapshot_t *cur = *current;
    /*  The acquire pairs with the release of the last other holder.  */
    if (__atomic_load_n (&cur->refs, __ATOMIC_ACQUIRE) == 1)
        return fasgd_rule_apply (rule, cur->theta, g, tau, theta_used);
    fasgd_snapshot_t *fresh = fasgd_snapshot_new (cur->pool);
    if (!fresh)
        return -2;
    int rc = fasgd_rule_apply_into (rule, fresh->theta, cur->theta, g, tau, theta_used);
    if (rc != 1) {
        fasgd_snapshot_release (fresh);     /* θ did not change: back to the pool */
        return rc;
    }
    fresh->ts = cur->ts;
    *current = fresh;
    fasgd_snapshot_release (cur);           /* still held by someone else */
    return rc;
}

int
fasgd_snapshot_apply_checked (fasgd_snapshot_t **current, fasgd_rule_t *rule, const float *g,
                              uint64_t tau, const float *theta_used)
{
    fasgd_snapshot_t *cur = *current;
    fasgd_snapshot_t *fresh = fasgd_snapshot_new (cur->pool);
    if (!fresh)
        return -2;
    int rc = fasgd_rule_apply_into (rule, fresh->theta, cur->theta, g, tau, theta_used);
    if (rc == 1 && fasgd_floats_any_nonfinite (fresh->theta, fasgd_rule_size (rule)))
        rc = -3;
    if (rc != 1) {
        fasgd_snapshot_release (fresh);
        return rc;
    }
    fresh->ts = cur->ts;
    *current = fresh;
    fasgd_snapshot_release (cur);
    return rc;
}
