/*  config: YAML configuration through one table of keys (libyaml's
    document API, so every value keeps its line and column).  */
#include "config.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define NAME_MAX_LEN 160

/*  The table with includes resolved: one row per leaf key.  */
typedef struct {
    char name [NAME_MAX_LEN];
    const fasgd_cfg_key_t *key;
    size_t offset;
} s_flat_t;

typedef struct {
    s_flat_t *rows;
    size_t n, cap;
} s_flat_table_t;

/*  Where messages go and what they are about.  */
typedef struct {
    const char *source;     /* file name, or "--set key" */
    FILE *errs;
    int nerrors;
    int with_marks;         /* line:col are meaningful */
    size_t walked;          /* keys walked so far, against FASGD_CFG_MAX_KEYS */
    int stop;               /* the document is refused: walk no further */
} s_ctx_t;

/*  Whether another message would still be shown: past the cap, the work
    of composing one (a suggestion costs an edit distance per key) is
    skipped too, so a file of many errors is checked in linear time.  */
static int
s_quiet (const s_ctx_t *ctx)
{
    return !ctx->errs || ctx->nerrors >= FASGD_CFG_MAX_MESSAGES;
}

/*  A value or a name from the file, fit for a message: at most
    FASGD_CFG_SHOW_MAX bytes, cut at a character boundary and followed by
    "..." when longer, control characters as '?', so an error line stays
    one short line whatever the file holds.  */
typedef struct {
    char text [FASGD_CFG_SHOW_MAX + 4];
} s_shown_t;

static const char *
s_show (s_shown_t *out, const char *v)
{
    size_t n = strlen (v), k = 0;
    size_t cut = n > FASGD_CFG_SHOW_MAX ? FASGD_CFG_SHOW_MAX : n;
    /*  Never half a UTF-8 sequence: back off over continuation bytes.  */
    if (cut < n)
        while (cut > 0 && ((unsigned char) v [cut] & 0xC0) == 0x80)
            cut--;
    for (size_t i = 0; i < cut; i++) {
        unsigned char c = (unsigned char) v [i];
        out->text [k++] = c < 0x20 || c == 0x7F ? '?' : (char) c;
    }
    if (cut < n) {
        memcpy (out->text + k, "...", 3);
        k += 3;
    }
    out->text [k] = 0;
    return out->text;
}

