/*  config: every value type, every error message with its line:column,
    includes, --set overrides, dump round-trip.  */
#include "config.h"
#include "testutil.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    double gamma;
    int group;
} sub_t;

typedef struct {
    int workers;
    uint64_t seed;
    double lr;
    int verbose;
    char path [16];
    int rule;
    fasgd_cfg_intlist_t sizes;
    sub_t sub;
    double need;
} cfg_t;

static const char *const s_rules [] = { "asgd", "sasgd", "fasgd", NULL };

static const fasgd_cfg_key_t s_sub_keys [] = {
    FASGD_CFG_KEY_DOUBLE ("gamma", sub_t, gamma, 0, 1, FASGD_CFG_MAX_OPEN, "0.9", "decay"),
    FASGD_CFG_KEY_INT ("group", sub_t, group, 1, 100, "1", "group size"),
    FASGD_CFG_KEY_END
};

static const fasgd_cfg_key_t s_keys [] = {
    FASGD_CFG_KEY_INT ("workers", cfg_t, workers, 1, 10000, "4", "clients"),
    FASGD_CFG_KEY_U64 ("seed", cfg_t, seed, 0, 0, "1", "seed"),
    FASGD_CFG_KEY_DOUBLE ("rule.lr", cfg_t, lr, 0, 10, FASGD_CFG_MIN_OPEN, "0.005", "learning rate"),
    FASGD_CFG_KEY_BOOL ("verbose", cfg_t, verbose, "false", "chatty"),
    FASGD_CFG_KEY_STRING ("data.path", cfg_t, path, 0, "data", "where"),
    FASGD_CFG_KEY_ENUM ("rule.name", cfg_t, rule, s_rules, "fasgd", "which rule"),
    FASGD_CFG_KEY_INTLIST ("model.sizes", cfg_t, sizes, 1, 100000, "784,100,10", "widths"),
    FASGD_CFG_KEY_INCLUDE ("rule.fasgd", cfg_t, sub, s_sub_keys),
    FASGD_CFG_KEY_END
};

static const fasgd_cfg_key_t s_required_keys [] = {
    FASGD_CFG_KEY_INT ("workers", cfg_t, workers, 1, 10000, "4", "clients"),
    { .name = "need", .type = FASGD_CFG_DOUBLE, .offset = offsetof (cfg_t, need),
      .flags = FASGD_CFG_REQUIRED, .help = "required" },
    FASGD_CFG_KEY_END
};

static char *s_errs;
static size_t s_errs_len;

/*  Loads text over the defaults; returns the error count, messages in s_errs.  */
static int
s_load (cfg_t *c, const char *text)
{
    free (s_errs);
    s_errs = NULL;
    FILE *errs = open_memstream (&s_errs, &s_errs_len);
    ck_assert_int_eq (fasgd_config_defaults (s_keys, c, errs), 0);
    int n = fasgd_config_load_string (s_keys, c, "t.yaml", text, errs);
    fclose (errs);
    return n;
}

static void
s_expect (const char *needle)
{
    ck_assert_msg (s_errs && strstr (s_errs, needle), "expected '%s' in '%s'", needle,
                   s_errs ? s_errs : "(nothing)");
}

START_TEST (test_defaults)
{
    cfg_t c;
    memset (&c, 0xff, sizeof c);
    ck_assert_int_eq (s_load (&c, ""), 0);
    ck_assert_int_eq (c.workers, 4);
    ck_assert_uint_eq (c.seed, 1);
    ck_assert_double_eq (c.lr, 0.005);
    ck_assert_int_eq (c.verbose, 0);
    ck_assert_str_eq (c.path, "data");
    ck_assert_int_eq (c.rule, 2);
    ck_assert_int_eq (c.sizes.n, 3);
    ck_assert_int_eq (c.sizes.v [0], 784);
    ck_assert_int_eq (c.sizes.v [2], 10);
    ck_assert_double_eq (c.sub.gamma, 0.9);
    ck_assert_int_eq (c.sub.group, 1);
}
END_TEST

