/*  codec: encoding and decoding of the fasgd wire protocol (PROTOCOL.md).

    Header fields are assembled from single bytes with shifts, and float
    bodies are copied with memcpy, so the code is right on any host and
    never reads a peer's buffer through a cast pointer: a ZeroMQ frame has
    no alignment guarantee.  */
#include "codec.h"
#include "log.h"
#include "halves.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  --------------------------------------------------------------------
    Little-endian integers and IEEE-754 bit patterns  */

static uint16_t
s_get16 (const uint8_t *p)
{
    return (uint16_t) (p [0] | (p [1] << 8));
}

static uint32_t
s_get32 (const uint8_t *p)
{
    return (uint32_t) p [0] | (uint32_t) p [1] << 8
         | (uint32_t) p [2] << 16 | (uint32_t) p [3] << 24;
}

static uint64_t
s_get64 (const uint8_t *p)
{
    return (uint64_t) s_get32 (p) | (uint64_t) s_get32 (p + 4) << 32;
}

static void
s_put16 (uint8_t *p, uint16_t v)
{
    p [0] = (uint8_t) v;
    p [1] = (uint8_t) (v >> 8);
}

static void
s_put32 (uint8_t *p, uint32_t v)
{
    p [0] = (uint8_t) v;
    p [1] = (uint8_t) (v >> 8);
    p [2] = (uint8_t) (v >> 16);
    p [3] = (uint8_t) (v >> 24);
}

static void
s_put64 (uint8_t *p, uint64_t v)
{
    s_put32 (p, (uint32_t) v);
    s_put32 (p + 4, (uint32_t) (v >> 32));
}

/*  Finiteness from the bits rather than isfinite (), so the answer holds
    even in a build with -ffinite-math-only, where the compiler may assume
    NaN never occurs and fold isfinite () to 1.  */
static int
s_bits_finite64 (uint64_t bits)
{
    return (bits & UINT64_C (0x7FF0000000000000)) != UINT64_C (0x7FF0000000000000);
}

static int
s_bits_finite32 (uint32_t bits)
{
    return (bits & UINT32_C (0x7F800000)) != UINT32_C (0x7F800000);
}

static int
s_double_finite (double x)
{
    uint64_t bits;
    memcpy (&bits, &x, sizeof bits);
    return s_bits_finite64 (bits);
}


/*  --------------------------------------------------------------------
    Types and status codes  */

static int
s_type_known (int type)
{
    return (type >= FASGD_MSG_JOIN && type <= FASGD_MSG_EVAL) || type == FASGD_MSG_ERROR;
}

/*  Requests go client to server and carry status 0; the rest are replies
    and carry a status code.  */
static int
s_type_is_request (int type)
{
    switch (type) {
        case FASGD_MSG_JOIN:
        case FASGD_MSG_PUSH:
        case FASGD_MSG_PUSH_REPEAT:
        case FASGD_MSG_FETCH:
        case FASGD_MSG_HEARTBEAT:
        case FASGD_MSG_LEAVE:
        case FASGD_MSG_EVAL:
            return 1;
        default:
            return 0;
    }
}

const char *
fasgd_proto_type_name (int type)
{
    switch (type) {
        case FASGD_MSG_JOIN:        return "JOIN";
        case FASGD_MSG_WELCOME:     return "WELCOME";
        case FASGD_MSG_PUSH:        return "PUSH";
        case FASGD_MSG_PUSH_REPEAT: return "PUSH_REPEAT";
        case FASGD_MSG_ACK:         return "ACK";
        case FASGD_MSG_FETCH:       return "FETCH";
        case FASGD_MSG_PARAMS:      return "PARAMS";
        case FASGD_MSG_HEARTBEAT:   return "HEARTBEAT";
        case FASGD_MSG_LEAVE:       return "LEAVE";
        case FASGD_MSG_EVAL:        return "EVAL";
        case FASGD_MSG_ERROR:       return "ERROR";
        default:                    return "?";
    }
}

/*  The texts of PROTOCOL.md's status table, short enough for a log line or
    an ERROR reason.  */
