/*  eval: the evaluation thread. The poll loop hands it a snapshot of θ
    every eval.every timestamps (skipped while the last is still
    running); it measures validation error and NLL, and appends a row to
    the CSV with the counters taken when θ was. An external model's
    results come from its clients' EVAL requests instead.  */
#include "eval.h"

#include "clock.h"
#include "codec.h"
#include "log.h"
#include "wire.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

struct fasgd_srv_eval_t {
    const fasgd_server_cfg_t *cfg;
    fasgd_srv_params_t *params;         /* its snapshots */
    const fasgd_model_t *model;
    fasgd_dataset_t *valid;             /* NULL: the clients report */
    fasgd_dataset_t *test;              /* NULL: none; else evaluated with valid */
    const fasgd_srv_stats_t *st;
    const fasgd_srv_registry_t *registry;
    int64_t started_ms;
    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int running;                        /* an evaluation handed over and not finished */
    fasgd_snapshot_t *snap;             /* handed over, not yet taken */
    fasgd_cpus_t cpus;                  /* where it runs when cpu pins the rest */
    int quit;
    /*  The counters a row reports, taken when its θ was. The CSV's
        staleness columns cover the gradients applied between two rows:
        the largest τ since the last hand-off (the main thread's, then the
        handed-over one's), and the counters of the last row.  */
    fasgd_srv_stats_t eval_st;
    size_t eval_clients;
    uint64_t iv_tau_max, eval_tau_max;
    fasgd_srv_stats_t csv_prev;
    FILE *csv;
    double last_error, last_nll;
    int done;                           /* last_error and last_nll hold a result */
    uint64_t done_T;                    /* the timestamp of the parameters evaluated */
    int64_t done_ms;
};

#define S_CSV_COLUMNS "timestamp,wall_s,val_error,val_nll,clients,pushes,repeats,fetches," \
                      "not_modified,bytes_in,bytes_out,mean_tau,max_tau"
#define S_CSV_TEST_COLUMNS ",test_error,test_nll"

/*  A row; with a test set, its error and NLL (test_err, test_nll) last.  */
static void
s_csv_row (fasgd_srv_eval_t *self, uint64_t ts, double err, double nll, double test_err,
           double test_nll)
{
    if (!self->csv)
        return;
    const fasgd_srv_stats_t *s = &self->eval_st;
    uint64_t taus = s->tau_count - self->csv_prev.tau_count;
    fprintf (self->csv, "%llu,%.3f,%.6f,%.6f,%zu,%llu,%llu,%llu,%llu,%llu,%llu,%.4f,%llu",
             (unsigned long long) ts, (double) (fasgd_srv_now_ms () - self->started_ms) / 1000.0, err, nll,
             self->eval_clients, (unsigned long long) s->pushes, (unsigned long long) s->repeats,
             (unsigned long long) s->fetches, (unsigned long long) s->not_modified,
             (unsigned long long) s->bytes_in, (unsigned long long) s->bytes_out,
             taus ? (s->tau_sum - self->csv_prev.tau_sum) / (double) taus : 0.0,
             (unsigned long long) self->eval_tau_max);
    if (self->test)
        fprintf (self->csv, ",%.6f,%.6f", test_err, test_nll);
    fputc ('\n', self->csv);
    fflush (self->csv);
    self->csv_prev = *s;
}

/*  The `error=` and `nll=` lines of an EVAL body (PROTOCOL.md); nll is NaN
    when absent. NULL when error is there and both are plausible (error a
    rate in [0, 1], nll finite and not negative), else the reason, in
    why [size].  */
static const char *
s_eval_parse (const char *body, size_t len, double *error, double *nll, char *why, size_t size)
{
    char text [FASGD_PROTO_TEXT_MAX + 1];
    if (len >= sizeof text) {
        snprintf (why, size, "an EVAL body of %zu bytes (at most %d)", len, FASGD_PROTO_TEXT_MAX);
        return why;
    }
    memcpy (text, body, len);
    text [len] = '\0';
    int have_error = 0;
    *nll = NAN;
    char *save = NULL;
    for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
        int is_error = strncmp (line, "error=", 6) == 0;
        if (!is_error && strncmp (line, "nll=", 4) != 0)
            continue;
        const char *v = strchr (line, '=') + 1;
        char *end;
        errno = 0;
        double x = strtod (v, &end);
        if (end == v || *end != '\0' || errno == ERANGE || !isfinite (x)) {
            snprintf (why, size, "%s is not a finite number", is_error ? "error" : "nll");
            return why;
        }
        if (is_error && (x < 0 || x > 1)) {
            snprintf (why, size, "error %.9g is not a rate in [0, 1]", x);
            return why;
        }
        if (!is_error && x < 0) {
            snprintf (why, size, "nll %.9g is negative", x);
            return why;
        }
        *(is_error ? error : nll) = x;
        have_error |= is_error;
    }
    if (!have_error) {
        snprintf (why, size, "no error= line");
        return why;
    }
    return NULL;
}

