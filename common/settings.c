/*  settings: shared configuration sections.  */
#include "settings.h"

#include "log.h"

#include <stddef.h>
#include <string.h>

static const char *const s_sasgd_forms [] = { "div-tau", "plus-one", NULL };
static const char *const s_statistics [] = { "std", "abs", NULL };
static const char *const s_stalenesses [] = { "divide", "ignore", NULL };

const fasgd_cfg_key_t fasgd_model_cfg_keys [] = {
    { .name = "sizes", .type = FASGD_CFG_INTLIST, .offset = offsetof (fasgd_model_cfg_t, sizes),
      .min = 1, .max = 1000000, .size = FASGD_MODEL_MAX_LAYERS + 1, .min_items = 2, .def = "784,100,10",
      .help = "layer widths, input first, output (classes) last" },
    FASGD_CFG_KEY_ENUM ("activation", fasgd_model_cfg_t, activation, fasgd_model_activation_names, "relu",
        "hidden-layer activation"),
    FASGD_CFG_KEY_ENUM ("init", fasgd_model_cfg_t, init, fasgd_model_init_names, "he",
        "weight initialisation: he N(0,2/fan_in), glorot uniform, normal N(0,1) (the paper's code)"),
    FASGD_CFG_KEY_END
};

const fasgd_cfg_key_t fasgd_rule_cfg_keys [] = {
    FASGD_CFG_KEY_ENUM ("name", fasgd_rule_cfg_t, name, fasgd_rule_kind_names, "fasgd", "the update rule"),
    FASGD_CFG_KEY_DOUBLE ("lr", fasgd_rule_cfg_t, lr, 0, 1e6, FASGD_CFG_MIN_OPEN, "0.005",
        "master learning rate alpha"),
    FASGD_CFG_KEY_ENUM ("sasgd.form", fasgd_rule_cfg_t, sasgd_form, s_sasgd_forms, "div-tau",
        "sasgd and softsync step: alpha/tau (alpha at tau 0), or alpha/(tau+1)"),
    FASGD_CFG_KEY_INT ("softsync.n", fasgd_rule_cfg_t, softsync_n, 1, 1000000, "1",
        "n of n-softsync: an update every floor(clients/n) gradients; 1 is hardsync"),
    FASGD_CFG_KEY_ENUM ("fasgd.statistic", fasgd_rule_cfg_t, statistic, s_statistics, "std",
        "fasgd: moving standard deviation (std) or moving mean magnitude (abs)"),
    FASGD_CFG_KEY_DOUBLE ("fasgd.gamma", fasgd_rule_cfg_t, gamma, 0, 1, FASGD_CFG_MAX_OPEN, "0.9",
        "fasgd std: decay of the gradient moments n and b"),
    FASGD_CFG_KEY_DOUBLE ("fasgd.beta", fasgd_rule_cfg_t, beta, 0, 1, FASGD_CFG_MAX_OPEN, "0.9",
        "fasgd std: decay of v, the moving average of 1/sigma"),
    FASGD_CFG_KEY_DOUBLE ("fasgd.epsilon", fasgd_rule_cfg_t, epsilon, 0, 1e6, FASGD_CFG_MIN_OPEN, "1e-4",
        "fasgd std: added under the square root; bounds the step amplification at 1/sqrt(epsilon)"),
    FASGD_CFG_KEY_DOUBLE ("fasgd.abs_decay", fasgd_rule_cfg_t, abs_decay, 0, 1, FASGD_CFG_MAX_OPEN, "0.9",
        "fasgd abs: decay of the moving mean magnitude m"),
    FASGD_CFG_KEY_DOUBLE ("fasgd.abs_floor", fasgd_rule_cfg_t, abs_floor, 0, 1e6, FASGD_CFG_MIN_OPEN, "0.001",
        "fasgd abs: added to m before dividing"),
    FASGD_CFG_KEY_ENUM ("fasgd.staleness", fasgd_rule_cfg_t, staleness, s_stalenesses, "divide",
        "fasgd: divide the step by tau (divide), or not (ignore: an ablation, the normalisation alone)"),
    FASGD_CFG_KEY_DOUBLE ("dcasgd.lambda", fasgd_rule_cfg_t, dc_lambda, 0, 1e6, 0, "0.04",
        "dcasgd: delay-compensation strength (lambda_0 when adaptive)"),
    FASGD_CFG_KEY_BOOL ("dcasgd.adaptive", fasgd_rule_cfg_t, dc_adaptive, "false",
        "dcasgd: DC-ASGD-a, the strength lambda_0/sqrt(MS + 1e-7) per parameter, MS the moving mean of g^2"),
    FASGD_CFG_KEY_DOUBLE ("dcasgd.momentum", fasgd_rule_cfg_t, dc_momentum, 0, 1, FASGD_CFG_MAX_OPEN, "0.95",
        "dcasgd adaptive: decay m of MS"),
    FASGD_CFG_KEY_DOUBLE ("gap_aware.decay", fasgd_rule_cfg_t, gap_decay, 0, 1, FASGD_CFG_MAX_OPEN, "0.9",
        "gap-aware: decay of the moving average of |step|"),
    FASGD_CFG_KEY_END
};

