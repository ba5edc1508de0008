/*  pslite: one measurement of ps-lite, the peer parameter server, run
    from bench-net in the same process tree.

    The peer comes as a directory holding its harness: run.sh D W S starts
    a ps-lite scheduler, server and W workers on 127.0.0.1, each worker
    looping push(g) then pull(θ) on one key of D float32 values for S
    seconds after a warm-up, and prints one line on stdout:

        pslite D=<D> workers=<W> steps_per_s=<total over the workers>

    with its diagnostics on stderr (build.sh beside it builds the binary
    run.sh starts).  */
#ifndef FASGD_BENCH_PSLITE_H
#define FASGD_BENCH_PSLITE_H

#include <stddef.h>
#include <sys/types.h>

/*  The running harness, for a signal handler to stop (kill is
    async-signal-safe); 0 when none runs.  */
extern volatile pid_t fasgd_pslite_pid;

/*  0 when DIR/run.sh is there and executable; else -1 with the reason in
    err.  */
int fasgd_pslite_check (const char *dir, char *err, size_t errlen);

/*  Runs DIR/run.sh D WORKERS SECONDS with WARMUP seconds of warm-up
    (PSLITE_WARMUP) and, when keep_heap, glibc's malloc keeping large
    blocks in the heap (PSLITE_MALLOC_KEEP=1), as bench-net's clients do.
    Returns its steps/s (> 0), or -1 with the reason (and the last line
    of its diagnostics) in err. Bounded: the harness retries a failed
    launch a few times within its own deadline, and is killed when it
    runs past warmup + seconds + 10 minutes.  */
double fasgd_pslite_rate (const char *dir, size_t d, int workers, double seconds, double warmup,
                          int keep_heap, char *err, size_t errlen);

#endif
