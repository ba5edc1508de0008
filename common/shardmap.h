/*  shardmap: how θ is split across S sharded fasgd-servers. A pure
    function of the model's tensor sizes (in θ's order) and S, so every
    shard, and anyone checking one, computes the same map without
    talking to the others.

    Shard k holds θ's contiguous part [b_k, b_{k+1}), b_0 = 0, b_S = D.
    Each inner boundary starts at floor(k·D/S) (equal parts) and moves to
    the nearest boundary between two tensors when one lies within D/(20·S)
    of it (5% of a part), so a tensor is split only when it is much larger
    than the slack: small tensors stay whole, a large one is cut where the
    equal split falls.  */
#ifndef FASGD_SHARDMAP_H_INCLUDED
#define FASGD_SHARDMAP_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define FASGD_SHARDMAP_MAX 1024     /* shards of one model at most */

/*  The part of shard k of S, for ntensors tensors of these sizes (each
    ≥ 1): *off and *len. Returns 0, or -1 with the reason in err when
    S is 0 or above FASGD_SHARDMAP_MAX, k ≥ S, or S exceeds D.  */
int fasgd_shardmap_part (const uint64_t *sizes, int ntensors, uint32_t S, uint32_t k, uint64_t *off,
                         uint64_t *len, char *err, size_t errlen);

#endif
