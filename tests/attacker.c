/*  attacker: a hostile fasgd client that knows the server's guard
    (docs/ALGORITHMS.md, "The guard"), for scripts/attacks and the tests.
    It computes real gradients of the server's mlp on its own data, as an
    honest client would, and pushes what its attack makes of them:

      flip        the gradient negated
      flip-bound  negated, scaled to just under the norm bound: --factor
                  (9.9) times the norm an honest push has (its own
                  gradients' moving average: what the guard's median sees)
      random      a random direction at that norm
      frog        a boiling frog: honest at first, turning to negated over
                  --turn (1000) pushes, at the honest norm
      thin        harm spread thin, against the guard's check of the
                  held-out loss: the gradient negated at one push in
                  --every (2), honest at the others, at the honest norm
      late-thin   honest for --turn pushes, earning the score's trust
                  and the loss check's, then thin
      late-bound  honest for --turn pushes, earning its standing, then
                  flip-bound: pushes whose score is below the floor that
                  refuses a client not in good standing
      tiny        the gradient scaled to 1e-4 of its norm, from every id: a
                  median of tiny votes would lock honest clients out
      first       one push of norm 1e16 in a random direction before
                  anything else, then flip-bound
      sybil       flip-bound from --ids ids, each replaced by a fresh one
                  (a new JOIN) every --rotate (16) pushes, so that no id
                  has a history to lose
      honest      the gradient as computed: no attack, for a load of many
                  honest ids (--ids) from one process (scripts/honest-load)

    --ids K makes K ids (JOINs) push in turn, for every attack. With
    --server-key (and --cert) every id speaks CURVE with the one key the
    certificate holds: ids behind a single allowed key. A refused
    push (422) is counted and the attack goes on; a forgotten id (401)
    joins again. Runs --steps pushes (0: until SIGTERM or SIGINT), then
    prints "pushed N refused R rejoined J" and exits 0; 2 when it cannot
    start.

    Usage: attacker -s PUSH -f FETCH --data DIR --mode MODE [--ids K]
           [--steps N] [--seed S] [--factor F] [--turn N] [--rotate N]
           [--every N] [--server-key FILE [--cert FILE]]  */
#include "data.h"
#include "floats.h"
#include "model.h"
#include "rng.h"

#include "client.h"

#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_IDS 256

static volatile sig_atomic_t s_stop;

static void
s_on_signal (int sig)
{
    (void) sig;
    s_stop = 1;
}

typedef enum {
    S_FLIP, S_FLIP_BOUND, S_RANDOM, S_FROG, S_TINY, S_FIRST, S_SYBIL, S_HONEST, S_THIN, S_LATE_THIN, S_LATE_BOUND
} s_mode_t;
static const char *const s_modes [] = { "flip", "flip-bound", "random", "frog", "tiny", "first", "sybil", "honest",
                                        "thin", "late-thin", "late-bound", NULL };

typedef struct {
    const char *push, *fetch, *data;
    const char *server_key, *cert;  /* CURVE: every id with this one key */
    s_mode_t mode;
    int ids;
    long steps;
    uint64_t seed;
    double factor;
    long turn, rotate, every;
} s_opts_t;

typedef struct {
    fasgd_client_t *c;
    long pushes;                /* since this id joined */
} s_id_t;

static int
s_join (const s_opts_t *o, s_id_t *id, int k)
{
    fasgd_client_destroy (&id->c);
    id->pushes = 0;
    id->c = fasgd_client_new (o->push, o->fetch);
    if (id->c && o->server_key && fasgd_client_set_curve (id->c, o->server_key, o->cert) != 0) {
        fprintf (stderr, "attacker: %s\n", fasgd_client_last_reason (id->c));
        return -1;
    }
    char name [32];
    snprintf (name, sizeof name, "attacker-%d", k);
    if (!id->c || fasgd_client_join (id->c, name) != 0)
        return -1;
    if (o->mode != S_HONEST)
        return 0;
    /*  As fasgd-client does: θ at once, so that the fetch connection
        speaks within limits.greeting_ms however long the id waits for
        its turn.  */
    const fasgd_proto_desc_t *d = fasgd_client_desc (id->c);
    float *theta = d ? malloc ((size_t) d->params * sizeof (float)) : NULL;
    uint64_t ts;
    int rc = theta ? fasgd_client_fetch (id->c, theta, &ts, 0) : -1;
    free (theta);
    return rc < 0 ? -1 : 0;
}