START_TEST (test_full_file)
{
    cfg_t c;
    const char *text =
        "workers: 128\n"
        "seed: 18446744073709551615\n"
        "verbose: yes\n"
        "data:\n"
        "  path: \"/srv/x\"\n"
        "rule:\n"
        "  name: sasgd\n"
        "  lr: 4e-2\n"
        "  fasgd: {gamma: 0.5, group: 3}\n"
        "model:\n"
        "  sizes:\n"
        "    - 10\n"
        "    - 5\n";
    ck_assert_int_eq (s_load (&c, text), 0);
    ck_assert_int_eq (c.workers, 128);
    ck_assert_uint_eq (c.seed, UINT64_MAX);
    ck_assert_int_eq (c.verbose, 1);
    ck_assert_str_eq (c.path, "/srv/x");
    ck_assert_int_eq (c.rule, 1);
    ck_assert_double_eq (c.lr, 0.04);
    ck_assert_double_eq (c.sub.gamma, 0.5);
    ck_assert_int_eq (c.sub.group, 3);
    ck_assert_int_eq (c.sizes.n, 2);
    ck_assert_int_eq (c.sizes.v [1], 5);
}
END_TEST

START_TEST (test_dotted_keys)
{
    cfg_t c;
    ck_assert_int_eq (s_load (&c, "rule.lr: 0.5\nrule.fasgd.group: 7\n"), 0);
    ck_assert_double_eq (c.lr, 0.5);
    ck_assert_int_eq (c.sub.group, 7);
}
END_TEST

/*  Files refused with one error: the text, and up to two pieces of the
    message (NULL: any message; a leading '^': the message starts so).  */
static const struct {
    const char *text, *expect, *expect2;
} s_refused [] = {
    /*  Unknown keys, with a suggestion when one is close.  */
    { "workers: 2\nrule:\n  lrate: 0.1\n",
      "t.yaml:3:3: error: unknown key 'rule.lrate' (did you mean 'rule.lr'?)", NULL },
    { "zzzzzzzzzz: 1\n", "t.yaml:1:1: error: unknown key 'zzzzzzzzzz'\n", NULL },
    /*  Numbers, strictly.  */
    { "rule.lr: 1e999\n", "rule.lr must be a finite number (got '1e999')", NULL },
    { "rule.lr: .nan\n", NULL, NULL },
    { "workers: 3.5\n", NULL, NULL },
    { "workers: 99999999999\n", NULL, NULL },
    { "workers: 12abc\n", NULL, NULL },
    { "workers:\n", "t.yaml:1:9: error: workers needs a value (an integer)", NULL },
    { "seed: 18446744073709551616\n", NULL, NULL },
    /*  Duplicates and structure.  */
    { "workers: 2\nworkers: 3\n",
      "t.yaml:2:1: error: duplicate key 'workers' (first at line 1, column 1)", NULL },
    { "- 1\n- 2\n",
      "t.yaml:1:1: error: the top level must be a mapping of keys, not a list", NULL },
    { "workers: 2\n---\nworkers: 3\n", "only one YAML document is allowed", NULL },
    { "[1, 2]: 3\n", "a key must be a plain name, not a list", NULL },
    /*  YAML syntax errors, at their place.  */
    { "workers: 2\nrule:\n  lr: 0.1\n lr2: [1, 2\n", "^t.yaml:4:", NULL },
    { "a: 'unterminated\n", "t.yaml:", "error: " },
    { "a: \x01\x02\n", "error: ", NULL },
};
#define S_REFUSED ((int) (sizeof s_refused / sizeof s_refused [0]))

