/*  libFuzzer harness: a tensor list ("name:SHAPE,...") as the
    configuration key external.tensors and a WELCOME's tensors= line
    carry it, through fasgd_proto_tensors_parse.

    Invariants besides memory safety: a refused list gives a reason; an
    accepted one has 1..FASGD_PROTO_MAX_TENSORS tensors of distinct,
    NUL-terminated names, 1..FASGD_PROTO_MAX_DIMS non-zero dimensions
    each, and sizes that add up to the total reported.  */
#include "codec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static fasgd_proto_tensor_t t [FASGD_PROTO_MAX_TENSORS];
    char *text = malloc (size + 1);
    if (!text)
        return 0;
    memcpy (text, data, size);
    text [size] = 0;
    char err [256] = "";
    int n = -1;
    uint64_t params = 0;
    int rc = fasgd_proto_tensors_parse (text, "fuzz", t, &n, &params, err, sizeof err);
    free (text);
    if (rc != 0) {
        if (rc != -1 || !*err)
            __builtin_trap ();
        return 0;
    }
    if (n < 1 || n > FASGD_PROTO_MAX_TENSORS)
        __builtin_trap ();
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (!memchr (t [i].name, 0, sizeof t [i].name) || !t [i].name [0])
            __builtin_trap ();
        if (t [i].ndim < 1 || t [i].ndim > FASGD_PROTO_MAX_DIMS)
            __builtin_trap ();
        for (uint32_t k = 0; k < t [i].ndim; k++)
            if (t [i].dims [k] == 0)
                __builtin_trap ();
        for (int j = 0; j < i; j++)
            if (strcmp (t [i].name, t [j].name) == 0)
                __builtin_trap ();
        sum += fasgd_proto_tensor_size (&t [i]);
    }
    if (sum != params)
        __builtin_trap ();
    return 0;
}