static void
s_error (s_ctx_t *ctx, const yaml_mark_t *mark, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void
s_error (s_ctx_t *ctx, const yaml_mark_t *mark, const char *fmt, ...)
{
    int quiet = s_quiet (ctx);
    ctx->nerrors++;
    if (quiet)
        return;
    if (mark && ctx->with_marks)
        fprintf (ctx->errs, "%s:%zu:%zu: error: ", ctx->source,
                 (size_t) mark->line + 1, (size_t) mark->column + 1);
    else
        fprintf (ctx->errs, "%s: error: ", ctx->source);
    va_list ap;
    va_start (ap, fmt);
    vfprintf (ctx->errs, fmt, ap);
    va_end (ap);
    fputc ('\n', ctx->errs);
}

static int
s_flatten (s_flat_table_t *ft, const fasgd_cfg_key_t *table, const char *prefix, size_t base)
{
    for (const fasgd_cfg_key_t *k = table; k->name; k++) {
        char full [NAME_MAX_LEN];
        int len;
        if (*prefix && *k->name)
            len = snprintf (full, sizeof full, "%s.%s", prefix, k->name);
        else
            len = snprintf (full, sizeof full, "%s", *prefix ? prefix : k->name);
        if (len < 0 || (size_t) len >= sizeof full)
            return -1;
        if (k->type == FASGD_CFG_INCLUDE) {
            if (s_flatten (ft, k->sub, full, base + k->offset) != 0)
                return -1;
            continue;
        }
        if (ft->n == ft->cap) {
            size_t cap = ft->cap ? ft->cap * 2 : 32;
            s_flat_t *rows = realloc (ft->rows, cap * sizeof *rows);
            if (!rows)
                return -1;
            ft->rows = rows;
            ft->cap = cap;
        }
        s_flat_t *row = &ft->rows [ft->n++];
        memcpy (row->name, full, sizeof full);
        row->key = k;
        row->offset = base + k->offset;
    }
    return 0;
}

static s_flat_t *
s_find (s_flat_table_t *ft, const char *name)
{
    for (size_t i = 0; i < ft->n; i++)
        if (strcmp (ft->rows [i].name, name) == 0)
            return &ft->rows [i];
    return NULL;
}

/*  Is `name` a section, i.e. a proper prefix of some key?  */
static int
s_is_section (s_flat_table_t *ft, const char *name)
{
    size_t len = strlen (name);
    for (size_t i = 0; i < ft->n; i++)
        if (strncmp (ft->rows [i].name, name, len) == 0 && ft->rows [i].name [len] == '.')
            return 1;
    return 0;
}

static size_t
s_edit_distance (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    if (la > 63 || lb > 63)
        return (size_t) -1;
    size_t d [64][64];
    for (size_t i = 0; i <= la; i++)
        d [i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d [0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = d [i - 1][j - 1] + (a [i - 1] != b [j - 1]);
            size_t del = d [i - 1][j] + 1, ins = d [i][j - 1] + 1;
            d [i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d [la][lb];
}

/*  The closest key name to a misspelt one, or NULL.  */
static const char *
s_suggest (s_flat_table_t *ft, const char *name)
{
    const char *best = NULL;
    size_t len = strlen (name), limit = len / 3 + 1, best_d = limit + 1;
    for (size_t i = 0; i < ft->n; i++) {
        /*  The distance is at least the difference of the lengths: a
            name that cannot come closer than the best so far is skipped
            without filling its table.  */
        size_t klen = strlen (ft->rows [i].name);
        if ((klen > len ? klen - len : len - klen) >= best_d)
            continue;
        size_t dist = s_edit_distance (name, ft->rows [i].name);
        if (dist < best_d) {
            best_d = dist;
            best = ft->rows [i].name;
        }
    }
    return best;
}

static const char *
s_type_name (fasgd_cfg_type_t type)
{
    switch (type) {
        case FASGD_CFG_INT:     return "an integer";
        case FASGD_CFG_U64:     return "a non-negative integer";
        case FASGD_CFG_DOUBLE:  return "a number";
        case FASGD_CFG_BOOL:    return "true or false";
        case FASGD_CFG_STRING:  return "a string";
        case FASGD_CFG_ENUM:    return "one of the listed names";
        case FASGD_CFG_INTLIST: return "a list of integers";
        default:                return "a value";
    }
}

static const char *
s_node_kind (const yaml_node_t *node)
{
    switch (node->type) {
        case YAML_MAPPING_NODE:  return "a mapping";
        case YAML_SEQUENCE_NODE: return "a list";
        default:                 return "a scalar";
    }
}

static int
s_is_null (const yaml_node_t *node)
{
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *v = (const char *) node->data.scalar.value;
    return *v == 0 || strcmp (v, "~") == 0 || strcmp (v, "null") == 0 || strcmp (v, "Null") == 0
        || strcmp (v, "NULL") == 0;
}

/*  Bounds check with a message in the words of the key's flags.  */
static int
s_check_bounds (s_ctx_t *ctx, const yaml_mark_t *mark, const char *name,
                const fasgd_cfg_key_t *k, double v, const char *text)
{
    if (k->min == 0 && k->max == 0)
        return 0;                                   /* unbounded */
    int lo_bad = (k->flags & FASGD_CFG_MIN_OPEN) ? !(v > k->min) : !(v >= k->min);
    int hi_bad = (k->flags & FASGD_CFG_MAX_OPEN) ? !(v < k->max) : !(v <= k->max);
    if (!lo_bad && !hi_bad)
        return 0;
    s_shown_t shown;
    s_error (ctx, mark, "%s must be in %c%.10g, %.10g%c (got %s)", name,
             (k->flags & FASGD_CFG_MIN_OPEN) ? '(' : '[', k->min, k->max,
             (k->flags & FASGD_CFG_MAX_OPEN) ? ')' : ']', s_show (&shown, text));
    return -1;
}

static int
s_parse_long (const char *text, long long *out)
{
    if (!*text || isspace ((unsigned char) *text))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll (text, &end, 10);
    if (errno == ERANGE || *end)
        return -1;
    *out = v;
    return 0;
}

/*  Parses one scalar into the key's slot. The default and --set paths use
    this too, so a value means the same everywhere.  */
static int
s_set_scalar (s_ctx_t *ctx, const s_flat_t *f, void *obj, const yaml_node_t *node)
{
    const fasgd_cfg_key_t *k = f->key;
    const yaml_mark_t *mark = &node->start_mark;
    const char *text = (const char *) node->data.scalar.value;
    int quoted = node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    char *slot = (char *) obj + f->offset;
    s_shown_t shown;

    if (s_is_null (node)) {
        s_error (ctx, mark, "%s needs a value (%s)", f->name, s_type_name (k->type));
        return -1;
    }
    if (quoted && k->type != FASGD_CFG_STRING && k->type != FASGD_CFG_ENUM) {
        s_error (ctx, mark, "%s must be %s, not the quoted string \"%s\"", f->name,
                 s_type_name (k->type), s_show (&shown, text));
        return -1;
    }
    switch (k->type) {
        case FASGD_CFG_INT: {
            long long v;
            if (s_parse_long (text, &v) != 0 || v < -2147483647LL - 1 || v > 2147483647LL) {
                s_error (ctx, mark, "%s must be %s (got '%s')", f->name, s_type_name (k->type),
                         s_show (&shown, text));
                return -1;
            }
            if (s_check_bounds (ctx, mark, f->name, k, (double) v, text))
                return -1;
            *(int *) slot = (int) v;
            return 0;
        }
        case FASGD_CFG_U64: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull (text, &end, 10);
            if (!isdigit ((unsigned char) *text) || errno == ERANGE || *end) {
                s_error (ctx, mark, "%s must be %s (got '%s')", f->name, s_type_name (k->type),
                         s_show (&shown, text));
                return -1;
            }
            if (s_check_bounds (ctx, mark, f->name, k, (double) v, text))
                return -1;
            *(uint64_t *) slot = (uint64_t) v;
            return 0;
        }
        case FASGD_CFG_DOUBLE: {
            char *end;
            errno = 0;
            double v = strtod (text, &end);
            if (!*text || isspace ((unsigned char) *text) || *end || errno == ERANGE || !isfinite (v)) {
                s_error (ctx, mark, "%s must be a finite number (got '%s')", f->name,
                         s_show (&shown, text));
                return -1;
            }
            if (s_check_bounds (ctx, mark, f->name, k, v, text))
                return -1;
            *(double *) slot = v;
            return 0;
        }
        case FASGD_CFG_BOOL: {
            static const char *yes [] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL };
            static const char *no [] = { "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL };
            for (int i = 0; yes [i]; i++)
                if (strcmp (text, yes [i]) == 0) { *(int *) slot = 1; return 0; }
            for (int i = 0; no [i]; i++)
                if (strcmp (text, no [i]) == 0) { *(int *) slot = 0; return 0; }
            s_error (ctx, mark, "%s must be true or false (got '%s')", f->name,
                     s_show (&shown, text));
            return -1;
        }
        case FASGD_CFG_STRING: {
            size_t len = node->data.scalar.length;
            if (memchr (text, 0, len)) {
                s_error (ctx, mark, "%s must not contain a NUL character", f->name);
                return -1;
            }
            /*  Paths, endpoints and names: a control character (C0, DEL,
                or C1, U+0080..U+009F in UTF-8) is a mistake or an attack
                on the terminal a message lands in, and --dump-config could
                not write it back as YAML.  */
            for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) text [i];
                if (c < 0x20 || c == 0x7F
                    || (c == 0xC2 && i + 1 < len && (unsigned char) text [i + 1] >= 0x80
                        && (unsigned char) text [i + 1] <= 0x9F)) {
                    s_error (ctx, mark, "%s must not contain a control character (byte %zu of %zu)",
                             f->name, i + 1, len);
                    return -1;
                }
            }
            if (len >= k->size) {
                s_error (ctx, mark, "%s is too long (%zu bytes, at most %zu)", f->name, len, k->size - 1);
                return -1;
            }
            memcpy (slot, text, len + 1);
            return 0;
        }
        case FASGD_CFG_ENUM: {
            for (int i = 0; k->choices [i]; i++)
                if (strcmp (text, k->choices [i]) == 0) {
                    *(int *) slot = i;
                    return 0;
                }
            char list [256] = "";
            for (int i = 0; k->choices [i]; i++) {
                size_t used = strlen (list);
                snprintf (list + used, sizeof list - used, "%s%s", i ? ", " : "", k->choices [i]);
            }
            s_error (ctx, mark, "%s must be one of %s (got '%s')", f->name, list,
                     s_show (&shown, text));
            return -1;
        }
        default:
            s_error (ctx, mark, "%s cannot be set here", f->name);
            return -1;
    }
}

/*  An intlist from a YAML sequence, or from "784,100,10" on a command line.  */
static int
s_set_intlist (s_ctx_t *ctx, const s_flat_t *f, void *obj, yaml_document_t *doc, yaml_node_t *node)
{
    const fasgd_cfg_key_t *k = f->key;
    fasgd_cfg_intlist_t tmp = { 0 };
    int bad = 0;
    if (node->type == YAML_SCALAR_NODE && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
        && !s_is_null (node)) {
        char buf [512];
        s_shown_t shown;
        if (node->data.scalar.length >= sizeof buf) {
            s_error (ctx, &node->start_mark, "%s is too long for a list of at most %zu integers "
                     "(%zu bytes)", f->name, k->size, node->data.scalar.length);
            return -1;
        }
        snprintf (buf, sizeof buf, "%s", (const char *) node->data.scalar.value);
        char *save = NULL;
        for (char *tok = strtok_r (buf, ",", &save); tok; tok = strtok_r (NULL, ",", &save)) {
            while (isspace ((unsigned char) *tok))
                tok++;
            long long v;
            if (s_parse_long (tok, &v) != 0 || v < k->min || v > k->max) {
                s_error (ctx, &node->start_mark, "%s: item '%s' must be an integer in [%.10g, %.10g]",
                         f->name, s_show (&shown, tok), k->min, k->max);
                return -1;
            }
            if (tmp.n == (int) k->size) {
                s_error (ctx, &node->start_mark, "%s has more than %zu items", f->name, k->size);
                return -1;
            }
            tmp.v [tmp.n++] = (int) v;
        }
    }
    else if (node->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = node->data.sequence.items.start;
             it < node->data.sequence.items.top; it++) {
            yaml_node_t *item = yaml_document_get_node (doc, *it);
            long long v;
            if (!item || item->type != YAML_SCALAR_NODE
                || item->data.scalar.style != YAML_PLAIN_SCALAR_STYLE
                || s_parse_long ((const char *) item->data.scalar.value, &v) != 0) {
                s_error (ctx, item ? &item->start_mark : &node->start_mark,
                         "%s: every item must be an integer", f->name);
                bad = 1;
                continue;
            }
            if (v < k->min || v > k->max) {
                s_error (ctx, &item->start_mark, "%s: item must be in [%.10g, %.10g] (got %lld)",
                         f->name, k->min, k->max, v);
                bad = 1;
                continue;
            }
            if (tmp.n == (int) k->size) {
                s_error (ctx, &item->start_mark, "%s has more than %zu items", f->name, k->size);
                return -1;
            }
            tmp.v [tmp.n++] = (int) v;
        }
    }
    else {
        s_error (ctx, &node->start_mark, "%s must be a list of integers, not %s", f->name,
                 s_node_kind (node));
        return -1;
    }
    if (bad)
        return -1;
    if (tmp.n == 0) {
        s_error (ctx, &node->start_mark, "%s must not be empty", f->name);
        return -1;
    }
    if (tmp.n < k->min_items) {
        s_error (ctx, &node->start_mark, "%s needs at least %d items (got %d)", f->name, k->min_items, tmp.n);
        return -1;
    }
    if (ctx->with_marks)
        snprintf (tmp.where, sizeof tmp.where, "%s:%zu:%zu", ctx->source,
                  (size_t) node->start_mark.line + 1, (size_t) node->start_mark.column + 1);
    else
        snprintf (tmp.where, sizeof tmp.where, "%s", ctx->source);
    memcpy ((char *) obj + f->offset, &tmp, sizeof tmp);
    return 0;
}