const char *
fasgd_proto_status_text (int status)
{
    switch (status) {
        case FASGD_STATUS_OK:             return "done";
        case FASGD_STATUS_BUFFERED:       return "accepted and buffered";
        case FASGD_STATUS_NOT_MODIFIED:   return "not modified";
        case FASGD_STATUS_MALFORMED:      return "malformed";
        case FASGD_STATUS_UNKNOWN_CLIENT: return "unknown client id";
        case FASGD_STATUS_FORBIDDEN:      return "key not allowed";
        case FASGD_STATUS_CONFLICT:       return "conflict";
        case FASGD_STATUS_TOO_LARGE:      return "too large";
        case FASGD_STATUS_NONFINITE:      return "gradient holds NaN or Inf";
        case FASGD_STATUS_VERSION:        return "protocol version mismatch";
        case FASGD_STATUS_UNAVAILABLE:    return "shutting down";
        default:                          return "?";
    }
}

static int
s_status_known (int status)
{
    return strcmp (fasgd_proto_status_text (status), "?") != 0;
}

/*  --------------------------------------------------------------------
    Header  */

void
fasgd_proto_header_encode (const fasgd_header_t *h, uint8_t out [FASGD_PROTO_HEADER_SIZE])
{
    uint64_t vbits;
    memcpy (&vbits, &h->vbar, sizeof vbits);
    if (s_type_is_request (h->type))
        vbits = h->session;
    s_put16 (out, (uint16_t) FASGD_PROTO_MAGIC);
    out [2] = h->version;
    out [3] = h->type;
    s_put16 (out + 4, h->status);
    s_put16 (out + 6, h->flags);
    s_put32 (out + 8, h->client_id);
    s_put32 (out + 12, h->seq);
    s_put64 (out + 16, h->timestamp);
    s_put64 (out + 24, vbits);
}

int
fasgd_proto_header_decode (const void *buf, size_t len, fasgd_header_t *h)
{
    memset (h, 0, sizeof *h);
    if (len != FASGD_PROTO_HEADER_SIZE || !buf)
        return FASGD_PROTO_MALFORMED;
    const uint8_t *p = buf;
    if (s_get16 (p) != FASGD_PROTO_MAGIC)
        return FASGD_PROTO_MALFORMED;

    /*  Once the magic matches, every field is filled in before any is
        judged: the server answers a version mismatch (426), and can answer
        a malformed header (400), echoing the peer's seq and client_id.  */
    h->version = p [2];
    h->type = p [3];
    h->status = s_get16 (p + 4);
    h->flags = s_get16 (p + 6);
    h->client_id = s_get32 (p + 8);
    h->seq = s_get32 (p + 12);
    h->timestamp = s_get64 (p + 16);
    uint64_t vbits = s_get64 (p + 24);
    if (s_type_is_request (h->type))
        h->session = vbits;
    else
        memcpy (&h->vbar, &vbits, sizeof vbits);

    /*  The version comes before any other check: another version may have
        other types, flags or codes, which are not this decoder's to judge.  */
    if (h->version != FASGD_PROTO_VERSION)
        return FASGD_PROTO_VERSION_MISMATCH;
    if (!s_type_known (h->type))
        return FASGD_PROTO_MALFORMED;
    /*  Unknown flag bits are refused rather than ignored, so that a later
        flag can never be silently dropped by an older peer.  */
    uint16_t allowed = h->type == FASGD_MSG_FETCH ? FASGD_PROTO_FLAG_IF_NEWER
                     : h->type == FASGD_MSG_PUSH || h->type == FASGD_MSG_PUSH_REPEAT
                       ? FASGD_PROTO_FLAG_THEN_FETCH : 0;
    if (h->flags & (uint16_t) ~allowed)
        return FASGD_PROTO_MALFORMED;
    if (s_type_is_request (h->type) ? h->status != 0 : !s_status_known (h->status))
        return FASGD_PROTO_MALFORMED;
    if (!s_type_is_request (h->type) && !s_bits_finite64 (vbits))
        return FASGD_PROTO_MALFORMED;
    return FASGD_PROTO_OK;
}

/*  --------------------------------------------------------------------
    Body lengths  */

int
fasgd_proto_body_check (const fasgd_header_t *h, size_t body_len, size_t nparams)
{
    return fasgd_proto_body_check_wire (h, body_len, nparams, FASGD_WIRE_F32, FASGD_WIRE_F32);
}