static void *
s_main (void *arg)
{
    fasgd_srv_eval_t *self = arg;
    prctl (PR_SET_NAME, "fasgd-eval");          /* for top -H and ps -L */
    /*  Validation is the heavy part: it must not take the pinned CPU.  */
    if (self->cfg->cpu >= 0 && fasgd_affinity_set (&self->cpus) != 0)
        fasgd_log_warn ("the evaluation thread stays on CPU %d: %s", self->cfg->cpu, strerror (errno));
    fasgd_model_ws_t *ws = fasgd_model_ws_new (self->model, 500);
    float *native = NULL;
#if !FASGD_HOST_IS_LE
    native = malloc (self->params->n * sizeof (float));
#endif
    pthread_mutex_lock (&self->lock);
    for (;;) {
        while (!self->quit && !self->snap)
            pthread_cond_wait (&self->wake, &self->lock);
        if (!self->snap)
            break;
        fasgd_snapshot_t *snap = self->snap;
        pthread_mutex_unlock (&self->lock);
        const float *theta = snap->theta;
        if (native) {
            fasgd_proto_floats_decode (snap->theta, self->params->n, native);
            theta = native;
        }
        double nll = NAN, err = NAN, test_nll = NAN, test_err = NAN;
        if (ws)
            fasgd_model_evaluate (self->model, ws, theta, self->valid->x, self->valid->y,
                                  self->valid->n, &nll, &err);
        if (ws && self->test)
            fasgd_model_evaluate (self->model, ws, theta, self->test->x, self->test->y,
                                  self->test->n, &test_nll, &test_err);
        pthread_mutex_lock (&self->lock);
        self->last_error = err;
        self->last_nll = nll;
        self->done = 1;
        self->done_T = snap->ts;
        self->done_ms = fasgd_srv_now_ms ();
        s_csv_row (self, snap->ts, err, nll, test_err, test_nll);
        fasgd_log_info ("T=%llu validation error %.4f nll %.4f", (unsigned long long) snap->ts, err, nll);
        self->snap = NULL;
        self->running = 0;
        fasgd_snapshot_release (snap);
    }
    pthread_mutex_unlock (&self->lock);
    free (native);
    fasgd_model_ws_destroy (&ws);
    return NULL;
}

fasgd_srv_eval_t *
fasgd_srv_eval_new (const fasgd_server_cfg_t *cfg, fasgd_srv_params_t *params, const fasgd_model_t *model,
                    fasgd_dataset_t **valid_p, fasgd_dataset_t **test_p, const fasgd_srv_stats_t *st,
                    const fasgd_srv_registry_t *registry)
{
    fasgd_srv_eval_t *self = calloc (1, sizeof *self);
    if (!self) {
        fasgd_log_error ("out of memory");
        fasgd_dataset_destroy (valid_p);
        fasgd_dataset_destroy (test_p);
        return NULL;
    }
    self->cfg = cfg;
    self->params = params;
    self->model = model;
    self->valid = *valid_p;
    *valid_p = NULL;
    /*  A test set goes with a validation set of the server's own.  */
    if (self->valid)
        self->test = *test_p;
    else
        fasgd_dataset_destroy (test_p);
    *test_p = NULL;
    self->st = st;
    self->registry = registry;
    self->last_error = self->last_nll = NAN;
    pthread_mutex_init (&self->lock, NULL);
    pthread_cond_init (&self->wake, NULL);
    if (*cfg->csv) {
        const char *header = self->test ? S_CSV_COLUMNS S_CSV_TEST_COLUMNS "\n" : S_CSV_COLUMNS "\n";
        if (!(self->csv = fopen (cfg->csv, "a+"))) {
            int e = errno;
            char shown [8192];
            fasgd_log_error ("cannot write %s: %s", fasgd_path_shown (cfg->csv, shown, sizeof shown),
                             strerror (e));
            fasgd_srv_eval_destroy (&self);
            return NULL;
        }
        /*  Rows are appended (a resumed run goes on in the same file)
            only under the same columns.  */
        char first [256] = "";
        if (fgets (first, sizeof first, self->csv) && strcmp (first, header) != 0) {
            first [strcspn (first, "\n")] = 0;
            fasgd_log_error ("eval.csv %s has other columns than this run writes (%s a test set): "
                             "its header is \"%.120s\"; give another file", cfg->csv,
                             self->test ? "with" : "without", first);
            fasgd_srv_eval_destroy (&self);
            return NULL;
        }
        /*  From reading to appending: a positioning call between
            (C11 7.21.5.3); a pipe has none to make and needs none.  */
        (void) fseek (self->csv, 0, SEEK_END);
        if (!*first)
            fputs (header, self->csv);
    }
    return self;
}

