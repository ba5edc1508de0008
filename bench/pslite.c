/*  pslite: one measurement of ps-lite through its harness's run.sh.  */
#include "pslite.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

volatile pid_t fasgd_pslite_pid;

/*  Beyond warm-up and the measured seconds, what start-up, the harness's
    retries and teardown may take before the run is given up.  */
#define S_GRACE_S 600

int
fasgd_pslite_check (const char *dir, char *err, size_t errlen)
{
    char path [4096];
    if (snprintf (path, sizeof path, "%s/run.sh", dir) >= (int) sizeof path) {
        snprintf (err, errlen, "%s: path too long", dir);
        return -1;
    }
    if (access (path, X_OK) != 0) {
        snprintf (err, errlen, "%s: %s (a directory with ps-lite's run.sh and build.sh)", path,
                  strerror (errno));
        return -1;
    }
    return 0;
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/*  The last line of the harness's diagnostics, for an error message.  */
static void
s_last_line (int fd, char *out, size_t outlen)
{
    char buf [4096];
    off_t size = lseek (fd, 0, SEEK_END);
    off_t from = size > (off_t) sizeof buf - 1 ? size - (off_t) sizeof buf + 1 : 0;
    ssize_t got = pread (fd, buf, sizeof buf - 1, from);
    out [0] = 0;
    if (got <= 0)
        return;
    buf [got] = 0;
    while (got > 0 && (buf [got - 1] == '\n' || buf [got - 1] == '\r'))
        buf [--got] = 0;
    const char *line = strrchr (buf, '\n');
    line = line ? line + 1 : buf;
    size_t len = strlen (line);
    if (len >= outlen)
        len = outlen - 1;
    memcpy (out, line, len);
    out [len] = 0;
}

double
fasgd_pslite_rate (const char *dir, size_t d, int workers, double seconds, double warmup, int keep_heap,
                   char *err, size_t errlen)
{
    char path [4096], a_d [32], a_w [16], a_s [32], e_warm [48];
    snprintf (path, sizeof path, "%s/run.sh", dir);
    snprintf (a_d, sizeof a_d, "%zu", d);
    snprintf (a_w, sizeof a_w, "%d", workers);
    snprintf (a_s, sizeof a_s, "%g", seconds);
    snprintf (e_warm, sizeof e_warm, "PSLITE_WARMUP=%g", warmup);
    /*  The harness's environment: this one's without the two variables it
        is given here, built before fork, since between fork and exec only
        async-signal-safe calls may run (ZeroMQ's threads are running).  */
    size_t nenv = 0;
    while (environ [nenv])
        nenv++;
    char **env = malloc ((nenv + 3) * sizeof *env);
    if (!env) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp (environ [i], "PSLITE_WARMUP=", 14) != 0 && strncmp (environ [i], "PSLITE_MALLOC_KEEP=", 19) != 0)
            env [k++] = environ [i];
    env [k++] = e_warm;
    if (keep_heap)
        env [k++] = "PSLITE_MALLOC_KEEP=1";
    env [k] = NULL;
    char diag_path [] = "/tmp/fasgd-bench-pslite-XXXXXX";
    int diag = mkstemp (diag_path);
    if (diag < 0) {
        snprintf (err, errlen, "a file for ps-lite's diagnostics: %s", strerror (errno));
        free (env);
        return -1;
    }
    unlink (diag_path);
    int out [2];
    if (pipe (out) != 0) {
        snprintf (err, errlen, "pipe: %s", strerror (errno));
        close (diag);
        free (env);
        return -1;
    }
    fflush (NULL);
    pid_t pid = fork ();
    if (pid < 0) {
        snprintf (err, errlen, "fork: %s", strerror (errno));
        close (out [0]);
        close (out [1]);
        close (diag);
        free (env);
        return -1;
    }
    if (pid == 0) {
        dup2 (out [1], STDOUT_FILENO);
        dup2 (diag, STDERR_FILENO);
        close (out [0]);
        close (out [1]);
        close (diag);
        /*  bench-net ignores nothing its children should see.  */
        signal (SIGPIPE, SIG_DFL);
        execve (path, (char *[]) { path, a_d, a_w, a_s, NULL }, env);
        static const char msg [] = "pslite-info cannot run the harness (execve failed)\n";
        (void) !write (STDERR_FILENO, msg, sizeof msg - 1);
        _exit (127);
    }
    free (env);
    fasgd_pslite_pid = pid;
    close (out [1]);

    char line [512];
    size_t len = 0;
    double deadline = s_now () + warmup + seconds + S_GRACE_S;
    int timed_out = 0;
    for (;;) {
        double left = deadline - s_now ();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = { .fd = out [0], .events = POLLIN };
        int r = poll (&p, 1, left > 1000 ? 1000000 : (int) (left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t got = read (out [0], line + len, sizeof line - 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t) got;
        if (len == sizeof line - 1)             /* more than the one line: keep the start */
            len = sizeof line - 2;
    }
    close (out [0]);
    if (timed_out)
        kill (pid, SIGTERM);                    /* the harness stops its own processes */
    int wstatus = 0;
    while (waitpid (pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    fasgd_pslite_pid = 0;
    line [len] = 0;

    char last [256];
    s_last_line (diag, last, sizeof last);
    close (diag);
    size_t got_d = 0;
    int got_w = 0;
    double rate = 0;
    if (timed_out)
        snprintf (err, errlen, "ps-lite ran past %d s and was stopped%s%s", (int) (warmup + seconds + S_GRACE_S),
                  *last ? ": " : "", last);
    else if (!WIFEXITED (wstatus) || WEXITSTATUS (wstatus) != 0)
        snprintf (err, errlen, "%s failed (status %d)%s%s", path,
                  WIFEXITED (wstatus) ? WEXITSTATUS (wstatus) : 128 + WTERMSIG (wstatus), *last ? ": " : "", last);
    else if (sscanf (line, "pslite D=%zu workers=%d steps_per_s=%lf", &got_d, &got_w, &rate) != 3 || got_d != d
             || got_w != workers || !(rate > 0))
        snprintf (err, errlen, "%s printed no measurement for D=%zu workers=%d (got '%.80s')", path, d, workers,
                  line);
    else
        return rate;
    return -1;
}
