/*  pslite: one measurement of ps-lite through its harness's run.sh.  */
#include "pslite.h"
#include "procs.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
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
/*  How often the CPU of ps-lite's processes is read while they run: what
    a process uses after its last sample (its teardown) is not counted.  */
#define S_SAMPLE_MS 100

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


/*  The harness's summary: the last line of its diagnostics that starts
    with "pslite-info attempts=", into out; 0, or -1 when there is none.  */
static int
s_info_line (int fd, char *out, size_t outlen)
{
    char buf [16384];
    off_t size = lseek (fd, 0, SEEK_END);
    off_t from = size > (off_t) sizeof buf - 1 ? size - (off_t) sizeof buf + 1 : 0;
    ssize_t got = pread (fd, buf, sizeof buf - 1, from);
    out [0] = 0;
    if (got <= 0)
        return -1;
    buf [got] = 0;
    const char *found = NULL;
    for (const char *p = buf; (p = strstr (p, "pslite-info attempts=")); p++)
        if (p == buf || p [-1] == '\n')
            found = p;
    if (!found)
        return -1;
    size_t len = strcspn (found, "\n");
    if (len >= outlen)
        len = outlen - 1;
    memcpy (out, found, len);
    out [len] = 0;
    return 0;
}

/*  The value of " KEY=" in a line, up to the next space, into out.  */
static int
s_field (const char *line, const char *key, char *out, size_t outlen)
{
    char pat [64];
    snprintf (pat, sizeof pat, " %s=", key);
    const char *p = strstr (line, pat);
    if (!p)
        return -1;
    p += strlen (pat);
    size_t len = strcspn (p, " ");
    if (len >= outlen)
        len = outlen - 1;
    memcpy (out, p, len);
    out [len] = 0;
    return 0;
}

/*  The pushes of every worker over its life (warm-up included), from the
    "BENCH worker ... total_pushes=P" lines of the logs in dir; -1 when a
    worker's line is missing.  */
static long long
s_total_pushes (const char *dir, int workers)
{
    char pattern [4096];
    snprintf (pattern, sizeof pattern, "%s/worker*.log", dir);
    glob_t g;
    if (glob (pattern, 0, NULL, &g) != 0)
        return -1;
    long long sum = 0;
    int found = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen (g.gl_pathv [i], "r");
        char line [1024];
        while (f && fgets (line, sizeof line, f)) {
            const char *p = strstr (line, " total_pushes=");
            if (strncmp (line, "BENCH worker", 12) == 0 && p) {
                sum += strtoll (p + 14, NULL, 10);
                found++;
            }
        }
        if (f)
            fclose (f);
    }
    globfree (&g);
    return found == workers ? sum : -1;
}

/*  The harness's environment: this one's without the two variables it is
    given here (warm is the PSLITE_WARMUP= one), built before fork, since
    between fork and exec only async-signal-safe calls may run (ZeroMQ's
    threads are running). NULL when out of memory; the caller frees the
    array, not its strings.  */
static char **
s_harness_env (char *warm, int keep_heap)
{
    size_t nenv = 0;
    while (environ [nenv])
        nenv++;
    char **env = malloc ((nenv + 3) * sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp (environ [i], "PSLITE_WARMUP=", 14) != 0 && strncmp (environ [i], "PSLITE_MALLOC_KEEP=", 19) != 0)
            env [k++] = environ [i];
    env [k++] = warm;
    if (keep_heap)
        env [k++] = "PSLITE_MALLOC_KEEP=1";
    env [k] = NULL;
    return env;
}

/*  Starts argv [0] with env, its stdout the write end of out, its stderr
    diag: the child's pid, or -1 with the reason in err (out then closed).  */
static pid_t
s_harness_start (char *const argv [], char **env, int out [2], int diag, char *err, size_t errlen)
{
    fflush (NULL);
    pid_t pid = fork ();
    if (pid < 0) {
        snprintf (err, errlen, "fork: %s", strerror (errno));
        close (out [0]);
        close (out [1]);
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
        execve (argv [0], argv, env);
        static const char msg [] = "pslite-info cannot run the harness (execve failed)\n";
        (void) !write (STDERR_FILENO, msg, sizeof msg - 1);
        _exit (127);
    }
    close (out [1]);
    return pid;
}

/*  Reads the harness's stdout (fd) into line (its start, NUL-terminated)
    until it closes or `seconds` pass, sampling its processes' CPU into
    procs meanwhile; then stops it if it ran late and reaps it. 1 when it
    ran late, else 0; its wait status in *wstatus.  */
