/*  codec: encoding and decoding of the fasgd wire protocol (PROTOCOL.md).

    Nothing here knows about sockets or models: it turns bytes into checked
    values and back. Every decoder checks every length and field and says
    "malformed" rather than trusting a peer.  */
#ifndef FASGD_CODEC_H_INCLUDED
#define FASGD_CODEC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "wire.h"   /* status codes, the model description: public */

#define FASGD_PROTO_MAGIC        0xFA5Du
#define FASGD_PROTO_HEADER_SIZE  32u
#define FASGD_PROTO_TEXT_MAX     255u      /* JOIN names and ERROR reasons */
#define FASGD_PROTO_DESC_MAX     65536u    /* a WELCOME body */
#define FASGD_PROTO_FLAG_IF_NEWER 1u       /* FETCH: 304 when current */
#define FASGD_PROTO_FLAG_THEN_FETCH 2u     /* PUSH, PUSH_REPEAT: reply PARAMS */

typedef enum {
    FASGD_MSG_JOIN = 1,
    FASGD_MSG_WELCOME = 2,
    FASGD_MSG_PUSH = 3,
    FASGD_MSG_PUSH_REPEAT = 4,
    FASGD_MSG_ACK = 5,
    FASGD_MSG_FETCH = 6,
    FASGD_MSG_PARAMS = 7,
    FASGD_MSG_HEARTBEAT = 8,
    FASGD_MSG_LEAVE = 9,
    FASGD_MSG_EVAL = 10,
    FASGD_MSG_ERROR = 15
} fasgd_msg_type_t;


typedef struct {
    uint8_t  version;
    uint8_t  type;
    uint16_t status;
    uint16_t flags;
    uint32_t client_id;
    uint32_t seq;
    uint64_t timestamp;
    double   vbar;          /* replies; 0 in requests */
    uint64_t session;       /* requests: the token of the client's WELCOME (0 in JOIN); 0 in replies */
} fasgd_header_t;

/*  Decoder results.  */
#define FASGD_PROTO_OK          0
#define FASGD_PROTO_MALFORMED  -2   /* size, magic, type, reserved bits */
#define FASGD_PROTO_VERSION_MISMATCH -3

/*  Writes h as 32 bytes (magic and version filled in from h->version,
    which callers set to FASGD_PROTO_VERSION). Bytes 24-31 carry the
    session of a request, the vbar of a reply.  */
void fasgd_proto_header_encode (const fasgd_header_t *h, uint8_t out [FASGD_PROTO_HEADER_SIZE]);

/*  Decodes a header frame of len bytes: FASGD_PROTO_OK, or
    FASGD_PROTO_MALFORMED (len != 32, bad magic, unknown type, unknown flag
    bits), or FASGD_PROTO_VERSION_MISMATCH (h is filled as far as read).  */
int fasgd_proto_header_decode (const void *buf, size_t len, fasgd_header_t *h);

/*  Whether a message of this type may carry a body, and of what length:
    returns 0 when body_len is acceptable for type given D parameters
    (PUSH and PARAMS: exactly 4·D, or 0 for PARAMS with status 304; JOIN:
    0..255; WELCOME: 1..FASGD_PROTO_DESC_MAX; EVAL: 1..FASGD_PROTO_TEXT_MAX;
    ERROR: 0..255; others: 0), FASGD_PROTO_MALFORMED otherwise.  */
int fasgd_proto_body_check (const fasgd_header_t *h, size_t body_len, size_t nparams);

/*  How gradients (PUSH) and parameters (PARAMS) travel, as the WELCOME's
    wire.push and wire.params say: fasgd_wire_t (common/wire.h).  */

/*  "f32", "bf16", "f16" and back; -1 and "?" for anything else.  */
int fasgd_proto_wire_parse (const char *name);
const char *fasgd_proto_wire_name (int wire);
/*  Bytes a value takes on the wire: 4 or 2.  */
size_t fasgd_proto_wire_size (int wire);

/*  n values as wire, little-endian. bf16 and f16 round to nearest, ties
    to even; a finite value stays finite (beyond the format's largest
    finite value it becomes that value: ±3.39e38 for bf16, ±65504 for
    f16), an infinity stays infinite and a NaN a NaN. f32 is
    fasgd_proto_floats_encode.  */
void fasgd_proto_wire_encode (int wire, const float *src, size_t n, void *dst);
void fasgd_proto_wire_decode (int wire, const void *src, size_t n, float *dst);

/*  Error feedback in one pass, for bf16 and f16: sends g + residual as
    wire into dst, and writes to residual_next what the rounding left out
    (g + residual − what dst decodes to). residual_next may not overlap
    the others.  */
void fasgd_proto_wire_encode_feedback (int wire, const float *g, const float *residual, float *residual_next,
                                       size_t n, void *dst);

/*  As fasgd_proto_body_check, with PUSH bodies of D values as push_wire
    and PARAMS bodies as params_wire.  */
int fasgd_proto_body_check_wire (const fasgd_header_t *h, size_t body_len, size_t nparams, int push_wire,
                                 int params_wire);

/*  float32 arrays in the protocol's little-endian order (a copy on
    big-endian hosts, a memcpy elsewhere).  */
void fasgd_proto_floats_encode (const float *src, size_t n, void *dst);
void fasgd_proto_floats_decode (const void *src, size_t n, float *dst);

/*  1 when every value of a little-endian float32 body is finite.  */
int fasgd_proto_floats_finite (const void *src, size_t n);

const char *fasgd_proto_type_name (int type);       /* "JOIN", ..., "?" */
const char *fasgd_proto_status_text (int status);   /* "malformed", ... */


/*  Parses a tensor list as WELCOME's `tensors` value ("name:SHAPE,..."),
    e.g. from a configuration; `where` begins each error message. Sets
    *params to the total size. Returns 0, or -1 with the reason in err.  */
int fasgd_proto_tensors_parse (const char *text, const char *where, fasgd_proto_tensor_t *tensors,
                               int *ntensors, uint64_t *params, char *err, size_t errlen);

/*  Writes the description as key=value lines; returns the length, or -1
    if it does not fit in len bytes.  */
int fasgd_proto_desc_encode (const fasgd_proto_desc_t *d, char *buf, size_t len);

/*  Parses a description (len bytes, not NUL-terminated): unknown keys are
    skipped; a missing `params` or `tensors`, a tensor list that does not
    add up to `params`, a bad number or an over-long value are errors.
    Returns 0, or -1 with a reason in err.  */
int fasgd_proto_desc_decode (const char *text, size_t len, fasgd_proto_desc_t *d,
                             char *err, size_t errlen);

#endif
