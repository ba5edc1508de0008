/*  wire: the byte formats θ and gradients travel in, one table for all
    that names them (fasgd-server's and fasgd-sim's wire.push and
    wire.params, the WELCOME's spelling, the codec, halves.c), and the
    one test of the host's byte order, against the little-endian order
    of the wire and of the files (checkpoints, raw float32).  */
#ifndef FASGD_WIRE_H_INCLUDED
#define FASGD_WIRE_H_INCLUDED

/*  float32, or rounded to bfloat16 or to IEEE half precision, 2 bytes a
    value (PROTOCOL.md, "Compact wire"; halves.h).  */
typedef enum {
    FASGD_WIRE_F32 = 0,
    FASGD_WIRE_BF16 = 1,
    FASGD_WIRE_F16 = 2
} fasgd_wire_t;

/*  "f32", "bf16", "f16", indexed by fasgd_wire_t, NULL-terminated.  */
extern const char *const fasgd_wire_names [];

/*  1 when the host's byte order is the wire's (little-endian): then a
    float32 array is its own wire image and a memcpy the whole
    conversion. 0 elsewhere, and where the compiler does not say, so that
    each value goes through its integer bits, right whatever the order.  */
#if defined (__BYTE_ORDER__) && defined (__ORDER_LITTLE_ENDIAN__) \
    && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#   define FASGD_HOST_IS_LE 1
#else
#   define FASGD_HOST_IS_LE 0
#endif

#endif