static const fasgd_cfg_key_t s_gate_keys [] = {
    FASGD_CFG_KEY_ENUM ("gate", fasgd_gate_cfg_t, kind, fasgd_gate_kind_names, "always",
        "always; every k-th opportunity; or bfasgd, with probability (v+eps)/(v+eps+c)"),
    FASGD_CFG_KEY_INT ("every", fasgd_gate_cfg_t, every, 1, 1000000000, "1",
        "k for the every gate"),
    FASGD_CFG_KEY_DOUBLE ("c", fasgd_gate_cfg_t, c, 0, 1e12, 0, "0",
        "c for the bfasgd gate: larger transmits less"),
    FASGD_CFG_KEY_END
};

const fasgd_cfg_key_t fasgd_gates_cfg_keys [] = {
    FASGD_CFG_KEY_INCLUDE ("fetch", fasgd_gates_cfg_t, fetch, s_gate_keys),
    FASGD_CFG_KEY_INCLUDE ("push", fasgd_gates_cfg_t, push, s_gate_keys),
    FASGD_CFG_KEY_ENUM ("push.skip", fasgd_gates_cfg_t, push_skip, fasgd_push_skip_names, "resend-last",
        "a skipped push: the server re-applies the last gradient, or the client accumulates"),
    FASGD_CFG_KEY_DOUBLE ("eps", fasgd_gates_cfg_t, eps, 0, 1e6, FASGD_CFG_MIN_OPEN, "1e-4",
        "epsilon_g of the bfasgd gates"),
    FASGD_CFG_KEY_END
};

const fasgd_cfg_key_t fasgd_data_cfg_keys [] = {
    FASGD_CFG_KEY_STRING ("dir", fasgd_data_cfg_t, dir, 0, "data/mnist",
        "folder with train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz] and t10k-*"),
    FASGD_CFG_KEY_STRING ("train_images", fasgd_data_cfg_t, train_images, 0, "",
        "training images (IDX), instead of dir"),
    FASGD_CFG_KEY_STRING ("train_labels", fasgd_data_cfg_t, train_labels, 0, "",
        "training labels (IDX), instead of dir"),
    FASGD_CFG_KEY_STRING ("validation_images", fasgd_data_cfg_t, validation_images, 0, "",
        "validation images (IDX), instead of dir's t10k-*"),
    FASGD_CFG_KEY_STRING ("validation_labels", fasgd_data_cfg_t, validation_labels, 0, "",
        "validation labels (IDX), instead of dir's t10k-*"),
    FASGD_CFG_KEY_INT ("holdout", fasgd_data_cfg_t, holdout, 0, 100000000, "0",
        "when > 0, validate on the last N training examples instead of a validation file"),
    FASGD_CFG_KEY_INT ("max_train", fasgd_data_cfg_t, max_train, 0, 100000000, "0",
        "use at most this many training examples (0: all)"),
    FASGD_CFG_KEY_INT ("max_validation", fasgd_data_cfg_t, max_validation, 0, 100000000, "0",
        "use at most this many validation examples (0: all)"),
    FASGD_CFG_KEY_BOOL ("shuffle", fasgd_data_cfg_t, shuffle, "false",
        "shuffle the training set once, from the seed, before training"),
    FASGD_CFG_KEY_INT ("test", fasgd_data_cfg_t, test, 0, 100000000, "0",
        "when > 0, the last N validation examples are a test set, never used to pick a setting"),
    FASGD_CFG_KEY_STRING ("test_images", fasgd_data_cfg_t, test_images, 0, "",
        "a test set's images (IDX), instead of test"),
    FASGD_CFG_KEY_STRING ("test_labels", fasgd_data_cfg_t, test_labels, 0, "",
        "a test set's labels (IDX), instead of test"),
    FASGD_CFG_KEY_END
};

