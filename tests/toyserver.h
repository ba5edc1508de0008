/*  The server's engine on the toy model (toymodel.h), in-process, for
    the tests of the guard: cfg (defaults, then the tests' settings), the
    model and its examples as the validation set, params, the checkpoint
    (when one is asked for), the guard with its reference and the
    registry, built in fasgd-server's order (server.c).  */
#ifndef FASGD_TESTS_TOYSERVER_H_INCLUDED
#define FASGD_TESTS_TOYSERVER_H_INCLUDED

#include "toymodel.h"

#include "../server/checkpoint.h"
#include "guard.h"
#include "params.h"
#include "registry.h"

#include <string.h>

typedef struct {
    fasgd_server_cfg_t cfg;
    fasgd_srv_stats_t st;
    fasgd_model_t *model;
    fasgd_dataset_t *valid;
    fasgd_srv_params_t *params;
    float *scratch;
    fasgd_srv_checkpoint_t *ck;         /* NULL unless asked for */
    fasgd_srv_guard_t *guard;
    fasgd_srv_registry_t *reg;
} toy_server_t;

/*  Builds s with sets (NULL-ended "key=value"); with checkpoint, the
    checkpoint of checkpoint.file (which sets must name), resumed from
    when resume.  */
static inline void
toy_server (toy_server_t *s, const char *const *sets, int checkpoint, int resume)
{
    memset (s, 0, sizeof *s);
    ck_assert_int_eq (fasgd_config_defaults (fasgd_server_cfg_keys, &s->cfg, stderr), 0);
    for (int i = 0; sets [i]; i++)
        ck_assert_int_eq (fasgd_config_set (fasgd_server_cfg_keys, &s->cfg, sets [i], stderr), 0);
    char err [256] = "";
    s->model = toy_model ();
    size_t n = fasgd_model_nparams (s->model);
    s->valid = toy_examples ();
    fasgd_rule_params_t rp;
    fasgd_rule_cfg_to_params (&s->cfg.rule, s->cfg.clients, &rp);
    fasgd_rule_t *rule = fasgd_rule_new (&rp, n, err, sizeof err);
    ck_assert_msg (rule != NULL, "%s", err);
    fasgd_rule_gradients_checked (rule);
    s->params = fasgd_srv_params_new (&rule, n, n, 0, FASGD_WIRE_F32, 0);
    ck_assert_ptr_nonnull (s->params);
    toy_theta (s->params->theta, n);
    s->scratch = calloc (n, sizeof (float));
    ck_assert_ptr_nonnull (s->scratch);
    /*  The checkpoint and its resume, the guard and the registry, the
        guard's state, its reference.  */
    if (checkpoint) {
        s->ck = fasgd_srv_checkpoint_new (&s->cfg, s->params, s->model, NULL, 0);
        ck_assert_ptr_nonnull (s->ck);
        if (resume)
            ck_assert_int_eq (fasgd_srv_checkpoint_resume (s->ck), 0);
    }
    s->guard = fasgd_srv_guard_new (&s->cfg, s->params, s->scratch, &s->st);
    ck_assert_ptr_nonnull (s->guard);
    s->reg = fasgd_srv_registry_new (&s->cfg, n, 0, 0, s->guard, &s->st);
    ck_assert_ptr_nonnull (s->reg);
    if (s->ck)
        fasgd_srv_checkpoint_guard (s->ck, s->guard);
    ck_assert_int_eq (fasgd_srv_guard_reference (s->guard, s->model, s->valid), 0);
    ck_assert_str_eq (fasgd_srv_guard_direction (s->guard), "reference");
}

static inline void
toy_server_end (toy_server_t *s)
{
    fasgd_srv_registry_destroy (&s->reg);
    fasgd_srv_guard_destroy (&s->guard);
    fasgd_srv_checkpoint_destroy (&s->ck);
    fasgd_srv_params_destroy (&s->params);
    fasgd_dataset_destroy (&s->valid);
    fasgd_model_destroy (&s->model);
    free (s->scratch);
}

/*  A client named "c" joins s, with CURVE key `key` (NULL: none).  */
static inline fasgd_srv_client_t *
toy_join (toy_server_t *s, const char *key)
{
    char why [256] = "";
    fasgd_srv_client_t *c = fasgd_srv_registry_join (s->reg, "c", 1, key, key ? "k" : NULL, 0, why, sizeof why);
    ck_assert_msg (c != NULL, "%s", why);
    return c;
}

/*  c pushes g (the caller's), judged by s's guard, which must not refuse
    it; applied as the guard says (accepted when its weight is above 0).
    Its weight.  */
static inline double
toy_push (toy_server_t *s, fasgd_srv_client_t *c, const float *g)
{
    const float *gp = g;
    double weight = 0, norm = 0;
    char why [256] = "";
    int status = fasgd_srv_guard_check (s->guard, c, &gp, 0, 0, &weight, &norm, why, sizeof why);
    ck_assert_msg (status == 0, "refused: %s", why);
    if (weight > 0)
        fasgd_srv_guard_accepted (s->guard, c, gp, s->params->T, norm, 0);
    return weight;
}

#endif
