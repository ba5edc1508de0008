/*  fasgd/types.h: the protocol's public types, shared by the codec and
    the client library: reply status codes and the model description a
    server sends in WELCOME (proto/PROTOCOL.md).  */
#ifndef FASGD_TYPES_H_INCLUDED
#define FASGD_TYPES_H_INCLUDED

#include <stdint.h>

#define FASGD_PROTO_VERSION      3u

typedef enum {
    FASGD_STATUS_OK = 200,
    FASGD_STATUS_BUFFERED = 202,
    FASGD_STATUS_NOT_MODIFIED = 304,
    FASGD_STATUS_MALFORMED = 400,
    FASGD_STATUS_UNKNOWN_CLIENT = 401,
    FASGD_STATUS_FORBIDDEN = 403,
    FASGD_STATUS_CONFLICT = 409,
    FASGD_STATUS_TOO_LARGE = 413,
    FASGD_STATUS_NONFINITE = 422,
    FASGD_STATUS_VERSION = 426,
    FASGD_STATUS_UNAVAILABLE = 503
} fasgd_status_t;

/*  The model description of WELCOME.  */
#define FASGD_PROTO_MAX_TENSORS 64
#define FASGD_PROTO_MAX_DIMS 8
typedef struct {
    char name [32];                         /* [A-Za-z0-9_.-], NUL-terminated */
    uint32_t ndim;                          /* 1..FASGD_PROTO_MAX_DIMS */
    uint32_t dims [FASGD_PROTO_MAX_DIMS];   /* each >= 1; unused ones 0 */
} fasgd_proto_tensor_t;

typedef struct {
    uint32_t protocol;
    uint64_t params;                        /* D */
    int ntensors;
    fasgd_proto_tensor_t tensors [FASGD_PROTO_MAX_TENSORS];
    char model [16];                        /* "mlp" or "external" */
    char model_sizes [128];                 /* "784,100,10" (mlp) */
    char model_activation [16];
    char rule [16];
    double lr;
    char fetch_gate [16], push_gate [16], push_skip [16];
    int fetch_every, push_every;
    double fetch_c, push_c, gate_eps;
    uint32_t heartbeat_ms, expiry_ms;
    uint64_t session;                       /* the token every later request carries; 0 none */
    char wire_push [8], wire_params [8];    /* "f32" (or "": the same), "bf16", "f16" */
    /*  The part of θ this server holds: values [offset, offset + length)
        of the D, shard number `shard` of `shards`. Unsharded: 0 of 1,
        offset 0, length D (a decoded description always says so).  */
    uint32_t shard, shards;
    uint64_t offset, length;
} fasgd_proto_desc_t;

/*  The number of floats of a tensor (the product of its dims), for a
    description the codec accepted: it checks that the products and their
    sum fit in 64 bits.  */
static inline uint64_t
fasgd_proto_tensor_size (const fasgd_proto_tensor_t *t)
{
    uint64_t size = 1;
    for (uint32_t i = 0; i < t->ndim && i < FASGD_PROTO_MAX_DIMS; i++)
        size *= t->dims [i];
    return size;
}

#endif
