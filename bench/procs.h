/*  procs: CPU time of processes from /proc, for benchmarks that compare
    the CPU a step costs as well as the rate: one process, or every
    process of a name below a root process (a harness's children), each
    with the role its environment gives it.  */
#ifndef FASGD_BENCH_PROCS_H
#define FASGD_BENCH_PROCS_H

#include <sys/types.h>

/*  CPU seconds used so far by process pid (user and system, all threads),
    from /proc/PID/stat; -1 where it cannot be read.  */
double fasgd_procs_cpu (pid_t pid);

#define FASGD_PROCS_MAX 64

/*  The processes below a root seen so far: for each, the CPU seconds at
    its last sample, kept after it exits (its last sample then stands for
    its total: what it used between that sample and its exit is lost).  */
typedef struct {
    int n;
    struct {
        pid_t pid;
        char role [32];                 /* the value of the role variable, "" when unset */
        double cpu;
    } p [FASGD_PROCS_MAX];
} fasgd_procs_t;

/*  Samples every process named comm (as in /proc/PID/comm) that descends
    from root, reading role from the variable env_key in its environment
    (e.g. "DMLC_ROLE"). 0, or -1 where /proc cannot be read.  */
int fasgd_procs_sample (fasgd_procs_t *self, pid_t root, const char *comm, const char *env_key);

/*  The CPU seconds of the processes of that role so far, and how many
    there were.  */
double fasgd_procs_role_cpu (const fasgd_procs_t *self, const char *role, int *count);

#endif
