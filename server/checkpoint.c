/*  checkpoint: θ, T and the rule's state on disk, written periodically,
    on request and at exit, and read back by --resume.  */
#include "internal.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_CKPT_MAGIC "FASGDCK1"

static int
s_write_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write (fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t) w;
    }
    return 0;
}

/*  Writes θ, T and the rule's state: to a temporary file, fsync, rename,
    so a crash leaves the previous checkpoint whole. On failure returns -1
    with the cause in err (when given), after logging it.  */
int
fasgd_srv_checkpoint_write (fasgd_server_t *self, char *err, size_t errlen)
{
    char tmp [FASGD_PATH_LEN + 16];
    snprintf (tmp, sizeof tmp, "%s.tmp", self->cfg.checkpoint);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        int e = errno;
        fasgd_log_error ("checkpoint: cannot write %s: %s", tmp, strerror (e));
        if (err)
            snprintf (err, errlen, "cannot write %s: %s", tmp, strerror (e));
        return -1;
    }
    size_t state_len = fasgd_rule_state_size (self->rule);
    void *state = malloc (state_len ? state_len : 1);
    uint64_t head [4] = { self->T, self->n, state_len, (uint64_t) self->cfg.rule.name };
    int e = state ? 0 : ENOMEM;
    if (e == 0) {
        fasgd_rule_state_get (self->rule, state);
        errno = 0;
        if (s_write_all (fd, S_CKPT_MAGIC, 8) || s_write_all (fd, head, sizeof head)
            || s_write_all (fd, self->theta, self->n * sizeof (float))
            || s_write_all (fd, state, state_len) || fsync (fd))
            e = errno ? errno : EIO;
    }
    free (state);
    if (close (fd) != 0 && e == 0)
        e = errno;
    if (e == 0 && rename (tmp, self->cfg.checkpoint) != 0)
        e = errno;
    if (e != 0) {
        fasgd_log_error ("checkpoint: writing %s failed: %s", self->cfg.checkpoint, strerror (e));
        if (err)
            snprintf (err, errlen, "writing %s failed: %s", self->cfg.checkpoint, strerror (e));
        unlink (tmp);
        return -1;
    }
    self->last_ckpt_T = self->T;
    self->last_ckpt_ms = fasgd_srv_now_ms ();
    self->ckpt_written = 1;
    fasgd_log_info ("checkpoint written at T=%llu", (unsigned long long) self->T);
    return 0;
}

/*  A checkpoint when checkpoint.file names one; 0 when it names none.  */
int
fasgd_srv_checkpoint (fasgd_server_t *self)
{
    if (!*self->cfg.checkpoint)
        return 0;
    return fasgd_srv_checkpoint_write (self, NULL, 0);
}

int
fasgd_srv_resume (fasgd_server_t *self)
{
    const char *path = self->cfg.checkpoint;
    FILE *f = fopen (path, "rb");
    if (!f) {
        fasgd_log_error ("resume: cannot open %s: %s", path, strerror (errno));
        return -1;
    }
    char magic [8];
    uint64_t head [4];
    int rc = -1;
    void *state = NULL;
    if (fread (magic, 1, 8, f) != 8 || memcmp (magic, S_CKPT_MAGIC, 8) != 0
        || fread (head, sizeof head, 1, f) != 1)
        fasgd_log_error ("resume: %s is not a fasgd checkpoint", path);
    else if (head [1] != self->n || head [3] != (uint64_t) self->cfg.rule.name)
        fasgd_log_error ("resume: %s holds %llu parameters of rule %s; the configuration has %zu of %s",
                         path, (unsigned long long) head [1], fasgd_rule_kind_name ((int) head [3]),
                         self->n, fasgd_rule_kind_name (self->cfg.rule.name));
    else if (head [2] > ((uint64_t) 1 << 36) || !(state = malloc (head [2] ? head [2] : 1))
             || fread (self->theta, sizeof (float), self->n, f) != self->n
             || fread (state, 1, head [2], f) != head [2])
        fasgd_log_error ("resume: %s is truncated", path);
    else if (fasgd_rule_state_set (self->rule, state, head [2]) != 0)
        fasgd_log_error ("resume: the rule state in %s does not fit the configuration", path);
    else {
        self->T = head [0];
        self->last_ckpt_T = self->T;
        fasgd_log_notice ("resumed from %s at T=%llu", path, (unsigned long long) self->T);
        rc = 0;
    }
    free (state);
    fclose (f);
    return rc;
}