static int
s_set_node (s_ctx_t *ctx, const s_flat_t *f, void *obj, yaml_document_t *doc, yaml_node_t *node)
{
    if (f->key->type == FASGD_CFG_INTLIST)
        return s_set_intlist (ctx, f, obj, doc, node);
    if (node->type != YAML_SCALAR_NODE) {
        s_error (ctx, &node->start_mark, "%s must be %s, not %s", f->name,
                 s_type_name (f->key->type), s_node_kind (node));
        return -1;
    }
    return s_set_scalar (ctx, f, obj, node);
}

/*  Where each key was set: a leaf key set twice, in whatever spelling
    (nested, dotted, a flow mapping), is an error naming both places.  */
typedef struct {
    int set;
    yaml_mark_t mark;
} s_set_t;

/*  Every dotted name the walk met, with where and in which mapping: a
    hash set, so that finding a duplicate costs the same for the
    10,000th key as for the first.  */
typedef struct {
    char *name;                 /* NULL: a free slot */
    const yaml_node_t *map;     /* the mapping it is a key of */
    yaml_mark_t mark;
} s_name_t;

typedef struct {
    s_name_t *slots;
    size_t cap, n;              /* cap: a power of two, at least 2n */
} s_names_t;

static size_t
s_hash (const char *name)
{
    size_t h = (size_t) 14695981039346656037ULL;        /* FNV-1a */
    for (; *name; name++)
        h = (h ^ (unsigned char) *name) * (size_t) 1099511628211ULL;
    return h;
}