int
fasgd_proto_body_check_wire (const fasgd_header_t *h, size_t body_len, size_t nparams, int push_wire,
                             int params_wire)
{
    size_t lo = 0, hi = 0;
    switch (h->type) {
        case FASGD_MSG_PUSH:
        case FASGD_MSG_PARAMS:
            if (h->type == FASGD_MSG_PARAMS && h->status == FASGD_STATUS_NOT_MODIFIED)
                break;
        {
            /*  4·D (or 2·D) computed without wrapping: with D > SIZE_MAX / 4
                the product would wrap to a small number that an empty or
                short body could match.  */
            size_t size = fasgd_proto_wire_size (h->type == FASGD_MSG_PUSH ? push_wire : params_wire);
            if (!size || nparams > SIZE_MAX / size)
                return FASGD_PROTO_MALFORMED;
            lo = hi = nparams * size;
            break;
        }
        case FASGD_MSG_JOIN:
        case FASGD_MSG_ERROR:
            hi = FASGD_PROTO_TEXT_MAX;
            break;
        case FASGD_MSG_WELCOME:
            lo = 1;
            hi = FASGD_PROTO_DESC_MAX;
            break;
        case FASGD_MSG_EVAL:
            lo = 1;
            hi = FASGD_PROTO_TEXT_MAX;
            break;
        case FASGD_MSG_PUSH_REPEAT:
        case FASGD_MSG_ACK:
        case FASGD_MSG_FETCH:
        case FASGD_MSG_HEARTBEAT:
        case FASGD_MSG_LEAVE:
            break;
        default:
            return FASGD_PROTO_MALFORMED;
    }
    return body_len >= lo && body_len <= hi ? FASGD_PROTO_OK : FASGD_PROTO_MALFORMED;
}

/*  --------------------------------------------------------------------
    float32 bodies  */

/*  src and dst are either the same buffer or do not overlap.  */
void
fasgd_proto_floats_encode (const float *src, size_t n, void *dst)
{
    if (n == 0)
        return;
#if FASGD_HOST_IS_LE
    if ((const void *) src != dst)
        memcpy (dst, src, n * sizeof (float));
#else
    uint8_t *out = dst;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy (&bits, &src [i], sizeof bits);
        s_put32 (out + 4 * i, bits);
    }
#endif
}

void
fasgd_proto_floats_decode (const void *src, size_t n, float *dst)
{
    if (n == 0)
        return;
#if FASGD_HOST_IS_LE
    if (src != (const void *) dst)
        memcpy (dst, src, n * sizeof (float));
#else
    const uint8_t *in = src;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = s_get32 (in + 4 * i);
        memcpy (&dst [i], &bits, sizeof bits);
    }
#endif
}

int
fasgd_proto_floats_finite (const void *src, size_t n)
{
    const uint8_t *p = src;
    /*  No early exit: the loop then has a fixed trip count and vectorises;
        a gradient is nearly always all finite, so the whole body is read
        anyway.  */
    int finite = 1;
    for (size_t i = 0; i < n; i++)
        finite &= s_bits_finite32 (s_get32 (p + 4 * i));
    return finite;
}

/*  --------------------------------------------------------------------
    Compact wire: bfloat16 and half precision  */

int
fasgd_proto_wire_parse (const char *name)
{
    for (int i = 0; name && fasgd_wire_names [i]; i++)
        if (strcmp (name, fasgd_wire_names [i]) == 0)
            return i;
    return -1;
}

const char *
fasgd_proto_wire_name (int wire)
{
    return wire >= FASGD_WIRE_F32 && wire <= FASGD_WIRE_F16 ? fasgd_wire_names [wire] : "?";
}

size_t
fasgd_proto_wire_size (int wire)
{
    return wire == FASGD_WIRE_F32 ? 4 : wire == FASGD_WIRE_BF16 || wire == FASGD_WIRE_F16 ? 2 : 0;
}

void
fasgd_proto_wire_encode_feedback (int wire, const float *g, const float *residual, float *residual_next,
                                  size_t n, void *dst)
{
    fasgd_halves_feedback (wire, g, residual, residual_next, n, dst);
}

void
fasgd_proto_wire_encode (int wire, const float *src, size_t n, void *dst)
{
    if (wire == FASGD_WIRE_F32)
        fasgd_proto_floats_encode (src, n, dst);
    else
        fasgd_halves_encode (wire, src, n, dst);
}

