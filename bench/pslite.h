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

typedef struct {
    double rate;                /* steps/s over the workers, as the harness measured it */
    double srv_cpu, cli_cpu;    /* CPU seconds a step: the server; the workers together; -1 unknown */
    long long steps;            /* pushes over the workers' lives, warm-up included */
    char check [8];             /* "ok": θ[0] is −0.01 times the pushes made */
} fasgd_pslite_result_t;

/*  Runs DIR/run.sh D WORKERS SECONDS with WARMUP seconds of warm-up
    (PSLITE_WARMUP) and, when keep_heap, glibc's malloc keeping large
    blocks in the heap (PSLITE_MALLOC_KEEP=1), as bench-net's clients do.
    Fills res: the rate, and the CPU a step cost ps-lite's server and its
    workers, read from /proc while they run (each process's CPU over its
    life, start-up and warm-up included, over every push it made). 0, or
    -1 with the reason (and the last line of its diagnostics) in err; a
    run whose correctness check (check=ok in the harness's pslite-info
    line) fails or is missing is an error. Bounded: the harness retries a
    failed launch a few times within its own deadline, and is killed when
    it runs past warmup + seconds + 10 minutes.  */
int fasgd_pslite_run (const char *dir, size_t d, int workers, double seconds, double warmup, int keep_heap,
                      fasgd_pslite_result_t *res, char *err, size_t errlen);

#endif
