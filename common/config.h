/*  config: YAML configuration files loaded into typed structs through one
    table of keys.

    A program describes its configuration once, as an array of
    fasgd_cfg_key_t (name, type, bounds, default, offset into its struct,
    one line of help), ended by an entry whose name is NULL. Nested YAML
    mappings address dotted names: the key "rule.fasgd.gamma" is written

        rule:
          fasgd:
            gamma: 0.9

    or as a flow mapping, or `--set rule.fasgd.gamma=0.9` on a command line.
    A FASGD_CFG_INCLUDE entry splices another table in at an offset and
    under a prefix, so the server and the simulator share the tables of
    the model, the rule and the gates.

    Every problem is reported as "file:line:col: error: message" (1-based,
    from libyaml's marks) on the stream the caller gives; the loader
    collects all of them before returning their count, showing the first
    FASGD_CFG_MAX_MESSAGES. A key set twice, in any spelling (nested and
    dotted), is an error naming both places. Nothing is ever written to
    the configuration file.  */
#ifndef FASGD_CONFIG_H_INCLUDED
#define FASGD_CONFIG_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*  Limits on a configuration file, each refused with a message before
    the work it would cost: any file is checked in time and memory linear
    in its size, and that size is bounded. A real configuration holds a
    few dozen keys three levels deep.  */
#define FASGD_CFG_MAX_BYTES    (1u << 20)  /* 1 MiB */
#define FASGD_CFG_MAX_DEPTH    16          /* nested mappings and lists */
#define FASGD_CFG_MAX_KEYS     10000       /* keys, counting every mapping's */
#define FASGD_CFG_MAX_MESSAGES 20          /* error lines shown; then one line counts the rest */
#define FASGD_CFG_SHOW_MAX     64          /* bytes of a value echoed in a message, then "..." */

typedef enum {
    FASGD_CFG_INT = 1,      /* int */
    FASGD_CFG_U64,          /* uint64_t: seeds, iteration counts */
    FASGD_CFG_DOUBLE,       /* double, always finite */
    FASGD_CFG_BOOL,         /* int 0/1: true/false, yes/no, on/off */
    FASGD_CFG_STRING,       /* char [size], NUL-terminated */
    FASGD_CFG_ENUM,         /* int: index into choices */
    FASGD_CFG_INTLIST,      /* fasgd_cfg_intlist_t with at most `size` items */
    FASGD_CFG_INCLUDE       /* the table `sub`, at offset, under prefix name */
} fasgd_cfg_type_t;

/*  Flags.  */
#define FASGD_CFG_REQUIRED  1u   /* an error when the file does not set it */
#define FASGD_CFG_MIN_OPEN  2u   /* min is exclusive: "must be > min" */
#define FASGD_CFG_MAX_OPEN  4u   /* max is exclusive */

#define FASGD_CFG_INTLIST_MAX 16
#define FASGD_CFG_WHERE_LEN 160
typedef struct {
    int n;
    int v [FASGD_CFG_INTLIST_MAX];
    /*  Where the list was set, for messages about it after loading:
        "FILE:LINE:COL", "--set NAME" or "built-in default".  */
    char where [FASGD_CFG_WHERE_LEN];
} fasgd_cfg_intlist_t;

typedef struct fasgd_cfg_key_t {
    const char *name;               /* dotted name; NULL ends a table */
    fasgd_cfg_type_t type;
    size_t offset;                  /* into the caller's struct */
    double min, max;                /* numbers, and each item of an intlist */
    const char *def;                /* default, written as in YAML; NULL: zero/empty */
    const char *help;               /* one line, for --help and the manual */
    unsigned flags;
    size_t size;                    /* STRING: buffer size; INTLIST: max items */
    int min_items;                  /* INTLIST: fewer is an error at its file:line */
    const char *const *choices;     /* ENUM: NULL-terminated names */
    const struct fasgd_cfg_key_t *sub;  /* INCLUDE */
} fasgd_cfg_key_t;

