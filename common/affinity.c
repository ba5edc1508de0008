/*  affinity: see affinity.h.  */
#define _GNU_SOURCE
#include "affinity.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

_Static_assert (sizeof (fasgd_cpus_t) == sizeof (cpu_set_t), "fasgd_cpus_t mirrors cpu_set_t");
_Static_assert (FASGD_CPU_MAX + 1 == CPU_SETSIZE, "FASGD_CPU_MAX is CPU_SETSIZE - 1");

const char *
fasgd_affinity_format (const fasgd_cpus_t *cpus, char *buf, size_t len)
{
    cpu_set_t set;
    memcpy (&set, cpus, sizeof set);
    size_t used = 0;
    buf [0] = 0;
    for (int c = 0; c < CPU_SETSIZE && used < len; c++) {
        if (!CPU_ISSET (c, &set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET (last + 1, &set))
            last++;
        int k = last == c ? snprintf (buf + used, len - used, "%s%d", used ? "," : "", c)
                          : snprintf (buf + used, len - used, "%s%d-%d", used ? "," : "", c, last);
        used += k > 0 ? (size_t) k : 0;
        c = last;
    }
    return buf;
}

int
fasgd_affinity_set (const fasgd_cpus_t *cpus)
{
    cpu_set_t set;
    memcpy (&set, cpus, sizeof set);
    int rc = pthread_setaffinity_np (pthread_self (), sizeof set, &set);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

int
fasgd_affinity_pin (int cpu, fasgd_cpus_t *before, char *err, size_t errlen)
{
    cpu_set_t now;
    int rc = pthread_getaffinity_np (pthread_self (), sizeof now, &now);
    if (rc != 0) {
        snprintf (err, errlen, "cannot read this thread's CPUs: %s", strerror (rc));
        return -1;
    }
    fasgd_cpus_t allowed;
    memcpy (&allowed, &now, sizeof now);
    if (before)
        *before = allowed;
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET (cpu, &now)) {
        char list [256];
        snprintf (err, errlen, "CPU %d is not one this process may run on (%s)", cpu,
                  fasgd_affinity_format (&allowed, list, sizeof list));
        return -1;
    }
    cpu_set_t one;
    CPU_ZERO (&one);
    CPU_SET (cpu, &one);
    rc = pthread_setaffinity_np (pthread_self (), sizeof one, &one);
    if (rc != 0) {
        snprintf (err, errlen, "cannot pin to CPU %d: %s", cpu, strerror (rc));
        return -1;
    }
    return 0;
}
