/*  eval: the evaluation thread. The poll loop hands it a snapshot of θ
    every eval.every timestamps (skipped while the last is still
    running); it measures validation error and NLL, and appends a row to
    the CSV with the counters taken when θ was. An external model's
    results come from its clients' EVAL requests instead.  */
#include "internal.h"

#include "log.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

static void
s_csv_row (fasgd_server_t *self, uint64_t ts, double err, double nll)
{
    if (!self->csv)
        return;
    const fasgd_srv_stats_t *s = &self->eval_st;
    uint64_t taus = s->tau_count - self->csv_prev.tau_count;
    fprintf (self->csv, "%llu,%.3f,%.6f,%.6f,%zu,%llu,%llu,%llu,%llu,%llu,%llu,%.4f,%llu\n",
             (unsigned long long) ts, (double) (fasgd_srv_now_ms () - self->started_ms) / 1000.0, err, nll,
             self->eval_clients, (unsigned long long) s->pushes, (unsigned long long) s->repeats,
             (unsigned long long) s->fetches, (unsigned long long) s->not_modified,
             (unsigned long long) s->bytes_in, (unsigned long long) s->bytes_out,
             taus ? (s->tau_sum - self->csv_prev.tau_sum) / (double) taus : 0.0,
             (unsigned long long) self->eval_tau_max);
    fflush (self->csv);
    self->csv_prev = *s;
}

/*  The `error=` and `nll=` lines of an EVAL body (PROTOCOL.md); nll is NaN
    when absent. -1 unless error is there and both are finite numbers.  */
static int
s_eval_parse (const char *body, size_t len, double *error, double *nll)
{
    char text [FASGD_PROTO_TEXT_MAX + 1];
    if (len >= sizeof text)
        return -1;
    memcpy (text, body, len);
    text [len] = '\0';
    int have_error = 0;
    *nll = NAN;
    char *save = NULL;
    for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
        double *slot = strncmp (line, "error=", 6) == 0 ? error
                     : strncmp (line, "nll=", 4) == 0 ? nll : NULL;
        if (!slot)
            continue;
        const char *v = strchr (line, '=') + 1;
        char *end;
        errno = 0;
        double x = strtod (v, &end);
        if (end == v || *end != '\0' || errno == ERANGE || !isfinite (x))
            return -1;
        *slot = x;
        have_error |= slot == error;
    }
    return have_error ? 0 : -1;
}

void *
fasgd_srv_eval_main (void *arg)
{
    fasgd_server_t *self = arg;
    prctl (PR_SET_NAME, "fasgd-eval");          /* for top -H and ps -L */
    /*  Validation is the heavy part: it must not take the pinned CPU.  */
    if (self->cfg.cpu >= 0 && fasgd_affinity_set (&self->eval_cpus) != 0)
        fasgd_log_warn ("the evaluation thread stays on CPU %d: %s", self->cfg.cpu, strerror (errno));
    fasgd_model_ws_t *ws = fasgd_model_ws_new (self->model, 500);
    float *native = NULL;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    native = malloc (self->n * sizeof (float));
#endif
    pthread_mutex_lock (&self->eval_lock);
    for (;;) {
        while (!self->eval_quit && !self->eval_snap)
            pthread_cond_wait (&self->eval_wake, &self->eval_lock);
        if (!self->eval_snap)
            break;
        fasgd_snapshot_t *snap = self->eval_snap;
        pthread_mutex_unlock (&self->eval_lock);
        const float *theta = snap->theta;
        if (native) {
            fasgd_proto_floats_decode (snap->theta, self->n, native);
            theta = native;
        }
        double nll = NAN, err = NAN;
        if (ws)
            fasgd_model_evaluate (self->model, ws, theta, self->valid->x, self->valid->y,
                                  self->valid->n, &nll, &err);
        pthread_mutex_lock (&self->eval_lock);
        self->last_error = err;
        self->last_nll = nll;
        self->eval_done = 1;
        self->eval_done_T = snap->ts;
        self->eval_done_ms = fasgd_srv_now_ms ();
        s_csv_row (self, snap->ts, err, nll);
        fasgd_log_info ("T=%llu validation error %.4f nll %.4f", (unsigned long long) snap->ts, err, nll);
        self->eval_snap = NULL;
        self->eval_running = 0;
        fasgd_snapshot_release (snap);
    }
    pthread_mutex_unlock (&self->eval_lock);
    free (native);
    fasgd_model_ws_destroy (&ws);
    return NULL;
}

/*  The counters a validation row reports, taken when its θ is. Under
    eval_lock.  */
static void
s_eval_take_stats (fasgd_server_t *self)
{
    self->eval_st = self->st;
    self->eval_clients = self->live;
    self->eval_tau_max = self->iv_tau_max;
    self->iv_tau_max = 0;
}

/*  Hands θ at T to the evaluator unless it is still busy with the last.  */
void
fasgd_srv_eval_maybe (fasgd_server_t *self)
{
    if (!self->valid)
        return;
    pthread_mutex_lock (&self->eval_lock);
    if (!self->eval_running) {
        fasgd_snapshot_t *snap = fasgd_srv_params_snapshot (self);
        if (snap) {
            self->eval_snap = snap;
            self->eval_running = 1;
            s_eval_take_stats (self);
            pthread_cond_signal (&self->eval_wake);
        }
    }
    else
        fasgd_log_debug ("T=%llu: evaluation skipped, the last is still running",
                         (unsigned long long) self->T);
    pthread_mutex_unlock (&self->eval_lock);
}


void
fasgd_srv_eval_wait (fasgd_server_t *self)
{
    for (int busy = 1; busy; zclock_sleep (10)) {
        pthread_mutex_lock (&self->eval_lock);
        busy = self->eval_running;
        pthread_mutex_unlock (&self->eval_lock);
    }
}

void
fasgd_srv_eval_report (fasgd_server_t *self, const fasgd_srv_client_t *c, const char *body, size_t len)
{
    char text [FASGD_PROTO_TEXT_MAX + 1];
    size_t k = 0;
    for (size_t i = 0; i < len && k < sizeof text - 1; i++)
        text [k++] = (body [i] >= 32 && body [i] < 127) ? body [i] : ' ';
    text [k] = 0;
    self->st.evals++;
    fasgd_log_notice ("client %u reports at T=%llu: %s", c->id, (unsigned long long) self->T, text);
    /*  Without a validation set of its own (an external model, a shard,
        eval.enabled false) the server's validation comes from its clients:
        it goes where its own would (the CSV, STATUS).  */
    double error, nll;
    if (!self->valid && s_eval_parse (body, len, &error, &nll) == 0) {
        pthread_mutex_lock (&self->eval_lock);
        self->last_error = error;
        self->last_nll = nll;
        self->eval_done = 1;
        self->eval_done_T = self->T;
        self->eval_done_ms = fasgd_srv_now_ms ();
        s_eval_take_stats (self);
        s_csv_row (self, self->T, error, nll);
        pthread_mutex_unlock (&self->eval_lock);
    }
}
