/*  shardmap: the split of θ across shards (see shardmap.h).  */
#include "shardmap.h"

#include "log.h"

#include <inttypes.h>

/*  Boundary k of S (0 < k < S): the equal split's, or the nearest tensor
    boundary within the slack.  */
static uint64_t
s_boundary (const uint64_t *sizes, int ntensors, uint64_t D, uint32_t S, uint32_t k)
{
    uint64_t ideal = (uint64_t) (((unsigned __int128) D * k) / S);
    uint64_t slack = D / (20u * (uint64_t) S);
    uint64_t best = ideal, best_dist = slack + 1, at = 0;
    for (int i = 0; i + 1 < ntensors; i++) {
        at += sizes [i];
        uint64_t dist = at > ideal ? at - ideal : ideal - at;
        if (dist < best_dist) {
            best = at;
            best_dist = dist;
        }
    }
    return best;
}

int
fasgd_shardmap_part (const uint64_t *sizes, int ntensors, uint32_t S, uint32_t k, uint64_t *off,
                     uint64_t *len, char *err, size_t errlen)
{
    uint64_t D = 0;
    for (int i = 0; i < ntensors; i++) {
        if (sizes [i] == 0 || D + sizes [i] < D)
            return fasgd_errbuf (err, errlen, "tensor %d has no parameters or the sum overflows", i);
        D += sizes [i];
    }
    if (S == 0 || S > FASGD_SHARDMAP_MAX)
        return fasgd_errbuf (err, errlen, "%" PRIu32 " shards: from 1 to %d", S, FASGD_SHARDMAP_MAX);
    if (k >= S)
        return fasgd_errbuf (err, errlen, "shard %" PRIu32 " of %" PRIu32 " does not exist (0 to %" PRIu32 ")",
                             k, S, S - 1);
    if (D < S)
        return fasgd_errbuf (err, errlen, "%" PRIu32 " shards for %" PRIu64 " parameters", S, D);
    uint64_t lo = k == 0 ? 0 : s_boundary (sizes, ntensors, D, S, k);
    uint64_t hi = k + 1 == S ? D : s_boundary (sizes, ntensors, D, S, k + 1);
    /*  The slack is under half the gap between two equal boundaries, so
        moved boundaries keep their order; checked all the same.  */
    if (hi <= lo)
        return fasgd_errbuf (err, errlen, "shard %" PRIu32 " of %" PRIu32 " would be empty", k, S);
    *off = lo;
    *len = hi - lo;
    return 0;
}