/*  The server's mlp, from its description.  */
static fasgd_model_t *
s_model (const fasgd_proto_desc_t *d)
{
    fasgd_model_spec_t spec;
    fasgd_model_spec_default (&spec);
    char err [256];
    int act = fasgd_model_activation_parse (d->model_activation);
    if (strcmp (d->model, "mlp") != 0 || act < 0
        || fasgd_model_spec_parse_sizes (&spec, d->model_sizes, err, sizeof err) != 0)
        return NULL;
    spec.activation = act;
    fasgd_model_t *m = fasgd_model_new (&spec, err, sizeof err);
    if (m && fasgd_model_nparams (m) != d->params)
        fasgd_model_destroy (&m);
    return m;
}

static double
s_norm (const float *g, size_t n)
{
    return sqrt (fasgd_floats_sumsq (g, n));
}

/*  g ← k·g  */
static void
s_scale (float *g, size_t n, double k)
{
    for (size_t i = 0; i < n; i++)
        g [i] *= (float) k;
}

/*  g ← g · norm/‖g‖, given ‖g‖ (have); 0 when g is.  */
static void
s_scale_to (float *g, size_t n, double have, double norm)
{
    s_scale (g, n, have > 0 ? norm / have : 0);
}

static void
s_random (fasgd_rng_t *rng, float *g, size_t n, double norm)
{
    for (size_t i = 0; i < n; i++)
        g [i] = (float) fasgd_rng_normal (rng);
    s_scale_to (g, n, s_norm (g, n), norm);
}

/*  What the attack pushes at its step-th push, made of the honest
    gradient g (of norm `norm`) in place.  */
static void
s_attack (const s_opts_t *o, fasgd_rng_t *rng, float *g, size_t n, long step, double norm, double typical)
{
    double bound = o->factor * typical;
    switch (o->mode) {
        case S_FLIP:
            s_scale (g, n, -1);
            break;
        case S_FLIP_BOUND:
        case S_SYBIL:
        case S_FIRST:
            s_scale_to (g, n, norm, -bound);
            break;
        case S_RANDOM:
            s_random (rng, g, n, bound);
            break;
        case S_LATE_BOUND:
            if (step >= o->turn)
                s_scale_to (g, n, norm, -bound);
            break;
        case S_FROG: {
            double a = step >= o->turn ? 1 : (double) step / (double) o->turn;
            s_scale (g, n, 1 - 2 * a);
            break;
        }
        case S_TINY:
            s_scale (g, n, 1e-4);
            break;
        case S_LATE_THIN:
        case S_THIN:
            if ((o->mode == S_THIN || step >= o->turn) && step % o->every == o->every - 1)
                s_scale (g, n, -1);
            break;
        case S_HONEST:
            break;
    }
}

static int
s_parse (int argc, char **argv, s_opts_t *o)
{
    static const struct option longs [] = {
        { "server", required_argument, NULL, 's' }, { "fetch", required_argument, NULL, 'f' },
        { "data", required_argument, NULL, 'd' }, { "mode", required_argument, NULL, 'm' },
        { "ids", required_argument, NULL, 'k' }, { "steps", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 'S' }, { "factor", required_argument, NULL, 'F' },
        { "turn", required_argument, NULL, 'T' }, { "rotate", required_argument, NULL, 'R' },
        { "every", required_argument, NULL, 'E' },
        { "server-key", required_argument, NULL, 'K' }, { "cert", required_argument, NULL, 'c' },
        { NULL, 0, NULL, 0 }
    };
    *o = (s_opts_t) { .mode = S_FLIP, .ids = 1, .seed = 1, .factor = 9.9, .turn = 1000, .rotate = 16, .every = 2 };
    int ch, mode = -1;
    while ((ch = getopt_long (argc, argv, "s:f:d:m:k:n:S:F:T:R:E:", longs, NULL)) != -1) {
        switch (ch) {
            case 's': o->push = optarg; break;
            case 'f': o->fetch = optarg; break;
            case 'd': o->data = optarg; break;
            case 'm':
                for (int i = 0; s_modes [i]; i++)
                    if (!strcmp (optarg, s_modes [i]))
                        mode = i;
                if (mode < 0)
                    return -1;
                o->mode = (s_mode_t) mode;
                break;
            case 'k': o->ids = atoi (optarg); break;
            case 'n': o->steps = atol (optarg); break;
            case 'S': o->seed = strtoull (optarg, NULL, 10); break;
            case 'F': o->factor = atof (optarg); break;
            case 'T': o->turn = atol (optarg); break;
            case 'E': o->every = atol (optarg); break;
            case 'R': o->rotate = atol (optarg); break;
            case 'K': o->server_key = optarg; break;
            case 'c': o->cert = optarg; break;
            default: return -1;
        }
    }
    return o->push && o->fetch && o->data && o->ids >= 1 && o->ids <= S_MAX_IDS && o->steps >= 0
           && o->factor > 0 && o->turn > 0 && o->rotate > 0 && o->every > 0 && (!o->cert || o->server_key) && optind == argc ? 0 : -1;
}

