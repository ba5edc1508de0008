/*  exposition: the Prometheus text exposition format (version 0.0.4), built
    into a growing buffer: a family's # HELP and # TYPE lines, then its
    samples, each carrying the builder's constant labels (a shard's, say)
    before its own. No sockets: publish.h serves what this builds.  */
#ifndef FASGD_METRICS_EXPOSITION_H_INCLUDED
#define FASGD_METRICS_EXPOSITION_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct fasgd_metrics_text_t fasgd_metrics_text_t;

/*  A builder whose every sample carries labels (already formatted, e.g.
    by fasgd_metrics_labels: shard="0",shards="2"; NULL or "": none),
    copied. NULL out of memory.  */
fasgd_metrics_text_t *fasgd_metrics_text_new (const char *labels);
void fasgd_metrics_text_destroy (fasgd_metrics_text_t **self_p);
/*  Empties the text for the next rendering; the labels stay.  */
void fasgd_metrics_text_reset (fasgd_metrics_text_t *self);

/*  A family's header: type is counter, gauge, histogram or untyped; help
    is escaped as the format wants.  */
void fasgd_metrics_text_family (fasgd_metrics_text_t *self, const char *name, const char *type,
                                const char *help);
/*  One sample line: name{constant labels,labels} value. labels: NULL or
    "" for none. NaN and infinities are written as the format spells
    them.  */
void fasgd_metrics_text_sample (fasgd_metrics_text_t *self, const char *name, const char *labels,
                                double value);
/*  The same for a counter's exact integer value.  */
void fasgd_metrics_text_sample_u64 (fasgd_metrics_text_t *self, const char *name, const char *labels,
                                    uint64_t value);
/*  A family of one sample, the most common case.  */
void fasgd_metrics_text_counter (fasgd_metrics_text_t *self, const char *name, const char *help,
                                 uint64_t value);
void fasgd_metrics_text_gauge (fasgd_metrics_text_t *self, const char *name, const char *help, double value);
/*  A histogram from its n buckets' own counts (not cumulative): bucket k
    holds the observations in (upper [k-1], upper [k]], the last one
    those above upper [n-2] (its upper bound, +Inf, is not read). Writes
    name_bucket{le=...} cumulative, name_sum and name_count.  */
void fasgd_metrics_text_histogram (fasgd_metrics_text_t *self, const char *name, const char *help,
                                   const double *upper, const uint64_t *counts, int n, double sum);

/*  The text so far; "" before anything was added.  */
const char *fasgd_metrics_text_data (const fasgd_metrics_text_t *self);
size_t fasgd_metrics_text_len (const fasgd_metrics_text_t *self);
/*  1 when memory ran out while building: the text is cut short.  */
int fasgd_metrics_text_failed (const fasgd_metrics_text_t *self);

/*  Formats labels into buf (size len): pairs of name and value, ending
    with NULL, values escaped (\\, \", \n). Returns buf; a label that
    does not fit is left out.  */
char *fasgd_metrics_labels (char *buf, size_t len, ...) __attribute__ ((sentinel));

#endif