static void
s_names_free (s_names_t *names)
{
    for (size_t i = 0; i < names->cap; i++)
        free (names->slots [i].name);
    free (names->slots);
    memset (names, 0, sizeof *names);
}

/*  The entry of name, or NULL after adding it; *oom when memory ran out.  */
static const s_name_t *
s_names_add (s_names_t *names, const char *name, const yaml_node_t *map,
             const yaml_mark_t *mark, int *oom)
{
    if (2 * (names->n + 1) > names->cap) {
        size_t cap = names->cap ? 2 * names->cap : 64;
        s_name_t *slots = calloc (cap, sizeof *slots);
        if (!slots) {
            *oom = 1;
            return NULL;
        }
        for (size_t i = 0; i < names->cap; i++)
            if (names->slots [i].name) {
                size_t j = s_hash (names->slots [i].name) & (cap - 1);
                while (slots [j].name)
                    j = (j + 1) & (cap - 1);
                slots [j] = names->slots [i];
            }
        free (names->slots);
        names->slots = slots;
        names->cap = cap;
    }
    size_t j = s_hash (name) & (names->cap - 1);
    for (; names->slots [j].name; j = (j + 1) & (names->cap - 1))
        if (strcmp (names->slots [j].name, name) == 0)
            return &names->slots [j];
    if (!(names->slots [j].name = strdup (name))) {
        *oom = 1;
        return NULL;
    }
    names->slots [j].map = map;
    names->slots [j].mark = *mark;
    names->n++;
    return NULL;
}

typedef struct {
    s_ctx_t *ctx;
    s_flat_table_t *ft;
    s_set_t *set;               /* one per row of ft */
    s_names_t names;
    void *obj;
    yaml_document_t *doc;
} s_walk_t;

