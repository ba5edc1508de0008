/*  reply: fasgd-ctl's reading of the server's control replies
    (proto/PROTOCOL.md, "The control protocol"): key=value lines split
    in place, and printed as JSON or as the human-readable status table.  */
#ifndef FASGD_CTL_REPLY_H_INCLUDED
#define FASGD_CTL_REPLY_H_INCLUDED

#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *key, *value;
} fasgd_ctl_kv_t;

typedef struct {
    fasgd_ctl_kv_t *kv;             /* pointers into the parsed text */
    size_t n;
} fasgd_ctl_reply_t;

/*  Splits text (modified in place) into its lines. Returns 0, or -1 after
    saying on stderr which line is not key=value (r->kv then NULL).  */
int fasgd_ctl_reply_parse (char *text, size_t len, fasgd_ctl_reply_t *r);

/*  A key's value, NULL when absent; as a number, NaN when absent or not one.  */
const char *fasgd_ctl_reply_get (const fasgd_ctl_reply_t *r, const char *key);
double fasgd_ctl_reply_num (const fasgd_ctl_reply_t *r, const char *key);

/*  The status code of the first line; -1 when there is none.  */
int fasgd_ctl_reply_status (const fasgd_ctl_reply_t *r);

/*  s, at most width bytes of it, with anything but printable ASCII shown
    as '?', in buf: a server's text made safe for a terminal.  */
const char *fasgd_ctl_reply_safe (const char *s, size_t width, char *buf, size_t len);

/*  The reply as one JSON object; with arrays, a STATUS's client.ID.* keys
    also as per_client and its tau.* keys as tau_histogram.  */
void fasgd_ctl_reply_print_json (FILE *out, const fasgd_ctl_reply_t *r, const char *endpoint, int arrays);

/*  A STATUS reply as the table fasgd-ctl status prints.  */
void fasgd_ctl_reply_print_status (const fasgd_ctl_reply_t *r, const char *endpoint);

#endif
