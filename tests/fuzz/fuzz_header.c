/*  libFuzzer harness: a header frame and the length check of the body
    that follows it, as fasgd-server and fasgd-client see a peer's
    message. The first 32 bytes are the header frame (shorter inputs are
    decoded whole, and must be refused); the rest is the body, and its
    length is checked for a model of a size the input also picks.

    Invariants besides memory safety: a header that decodes is encoded
    back to the very same 32 bytes, and a refused length stays refused
    whatever the size of the model.  */
#include "codec.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    fasgd_header_t h;
    size_t hlen = size < FASGD_PROTO_HEADER_SIZE ? size : FASGD_PROTO_HEADER_SIZE;
    int rc = fasgd_proto_header_decode (data, hlen, &h);
    if (hlen < FASGD_PROTO_HEADER_SIZE && rc == FASGD_PROTO_OK)
        __builtin_trap ();
    if (rc != FASGD_PROTO_OK)
        return 0;
    uint8_t again [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (&h, again);
    if (memcmp (again, data, FASGD_PROTO_HEADER_SIZE) != 0)
        __builtin_trap ();

    /*  The model's size D: from the timestamp's bits, so that the fuzzer
        reaches both small models and those of D > SIZE_MAX / 4.  */
    size_t body = size - FASGD_PROTO_HEADER_SIZE;
    size_t nparams = (size_t) h.timestamp;
    int ok = fasgd_proto_body_check (&h, body, nparams);
    if (ok != FASGD_PROTO_OK && ok != FASGD_PROTO_MALFORMED)
        __builtin_trap ();
    /*  A body that passes for D parameters is exactly 4·D bytes long
        when the message carries parameters.  */
    if (ok == FASGD_PROTO_OK && (h.type == FASGD_MSG_PUSH
        || (h.type == FASGD_MSG_PARAMS && h.status != FASGD_STATUS_NOT_MODIFIED))
        && body != nparams * sizeof (float))
        __builtin_trap ();
    if (ok == FASGD_PROTO_OK && body > FASGD_PROTO_DESC_MAX && h.type != FASGD_MSG_PUSH
        && h.type != FASGD_MSG_PARAMS)
        __builtin_trap ();
    /*  And for the body's own length as D, which a PUSH must match.  */
    if (body % sizeof (float) == 0)
        (void) fasgd_proto_body_check (&h, body, body / sizeof (float));
    (void) fasgd_proto_floats_finite (data + FASGD_PROTO_HEADER_SIZE, body / sizeof (float));
    return 0;
}