void
fasgd_proto_wire_decode (int wire, const void *src, size_t n, float *dst)
{
    if (wire == FASGD_WIRE_F32)
        fasgd_proto_floats_decode (src, n, dst);
    else
        fasgd_halves_decode (wire, src, n, dst);
}

/*  --------------------------------------------------------------------
    Model description: one table of keys drives both directions, so the
    encoder writes exactly what the decoder reads.  */

typedef enum {
    S_U32,
    S_U64,
    S_INT,          /* 0..INT_MAX */
    S_DOUBLE,       /* finite */
    S_STRING,       /* printable ASCII or UTF-8, no control characters */
    S_TENSORS
} s_kind_t;

typedef struct {
    const char *key;
    s_kind_t kind;
    size_t offset;
    size_t size;            /* of the field; a string's includes its NUL */
    int required;
} s_desc_key_t;

#define S_FIELD(key, kind, member, required) \
    { key, kind, offsetof (fasgd_proto_desc_t, member), \
      sizeof ((fasgd_proto_desc_t *) 0)->member, required }

/*  In PROTOCOL.md's order, which is also the order encode writes.  */
static const s_desc_key_t s_desc_keys [] = {
    S_FIELD ("protocol",          S_U32,     protocol,         1),
    S_FIELD ("params",            S_U64,     params,           1),
    S_FIELD ("tensors",           S_TENSORS, tensors,          1),
    S_FIELD ("model",             S_STRING,  model,            0),
    S_FIELD ("model.sizes",       S_STRING,  model_sizes,      0),
    S_FIELD ("model.activation",  S_STRING,  model_activation, 0),
    S_FIELD ("rule",              S_STRING,  rule,             0),
    S_FIELD ("rule.lr",           S_DOUBLE,  lr,               0),
    S_FIELD ("gates.fetch",       S_STRING,  fetch_gate,       0),
    S_FIELD ("gates.fetch.every", S_INT,     fetch_every,      0),
    S_FIELD ("gates.fetch.c",     S_DOUBLE,  fetch_c,          0),
    S_FIELD ("gates.push",        S_STRING,  push_gate,        0),
    S_FIELD ("gates.push.every",  S_INT,     push_every,       0),
    S_FIELD ("gates.push.c",      S_DOUBLE,  push_c,           0),
    S_FIELD ("gates.push.skip",   S_STRING,  push_skip,        0),
    S_FIELD ("gates.eps",         S_DOUBLE,  gate_eps,         0),
    S_FIELD ("heartbeat_ms",      S_U32,     heartbeat_ms,     0),
    S_FIELD ("expiry_ms",         S_U32,     expiry_ms,        0),
    S_FIELD ("session",           S_U64,     session,          0),
    S_FIELD ("wire.push",         S_STRING,  wire_push,        0),
    S_FIELD ("wire.params",       S_STRING,  wire_params,      0),
    S_FIELD ("shard",             S_U32,     shard,            0),
    S_FIELD ("shards",            S_U32,     shards,           0),
    S_FIELD ("offset",            S_U64,     offset,           0),
    S_FIELD ("length",            S_U64,     length,           0),
};
/*  The shard keys: written only by a sharded server (shards > 1).  */
#define S_SHARD_FIRST 21
_Static_assert (sizeof s_desc_keys / sizeof s_desc_keys [0] == S_SHARD_FIRST + 4, "the shard keys come last");
#define S_NKEYS (sizeof s_desc_keys / sizeof s_desc_keys [0])

/*  Tensor names travel inside a comma- and colon-separated list and end up
    in log lines and file names, hence the small alphabet.  */
static int
s_name_char (unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
        || c == '_' || c == '.' || c == '-';
}

static int
s_name_ok (const char *name, size_t n)
{
    if (n < 1 || n >= sizeof ((fasgd_proto_tensor_t *) 0)->name)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!s_name_char ((unsigned char) name [i]))
            return 0;
    return 1;
}

/*  A string value ends at the end of its line, so it cannot hold a line
    break; other control characters are refused too, because these values
    are identifiers that end up in logs.  */
static int
s_string_ok (const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) s [i];
        if (c < 0x20 || c == 0x7F)
            return 0;
    }
    return 1;
}

/*  A peer's bytes in an error message, made safe for a log line: at most
    32 of them, anything not printable ASCII shown as '?'.  */