static void
s_walk (s_walk_t *w, yaml_node_t *map, const char *prefix)
{
    s_ctx_t *ctx = w->ctx;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top && !ctx->stop; p++) {
        yaml_node_t *key = yaml_document_get_node (w->doc, p->key);
        yaml_node_t *value = yaml_document_get_node (w->doc, p->value);
        if (!key || !value)
            continue;
        /*  The scan counted the file's keys; this counts the keys walked,
            which aliases could otherwise multiply.  */
        if (++ctx->walked > FASGD_CFG_MAX_KEYS) {
            s_error (ctx, &key->start_mark, "more than %d keys: a configuration holds at most %d",
                     FASGD_CFG_MAX_KEYS, FASGD_CFG_MAX_KEYS);
            ctx->stop = 1;
            return;
        }
        if (key->type != YAML_SCALAR_NODE) {
            s_error (ctx, &key->start_mark, "a key must be a plain name, not %s", s_node_kind (key));
            continue;
        }
        const char *kname = (const char *) key->data.scalar.value;
        s_shown_t shown;
        char full [NAME_MAX_LEN];
        int len = snprintf (full, sizeof full, "%s%s%s", prefix, *prefix ? "." : "", kname);
        if (len < 0 || (size_t) len >= sizeof full) {
            s_error (ctx, &key->start_mark, "unknown key '%s'", s_show (&shown, kname));
            continue;
        }
        s_flat_t *f = s_find (w->ft, full);
        int oom = 0;
        const s_name_t *first = s_names_add (&w->names, full, map, &key->start_mark, &oom);
        if (oom) {
            s_error (ctx, NULL, "out of memory");
            ctx->stop = 1;
            return;
        }
        /*  A leaf set twice in any spelling, or the same key twice in one
            mapping; a section may be opened again elsewhere (`rule:
            {name: x}` and `rule.lr: 1` set different keys).  */
        if (first && (f || first->map == map)) {
            s_error (ctx, &key->start_mark, "duplicate key '%s' (first at line %zu, column %zu)",
                     s_show (&shown, full), (size_t) first->mark.line + 1,
                     (size_t) first->mark.column + 1);
            continue;
        }
        if (f) {
            s_set_t *at = &w->set [f - w->ft->rows];
            at->set = 1;
            at->mark = key->start_mark;
            s_set_node (ctx, f, w->obj, w->doc, value);
        }
        else if (s_is_section (w->ft, full)) {
            if (value->type == YAML_MAPPING_NODE)
                s_walk (w, value, full);
            else if (!s_is_null (value))
                s_error (ctx, &value->start_mark, "%s is a section: it takes a mapping of keys, not %s",
                         full, s_node_kind (value));
        }
        else if (s_quiet (ctx))
            s_error (ctx, &key->start_mark, "unknown key");
        else {
            const char *hint = s_suggest (w->ft, full);
            if (hint)
                s_error (ctx, &key->start_mark, "unknown key '%s' (did you mean '%s'?)",
                         s_show (&shown, full), hint);
            else
                s_error (ctx, &key->start_mark, "unknown key '%s'", s_show (&shown, full));
        }
    }
}

static void
s_parser_error (s_ctx_t *ctx, yaml_parser_t *parser)
{
    yaml_mark_t mark = parser->problem_mark;
    const char *problem = parser->problem ? parser->problem : "malformed YAML";
    if (parser->error == YAML_READER_ERROR) {
        mark.line = 0;
        mark.column = 0;
        s_error (ctx, NULL, "%s (at byte %zu)", problem, parser->problem_offset);
    }
    else if (parser->context)
        s_error (ctx, &mark, "%s %s (from line %zu)", problem, parser->context,
                 (size_t) parser->context_mark.line + 1);
    else
        s_error (ctx, &mark, "%s", problem);
}

/*  Checks the document's shape from libyaml's events, before any node is
    built: nesting at most FASGD_CFG_MAX_DEPTH deep and at most
    FASGD_CFG_MAX_KEYS keys, stopping at the first excess. libyaml's own
    work grows faster than the input with nesting, and its document holds
    every node at once; this pass holds nothing but the current path.
    Returns 0, or -1 after reporting.  */
static int
s_scan (s_ctx_t *ctx, const unsigned char *text, size_t len)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize (&parser)) {
        s_error (ctx, NULL, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string (&parser, text, len);
    struct {
        int mapping;
        size_t items;           /* in a mapping, keys and values alternate */
    } path [FASGD_CFG_MAX_DEPTH];
    int depth = 0, rc = 0, done = 0;
    size_t keys = 0;
    while (!done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse (&parser, &ev)) {
            s_parser_error (ctx, &parser);
            rc = -1;
            break;
        }
        yaml_event_type_t t = ev.type;
        int opens = t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT;
        if ((opens || t == YAML_SCALAR_EVENT || t == YAML_ALIAS_EVENT) && depth > 0) {
            if (path [depth - 1].mapping && path [depth - 1].items % 2 == 0
                && ++keys > FASGD_CFG_MAX_KEYS) {
                s_error (ctx, &ev.start_mark, "more than %d keys: a configuration holds at most %d",
                         FASGD_CFG_MAX_KEYS, FASGD_CFG_MAX_KEYS);
                rc = -1;
            }
            path [depth - 1].items++;
        }
        if (rc == 0 && opens) {
            if (depth == FASGD_CFG_MAX_DEPTH) {
                s_error (ctx, &ev.start_mark, "nested more than %d levels deep: a configuration "
                         "is at most %d", FASGD_CFG_MAX_DEPTH, FASGD_CFG_MAX_DEPTH);
                rc = -1;
            }
            else {
                path [depth].mapping = t == YAML_MAPPING_START_EVENT;
                path [depth].items = 0;
                depth++;
            }
        }
        else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT)
            depth--;
        done = t == YAML_STREAM_END_EVENT;
        yaml_event_delete (&ev);
    }
    yaml_parser_delete (&parser);
    return rc;
}