START_TEST (test_refused)
{
    cfg_t c;
    ck_assert_int_eq (s_load (&c, s_refused [_i].text), 1);
    const char *e = s_refused [_i].expect;
    if (e && *e == '^')
        ck_assert_msg (s_errs && strncmp (s_errs, e + 1, strlen (e + 1)) == 0, "got '%s'", s_errs);
    else if (e)
        s_expect (e);
    if (s_refused [_i].expect2)
        s_expect (s_refused [_i].expect2);
}
END_TEST

START_TEST (test_wrong_types)
{
    cfg_t c;
    const char *text =
        "workers: many\n"          /* 1 */
        "seed: -1\n"               /* 2 */
        "verbose: maybe\n"         /* 3 */
        "rule:\n"                  /* 4 */
        "  lr: [1, 2]\n"           /* 5 */
        "  name: adam\n"           /* 6 */
        "model:\n"                 /* 7 */
        "  sizes: [784, x]\n"      /* 8 */
        "data: 3\n"                /* 9 */
        "rule.fasgd.group: \"3\"\n"; /* 10 */
    ck_assert_int_eq (s_load (&c, text), 8);
    s_expect ("t.yaml:1:10: error: workers must be an integer (got 'many')");
    s_expect ("t.yaml:2:7: error: seed must be a non-negative integer (got '-1')");
    s_expect ("t.yaml:3:10: error: verbose must be true or false (got 'maybe')");
    s_expect ("t.yaml:5:7: error: rule.lr must be a number, not a list");
    s_expect ("t.yaml:6:9: error: rule.name must be one of asgd, sasgd, fasgd (got 'adam')");
    s_expect ("t.yaml:8:16: error: model.sizes: every item must be an integer");
    s_expect ("t.yaml:9:7: error: data is a section: it takes a mapping of keys, not a scalar");
    s_expect ("t.yaml:10:19: error: rule.fasgd.group must be an integer, not the quoted string \"3\"");
    /*  A rejected value leaves the default in place.  */
    ck_assert_int_eq (c.workers, 4);
    ck_assert_double_eq (c.lr, 0.005);
}
END_TEST

START_TEST (test_bounds)
{
    cfg_t c;
    const char *text =
        "workers: 0\n"
        "rule:\n"
        "  lr: 0\n"
        "  fasgd:\n"
        "    gamma: 1\n"
        "    group: 101\n"
        "model: {sizes: [784, 0]}\n"
        "data: {path: \"0123456789abcdef\"}\n";
    ck_assert_int_eq (s_load (&c, text), 6);
    s_expect ("t.yaml:1:10: error: workers must be in [1, 10000] (got 0)");
    s_expect ("t.yaml:3:7: error: rule.lr must be in (0, 10] (got 0)");
    s_expect ("t.yaml:5:12: error: rule.fasgd.gamma must be in [0, 1) (got 1)");
    s_expect ("t.yaml:6:12: error: rule.fasgd.group must be in [1, 100] (got 101)");
    s_expect ("t.yaml:7:22: error: model.sizes: item must be in [1, 100000] (got 0)");
    s_expect ("t.yaml:8:14: error: data.path is too long (16 bytes, at most 15)");
}
END_TEST

START_TEST (test_all_errors_collected)
{
    cfg_t c;
    ck_assert_int_eq (s_load (&c, "workers: -1\nfoo: 1\nbar: 2\nrule.lr: -3\n"), 4);
    /*  In file order.  */
    char *a = strstr (s_errs, ":1:"), *b = strstr (s_errs, ":2:"), *d = strstr (s_errs, ":4:");
    ck_assert (a && b && d && a < b && b < d);
}
END_TEST

START_TEST (test_required)
{
    cfg_t c;
    char *buf = NULL;
    size_t len;
    FILE *errs = open_memstream (&buf, &len);
    fasgd_config_defaults (s_required_keys, &c, errs);
    ck_assert_int_eq (fasgd_config_load_string (s_required_keys, &c, "r.yaml", "workers: 3\n", errs), 1);
    fclose (errs);
    ck_assert_ptr_nonnull (strstr (buf, "r.yaml: error: missing required key 'need'"));
    free (buf);
}
END_TEST

