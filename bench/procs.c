/*  procs: CPU time of processes from /proc.  */
#include "procs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  The fields of /proc/PID/stat after the command name: the parent's pid
    and the CPU clock ticks (user, system). 0, or -1.  */
static int
s_stat (pid_t pid, pid_t *ppid, double *cpu, char *comm, size_t commlen)
{
    char path [64], line [1024];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    size_t len = fread (line, 1, sizeof line - 1, f);
    fclose (f);
    line [len] = 0;
    /*  The name sits in parens and may hold spaces and parens itself:
        fields 4 (ppid), 14 and 15 (utime, stime) are counted after the
        last closing paren.  */
    char *open = strchr (line, '('), *close = strrchr (line, ')');
    int pp;
    unsigned long long ut, st;
    if (!open || !close || close < open
        || sscanf (close + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &pp, &ut, &st) != 3)
        return -1;
    if (comm) {
        size_t n = (size_t) (close - open - 1);
        if (n >= commlen)
            n = commlen - 1;
        memcpy (comm, open + 1, n);
        comm [n] = 0;
    }
    *ppid = pp;
    *cpu = (double) (ut + st) / (double) sysconf (_SC_CLK_TCK);
    return 0;
}

double
fasgd_procs_cpu (pid_t pid)
{
    pid_t ppid;
    double cpu;
    return s_stat (pid, &ppid, &cpu, NULL, 0) == 0 ? cpu : -1;
}

/*  1 when pid descends from root (at most 16 generations up).  */
static int
s_descends (pid_t pid, pid_t root)
{
    for (int up = 0; up < 16 && pid > 1; up++) {
        pid_t ppid;
        double cpu;
        if (s_stat (pid, &ppid, &cpu, NULL, 0) != 0)
            return 0;
        if (ppid == root)
            return 1;
        pid = ppid;
    }
    return 0;
}

static void
s_role (pid_t pid, const char *env_key, char *role, size_t rolelen)
{
    char path [64], env [16384];
    role [0] = 0;
    snprintf (path, sizeof path, "/proc/%d/environ", (int) pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return;
    size_t len = fread (env, 1, sizeof env - 1, f);
    fclose (f);
    env [len] = 0;
    size_t klen = strlen (env_key);
    for (size_t i = 0; i < len; i += strlen (env + i) + 1)
        if (strncmp (env + i, env_key, klen) == 0 && env [i + klen] == '=') {
            snprintf (role, rolelen, "%s", env + i + klen + 1);
            return;
        }
}

int
fasgd_procs_sample (fasgd_procs_t *self, pid_t root, const char *comm, const char *env_key)
{
    DIR *dir = opendir ("/proc");
    if (!dir)
        return -1;
    struct dirent *e;
    while ((e = readdir (dir))) {
        char *end;
        long v = strtol (e->d_name, &end, 10);
        if (*end || v <= 1)
            continue;
        pid_t pid = (pid_t) v, ppid;
        double cpu;
        char name [64];
        if (s_stat (pid, &ppid, &cpu, name, sizeof name) != 0 || strcmp (name, comm) != 0
            || !s_descends (pid, root))
            continue;
        int k = 0;
        while (k < self->n && self->p [k].pid != pid)
            k++;
        if (k == self->n) {
            if (self->n == FASGD_PROCS_MAX)
                continue;
            self->n++;
            self->p [k].pid = pid;
            s_role (pid, env_key, self->p [k].role, sizeof self->p [k].role);
        }
        self->p [k].cpu = cpu;
    }
    closedir (dir);
    return 0;
}

double
fasgd_procs_role_cpu (const fasgd_procs_t *self, const char *role, int *count)
{
    double sum = 0;
    int n = 0;
    for (int k = 0; k < self->n; k++)
        if (strcmp (self->p [k].role, role) == 0) {
            sum += self->p [k].cpu;
            n++;
        }
    if (count)
        *count = n;
    return sum;
}