static const char *
s_show (char *out, size_t outlen, const char *v, size_t n)
{
    size_t shown = n > 32 ? 32 : n;
    size_t k = 0;
    for (size_t i = 0; i < shown && k + 1 < outlen; i++) {
        unsigned char c = (unsigned char) v [i];
        out [k++] = c >= 0x20 && c < 0x7F ? (char) c : '?';
    }
    if (shown < n)
        for (int i = 0; i < 3 && k + 1 < outlen; i++)
            out [k++] = '.';
    out [k] = '\0';
    return out;
}

/*  Decimal digits only: no sign, no space, no "0x", no locale. Returns 0
    and the value when it is at most max.  */
static int
s_parse_uint (const char *s, size_t n, uint64_t max, uint64_t *out)
{
    if (n == 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s [i] < '0' || s [i] > '9')
            return -1;
        unsigned d = (unsigned) (s [i] - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/*  A finite decimal number as %.17g writes it. strtod alone would also
    take leading space, "inf", "nan" and hex floats, so the alphabet is
    checked first. Underflow to a subnormal is accepted (a subnormal sent
    by the encoder must read back), overflow to infinity is not. strtod and
    the encoder's %.17g both follow LC_NUMERIC; the fasgd programs never
    call setlocale, so both use '.'.  */
static int
s_parse_double (const char *s, size_t n, double *out)
{
    char buf [64];
    if (n == 0 || n >= sizeof buf)
        return -1;
    for (size_t i = 0; i < n; i++)     /* strchr would match '\0' too */
        if (s [i] == '\0' || !strchr ("0123456789+-.eE", s [i]))
            return -1;
    memcpy (buf, s, n);
    buf [n] = '\0';
    char *end;
    double v = strtod (buf, &end);
    if (end != buf + n || !s_double_finite (v))
        return -1;
    *out = v;
    return 0;
}

static int
s_parse_tensors (const char *v, size_t n, fasgd_proto_tensor_t *tensors, int *ntensors,
                 const char *where, char *err, size_t errlen)
{
    char shown [48];
    int count = 0;
    size_t pos = 0;
    /*  A repeated tensors= line replaces the whole list, tail included.  */
    memset (tensors, 0, FASGD_PROTO_MAX_TENSORS * sizeof tensors [0]);
    *ntensors = 0;
    for (;;) {
        const char *item = v + pos;
        const char *comma = memchr (item, ',', n - pos);
        size_t len = comma ? (size_t) (comma - item) : n - pos;
        const char *colon = memchr (item, ':', len);
        if (count == FASGD_PROTO_MAX_TENSORS)
            return fasgd_errbuf (err, errlen, "%s: more than %d tensors",
                                 where, FASGD_PROTO_MAX_TENSORS);
        if (!colon)
            return fasgd_errbuf (err, errlen, "%s: \"%s\" is not name:SHAPE",
                                 where, s_show (shown, sizeof shown, item, len));
        size_t namelen = (size_t) (colon - item);
        if (!s_name_ok (item, namelen))
            return fasgd_errbuf (err, errlen,
                                 "%s: name \"%s\" must be 1..%zu of [A-Za-z0-9_.-]",
                                 where, s_show (shown, sizeof shown, item, namelen),
                                 sizeof tensors [0].name - 1);
        const char *dims = colon + 1;
        size_t dimslen = len - namelen - 1;
        fasgd_proto_tensor_t *t = &tensors [count];
        memset (t, 0, sizeof *t);
        size_t dpos = 0;
        for (;;) {
            const char *d = dims + dpos;
            const char *x = memchr (d, 'x', dimslen - dpos);
            size_t dlen = x ? (size_t) (x - d) : dimslen - dpos;
            uint64_t dim;
            if (t->ndim == FASGD_PROTO_MAX_DIMS
                || s_parse_uint (d, dlen, UINT32_MAX, &dim) != 0 || dim == 0)
                return fasgd_errbuf (err, errlen,
                                     "%s: \"%s\" must be a SHAPE: 1 to %d dimensions "
                                     "separated by x, each 1..%" PRIu32,
                                     where, s_show (shown, sizeof shown, dims, dimslen),
                                     FASGD_PROTO_MAX_DIMS, UINT32_MAX);
            t->dims [t->ndim++] = (uint32_t) dim;
            if (!x)
                break;
            dpos += dlen + 1;
        }
        memcpy (t->name, item, namelen);
        /*  A name picks out a view of θ, so two views may not share one.  */
        for (int i = 0; i < count; i++)
            if (strcmp (tensors [i].name, t->name) == 0)
                return fasgd_errbuf (err, errlen, "%s: \"%s\" appears twice",
                                     where, t->name);
        count++;
        if (!comma)
            break;
        pos += len + 1;
    }
    *ntensors = count;
    return 0;
}

/*  Each dimension is 32 bits, so a product of up to eight of them, and a
    sum of up to 64 products, may not fit in 64 bits; a wrapped sum could
    match a small params.  */
static int
s_tensors_sum (const fasgd_proto_tensor_t *tensors, int ntensors, uint64_t *sum)
{
    uint64_t total = 0;
    for (int i = 0; i < ntensors; i++) {
        uint64_t size = 1;
        for (uint32_t k = 0; k < tensors [i].ndim; k++) {
            uint64_t d = tensors [i].dims [k];
            if (d != 0 && size > UINT64_MAX / d)
                return -1;
            size *= d;
        }
        if (size > UINT64_MAX - total)
            return -1;
        total += size;
    }
    *sum = total;
    return 0;
}

static int
s_parse_value (const s_desc_key_t *k, const char *v, size_t n, fasgd_proto_desc_t *d,
               unsigned line, char *err, size_t errlen)
{
    char shown [48];
    char *slot = (char *) d + k->offset;
    switch (k->kind) {
        case S_U32:
        case S_U64:
        case S_INT: {
            uint64_t max = k->kind == S_U32 ? UINT32_MAX : k->kind == S_U64 ? UINT64_MAX : INT_MAX;
            uint64_t x;
            if (s_parse_uint (v, n, max, &x) != 0)
                return fasgd_errbuf (err, errlen, "line %u: %s must be an integer 0..%" PRIu64 " (got \"%s\")",
                                     line, k->key, max, s_show (shown, sizeof shown, v, n));
            if (k->kind == S_U32) {
                uint32_t x32 = (uint32_t) x;
                memcpy (slot, &x32, sizeof x32);
            }
            else
            if (k->kind == S_U64)
                memcpy (slot, &x, sizeof x);
            else {
                int xi = (int) x;
                memcpy (slot, &xi, sizeof xi);
            }
            return 0;
        }
        case S_DOUBLE: {
            double x;
            if (s_parse_double (v, n, &x) != 0)
                return fasgd_errbuf (err, errlen, "line %u: %s must be a finite number (got \"%s\")",
                                     line, k->key, s_show (shown, sizeof shown, v, n));
            memcpy (slot, &x, sizeof x);
            return 0;
        }
        case S_STRING:
            if (n >= k->size)
                return fasgd_errbuf (err, errlen, "line %u: %s is %zu bytes long, the limit is %zu",
                                     line, k->key, n, k->size - 1);
            if (!s_string_ok (v, n))
                return fasgd_errbuf (err, errlen, "line %u: %s holds a control character",
                                     line, k->key);
            /*  Cleared in full, so a repeated key leaves no tail of the
                value it replaces.  */
            memset (slot, 0, k->size);
            memcpy (slot, v, n);
            return 0;
        case S_TENSORS: {
            char where [32];
            snprintf (where, sizeof where, "line %u: tensors", line);
            return s_parse_tensors (v, n, d->tensors, &d->ntensors, where, err, errlen);
        }
    }
    return fasgd_errbuf (err, errlen, "line %u: %s has no parser", line, k->key);
}

/*  A shard's place: shard < shards, a part of at least one value within
    the D. One shard of one is the whole of θ.  */
static int
s_shard_check (const fasgd_proto_desc_t *d, char *err, size_t errlen)
{
    if (d->shards < 1 || d->shard >= d->shards)
        return fasgd_errbuf (err, errlen, "shard=%" PRIu32 " of shards=%" PRIu32 " does not exist",
                             d->shard, d->shards);
    if (d->length < 1 || d->offset > d->params || d->length > d->params - d->offset)
        return fasgd_errbuf (err, errlen, "offset=%" PRIu64 " length=%" PRIu64 " is not a part of the "
                             "%" PRIu64 " parameters", d->offset, d->length, d->params);
    if (d->shards == 1 && d->length != d->params)
        return fasgd_errbuf (err, errlen, "one shard of one must hold all %" PRIu64 " parameters, not %"
                             PRIu64, d->params, d->length);
    if (d->shards > d->params)
        return fasgd_errbuf (err, errlen, "shards=%" PRIu32 " is more than the %" PRIu64 " parameters",
                             d->shards, d->params);
    return 0;
}

int
fasgd_proto_desc_decode (const char *text, size_t len, fasgd_proto_desc_t *d,
                         char *err, size_t errlen)
{
    char shown [48];
    if (len > FASGD_PROTO_DESC_MAX)
        return fasgd_errbuf (err, errlen, "description is %zu bytes, the limit is %u",
                             len, FASGD_PROTO_DESC_MAX);
    const char *nul = len > 0 ? memchr (text, '\0', len) : NULL;
    if (nul)
        return fasgd_errbuf (err, errlen, "description holds a NUL byte at offset %zu",
                             (size_t) (nul - text));

    /*  Parsed into a copy, so the caller's d is untouched on failure.  */
    fasgd_proto_desc_t tmp;
    memset (&tmp, 0, sizeof tmp);
    int seen [S_NKEYS] = { 0 };
    size_t pos = 0;
    unsigned line = 0;
    while (pos < len) {
        line++;
        const char *start = text + pos;
        const char *nl = memchr (start, '\n', len - pos);
        size_t n = nl ? (size_t) (nl - start) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n > 0 && start [n - 1] == '\r')
            n--;
        if (n == 0)
            continue;
        const char *eq = memchr (start, '=', n);
        if (!eq || eq == start)
            return fasgd_errbuf (err, errlen, "line %u: \"%s\" is not key=value",
                                 line, s_show (shown, sizeof shown, start, n));
        size_t keylen = (size_t) (eq - start);
        size_t i;
        for (i = 0; i < S_NKEYS; i++)
            if (strlen (s_desc_keys [i].key) == keylen
                && memcmp (s_desc_keys [i].key, start, keylen) == 0)
                break;
        /*  Unknown keys belong to later versions: skipped unread.  */
        if (i == S_NKEYS)
            continue;
        if (s_parse_value (&s_desc_keys [i], eq + 1, n - keylen - 1, &tmp, line, err, errlen) != 0)
            return -1;
        seen [i] = 1;
    }
    for (size_t i = 0; i < S_NKEYS; i++)
        if (s_desc_keys [i].required && !seen [i])
            return fasgd_errbuf (err, errlen, "description has no %s= line", s_desc_keys [i].key);
    uint64_t sum;
    if (s_tensors_sum (tmp.tensors, tmp.ntensors, &sum) != 0)
        return fasgd_errbuf (err, errlen, "tensors add up to more than 2^64 parameters");
    if (sum != tmp.params)
        return fasgd_errbuf (err, errlen, "tensors add up to %" PRIu64 " parameters, params=%" PRIu64,
                             sum, tmp.params);
    int sharded = 0;
    for (size_t i = S_SHARD_FIRST; i < S_NKEYS; i++)
        sharded |= seen [i];
    if (!sharded) {
        tmp.shard = 0;
        tmp.shards = 1;
        tmp.offset = 0;
        tmp.length = tmp.params;
    }
    else {
        for (size_t i = S_SHARD_FIRST; i < S_NKEYS; i++)
            if (!seen [i])
                return fasgd_errbuf (err, errlen, "description has shard keys but no %s= line",
                                     s_desc_keys [i].key);
        if (s_shard_check (&tmp, err, errlen) != 0)
            return -1;
    }
    *d = tmp;
    return 0;
}

int
fasgd_proto_tensors_parse (const char *text, const char *where, fasgd_proto_tensor_t *tensors,
                           int *ntensors, uint64_t *params, char *err, size_t errlen)
{
    if (s_parse_tensors (text, strlen (text), tensors, ntensors, where, err, errlen) != 0)
        return -1;
    if (s_tensors_sum (tensors, *ntensors, params) != 0)
        return fasgd_errbuf (err, errlen, "%s: the tensors add up to more than 2^64 parameters", where);
    return 0;
}

/*  Whether d would read back: the decoder's rules, applied to a struct.  */
static int
s_desc_valid (const fasgd_proto_desc_t *d)
{
    if (d->ntensors < 1 || d->ntensors > FASGD_PROTO_MAX_TENSORS)
        return 0;
    for (int i = 0; i < d->ntensors; i++) {
        const fasgd_proto_tensor_t *t = &d->tensors [i];
        const char *nul = memchr (t->name, '\0', sizeof t->name);
        if (!nul || !s_name_ok (t->name, (size_t) (nul - t->name))
            || t->ndim < 1 || t->ndim > FASGD_PROTO_MAX_DIMS)
            return 0;
        for (uint32_t k = 0; k < t->ndim; k++)
            if (t->dims [k] == 0)
                return 0;
        for (int j = 0; j < i; j++)
            if (strcmp (d->tensors [j].name, t->name) == 0)
                return 0;
    }
    uint64_t sum;
    if (s_tensors_sum (d->tensors, d->ntensors, &sum) != 0 || sum != d->params)
        return 0;
    if (d->shards > 1 && s_shard_check (d, NULL, 0) != 0)
        return 0;
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_desc_key_t *k = &s_desc_keys [i];
        const char *slot = (const char *) d + k->offset;
        if (k->kind == S_STRING) {
            const char *nul = memchr (slot, '\0', k->size);
            if (!nul || !s_string_ok (slot, (size_t) (nul - slot)))
                return 0;
        }
        else
        if (k->kind == S_INT) {
            int x;
            memcpy (&x, slot, sizeof x);
            if (x < 0)
                return 0;
        }
        else
        if (k->kind == S_DOUBLE) {
            double x;
            memcpy (&x, slot, sizeof x);
            if (!s_double_finite (x))
                return 0;
        }
    }
    return 1;
}