START_TEST (test_set_overrides)
{
    cfg_t c;
    char *buf = NULL;
    size_t len;
    FILE *errs = open_memstream (&buf, &len);
    fasgd_config_defaults (s_keys, &c, errs);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "rule.lr=0.25", errs), 0);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "model.sizes=[5, 6, 7]", errs), 0);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "rule.fasgd.gamma=0.25", errs), 0);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "model.sizes=9,8", errs), 0);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "rule.name=asgd", errs), 0);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "workers=0", errs), 1);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "rule.lrr=1", errs), 1);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "noequals", errs), 1);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "=3", errs), 1);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "rule=3", errs), 1);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "data.path=", errs), 0);
    ck_assert_str_eq (c.path, "");
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "workers=", errs), 1);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "data.path=-", errs), 1);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "data.path=\"-\"", errs), 0);
    ck_assert_str_eq (c.path, "-");
    fclose (errs);
    ck_assert_double_eq (c.lr, 0.25);
    ck_assert_double_eq (c.sub.gamma, 0.25);
    ck_assert_int_eq (c.sizes.n, 2);
    ck_assert_int_eq (c.sizes.v [0], 9);
    ck_assert_int_eq (c.rule, 0);
    ck_assert_int_eq (c.workers, 4);
    ck_assert_ptr_nonnull (strstr (buf, "--set workers: error: workers must be in [1, 10000] (got 0)"));
    ck_assert_ptr_nonnull (strstr (buf, "--set rule.lrr: error: unknown key 'rule.lrr' (did you mean 'rule.lr'?)"));
    ck_assert_ptr_nonnull (strstr (buf, "--set: error: 'noequals' is not of the form key=value"));
    ck_assert_ptr_nonnull (strstr (buf, "--set rule: error: unknown key 'rule'"));
    ck_assert_ptr_nonnull (strstr (buf, "--set data.path: error: data.path must be a string, "
                                        "not a list; quote a value that YAML reads as something "
                                        "else: --set 'data.path=\"-\"'"));
    free (buf);
}
END_TEST

/*  A value given with --set means what the same value means in a file,
    for plain words (which skip the YAML parser) and everything else,
    except what YAML reads differently as a whole document (---, ..., #c,
    a leading tab).  */
START_TEST (test_set_means_what_a_file_means)
{
    static const char *const keys [] = { "workers", "seed", "rule.lr", "verbose", "data.path", "rule.name" };
    static const char *const values [] = {
        "7", "-1", "+3", "007", "0x10", "1_000", "1e3", "-1e-3", ".5", "-.5", "5.", ".inf", "-.inf", ".nan",
        "~", "null", "NULL", "true", "True", "yes", "off", "asgd", "sasgd", "a/b", "/abs", "_x", "a-b", "a+b",
        "-", "-x", ".x", "a:b", "a: b", "a #c", "'q'", "\"q\"", "[1]", "{a: 1}", "&a x",
        "*a", "!x", "|", ">", "%x", "@x", "`x", "a,b", "?", "4 ", " 4", "1.5e308", "1e309",
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys [0]; k++)
        for (size_t v = 0; v < sizeof values / sizeof values [0]; v++) {
            cfg_t by_set, by_file;
            memset (&by_set, 0xa5, sizeof by_set);
            memset (&by_file, 0xa5, sizeof by_file);
            char assignment [128], text [128];
            snprintf (assignment, sizeof assignment, "%s=%s", keys [k], values [v]);
            /*  The file spells the key nested when it is dotted.  */
            const char *dot = strchr (keys [k], '.');
            if (dot)
                snprintf (text, sizeof text, "%.*s:\n  %s: %s\n", (int) (dot - keys [k]), keys [k], dot + 1,
                          values [v]);
            else
                snprintf (text, sizeof text, "%s: %s\n", keys [k], values [v]);
            FILE *quiet = fopen ("/dev/null", "w");
            ck_assert_int_eq (fasgd_config_defaults (s_keys, &by_set, quiet), 0);
            int set_errors = fasgd_config_set (s_keys, &by_set, assignment, quiet);
            fclose (quiet);
            int file_errors = s_load (&by_file, text);
            ck_assert_msg ((set_errors == 0) == (file_errors == 0), "'%s': --set %d errors, file %d", assignment,
                           set_errors, file_errors);
            if (set_errors == 0)
                ck_assert_msg (memcmp (&by_set, &by_file, sizeof by_set) == 0, "'%s': --set and file differ",
                               assignment);
        }
}
END_TEST