static int
s_harness_wait (pid_t pid, int fd, double seconds, fasgd_procs_t *procs, char *line, size_t size, int *wstatus)
{
    size_t len = 0;
    memset (procs, 0, sizeof *procs);
    double deadline = s_now () + seconds;
    int timed_out = 0;
    for (;;) {
        double left = deadline - s_now ();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll (&p, 1, left > 0.1 ? S_SAMPLE_MS : (int) (left * 1000) + 1);
        fasgd_procs_sample (procs, pid, "bench_pushpull", "DMLC_ROLE");
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t got = read (fd, line + len, size - 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t) got;
        if (len == size - 1)                    /* more than the one line: keep the start */
            len = size - 2;
    }
    close (fd);
    if (timed_out)
        kill (pid, SIGTERM);                    /* the harness stops its own processes */
    *wstatus = 0;
    while (waitpid (pid, wstatus, 0) < 0 && errno == EINTR)
        ;
    line [len] = 0;
    return timed_out;
}

/*  What a finished harness said: its measurement (line), the check and
    the logs in its diagnostics (diag), its processes' CPU (procs) into
    res. 0, or -1 with the reason in err.  */
static int
s_harness_result (const char *path, size_t d, int workers, double limit, int timed_out, int wstatus,
                  const char *line, int diag, const fasgd_procs_t *procs, fasgd_pslite_result_t *res, char *err,
                  size_t errlen)
{
    char last [256], info [1024] = "";
    s_last_line (diag, last, sizeof last);
    s_info_line (diag, info, sizeof info);
    size_t got_d = 0;
    int got_w = 0;
    double rate = 0;
    char check [32] = "", logs [1024] = "";
    if (timed_out)
        snprintf (err, errlen, "ps-lite ran past %d s and was stopped%s%s", (int) limit, *last ? ": " : "", last);
    else if (!WIFEXITED (wstatus) || WEXITSTATUS (wstatus) != 0)
        snprintf (err, errlen, "%s failed (status %d)%s%s", path,
                  WIFEXITED (wstatus) ? WEXITSTATUS (wstatus) : 128 + WTERMSIG (wstatus), *last ? ": " : "", last);
    else if (sscanf (line, "pslite D=%zu workers=%d steps_per_s=%lf", &got_d, &got_w, &rate) != 3 || got_d != d
             || got_w != workers || !(rate > 0))
        snprintf (err, errlen, "%s printed no measurement for D=%zu workers=%d (got '%.80s')", path, d, workers,
                  line);
    /*  θ[0] must equal −0.01 times the pushes the workers made: a round
        whose check fails or is missing measured nothing.  */
    else if (s_field (info, "check", check, sizeof check) != 0)
        snprintf (err, errlen, "%s printed no check= line (last: '%.200s')", path, last);
    else if (strcmp (check, "ok") != 0)
        snprintf (err, errlen, "ps-lite's check failed: %.400s", info);
    else {
        res->rate = rate;
        snprintf (res->check, sizeof res->check, "ok");
        long long steps = s_field (info, "logs", logs, sizeof logs) == 0 ? s_total_pushes (logs, workers) : -1;
        int ns = 0, nw = 0;
        double srv = fasgd_procs_role_cpu (procs, "server", &ns), cli = fasgd_procs_role_cpu (procs, "worker", &nw);
        res->steps = steps;
        if (steps > 0 && ns == 1 && nw == workers) {
            res->srv_cpu = srv / (double) steps;
            res->cli_cpu = cli / (double) steps;
        }
        return 0;
    }
    return -1;
}

int
fasgd_pslite_run (const char *dir, size_t d, int workers, double seconds, double warmup, int keep_heap,
                  fasgd_pslite_result_t *res, char *err, size_t errlen)
{
    *res = (fasgd_pslite_result_t) { .rate = -1, .srv_cpu = -1, .cli_cpu = -1 };
    char path [4096], a_d [32], a_w [16], a_s [32], e_warm [48];
    snprintf (path, sizeof path, "%s/run.sh", dir);
    snprintf (a_d, sizeof a_d, "%zu", d);
    snprintf (a_w, sizeof a_w, "%d", workers);
    snprintf (a_s, sizeof a_s, "%g", seconds);
    snprintf (e_warm, sizeof e_warm, "PSLITE_WARMUP=%g", warmup);
    char **env = s_harness_env (e_warm, keep_heap);
    if (!env) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
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
    pid_t pid = s_harness_start ((char *[]) { path, a_d, a_w, a_s, NULL }, env, out, diag, err, errlen);
    free (env);
    if (pid < 0) {
        close (diag);
        return -1;
    }
    fasgd_pslite_pid = pid;
    char line [512];
    /*  Its processes' CPU, sampled while they run.  */
    static fasgd_procs_t procs;
    int wstatus;
    double limit = warmup + seconds + S_GRACE_S;
    int timed_out = s_harness_wait (pid, out [0], limit, &procs, line, sizeof line, &wstatus);
    fasgd_pslite_pid = 0;
    int rc = s_harness_result (path, d, workers, limit, timed_out, wstatus, line, diag, &procs, res, err, errlen);
    close (diag);
    return rc;
}