typedef struct {
    char *buf;
    size_t len, pos;
    int full;
} s_out_t;

static void
s_out (s_out_t *o, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_out (s_out_t *o, const char *fmt, ...)
{
    if (o->full)
        return;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (o->buf + o->pos, o->len - o->pos, fmt, ap);
    va_end (ap);
    /*  The text and its NUL must fit.  */
    if (n < 0 || (size_t) n >= o->len - o->pos)
        o->full = 1;
    else
        o->pos += (size_t) n;
}

int
fasgd_proto_desc_encode (const fasgd_proto_desc_t *d, char *buf, size_t len)
{
    /*  A description the decoder would refuse is not written at all, so
        whatever encode produces, decode reads back.  */
    if (!buf || len == 0 || !s_desc_valid (d))
        return -1;
    s_out_t o = { buf, len, 0, 0 };
    size_t nkeys = d->shards > 1 ? S_NKEYS : S_SHARD_FIRST;
    for (size_t i = 0; i < nkeys; i++) {
        const s_desc_key_t *k = &s_desc_keys [i];
        const char *slot = (const char *) d + k->offset;
        switch (k->kind) {
            case S_U32: {
                uint32_t x;
                memcpy (&x, slot, sizeof x);
                s_out (&o, "%s=%" PRIu32 "\n", k->key, x);
                break;
            }
            case S_U64: {
                uint64_t x;
                memcpy (&x, slot, sizeof x);
                s_out (&o, "%s=%" PRIu64 "\n", k->key, x);
                break;
            }
            case S_INT: {
                int x;
                memcpy (&x, slot, sizeof x);
                s_out (&o, "%s=%d\n", k->key, x);
                break;
            }
            case S_DOUBLE: {
                double x;
                memcpy (&x, slot, sizeof x);
                /*  17 significant digits identify every binary64.  */
                s_out (&o, "%s=%.17g\n", k->key, x);
                break;
            }
            case S_STRING:
                s_out (&o, "%s=%s\n", k->key, slot);
                break;
            case S_TENSORS:
                s_out (&o, "%s=", k->key);
                for (int t = 0; t < d->ntensors; t++) {
                    s_out (&o, "%s%s:", t ? "," : "", d->tensors [t].name);
                    for (uint32_t j = 0; j < d->tensors [t].ndim; j++)
                        s_out (&o, "%s%" PRIu32, j ? "x" : "", d->tensors [t].dims [j]);
                }
                s_out (&o, "\n");
                break;
        }
    }
    if (o.full || o.pos > INT_MAX)
        return -1;
    return (int) o.pos;
}