START_TEST (test_dump_round_trip)
{
    cfg_t a, b;
    ck_assert_int_eq (s_load (&a, "workers: 17\nrule.lr: 0.1\ndata.path: 'a\"b\\\\c'\n"
                                   "model.sizes: [3, 4]\nverbose: on\nrule.name: asgd\n"), 0);
    char *buf = NULL;
    size_t len;
    FILE *out = open_memstream (&buf, &len);
    fasgd_config_dump (s_keys, &a, out);
    fclose (out);
    ck_assert_int_eq (s_load (&b, buf), 0);
    ck_assert_int_eq (b.workers, 17);
    ck_assert_double_eq (b.lr, 0.1);
    ck_assert_str_eq (b.path, "a\"b\\\\c");
    ck_assert_int_eq (b.sizes.n, 2);
    ck_assert_int_eq (b.verbose, 1);
    ck_assert_int_eq (b.rule, 0);
    ck_assert_double_eq (b.sub.gamma, a.sub.gamma);
    /*  The shortest numbers that read back the same.  */
    ck_assert_msg (strstr (buf, "rule.lr: 0.1\n") && strstr (buf, "rule.fasgd.gamma: 0.9\n"), "%s", buf);
    free (buf);
    buf = NULL;
    ck_assert_int_eq (s_load (&a, "rule.lr: 0.005\nrule.fasgd.gamma: 0.123456789012345678\n"), 0);
    out = open_memstream (&buf, &len);
    fasgd_config_dump (s_keys, &a, out);
    fclose (out);
    ck_assert_msg (strstr (buf, "rule.lr: 0.005\n") && strstr (buf, "rule.fasgd.gamma: 0.12345678901234568\n"),
                   "%s", buf);
    ck_assert_int_eq (s_load (&b, buf), 0);
    ck_assert_double_eq (b.sub.gamma, a.sub.gamma);
    free (buf);
}
END_TEST

/*  A list shorter than its key allows is refused at its file:line.  */
START_TEST (test_intlist_min_items)
{
    static const fasgd_cfg_key_t keys [] = {
        { .name = "sizes", .type = FASGD_CFG_INTLIST, .offset = offsetof (cfg_t, sizes), .min = 1, .max = 100,
          .size = 4, .min_items = 2, .def = "3,4", .help = "widths" },
        FASGD_CFG_KEY_END
    };
    cfg_t c;
    free (s_errs);
    s_errs = NULL;
    FILE *errs = open_memstream (&s_errs, &s_errs_len);
    ck_assert_int_eq (fasgd_config_defaults (keys, &c, errs), 0);
    ck_assert_int_eq (fasgd_config_load_string (keys, &c, "t.yaml", "# widths\nsizes: [78]\n", errs), 1);
    ck_assert_int_eq (fasgd_config_load_string (keys, &c, "t.yaml", "sizes: [1, 2, 3]\n", errs), 0);
    fclose (errs);
    s_expect ("t.yaml:2:8: error: sizes needs at least 2 items (got 1)");
}
END_TEST