void
fasgd_srv_eval_destroy (fasgd_srv_eval_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    fasgd_srv_eval_t *self = *self_p;
    if (self->thread_started) {
        pthread_mutex_lock (&self->lock);
        self->quit = 1;
        pthread_cond_signal (&self->wake);
        pthread_mutex_unlock (&self->lock);
        pthread_join (self->thread, NULL);
    }
    if (self->csv)
        fclose (self->csv);
    fasgd_dataset_destroy (&self->valid);
    fasgd_dataset_destroy (&self->test);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->wake);
    free (self);
    *self_p = NULL;
}

int
fasgd_srv_eval_start (fasgd_srv_eval_t *self, const fasgd_cpus_t *cpus, int64_t started_ms)
{
    self->started_ms = started_ms;
    if (cpus)
        self->cpus = *cpus;
    if (!self->valid)
        return 0;
    if (pthread_create (&self->thread, NULL, s_main, self) != 0) {
        fasgd_log_error ("cannot start the evaluation thread");
        return -1;
    }
    self->thread_started = 1;
    return 0;
}

int
fasgd_srv_eval_validates (const fasgd_srv_eval_t *self)
{
    return self->valid != NULL;
}

void
fasgd_srv_eval_note_tau (fasgd_srv_eval_t *self, uint64_t tau)
{
    if (tau > self->iv_tau_max)
        self->iv_tau_max = tau;
}

int
fasgd_srv_eval_result (fasgd_srv_eval_t *self, double *error, double *nll, uint64_t *T, int64_t *ms)
{
    pthread_mutex_lock (&self->lock);
    int done = self->done;
    *error = self->last_error;
    *nll = self->last_nll;
    *T = self->done_T;
    *ms = self->done_ms;
    pthread_mutex_unlock (&self->lock);
    return done;
}

/*  The counters a validation row reports, taken when its θ is. Under
    eval_lock.  */
static void
s_eval_take_stats (fasgd_srv_eval_t *self)
{
    self->eval_st = *self->st;
    self->eval_clients = fasgd_srv_registry_live (self->registry);
    self->eval_tau_max = self->iv_tau_max;
    self->iv_tau_max = 0;
}

/*  Hands θ at T to the evaluator unless it is still busy with the last.  */
void
fasgd_srv_eval_maybe (fasgd_srv_eval_t *self)
{
    if (!self->valid)
        return;
    pthread_mutex_lock (&self->lock);
    if (!self->running) {
        fasgd_snapshot_t *snap = fasgd_srv_params_snapshot (self->params);
        if (snap) {
            self->snap = snap;
            self->running = 1;
            s_eval_take_stats (self);
            pthread_cond_signal (&self->wake);
        }
    }
    else
        fasgd_log_debug ("T=%llu: evaluation skipped, the last is still running",
                         (unsigned long long) self->params->T);
    pthread_mutex_unlock (&self->lock);
}


void
fasgd_srv_eval_wait (fasgd_srv_eval_t *self)
{
    for (int busy = 1; busy; zclock_sleep (10)) {
        pthread_mutex_lock (&self->lock);
        busy = self->running;
        pthread_mutex_unlock (&self->lock);
    }
}

const char *
fasgd_srv_eval_report (fasgd_srv_eval_t *self, const fasgd_srv_client_t *c, const char *body, size_t len,
                       char *why, size_t size)
{
    double error, nll;
    if (s_eval_parse (body, len, &error, &nll, why, size))
        return why;
    char text [FASGD_PROTO_TEXT_MAX + 1];
    size_t k = 0;
    for (size_t i = 0; i < len && k < sizeof text - 1; i++)
        text [k++] = (body [i] >= 32 && body [i] < 127) ? body [i] : ' ';
    text [k] = 0;
    fasgd_log_notice ("client %u reports at T=%llu: %s", c->id, (unsigned long long) self->params->T, text);
    /*  Without a validation set of its own (an external model, a shard,
        eval.enabled false) the server's validation comes from its clients:
        it goes where its own would (the CSV, STATUS).  */
    if (!self->valid) {
        pthread_mutex_lock (&self->lock);
        self->last_error = error;
        self->last_nll = nll;
        self->done = 1;
        self->done_T = self->params->T;
        self->done_ms = fasgd_srv_now_ms ();
        s_eval_take_stats (self);
        s_csv_row (self, self->params->T, error, nll, NAN, NAN);
        pthread_mutex_unlock (&self->lock);
    }
    return NULL;
}