void
fasgd_model_cfg_to_spec (const fasgd_model_cfg_t *cfg, fasgd_model_spec_t *spec)
{
    memset (spec, 0, sizeof *spec);
    spec->nsizes = cfg->sizes.n > FASGD_MODEL_MAX_LAYERS + 1 ? FASGD_MODEL_MAX_LAYERS + 2 : cfg->sizes.n;
    for (int i = 0; i < spec->nsizes && i < FASGD_MODEL_MAX_LAYERS + 1; i++)
        spec->sizes [i] = cfg->sizes.v [i];
    spec->activation = cfg->activation;
    spec->init = cfg->init;
}

void
fasgd_rule_cfg_to_params (const fasgd_rule_cfg_t *cfg, int lambda, fasgd_rule_params_t *p)
{
    fasgd_rule_params_default (p);
    p->kind = cfg->name;
    p->lr = cfg->lr;
    p->sasgd_form = cfg->sasgd_form;
    int group = lambda / (cfg->softsync_n > 0 ? cfg->softsync_n : 1);
    p->softsync_group = group < 1 ? 1 : group;
    p->statistic = cfg->statistic;
    p->gamma = cfg->gamma;
    p->beta = cfg->beta;
    p->epsilon = cfg->epsilon;
    p->abs_decay = cfg->abs_decay;
    p->abs_floor = cfg->abs_floor;
    p->staleness = cfg->staleness;
    p->dc_lambda = cfg->dc_lambda;
    p->dc_adaptive = cfg->dc_adaptive;
    p->dc_momentum = cfg->dc_momentum;
    p->gap_decay = cfg->gap_decay;
}

void
fasgd_gate_cfg_to_params (const fasgd_gate_cfg_t *cfg, double eps, fasgd_gate_params_t *p)
{
    fasgd_gate_params_default (p);
    p->kind = cfg->kind;
    p->every = cfg->every;
    p->c = cfg->c;
    p->eps = eps;
}

static fasgd_dataset_t *
s_load_pair (const char *images, const char *labels, const char *dir, const char *prefix,
             uint32_t max)
{
    char err [512];
    fasgd_dataset_t *ds;
    if (*images || *labels) {
        if (!*images || !*labels) {
            fasgd_log_error ("data: give both %s_images and %s_labels, or neither", prefix, prefix);
            return NULL;
        }
        ds = fasgd_dataset_load_idx (images, labels, max, err, sizeof err);
    }
    else
        ds = fasgd_dataset_load_dir (dir, strcmp (prefix, "train") == 0 ? "train" : "t10k", max,
                                     err, sizeof err);
    if (!ds)
        fasgd_log_error ("data: %s", err);
    return ds;
}

/*  0 when set's images and labels fit the model, else logs why, naming
    where model.sizes was set, and -1.  */
static int
s_fits_model (const fasgd_dataset_t *set, const char *what, const fasgd_model_cfg_t *model)
{
    const fasgd_cfg_intlist_t *sizes = &model->sizes;
    int in = sizes->v [0], classes = sizes->v [sizes->n - 1];
    if ((int) set->dim != in) {
        fasgd_log_error ("data: %s images have %u pixels but the model's input size is %d "
                         "(model.sizes' first, %s)", what, set->dim, in, sizes->where);
        return -1;
    }
    if ((int) set->nclasses > classes) {
        fasgd_log_error ("data: %s labels go up to %u but the model has %d outputs "
                         "(model.sizes' last, %s)", what, set->nclasses - 1, classes, sizes->where);
        return -1;
    }
    return 0;
}