START_TEST (test_file_errors)
{
    cfg_t c;
    char *buf = NULL;
    size_t len;
    FILE *errs = open_memstream (&buf, &len);
    fasgd_config_defaults (s_keys, &c, errs);
    ck_assert_int_eq (fasgd_config_load (s_keys, &c, "/nonexistent/x.yaml", errs), 1);
    char path [] = "/tmp/fasgd-test-config-XXXXXX";
    int fd = mkstemp (path);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, "workers: 9\n", 11), 11);
    close (fd);
    ck_assert_int_eq (fasgd_config_load (s_keys, &c, path, errs), 0);
    unlink (path);
    fclose (errs);
    ck_assert_int_eq (c.workers, 9);
    ck_assert_ptr_nonnull (strstr (buf, "/nonexistent/x.yaml: error: cannot open: No such file"));
    free (buf);
}
END_TEST

/*  A key set twice in two spellings: nested and dotted, or a flow mapping
    and a nested one. The last used to win silently.  */
START_TEST (test_duplicate_across_spellings)
{
    cfg_t c;
    ck_assert_int_eq (s_load (&c, "rule:\n  lr: 0.1\nrule.lr: 0.2\n"), 1);
    s_expect ("t.yaml:3:1: error: duplicate key 'rule.lr' (first at line 2, column 3)");
    ck_assert_int_eq (s_load (&c, "rule.lr: 0.2\nrule: {lr: 0.1}\n"), 1);
    s_expect ("t.yaml:2:8: error: duplicate key 'rule.lr' (first at line 1, column 1)");
    ck_assert_int_eq (s_load (&c, "rule.fasgd: {gamma: 0.5}\nrule:\n  fasgd:\n    gamma: 0.6\n"), 1);
    s_expect ("t.yaml:4:5: error: duplicate key 'rule.fasgd.gamma' (first at line 1, column 14)");
    /*  A section opened twice, each time for other keys, is fine.  */
    ck_assert_int_eq (s_load (&c, "rule:\n  name: sasgd\nrule.lr: 0.5\nrule.fasgd: {group: 2}\n"), 0);
    ck_assert_int_eq (c.rule, 1);
    ck_assert_double_eq (c.lr, 0.5);
    ck_assert_int_eq (c.sub.group, 2);
}
END_TEST

