/*  log: levelled logging to stderr or syslog.  */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

fasgd_log_level_t fasgd_log_threshold = FASGD_LOG_NOTICE;

static char s_ident [64] = "fasgd";
static int s_syslog = 0;
/*  One line is formatted then written with one call, but the mutex keeps
    lines from threads (the server's evaluator) whole on any libc.  */
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *s_names [] = { "error", "warn", "notice", "info", "debug" };
static const int s_syslog_prio [] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

void
fasgd_log_open (const char *ident, int use_syslog, fasgd_log_level_t level)
{
    if (ident) {
        const char *base = strrchr (ident, '/');
        snprintf (s_ident, sizeof s_ident, "%s", base ? base + 1 : ident);
    }
    if (s_syslog)
        closelog ();
    s_syslog = use_syslog;
    if (s_syslog)
        openlog (s_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
    fasgd_log_threshold = level;
}

void
fasgd_log_close (void)
{
    if (s_syslog)
        closelog ();
    s_syslog = 0;
}

void
fasgd_log_set_level (fasgd_log_level_t level)
{
    fasgd_log_threshold = level;
}

fasgd_log_level_t
fasgd_log_get_level (void)
{
    return fasgd_log_threshold;
}

int
fasgd_log_level_parse (const char *name)
{
    for (int i = 0; i <= FASGD_LOG_DEBUG; i++)
        if (name && strcmp (name, s_names [i]) == 0)
            return i;
    if (name && strcmp (name, "warning") == 0)
        return FASGD_LOG_WARN;
    return -1;
}

const char *
fasgd_log_level_name (fasgd_log_level_t level)
{
    if ((int) level < 0 || level > FASGD_LOG_DEBUG)
        return "?";
    return s_names [level];
}

void
fasgd_log_vwrite (fasgd_log_level_t level, const char *fmt, va_list ap)
{
    if (level > fasgd_log_threshold)
        return;
    char msg [1024];
    vsnprintf (msg, sizeof msg, fmt, ap);
    /*  One event, one line: fold any newline a message carries.  */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (s_syslog) {
        syslog (s_syslog_prio [level], "%s", msg);
        return;
    }
    struct timeval tv;
    gettimeofday (&tv, NULL);
    struct tm tm;
    gmtime_r (&tv.tv_sec, &tm);
    char stamp [32];
    strftime (stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    pthread_mutex_lock (&s_lock);
    fprintf (stderr, "%s.%03dZ %s[%d]: %s: %s\n", stamp, (int) (tv.tv_usec / 1000),
             s_ident, (int) getpid (), s_names [level], msg);
    pthread_mutex_unlock (&s_lock);
}

void
fasgd_log_write (fasgd_log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fasgd_log_vwrite (level, fmt, ap);
    va_end (ap);
}

const char *
fasgd_path_shown (const char *path, char *buf, size_t len)
{
    if (!path || path [0] == '/' || !buf || len == 0)
        return path;
    char cwd [4096];
    if (!getcwd (cwd, sizeof cwd))
        snprintf (buf, len, "%s (relative to a working directory that cannot be named: %s)",
                  path, strerror (errno));
    else
        snprintf (buf, len, "%s (%s%s%s: relative to the working directory %s)", path, cwd,
                  strcmp (cwd, "/") == 0 ? "" : "/", path, cwd);
    return buf;
}

int
fasgd_errbuf (char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (err, errlen, fmt, ap);
        va_end (ap);
    }
    return -1;
}
