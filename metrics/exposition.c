/*  exposition: the Prometheus text exposition format (exposition.h).  */
#include "exposition.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fasgd_metrics_text_t {
    char *data;
    size_t len, cap;
    int failed;
    char *labels;                       /* the constant labels, "" for none */
};

fasgd_metrics_text_t *
fasgd_metrics_text_new (const char *labels)
{
    fasgd_metrics_text_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->labels = strdup (labels ? labels : "");
    if (!self->labels) {
        free (self);
        return NULL;
    }
    return self;
}

void
fasgd_metrics_text_destroy (fasgd_metrics_text_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->data);
    free ((*self_p)->labels);
    free (*self_p);
    *self_p = NULL;
}

void
fasgd_metrics_text_reset (fasgd_metrics_text_t *self)
{
    self->len = 0;
    self->failed = 0;
    if (self->data)
        self->data [0] = 0;
}

static void
s_add (fasgd_metrics_text_t *self, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_add (fasgd_metrics_text_t *self, const char *fmt, ...)
{
    if (self->failed)
        return;
    for (;;) {
        va_list ap;
        va_start (ap, fmt);
        int k = self->data ? vsnprintf (self->data + self->len, self->cap - self->len, fmt, ap) : 0;
        va_end (ap);
        if (k < 0) {
            self->failed = 1;
            return;
        }
        if (self->data && self->len + (size_t) k < self->cap) {
            self->len += (size_t) k;
            return;
        }
        size_t cap = self->cap ? self->cap * 2 : 4096;
        while (cap < self->len + (size_t) k + 1)
            cap *= 2;
        char *grown = realloc (self->data, cap);
        if (!grown) {
            self->failed = 1;
            return;
        }
        self->data = grown;
        self->data [self->len] = 0;
        self->cap = cap;
    }
}

void
fasgd_metrics_text_family (fasgd_metrics_text_t *self, const char *name, const char *type, const char *help)
{
    s_add (self, "# HELP %s ", name);
    /*  HELP escapes only the backslash and the line feed.  */
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            s_add (self, "\\\\");
        else if (*p == '\n')
            s_add (self, "\\n");
        else
            s_add (self, "%c", *p);
    }
    s_add (self, "\n# TYPE %s %s\n", name, type);
}

static void
s_name_labels (fasgd_metrics_text_t *self, const char *name, const char *labels)
{
    int own = labels && *labels, constant = *self->labels != 0;
    if (!own && !constant)
        s_add (self, "%s ", name);
    else
        s_add (self, "%s{%s%s%s} ", name, self->labels, own && constant ? "," : "", own ? labels : "");
}

void
fasgd_metrics_text_sample (fasgd_metrics_text_t *self, const char *name, const char *labels, double value)
{
    s_name_labels (self, name, labels);
    if (isnan (value))
        s_add (self, "NaN\n");
    else if (isinf (value))
        s_add (self, "%sInf\n", value > 0 ? "+" : "-");
    else
        s_add (self, "%.10g\n", value);
}

void
fasgd_metrics_text_sample_u64 (fasgd_metrics_text_t *self, const char *name, const char *labels, uint64_t value)
{
    s_name_labels (self, name, labels);
    s_add (self, "%llu\n", (unsigned long long) value);
}

void
fasgd_metrics_text_counter (fasgd_metrics_text_t *self, const char *name, const char *help, uint64_t value)
{
    fasgd_metrics_text_family (self, name, "counter", help);
    fasgd_metrics_text_sample_u64 (self, name, NULL, value);
}

void
fasgd_metrics_text_gauge (fasgd_metrics_text_t *self, const char *name, const char *help, double value)
{
    fasgd_metrics_text_family (self, name, "gauge", help);
    fasgd_metrics_text_sample (self, name, NULL, value);
}

void
fasgd_metrics_text_histogram (fasgd_metrics_text_t *self, const char *name, const char *help,
                              const double *upper, const uint64_t *counts, int n, double sum)
{
    char series [256], le [64], labels [96];
    fasgd_metrics_text_family (self, name, "histogram", help);
    snprintf (series, sizeof series, "%s_bucket", name);
    uint64_t below = 0;
    for (int k = 0; k < n; k++) {
        below += counts [k];
        if (k < n - 1)
            snprintf (le, sizeof le, "%.10g", upper [k]);
        else
            snprintf (le, sizeof le, "+Inf");
        fasgd_metrics_text_sample_u64 (self, series, fasgd_metrics_labels (labels, sizeof labels, "le", le, NULL),
                                       below);
    }
    snprintf (series, sizeof series, "%s_sum", name);
    fasgd_metrics_text_sample (self, series, NULL, sum);
    snprintf (series, sizeof series, "%s_count", name);
    fasgd_metrics_text_sample_u64 (self, series, NULL, below);
}

const char *
fasgd_metrics_text_data (const fasgd_metrics_text_t *self)
{
    return self->data ? self->data : "";
}

size_t
fasgd_metrics_text_len (const fasgd_metrics_text_t *self)
{
    return self->len;
}

int
fasgd_metrics_text_failed (const fasgd_metrics_text_t *self)
{
    return self->failed;
}

char *
fasgd_metrics_labels (char *buf, size_t len, ...)
{
    if (len == 0)
        return buf;
    buf [0] = 0;
    size_t used = 0;
    va_list ap;
    va_start (ap, len);
    const char *name;
    while ((name = va_arg (ap, const char *))) {
        const char *value = va_arg (ap, const char *);
        if (!value)
            break;
        char one [512];                 /* a longer value is cut short */
        size_t k = (size_t) snprintf (one, sizeof one, "%s%s=\"", used ? "," : "", name);
        for (const char *p = value; *p && k + 3 < sizeof one; p++) {
            if (*p == '\\' || *p == '"' || *p == '\n')
                one [k++] = '\\';
            one [k++] = *p == '\n' ? 'n' : *p;
        }
        one [k++] = '"';
        one [k] = 0;
        if (used + k + 1 > len)
            continue;
        memcpy (buf + used, one, k + 1);
        used += k;
    }
    va_end (ap);
    return buf;
}