static int
s_lines (const char *text)
{
    int n = 0;
    for (; text && *text; text++)
        n += *text == '\n';
    return n;
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/*  Many keys: each problem counted, the first 20 shown and one line for
    the rest, in time linear in the file (the bound is generous: the old
    quadratic check took seconds and printed a line per key).  */
START_TEST (test_many_keys_linear)
{
    cfg_t c;
    size_t cap = 50000 * 16;
    char *text = malloc (cap), *p = text;
    for (int i = 0; i < 9999; i++)
        p += sprintf (p, "k%05d: 1\n", i);
    double t0 = s_now ();
    ck_assert_int_eq (s_load (&c, text), 9999);
    ck_assert_double_lt (s_now () - t0, 5.0);
    ck_assert_int_eq (s_lines (s_errs), 21);
    s_expect ("t.yaml: error: 9979 more errors not shown");
    /*  The same key 9,999 times: one duplicate per line, found by hash.  */
    p = text;
    for (int i = 0; i < 9999; i++)
        p += sprintf (p, "%s: %d\n", i % 2 ? "workers" : "rule.lr", 1 + i % 7);
    t0 = s_now ();
    ck_assert_int_eq (s_load (&c, text), 9997);
    ck_assert_double_lt (s_now () - t0, 5.0);
    ck_assert_int_eq (s_lines (s_errs), 21);
    /*  40,000 keys: refused as a whole, at the 10,001st.  */
    p = text;
    for (int i = 0; i < 40000; i++)
        p += sprintf (p, "k%05d: 1\n", i);
    t0 = s_now ();
    ck_assert_int_eq (s_load (&c, text), 1);
    ck_assert_double_lt (s_now () - t0, 5.0);
    ck_assert_int_eq (s_lines (s_errs), 1);
    s_expect ("t.yaml:10001:1: error: more than 10000 keys: a configuration holds at most 10000");
    free (text);
}
END_TEST

/*  Nesting deeper than 16 levels is refused before libyaml builds the
    document (100,000 levels once took tens of seconds).  */
START_TEST (test_deep_nesting_refused)
{
    cfg_t c;
    size_t depth = 100000;
    char *text = malloc (depth * 4 + 16), *p = text;
    p += sprintf (p, "workers: ");
    for (size_t i = 0; i < depth; i++)
        *p++ = '[';
    for (size_t i = 0; i < depth; i++)
        *p++ = ']';
    *p++ = '\n';
    *p = 0;
    double t0 = s_now ();
    ck_assert_int_eq (s_load (&c, text), 1);
    ck_assert_double_lt (s_now () - t0, 2.0);
    s_expect ("t.yaml:1:25: error: nested more than 16 levels deep: a configuration is at most 16");
    /*  Block mappings count the same; 16 levels are allowed.  */
    p = text;
    for (int i = 0; i < 17; i++)
        p += sprintf (p, "%*sa%d:\n", 2 * i, "", i);
    ck_assert_int_eq (s_load (&c, text), 1);
    s_expect ("nested more than 16 levels deep");
    p = text;
    for (int i = 0; i < 15; i++)
        p += sprintf (p, "%*sa%d:\n", 2 * i, "", i);
    sprintf (p, "%*sa15: 1\n", 30, "");
    ck_assert_int_eq (s_load (&c, text), 1);
    s_expect ("unknown key 'a0'");
    free (text);
}
END_TEST

/*  A file past 1 MiB is refused before it is parsed, and so is an endless
    one: only the first 1 MiB and a byte are ever read.  */
START_TEST (test_large_file_refused)
{
    cfg_t c;
    size_t len = 2u << 20;
    char *text = malloc (len + 1);
    for (size_t i = 0; i < len; i += 64)
        memcpy (text + i, "# a comment line, of sixty-four bytes with its line break......\n", 64);
    text [len] = 0;
    ck_assert_int_eq (s_load (&c, text), 1);
    s_expect ("t.yaml: error: larger than 1048576 bytes: a configuration is at most that (1 MiB)");
    char path [] = "/tmp/fasgd-test-config-XXXXXX";
    int fd = mkstemp (path);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, text, len), (ssize_t) len);
    close (fd);
    char *buf = NULL;
    size_t blen;
    FILE *errs = open_memstream (&buf, &blen);
    fasgd_config_defaults (s_keys, &c, errs);
    ck_assert_int_eq (fasgd_config_load (s_keys, &c, path, errs), 1);
    double t0 = s_now ();
    ck_assert_int_eq (fasgd_config_load (s_keys, &c, "/dev/zero", errs), 1);
    ck_assert_double_lt (s_now () - t0, 2.0);
    fclose (errs);
    unlink (path);
    ck_assert_msg (strstr (buf, "error: larger than 1048576 bytes"), "%s", buf);
    ck_assert_msg (strstr (buf, "/dev/zero: error: larger than 1048576 bytes"), "%s", buf);
    free (buf);
    free (text);
}
END_TEST

/*  A value is echoed cut to 64 bytes and "...", control characters as '?'.  */
START_TEST (test_values_cut_in_messages)
{
    cfg_t c;
    char text [2200];
    char value [2049];
    memset (value, 'x', 2048);
    value [2048] = 0;
    snprintf (text, sizeof text, "workers: %s\n", value);
    ck_assert_int_eq (s_load (&c, text), 1);
    char want [128];
    snprintf (want, sizeof want, "workers must be an integer (got '%.64s...')\n", value);
    s_expect (want);
    ck_assert_uint_lt (strlen (s_errs), 160);
    ck_assert_int_eq (s_load (&c, "rule.name: \"\\e[31mred\\e[0m\"\n"), 1);
    s_expect ("(got '?[31mred?[0m')");
    snprintf (text, sizeof text, "%s: 1\n", value);
    ck_assert_int_eq (s_load (&c, text), 1);
    ck_assert_uint_lt (strlen (s_errs), 160);
}
END_TEST