int
main (int argc, char **argv)
{
    s_opts_t o;
    if (s_parse (argc, argv, &o) != 0) {
        fprintf (stderr, "usage: attacker -s PUSH -f FETCH --data DIR --mode flip|flip-bound|random|frog|tiny|"
                 "first|sybil|honest|thin|late-thin|late-bound [--ids K] [--steps N] [--seed S] [--factor F] [--turn N] [--rotate N] "
                 "[--every N] [--server-key FILE [--cert FILE]]\n");
        return 2;
    }
    signal (SIGINT, s_on_signal);
    signal (SIGTERM, s_on_signal);
    fasgd_client_set_log_level ("error");
    openblas_set_num_threads (1);
    char err [256];
    fasgd_dataset_t *train = fasgd_dataset_load_dir (o.data, "train", 0, err, sizeof err);
    s_id_t ids [S_MAX_IDS] = { { 0 } };
    if (!train) {
        fprintf (stderr, "attacker: %s\n", err);
        return 2;
    }
    for (int k = 0; k < o.ids; k++)
        if (s_join (&o, &ids [k], k) != 0) {
            fprintf (stderr, "attacker: cannot join %s\n", o.push);
            return 2;
        }
    fasgd_model_t *model = s_model (fasgd_client_desc (ids [0].c));
    if (!model) {
        fprintf (stderr, "attacker: the server's model is not an mlp this program can compute\n");
        return 2;
    }
    const int batch = 32;
    size_t n = fasgd_model_nparams (model);
    fasgd_model_ws_t *ws = fasgd_model_ws_new (model, batch);
    float *theta = malloc (n * sizeof (float)), *g = malloc (n * sizeof (float));
    float *x = malloc ((size_t) batch * train->dim * sizeof (float));
    uint8_t *y = malloc ((size_t) batch);
    fasgd_batcher_t *batcher = fasgd_batcher_new (train->n, (uint32_t) batch, o.seed, 1);
    fasgd_rng_t rng;
    fasgd_rng_seed (&rng, o.seed, 0x61747461u);
    if (!ws || !theta || !g || !x || !y || !batcher) {
        fprintf (stderr, "attacker: out of memory\n");
        return 2;
    }
    long pushed = 0, refused = 0, rejoined = 0, step = 0;
    double typical = 0;
    uint64_t ts = 0;
    if (o.mode == S_FIRST) {
        s_random (&rng, g, n, 1e16);
        if (fasgd_client_push (ids [0].c, g, 0) == FASGD_CLIENT_EREFUSED)
            refused++;
        else
            pushed++;
    }
    int have_theta = fasgd_client_fetch (ids [0].c, theta, &ts, 0) == 0;
    /*  As fast as an honest client: one round trip a push, which brings
        θ back for the next gradient (whichever id pushes it).  */
    for (; !s_stop && (o.steps == 0 || step < o.steps); step++) {
        int k = (int) (step % o.ids);
        s_id_t *id = &ids [k];
        if ((o.mode == S_SYBIL && id->pushes >= o.rotate) || !id->c) {
            fasgd_client_leave (id->c);
            if (s_join (&o, id, k) != 0)
                continue;
            rejoined++;
        }
        if (!have_theta && !(have_theta = fasgd_client_fetch (id->c, theta, &ts, 0) == 0)) {
            if (s_join (&o, id, k) == 0)
                rejoined++;
            continue;
        }
        const uint32_t *idx = fasgd_batcher_next (batcher);
        fasgd_dataset_gather (train, idx, (uint32_t) batch, x, y);
        fasgd_model_gradient (model, ws, theta, x, y, batch, g, NULL);
        double norm = s_norm (g, n);
        typical = typical > 0 ? typical + (norm - typical) / 16 : norm;
        s_attack (&o, &rng, g, n, step, norm, typical);
        int rc = fasgd_client_push_fetch (id->c, g, ts, theta, &ts);
        id->pushes++;
        if (rc >= 0)
            pushed++;
        else {
            have_theta = 0;
            if (rc == FASGD_CLIENT_EREFUSED && fasgd_client_last_status (id->c) == 422)
                refused++;
            else if (s_join (&o, id, k) == 0)
                rejoined++;
        }
    }
    printf ("pushed %ld refused %ld rejoined %ld\n", pushed, refused, rejoined);
    for (int k = 0; k < o.ids; k++) {
        if (ids [k].c)
            fasgd_client_leave (ids [k].c);
        fasgd_client_destroy (&ids [k].c);
    }
    fasgd_batcher_destroy (&batcher);
    fasgd_model_ws_destroy (&ws);
    fasgd_model_destroy (&model);
    fasgd_dataset_destroy (&train);
    free (theta);
    free (g);
    free (x);
    free (y);
    return 0;
}