/*  Convenience initialisers for tables.  */
#define FASGD_CFG_KEY_INT(nm, st, fld, lo, hi, d, h) \
    { .name = (nm), .type = FASGD_CFG_INT, .offset = offsetof (st, fld), .min = (lo), .max = (hi), .def = (d), .help = (h) }
#define FASGD_CFG_KEY_U64(nm, st, fld, lo, hi, d, h) \
    { .name = (nm), .type = FASGD_CFG_U64, .offset = offsetof (st, fld), .min = (lo), .max = (hi), .def = (d), .help = (h) }
#define FASGD_CFG_KEY_DOUBLE(nm, st, fld, lo, hi, fl, d, h) \
    { .name = (nm), .type = FASGD_CFG_DOUBLE, .offset = offsetof (st, fld), .min = (lo), .max = (hi), .flags = (fl), .def = (d), .help = (h) }
#define FASGD_CFG_KEY_BOOL(nm, st, fld, d, h) \
    { .name = (nm), .type = FASGD_CFG_BOOL, .offset = offsetof (st, fld), .def = (d), .help = (h) }
#define FASGD_CFG_KEY_STRING(nm, st, fld, fl, d, h) \
    { .name = (nm), .type = FASGD_CFG_STRING, .offset = offsetof (st, fld), .size = sizeof (((st *) 0)->fld), .flags = (fl), .def = (d), .help = (h) }
#define FASGD_CFG_KEY_ENUM(nm, st, fld, ch, d, h) \
    { .name = (nm), .type = FASGD_CFG_ENUM, .offset = offsetof (st, fld), .choices = (ch), .def = (d), .help = (h) }
#define FASGD_CFG_KEY_INTLIST(nm, st, fld, lo, hi, d, h) \
    { .name = (nm), .type = FASGD_CFG_INTLIST, .offset = offsetof (st, fld), .min = (lo), .max = (hi), .size = FASGD_CFG_INTLIST_MAX, .def = (d), .help = (h) }
#define FASGD_CFG_KEY_INCLUDE(nm, st, fld, tbl) \
    { .name = (nm), .type = FASGD_CFG_INCLUDE, .offset = offsetof (st, fld), .sub = (tbl) }
#define FASGD_CFG_KEY_END { .name = NULL }

/*  Sets every key to its default. Returns the number of defaults that
    fail their own key (a bug in the table), reported on errs.  */
int fasgd_config_defaults (const fasgd_cfg_key_t *table, void *obj, FILE *errs);

/*  Loads path over obj (call fasgd_config_defaults first). Returns the
    number of errors, each reported on errs; 0 on success.  */
int fasgd_config_load (const fasgd_cfg_key_t *table, void *obj, const char *path, FILE *errs);

/*  The same from a string; `name` stands for the file in messages.  */
int fasgd_config_load_string (const fasgd_cfg_key_t *table, void *obj,
                              const char *name, const char *text, FILE *errs);

/*  Applies one "key=value" override (the value written as in YAML, e.g.
    `model.sizes=[784,100,10]`). Returns 0, or 1 after reporting the error.  */
int fasgd_config_set (const fasgd_cfg_key_t *table, void *obj, const char *assignment, FILE *errs);

/*  What a program does with its -c FILE and --set options: the defaults,
    then the file, then each override in order. Returns the number of
    errors, all reported on errs.  */
int fasgd_config_load_all (const fasgd_cfg_key_t *table, void *obj, const char *path,
                           const char *const *sets, int nsets, FILE *errs);

/*  Writes the configuration held in obj as YAML that loads back to the
    same values.  */
void fasgd_config_dump (const fasgd_cfg_key_t *table, const void *obj, FILE *out);

/*  Writes one line per key: name, type, default, bounds and help.  */
void fasgd_config_describe (const fasgd_cfg_key_t *table, FILE *out);

/*  Calls fn for every leaf key with its full dotted name (for the manual
    page test and for tools).  */
typedef void (fasgd_cfg_visit_fn) (const char *name, const fasgd_cfg_key_t *key, void *arg);
void fasgd_config_visit (const fasgd_cfg_key_t *table, fasgd_cfg_visit_fn *fn, void *arg);

#endif