/*  A string holding a control character (found by fuzz_config: DEL and
    U+0080 loaded, and --dump-config then wrote YAML that did not load
    back) is refused, naming the key.  */
START_TEST (test_control_characters_refused)
{
    cfg_t c;
    ck_assert_int_eq (s_load (&c, "data.path: \"a\\x7fb\"\n"), 1);
    s_expect ("t.yaml:1:12: error: data.path must not contain a control character (byte 2 of 3)");
    ck_assert_int_eq (s_load (&c, "data.path: \"a\\u0080\"\n"), 1);
    s_expect ("data.path must not contain a control character (byte 2 of 3)");
    ck_assert_int_eq (s_load (&c, "data.path: \"a\\tb\"\n"), 1);
    ck_assert_int_eq (fasgd_config_set (s_keys, &c, "data.path=\"\\e[0m\"", NULL), 1);
    /*  Other characters beyond ASCII are fine, U+00A0 too.  */
    ck_assert_int_eq (s_load (&c, "data.path: \"caf\u00e9-\\u00a0\"\n"), 0);
}
END_TEST

static void
s_count (const char *name, const fasgd_cfg_key_t *key, void *arg)
{
    (void) key;
    if (strcmp (name, "rule.fasgd.group") == 0)
        ++*(int *) arg;
    ++*(int *) arg;
}

START_TEST (test_visit_and_describe)
{
    int n = 0;
    fasgd_config_visit (s_keys, s_count, &n);
    ck_assert_int_eq (n, 10);   /* 9 leaves, one of them counted twice */
    char *buf = NULL;
    size_t len;
    FILE *out = open_memstream (&buf, &len);
    fasgd_config_describe (s_keys, out);
    fclose (out);
    ck_assert_ptr_nonnull (strstr (buf, "rule.fasgd.gamma"));
    ck_assert_ptr_nonnull (strstr (buf, "one of asgd sasgd fasgd"));
    free (buf);
}
END_TEST

static void
s_teardown (void)
{
    free (s_errs);
    s_errs = NULL;
}

static Suite *
config_suite (void)
{
    Suite *s = suite_create ("config");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 30);
    tcase_add_checked_fixture (tc, NULL, s_teardown);
    tcase_add_test (tc, test_defaults);
    tcase_add_test (tc, test_full_file);
    tcase_add_test (tc, test_dotted_keys);
    tcase_add_loop_test (tc, test_refused, 0, S_REFUSED);
    tcase_add_test (tc, test_wrong_types);
    tcase_add_test (tc, test_bounds);
    tcase_add_test (tc, test_all_errors_collected);
    tcase_add_test (tc, test_required);
    tcase_add_test (tc, test_set_overrides);
    tcase_add_test (tc, test_dump_round_trip);
    tcase_add_test (tc, test_file_errors);
    tcase_add_test (tc, test_intlist_min_items);
    tcase_add_test (tc, test_visit_and_describe);
    tcase_add_test (tc, test_duplicate_across_spellings);
    tcase_add_test (tc, test_many_keys_linear);
    tcase_add_test (tc, test_deep_nesting_refused);
    tcase_add_test (tc, test_large_file_refused);
    tcase_add_test (tc, test_values_cut_in_messages);
    tcase_add_test (tc, test_control_characters_refused);
    tcase_add_test (tc, test_set_means_what_a_file_means);
    suite_add_tcase (s, tc);
    return s;
}

FASGD_TEST_MAIN (config_suite)
