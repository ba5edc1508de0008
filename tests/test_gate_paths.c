/*  The simulator and the client follow one gate policy: from the same
    gates settings, the gates the simulator sets up for a client
    (fasgd_sim_gates_init) and those a client sets up from the server's
    WELCOME (fasgd_server_desc_gates, the description's text both ways,
    fasgd_link_gates_from_desc) decide the same at every opportunity, fed
    the same v̄ and the same answers. Their streams differ by design (the
    simulator's by client index, the client's by its id or seed), so both
    are reseeded alike before the comparison.  */
#include "codec.h"
#include "link.h"
#include "server.h"
#include "sim.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

#define STEPS 3000
#define N 3                     /* values in a gradient */

/*  Gates settings as "key=value" under gates., NULL-ended.  */
static const char *const s_cases [] [8] = {
    { NULL },
    { "push.gate=bfasgd", "push.c=0.5", "fetch.gate=bfasgd", "fetch.c=0.3", NULL },
    { "push.gate=bfasgd", "push.c=0.5", "push.skip=accumulate", "fetch.gate=every", "fetch.every=3", NULL },
    { "push.gate=every", "push.every=3", "push.skip=accumulate", "eps=0.25", NULL },
    { "push.gate=every", "push.every=2", "fetch.gate=bfasgd", "fetch.c=2", "eps=0.01", NULL },
    { "push.gate=bfasgd", "push.c=1e6", "push.skip=accumulate", "fetch.gate=bfasgd", "fetch.c=1e-3", NULL },
};

static void
s_set (const fasgd_cfg_key_t *keys, void *cfg, const char *const *sets)
{
    ck_assert_int_eq (fasgd_config_defaults (keys, cfg, stderr), 0);
    for (int i = 0; sets [i]; i++) {
        char kv [128];
        snprintf (kv, sizeof kv, "gates.%s", sets [i]);
        ck_assert_int_eq (fasgd_config_set (keys, cfg, kv, stderr), 0);
    }
}

/*  The simulator's gates for client 0 of cfg.  */
static void
s_sim_path (const char *const *sets, fasgd_gates_t *g)
{
    static fasgd_sim_cfg_t cfg;
    s_set (fasgd_sim_cfg_keys, &cfg, sets);
    fasgd_sim_gates_init (&cfg, 0, 0, g);
}

/*  A client's gates, from the description a server of cfg sends.  */
static void
s_client_path (const char *const *sets, fasgd_gates_t *g)
{
    static fasgd_server_cfg_t cfg;
    s_set (fasgd_server_cfg_keys, &cfg, sets);
    fasgd_proto_desc_t d, got;
    memset (&d, 0, sizeof d);
    d.protocol = FASGD_PROTO_VERSION;
    d.params = d.length = N;
    d.ntensors = 1;
    snprintf (d.tensors [0].name, sizeof d.tensors [0].name, "w");
    d.tensors [0].ndim = 2;
    d.tensors [0].dims [0] = 1;
    d.tensors [0].dims [1] = N;
    fasgd_server_desc_gates (&cfg.gates, &d);
    char text [FASGD_PROTO_DESC_MAX], err [256];
    int len = fasgd_proto_desc_encode (&d, text, sizeof text);
    ck_assert_int_gt (len, 0);
    ck_assert_int_eq (fasgd_proto_desc_decode (text, (size_t) len, &got, err, sizeof err), 0);
    ck_assert_msg (fasgd_link_gates_from_desc (&got, 99, g, err, sizeof err) == 0, "%s", err);
    /*  Its session's first fetch (forced, no draw) gave it θ, as the
        simulator's clients start holding θ at T = 0.  */
    ck_assert_int_eq (fasgd_gates_fetch (g, 0.0), 1);
    g->fetched = 1;
    g->fetch.opportunities = g->fetch.transmissions = 0;
}

/*  What the server answers, the same for both: v̄ drawn from r (zero now
    and then), and whether a push was taken (refused now and then).  */
START_TEST (test_same_decisions)
{
    const char *const *sets = s_cases [_i];
    fasgd_gates_t a, b;
    s_sim_path (sets, &a);
    s_client_path (sets, &b);
    ck_assert_int_eq (a.skip, b.skip);
    fasgd_rng_seed (&a.push.rng, 5, 10);
    fasgd_rng_seed (&b.push.rng, 5, 10);
    fasgd_rng_seed (&a.fetch.rng, 5, 11);
    fasgd_rng_seed (&b.fetch.rng, 5, 11);
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 17, 0);
    float sum_a [N], sum_b [N], out_a [N], out_b [N];
    int sent = 0, skipped = 0, fetched = 0;
    for (int i = 0; i < STEPS; i++) {
        double u = fasgd_rng_uniform (&r);
        double vbar = u < 0.1 ? 0.0 : -log (u) * 0.5;
        int taken = fasgd_rng_uniform (&r) < 0.9;
        float grad [N] = { (float) i, 0.5f * (float) i, -1.0f };
        fasgd_tx_t ta = fasgd_gates_push (&a, vbar), tb = fasgd_gates_push (&b, vbar);
        ck_assert_msg (ta == tb, "case %d, step %d: push %d by the simulator, %d by the client", _i, i, ta, tb);
        if (ta == FASGD_TX_KEEP) {
            fasgd_gates_keep (&a, sum_a, grad, N);
            fasgd_gates_keep (&b, sum_b, grad, N);
            skipped++;
        }
        else if (ta == FASGD_TX_PUSH_SUM) {
            fasgd_gates_sum (out_a, sum_a, grad, N);
            fasgd_gates_sum (out_b, sum_b, grad, N);
            ck_assert_mem_eq (out_a, out_b, sizeof out_a);
        }
        else if (ta == FASGD_TX_REPEAT)
            skipped++;
        if ((ta == FASGD_TX_PUSH || ta == FASGD_TX_PUSH_SUM) && taken) {
            a.pushed = b.pushed = 1;
            a.has_accum = b.has_accum = 0;
            sent++;
        }
        int fa = fasgd_gates_fetch (&a, vbar), fb = fasgd_gates_fetch (&b, vbar);
        ck_assert_msg (fa == fb, "case %d, step %d: fetch %d by the simulator, %d by the client", _i, i, fa, fb);
        fetched += fa;
    }
    ck_assert_uint_eq (a.push.opportunities, b.push.opportunities);
    ck_assert_uint_eq (a.push.transmissions, b.push.transmissions);
    ck_assert_uint_eq (a.fetch.transmissions, b.fetch.transmissions);
    /*  Each gated case both sends and skips, so the comparison saw both.  */
    ck_assert_int_gt (sent, 0);
    if (_i > 0)
        ck_assert_msg (skipped > 0 || fetched < STEPS, "case %d gated nothing", _i);
}
END_TEST

static Suite *
gate_paths_suite (void)
{
    Suite *s = suite_create ("gate_paths");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 30);
    tcase_add_loop_test (tc, test_same_decisions, 0, (int) (sizeof s_cases / sizeof s_cases [0]));
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (gate_paths_suite)
