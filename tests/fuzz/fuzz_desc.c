/*  libFuzzer harness: a WELCOME body, the model description a client
    reads from its server, through fasgd_proto_desc_decode.

    Invariants besides memory safety: a refused description leaves the
    caller's struct as it was and always gives a reason; an accepted one
    is written back by fasgd_proto_desc_encode, and that text decodes to
    the same struct (the encoder writes exactly what the decoder reads).  */
#include "codec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static fasgd_proto_desc_t d, before, again;
    static char text [2 * FASGD_PROTO_DESC_MAX];
    char err [256] = "";
    /*  The decoder reads exactly size bytes, never a NUL past them: a
        copy of its own lets ASan see an overrun by one.  */
    char *copy = malloc (size ? size : 1);
    if (!copy)
        return 0;
    memcpy (copy, data, size);
    memset (&d, 0x5A, sizeof d);
    before = d;
    int rc = fasgd_proto_desc_decode (copy, size, &d, err, sizeof err);
    free (copy);
    if (rc != 0) {
        if (rc != -1 || !*err || memcmp (&d, &before, sizeof d) != 0)
            __builtin_trap ();
        return 0;
    }
    int len = fasgd_proto_desc_encode (&d, text, sizeof text);
    if (len < 0 || (size_t) len >= sizeof text)
        __builtin_trap ();
    if ((size_t) len > FASGD_PROTO_DESC_MAX)
        return 0;
    memset (&again, 0, sizeof again);
    if (fasgd_proto_desc_decode (text, (size_t) len, &again, err, sizeof err) != 0
        || memcmp (&again, &d, sizeof d) != 0)
        __builtin_trap ();
    return 0;
}
