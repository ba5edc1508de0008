/*  settings: the configuration sections that the simulator, the server and
    the client share (model, rule, gates, data), as config key tables, and
    their conversion into the parameters of the model, rules and gates
    modules. One table per section means one spelling of every key across
    programs, and one place the manual page is checked against.  */
#ifndef FASGD_SETTINGS_H_INCLUDED
#define FASGD_SETTINGS_H_INCLUDED

#include "config.h"
#include "data.h"
#include "gates.h"
#include "model.h"
#include "rules.h"

#define FASGD_PATH_LEN 1024

typedef struct {
    fasgd_cfg_intlist_t sizes;      /* layer widths, input first */
    int activation;                 /* fasgd_activation_t */
    int init;                       /* fasgd_init_t */
} fasgd_model_cfg_t;

typedef struct {
    int name;                       /* fasgd_rule_kind_t */
    double lr;
    int sasgd_form;
    int softsync_n;                 /* n of n-softsync: group c = floor(λ/n) */
    int statistic;
    double gamma, beta, epsilon;
    double abs_decay, abs_floor;
    int staleness;                  /* fasgd_staleness_t */
    double dc_lambda;
    int dc_adaptive;
    double dc_momentum;
    double gap_decay;
} fasgd_rule_cfg_t;

typedef struct {
    int kind;                       /* fasgd_gate_kind_t */
    int every;
    double c;
} fasgd_gate_cfg_t;

typedef struct {
    fasgd_gate_cfg_t fetch, push;
    int push_skip;                  /* fasgd_push_skip_t */
    double eps;                     /* ε_g */
} fasgd_gates_cfg_t;

typedef struct {
    char dir [FASGD_PATH_LEN];              /* train-* and t10k-* IDX files */
    char train_images [FASGD_PATH_LEN];     /* explicit paths override dir */
    char train_labels [FASGD_PATH_LEN];
    char validation_images [FASGD_PATH_LEN];
    char validation_labels [FASGD_PATH_LEN];
    int holdout;                    /* > 0: validate on the last N training examples */
    int max_train;                  /* 0: all */
    int max_validation;             /* 0: all */
    int shuffle;                    /* shuffle the training set once, from the seed */
    char test_images [FASGD_PATH_LEN];      /* a test set of its own, or "" */
    char test_labels [FASGD_PATH_LEN];
    int test;                       /* > 0: the last N validation examples are the test set */
} fasgd_data_cfg_t;

extern const fasgd_cfg_key_t fasgd_model_cfg_keys [];
extern const fasgd_cfg_key_t fasgd_rule_cfg_keys [];
extern const fasgd_cfg_key_t fasgd_gates_cfg_keys [];
extern const fasgd_cfg_key_t fasgd_data_cfg_keys [];

void fasgd_model_cfg_to_spec (const fasgd_model_cfg_t *cfg, fasgd_model_spec_t *spec);
/*  lambda: the number of clients, for softsync's group size.  */
void fasgd_rule_cfg_to_params (const fasgd_rule_cfg_t *cfg, int lambda, fasgd_rule_params_t *p);
void fasgd_gate_cfg_to_params (const fasgd_gate_cfg_t *cfg, double eps, fasgd_gate_params_t *p);

/*  Loads the training and validation sets the data section names, and
    checks them against the model (input size, classes; a mismatch names
    where model.sizes was set). Logs the cause and returns -1 on failure.  */
int fasgd_data_cfg_load (const fasgd_data_cfg_t *cfg, const fasgd_model_cfg_t *model,
                         uint64_t seed, fasgd_dataset_t **train_p, fasgd_dataset_t **valid_p);

/*  The test set the data section names, if any: the files test_images and
    test_labels, or the last `test` examples of *valid_p, which then keeps
    the rest. *test_p is NULL when there is none. Logs the cause and
    returns -1 on failure (*valid_p is then unchanged).  */
int fasgd_data_cfg_load_test (const fasgd_data_cfg_t *cfg, const fasgd_model_cfg_t *model,
                              fasgd_dataset_t **valid_p, fasgd_dataset_t **test_p);

#endif