static int
s_load (const fasgd_cfg_key_t *table, void *obj, const char *name,
        const char *text, size_t len, FILE *errs)
{
    s_ctx_t ctx = { .source = name, .errs = errs, .with_marks = 1 };
    s_walk_t w = { .ctx = &ctx, .obj = obj };
    s_flat_table_t ft = { 0 };
    yaml_parser_t parser;
    yaml_document_t doc;
    if (len > FASGD_CFG_MAX_BYTES) {
        s_error (&ctx, NULL, "larger than %u bytes: a configuration is at most that (1 MiB)",
                 (unsigned) FASGD_CFG_MAX_BYTES);
        return ctx.nerrors;
    }
    if (s_flatten (&ft, table, "", 0) != 0) {
        free (ft.rows);
        s_error (&ctx, NULL, "configuration table too large");
        return ctx.nerrors;
    }
    w.ft = &ft;
    w.set = calloc (ft.n ? ft.n : 1, sizeof *w.set);
    if (!w.set || !yaml_parser_initialize (&parser)) {
        free (w.set);
        free (ft.rows);
        s_error (&ctx, NULL, "out of memory");
        return ctx.nerrors;
    }
    yaml_parser_set_input_string (&parser, (const unsigned char *) text, len);

    if (s_scan (&ctx, (const unsigned char *) text, len) != 0)
        ;                       /* refused before any node was built */
    else if (!yaml_parser_load (&parser, &doc))
        s_parser_error (&ctx, &parser);
    else {
        yaml_node_t *root = yaml_document_get_root_node (&doc);
        w.doc = &doc;
        if (root && root->type == YAML_MAPPING_NODE)
            s_walk (&w, root, "");
        else if (root && !s_is_null (root))
            s_error (&ctx, &root->start_mark, "the top level must be a mapping of keys, not %s",
                     s_node_kind (root));
        yaml_document_delete (&doc);
        /*  A second document would be silently ignored; say so instead.  */
        yaml_document_t extra;
        if (yaml_parser_load (&parser, &extra)) {
            yaml_node_t *root2 = yaml_document_get_root_node (&extra);
            if (root2)
                s_error (&ctx, &root2->start_mark, "only one YAML document is allowed");
            yaml_document_delete (&extra);
        }
        else
            s_parser_error (&ctx, &parser);
    }
    if (!ctx.stop)
        for (size_t i = 0; i < ft.n; i++)
            if ((ft.rows [i].key->flags & FASGD_CFG_REQUIRED) && !w.set [i].set)
                s_error (&ctx, NULL, "missing required key '%s'", ft.rows [i].name);
    if (ctx.errs && ctx.nerrors > FASGD_CFG_MAX_MESSAGES)
        fprintf (ctx.errs, "%s: error: %d more error%s not shown\n", name,
                 ctx.nerrors - FASGD_CFG_MAX_MESSAGES,
                 ctx.nerrors - FASGD_CFG_MAX_MESSAGES == 1 ? "" : "s");
    yaml_parser_delete (&parser);
    s_names_free (&w.names);
    free (w.set);
    free (ft.rows);
    return ctx.nerrors;
}

int
fasgd_config_load (const fasgd_cfg_key_t *table, void *obj, const char *path, FILE *errs)
{
    FILE *file = fopen (path, "rb");
    if (!file) {
        int e = errno;
        char shown [8192];
        if (errs)
            fprintf (errs, "%s: error: cannot open: %s\n", fasgd_path_shown (path, shown, sizeof shown),
                     strerror (e));
        return 1;
    }
    /*  Read whole, but never more than one byte past the limit: a huge
        file, /dev/zero or a FIFO that never ends is refused after 1 MiB.
        The buffer grows with what is read, from a size that holds a
        usual configuration.  */
    size_t cap = FASGD_CFG_MAX_BYTES + 1, size = 4096, len = 0;
    char *text = malloc (size + 1);
    int failed = 0;
    while (text) {
        if (len == size) {
            if (size == cap)
                break;
            size = size > cap / 2 ? cap : size * 2;
            char *grown = realloc (text, size + 1);
            if (!grown) {
                free (text);
                text = NULL;
                break;
            }
            text = grown;
        }
        size_t got = fread (text + len, 1, size - len, file);
        len += got;
        if (got == 0) {
            failed = ferror (file);
            break;
        }
    }
    if (!text) {
        fclose (file);
        if (errs)
            fprintf (errs, "%s: error: out of memory\n", path);
        return 1;
    }
    int e = errno;
    fclose (file);
    int rc;
    if (failed) {
        if (errs)
            fprintf (errs, "%s: error: cannot read: %s\n", path, strerror (e));
        rc = 1;
    }
    else {
        text [len] = 0;
        rc = s_load (table, obj, path, text, len, errs);
    }
    free (text);
    return rc;
}

