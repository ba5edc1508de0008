/*  log: levelled logging to stderr or syslog, one line per event.

    Lines on stderr read "2026-11-29T22:41:53.123Z fasgd-server[1234]: warn:
    message". The level is checked before any formatting, so a disabled
    debug line costs one comparison.  */
#ifndef FASGD_LOG_H_INCLUDED
#define FASGD_LOG_H_INCLUDED

#include <stdarg.h>
#include <stddef.h>

typedef enum {
    FASGD_LOG_ERROR = 0,
    FASGD_LOG_WARN,
    FASGD_LOG_NOTICE,
    FASGD_LOG_INFO,
    FASGD_LOG_DEBUG
} fasgd_log_level_t;

/*  Sets the program name and the sink (syslog when use_syslog is non-zero,
    stderr otherwise). Callable again to change either.  */
void fasgd_log_open (const char *ident, int use_syslog, fasgd_log_level_t level);
void fasgd_log_close (void);

void fasgd_log_set_level (fasgd_log_level_t level);
fasgd_log_level_t fasgd_log_get_level (void);

/*  Parses "error", "warn", "notice", "info" or "debug"; returns the level or
    -1 for anything else.  */
int fasgd_log_level_parse (const char *name);
const char *fasgd_log_level_name (fasgd_log_level_t level);

void fasgd_log_write (fasgd_log_level_t level, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
void fasgd_log_vwrite (fasgd_log_level_t level, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 2, 0)));

/*  Writes a one-line reason into a caller's buffer (err may be NULL);
    returns -1, so `return fasgd_errbuf (err, errlen, ...)` reports a
    failure. For functions that hand their error to the caller rather than
    log it.  */
int fasgd_errbuf (char *err, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/*  A file's name as a message about it should give it: an absolute path
    as it is; a relative one followed by the absolute path it stands for
    and the working directory, "data/mnist (/srv/x/data/mnist: relative
    to the working directory /srv/x)", so that a file not found under a
    service manager says where it was looked for. Returns buf, or path
    itself when it is absolute.  */
const char *fasgd_path_shown (const char *path, char *buf, size_t len);

extern fasgd_log_level_t fasgd_log_threshold;

#define FASGD_LOG(level, ...) \
    do { if ((level) <= fasgd_log_threshold) fasgd_log_write ((level), __VA_ARGS__); } while (0)
#define fasgd_log_error(...)  FASGD_LOG (FASGD_LOG_ERROR, __VA_ARGS__)
#define fasgd_log_warn(...)   FASGD_LOG (FASGD_LOG_WARN, __VA_ARGS__)
#define fasgd_log_notice(...) FASGD_LOG (FASGD_LOG_NOTICE, __VA_ARGS__)
#define fasgd_log_info(...)   FASGD_LOG (FASGD_LOG_INFO, __VA_ARGS__)
#define fasgd_log_debug(...)  FASGD_LOG (FASGD_LOG_DEBUG, __VA_ARGS__)

#endif
