/*  libFuzzer harness: the bytes of a checkpoint that `fasgd-server
    --resume` reads.

    The input is a control byte and then the bytes. The control byte picks
    the rule (kind, statistic, softsync group) and the model size n in
    1..4, so input of the right length is within the fuzzer's reach; its
    top bit picks what the bytes are:
    - set: a whole checkpoint file, read by fasgd_checkpoint_parse against
      a model of one tensor of n parameters and that rule, as --resume
      reads it; an accepted one holds a finite θ, a state the rule
      takes, a guard state that checks and a staleness clock that does;
    - clear: the rule state blob alone, through fasgd_rule_state_set.
    Invariants besides memory safety: a refused blob leaves the rule's
    state as it was; an accepted one holds no NaN or infinity and is a
    state the rule writes and reads back unchanged.  */
#include "checkpoint.h"
#include "floats.h"
#include "log.h"
#include "rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    /*  A refused blob is logged as an error: thousands a second. Run the
        harness with -close_fd_mask=2 to drop them (libFuzzer keeps its
        own and the sanitizers' reports).  */
    fasgd_log_open ("fuzz_checkpoint", 0, FASGD_LOG_ERROR);
    return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned ctl = data [0];
    data++;
    size--;

    fasgd_rule_params_t p;
    fasgd_rule_params_default (&p);
    p.kind = (int) (ctl % 6);
    p.statistic = (ctl >> 3) & 1;
    p.softsync_group = (ctl >> 4) & 1 ? 3 : 1;
    size_t n = 1 + ((ctl >> 5) & 3);
    fasgd_rule_t *rule = fasgd_rule_new (&p, n, NULL, 0);
    if (!rule)
        return 0;
    size_t len = fasgd_rule_state_size (rule);
    if (ctl & 0x80) {
        fasgd_checkpoint_desc_t desc;
        memset (&desc, 0, sizeof desc);
        desc.rule = p.kind;
        desc.params = n;
        desc.state_len = len;
        desc.ntensors = 1;
        strcpy (desc.tensors [0].name, "t");
        desc.tensors [0].ndim = 1;
        desc.tensors [0].dims [0] = n;
        char err [256];
        fasgd_checkpoint_t *ck = fasgd_checkpoint_parse (data, size, &desc, err, sizeof err);
        if (ck && (ck->n != n || ck->state_len != len || fasgd_floats_any_nonfinite (ck->theta, n)
                   || ck->T > FASGD_CHECKPOINT_T_MAX || fasgd_rule_state_set (rule, ck->state, len) != 0
                   || (ck->has_guard && fasgd_checkpoint_guard_check (&ck->guard, err, sizeof err) != 0)
                   || (!ck->has_clock && ck->nclock) || (ck->nclock && !ck->clock)
                   || fasgd_checkpoint_clock_check (ck->T, ck->clock, ck->nclock, err, sizeof err) != 0))
            __builtin_trap ();
        fasgd_checkpoint_destroy (&ck);
        fasgd_rule_destroy (&rule);
        return 0;
    }
    uint8_t *before = malloc (len), *after = malloc (len);
    if (before && after) {
        fasgd_rule_state_get (rule, before);
        int rc = fasgd_rule_state_set (rule, data, size);
        fasgd_rule_state_get (rule, after);
        if (rc != 0 && memcmp (before, after, len) != 0)
            __builtin_trap ();
        /*  An accepted state holds only finite statistics (40 bytes of
            header, then floats)...  */
        for (size_t i = 40; rc == 0 && i + sizeof (float) <= len; i += sizeof (float)) {
            float v;
            memcpy (&v, after + i, sizeof v);
            if (!isfinite (v))
                __builtin_trap ();
        }
        /*  ...and is one the rule itself writes and reads back unchanged.  */
        if (rc == 0 && (fasgd_rule_state_set (rule, after, len) != 0
                        || (fasgd_rule_state_get (rule, before), memcmp (before, after, len) != 0)))
            __builtin_trap ();
    }
    free (before);
    free (after);
    fasgd_rule_destroy (&rule);
    return 0;
}