int
fasgd_config_load_string (const fasgd_cfg_key_t *table, void *obj, const char *name,
                          const char *text, FILE *errs)
{
    return s_load (table, obj, name, text, strlen (text), errs);
}

/*  True when YAML reads text as one plain scalar equal to it: letters,
    digits and . _ / + - only, starting with a letter, a digit, / or _, or
    with - or . before a letter or digit (not "-", "---" or "...").
    ASCII letters and digits whatever the locale.  */
static int
s_alnum (unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
s_plain_word (const char *text)
{
    const unsigned char *p = (const unsigned char *) text;
    if (!(s_alnum (p [0]) || p [0] == '/' || p [0] == '_' || ((p [0] == '-' || p [0] == '.') && s_alnum (p [1]))))
        return 0;
    for (; *p; p++)
        if (!(s_alnum (*p) || *p == '.' || *p == '_' || *p == '/' || *p == '+' || *p == '-'))
            return 0;
    return 1;
}

/*  Parses `text` as a one-value YAML document and stores it in row f.  */
static int
s_set_text (s_ctx_t *ctx, const s_flat_t *f, void *obj, const char *text)
{
    if (f->key->type != FASGD_CFG_INTLIST && s_plain_word (text)) {
        /*  What libyaml would make of it: one plain scalar, the text
            itself, so parsing it is not needed (every default is one).  */
        yaml_node_t node;
        memset (&node, 0, sizeof node);
        node.type = YAML_SCALAR_NODE;
        node.data.scalar.value = (yaml_char_t *) text;
        node.data.scalar.length = strlen (text);
        node.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
        return s_set_scalar (ctx, f, obj, &node);
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    s_shown_t shown;
    if (!yaml_parser_initialize (&parser)) {
        s_error (ctx, NULL, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string (&parser, (const unsigned char *) text, strlen (text));
    int rc = -1;
    if (!yaml_parser_load (&parser, &doc))
        s_error (ctx, NULL, "cannot parse the value '%s': %s", s_show (&shown, text),
                 parser.problem ? parser.problem : "malformed");
    else {
        yaml_node_t *root = yaml_document_get_root_node (&doc);
        if (!root && f->key->type == FASGD_CFG_STRING) {
            /*  `--set key=` clears a string.  */
            *((char *) obj + f->offset) = 0;
            rc = 0;
        }
        else if (!root)
            s_error (ctx, NULL, "%s needs a value", f->name);
        else if (f->key->type == FASGD_CFG_STRING && root->type != YAML_SCALAR_NODE)
            /*  A lone -, or a value starting with [ or {, is YAML for a
                list or a mapping.  */
            s_error (ctx, NULL, "%s must be a string, not %s; quote a value that YAML reads "
                     "as something else: --set '%s=\"%s\"'", f->name, s_node_kind (root),
                     f->name, s_show (&shown, text));
        else
            rc = s_set_node (ctx, f, obj, &doc, root);
        yaml_document_delete (&doc);
    }
    yaml_parser_delete (&parser);
    return rc;
}

int
fasgd_config_defaults (const fasgd_cfg_key_t *table, void *obj, FILE *errs)
{
    s_ctx_t ctx = { .source = "built-in default", .errs = errs };
    s_flat_table_t ft = { 0 };
    if (s_flatten (&ft, table, "", 0) != 0) {
        free (ft.rows);
        s_error (&ctx, NULL, "configuration table too large");
        return ctx.nerrors;
    }
    for (size_t i = 0; i < ft.n; i++) {
        const s_flat_t *f = &ft.rows [i];
        char *slot = (char *) obj + f->offset;
        switch (f->key->type) {
            case FASGD_CFG_STRING:  slot [0] = 0; break;
            case FASGD_CFG_U64:     *(uint64_t *) slot = 0; break;
            case FASGD_CFG_DOUBLE:  *(double *) slot = 0; break;
            case FASGD_CFG_INTLIST: memset (slot, 0, sizeof (fasgd_cfg_intlist_t)); break;
            default:                *(int *) slot = 0; break;
        }
        if (f->key->def)
            s_set_text (&ctx, f, obj, f->key->def);
    }
    free (ft.rows);
    return ctx.nerrors;
}

int
fasgd_config_set (const fasgd_cfg_key_t *table, void *obj, const char *assignment, FILE *errs)
{
    char name [NAME_MAX_LEN];
    const char *eq = strchr (assignment, '=');
    s_ctx_t ctx = { .source = "--set", .errs = errs };
    if (!eq || eq == assignment || (size_t) (eq - assignment) >= sizeof name) {
        s_shown_t shown;
        s_error (&ctx, NULL, "'%s' is not of the form key=value", s_show (&shown, assignment));
        return 1;
    }
    memcpy (name, assignment, (size_t) (eq - assignment));
    name [eq - assignment] = 0;
    char source [NAME_MAX_LEN + 8];
    snprintf (source, sizeof source, "--set %s", name);
    ctx.source = source;

    s_flat_table_t ft = { 0 };
    if (s_flatten (&ft, table, "", 0) != 0) {
        free (ft.rows);
        s_error (&ctx, NULL, "configuration table too large");
        return 1;
    }
    s_flat_t *f = s_find (&ft, name);
    if (!f) {
        s_shown_t shown;
        const char *hint = s_suggest (&ft, name);
        if (hint)
            s_error (&ctx, NULL, "unknown key '%s' (did you mean '%s'?)", s_show (&shown, name), hint);
        else
            s_error (&ctx, NULL, "unknown key '%s'", s_show (&shown, name));
    }
    else
        s_set_text (&ctx, f, obj, eq + 1);
    free (ft.rows);
    return ctx.nerrors ? 1 : 0;
}

int
fasgd_config_load_all (const fasgd_cfg_key_t *table, void *obj, const char *path,
                       const char *const *sets, int nsets, FILE *errs)
{
    int errors = fasgd_config_defaults (table, obj, errs);
    errors += fasgd_config_load (table, obj, path, errs);
    for (int i = 0; i < nsets; i++)
        errors += fasgd_config_set (table, obj, sets [i], errs);
    return errors;
}

static void
s_dump_string (const char *s, FILE *out)
{
    fputc ('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;
        if (c == '"' || c == '\\')
            fprintf (out, "\\%c", c);
        else if (c < 0x20)
            fprintf (out, "\\x%02x", c);
        else
            fputc (c, out);
    }
    fputc ('"', out);
}

/*  The shortest %g that reads back as the same double: 0.005, not
    0.0050000000000000001.  */
static void
s_dump_double (double v, FILE *out)
{
    char buf [32];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf (buf, sizeof buf, "%.*g", prec, v);
        if (strtod (buf, NULL) == v)
            break;
    }
    fputs (buf, out);
}

void
fasgd_config_dump (const fasgd_cfg_key_t *table, const void *obj, FILE *out)
{
    s_flat_table_t ft = { 0 };
    if (s_flatten (&ft, table, "", 0) != 0) {
        free (ft.rows);
        return;
    }
    for (size_t i = 0; i < ft.n; i++) {
        const s_flat_t *f = &ft.rows [i];
        const char *slot = (const char *) obj + f->offset;
        fprintf (out, "%s: ", f->name);
        switch (f->key->type) {
            case FASGD_CFG_INT:    fprintf (out, "%d", *(const int *) slot); break;
            case FASGD_CFG_U64:    fprintf (out, "%llu", (unsigned long long) *(const uint64_t *) slot); break;
            case FASGD_CFG_DOUBLE: s_dump_double (*(const double *) slot, out); break;
            case FASGD_CFG_BOOL:   fputs (*(const int *) slot ? "true" : "false", out); break;
            case FASGD_CFG_STRING: s_dump_string (slot, out); break;
            case FASGD_CFG_ENUM:   fputs (f->key->choices [*(const int *) slot], out); break;
            case FASGD_CFG_INTLIST: {
                const fasgd_cfg_intlist_t *l = (const fasgd_cfg_intlist_t *) slot;
                fputc ('[', out);
                for (int j = 0; j < l->n; j++)
                    fprintf (out, "%s%d", j ? ", " : "", l->v [j]);
                fputc (']', out);
                break;
            }
            default: break;
        }
        fputc ('\n', out);
    }
    free (ft.rows);
}

void
fasgd_config_visit (const fasgd_cfg_key_t *table, fasgd_cfg_visit_fn *fn, void *arg)
{
    s_flat_table_t ft = { 0 };
    if (s_flatten (&ft, table, "", 0) == 0)
        for (size_t i = 0; i < ft.n; i++)
            fn (ft.rows [i].name, ft.rows [i].key, arg);
    free (ft.rows);
}

static void
s_describe_one (const char *name, const fasgd_cfg_key_t *k, void *arg)
{
    FILE *out = arg;
    static const char *types [] = { "", "int", "u64", "number", "bool", "string", "enum", "int list", "" };
    fprintf (out, "  %-28s %-8s default %s", name, types [k->type],
             k->def ? k->def : (k->type == FASGD_CFG_STRING ? "\"\"" : "0"));
    if (k->type == FASGD_CFG_ENUM) {
        fputs ("; one of", out);
        for (int i = 0; k->choices [i]; i++)
            fprintf (out, " %s", k->choices [i]);
    }
    else if (k->min != 0 || k->max != 0)
        fprintf (out, "; %c%.6g, %.6g%c", (k->flags & FASGD_CFG_MIN_OPEN) ? '(' : '[', k->min,
                 k->max, (k->flags & FASGD_CFG_MAX_OPEN) ? ')' : ']');
    if (k->flags & FASGD_CFG_REQUIRED)
        fputs ("; required", out);
    fprintf (out, "\n      %s\n", k->help ? k->help : "");
}

void
fasgd_config_describe (const fasgd_cfg_key_t *table, FILE *out)
{
    fasgd_config_visit (table, s_describe_one, out);
}
