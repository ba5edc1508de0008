/*  affinity: pinning a program's message path to one CPU.

    A step of fasgd-server is a chain of hand-offs: ZeroMQ's I/O thread
    reads a message and wakes the thread that applies it, which wakes the
    I/O thread again to send the reply. When the two threads sit on
    different CPUs every wake-up is an inter-processor interrupt, which on
    a virtual machine costs more than a small model's whole update. Pinned
    to one CPU, the hand-offs are plain context switches.  */
#ifndef FASGD_AFFINITY_H_INCLUDED
#define FASGD_AFFINITY_H_INCLUDED

#include <stddef.h>

/*  A set of CPUs, as the kernel's affinity mask (opaque: cpu_set_t needs
    _GNU_SOURCE).  */
typedef struct {
    unsigned long bits [1024 / (8 * sizeof (unsigned long))];
} fasgd_cpus_t;

#define FASGD_CPU_MAX 1023

/*  Pins the calling thread to CPU `cpu`; threads it starts afterwards (the
    I/O threads of the ZeroMQ context its first socket starts) inherit the
    pin. *before (when not NULL) receives the CPUs the thread could use
    until now, for threads that should not be pinned (fasgd_affinity_set).
    Returns 0, or -1 with a one-line message in err when the CPU is not one
    the process may run on (the message lists those) or the kernel refuses.  */
int fasgd_affinity_pin (int cpu, fasgd_cpus_t *before, char *err, size_t errlen);

/*  Lets the calling thread run on the CPUs in *cpus. 0, or -1 (errno).  */
int fasgd_affinity_set (const fasgd_cpus_t *cpus);

/*  The CPUs in *cpus as a list such as "0-3,6", in buf (len bytes).  */
const char *fasgd_affinity_format (const fasgd_cpus_t *cpus, char *buf, size_t len);

#endif