int
fasgd_data_cfg_load_test (const fasgd_data_cfg_t *cfg, const fasgd_model_cfg_t *model,
                          fasgd_dataset_t **valid_p, fasgd_dataset_t **test_p)
{
    *test_p = NULL;
    int files = *cfg->test_images || *cfg->test_labels;
    if (files && cfg->test > 0) {
        fasgd_log_error ("data: give test (a split of the validation set) or test_images and "
                         "test_labels, not both");
        return -1;
    }
    if (files) {
        fasgd_dataset_t *test = s_load_pair (cfg->test_images, cfg->test_labels, cfg->dir, "test", 0);
        if (!test)
            return -1;
        if (s_fits_model (test, "test", model) != 0) {
            fasgd_dataset_destroy (&test);
            return -1;
        }
        *test_p = test;
        return 0;
    }
    if (cfg->test <= 0)
        return 0;
    fasgd_dataset_t *valid = *valid_p;
    if ((uint32_t) cfg->test >= valid->n) {
        fasgd_log_error ("data: test %d leaves no validation examples (the set has %u)",
                         cfg->test, valid->n);
        return -1;
    }
    uint32_t keep = valid->n - (uint32_t) cfg->test;
    fasgd_dataset_t *test = fasgd_dataset_slice (valid, keep, (uint32_t) cfg->test);
    fasgd_dataset_t *head = fasgd_dataset_slice (valid, 0, keep);
    if (!test || !head) {
        fasgd_log_error ("data: out of memory for the test set");
        fasgd_dataset_destroy (&test);
        fasgd_dataset_destroy (&head);
        return -1;
    }
    fasgd_dataset_destroy (valid_p);
    *valid_p = head;
    *test_p = test;
    return 0;
}

int
fasgd_data_cfg_load (const fasgd_data_cfg_t *cfg, const fasgd_model_cfg_t *model,
                     uint64_t seed, fasgd_dataset_t **train_p, fasgd_dataset_t **valid_p)
{
    *train_p = *valid_p = NULL;
    fasgd_dataset_t *train = s_load_pair (cfg->train_images, cfg->train_labels, cfg->dir, "train", 0);
    if (!train)
        return -1;
    fasgd_dataset_t *valid = NULL;
    if (cfg->holdout > 0) {
        if ((uint32_t) cfg->holdout >= train->n) {
            fasgd_log_error ("data: holdout %d leaves no training examples (the set has %u)",
                             cfg->holdout, train->n);
            fasgd_dataset_destroy (&train);
            return -1;
        }
        uint32_t keep = train->n - (uint32_t) cfg->holdout;
        valid = fasgd_dataset_slice (train, keep, (uint32_t) cfg->holdout);
        fasgd_dataset_t *head = fasgd_dataset_slice (train, 0, keep);
        fasgd_dataset_destroy (&train);
        train = head;
    }
    else
        valid = s_load_pair (cfg->validation_images, cfg->validation_labels, cfg->dir, "validation", 0);
    if (!train || !valid) {
        fasgd_dataset_destroy (&train);
        fasgd_dataset_destroy (&valid);
        return -1;
    }
    if (cfg->shuffle)
        fasgd_dataset_shuffle (train, seed);
    if (cfg->max_train > 0 && (uint32_t) cfg->max_train < train->n) {
        fasgd_dataset_t *head = fasgd_dataset_slice (train, 0, (uint32_t) cfg->max_train);
        fasgd_dataset_destroy (&train);
        train = head;
    }
    if (cfg->max_validation > 0 && (uint32_t) cfg->max_validation < valid->n) {
        fasgd_dataset_t *head = fasgd_dataset_slice (valid, 0, (uint32_t) cfg->max_validation);
        fasgd_dataset_destroy (&valid);
        valid = head;
    }
    int rc = 0;
    if (!train || !valid || s_fits_model (train, "train", model) != 0
        || s_fits_model (valid, "validation", model) != 0)
        rc = -1;
    if (rc != 0) {
        fasgd_dataset_destroy (&train);
        fasgd_dataset_destroy (&valid);
        return -1;
    }
    *train_p = train;
    *valid_p = valid;
    return 0;
}
