/*  proto: the codec against PROTOCOL.md. Headers round trip and match a
    byte-exact reference; every malformed-header class, every body length
    rule and every description error is refused; random frames and texts
    never crash the decoders and get only the documented answers.  */
#include "codec.h"
#include "rng.h"
#include "testutil.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const int s_types [] = {
    FASGD_MSG_JOIN, FASGD_MSG_WELCOME, FASGD_MSG_PUSH, FASGD_MSG_PUSH_REPEAT,
    FASGD_MSG_ACK, FASGD_MSG_FETCH, FASGD_MSG_PARAMS, FASGD_MSG_HEARTBEAT,
    FASGD_MSG_LEAVE, FASGD_MSG_EVAL, FASGD_MSG_ERROR
};
#define S_NTYPES (sizeof s_types / sizeof s_types [0])

static const int s_statuses [] = {
    FASGD_STATUS_OK, FASGD_STATUS_BUFFERED, FASGD_STATUS_NOT_MODIFIED,
    FASGD_STATUS_MALFORMED, FASGD_STATUS_UNKNOWN_CLIENT, FASGD_STATUS_CONFLICT,
    FASGD_STATUS_TOO_LARGE, FASGD_STATUS_NONFINITE, FASGD_STATUS_VERSION,
    FASGD_STATUS_UNAVAILABLE
};
#define S_NSTATUSES (sizeof s_statuses / sizeof s_statuses [0])

/*  The test's own reading of PROTOCOL.md's type table, written apart from
    the codec's so that the two can disagree.  */
static int
s_is_request (int type)
{
    return type == FASGD_MSG_JOIN || type == FASGD_MSG_PUSH || type == FASGD_MSG_PUSH_REPEAT
        || type == FASGD_MSG_FETCH || type == FASGD_MSG_HEARTBEAT || type == FASGD_MSG_LEAVE
        || type == FASGD_MSG_EVAL;
}

static int
s_is_known_type (int type)
{
    for (size_t i = 0; i < S_NTYPES; i++)
        if (s_types [i] == type)
            return 1;
    return 0;
}

static int
s_is_known_status (int status)
{
    for (size_t i = 0; i < S_NSTATUSES; i++)
        if (s_statuses [i] == status)
            return 1;
    return 0;
}

static uint64_t
s_dbits (double x)
{
    uint64_t b;
    memcpy (&b, &x, sizeof b);
    return b;
}

static void
s_put32le (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (uint8_t) (v >> (8 * i));
}

static void
s_put64le (uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p [i] = (uint8_t) (v >> (8 * i));
}

static uint64_t
s_get_le (const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p [i];
    return v;
}

/*  A header that this version accepts for this type.  */
static fasgd_header_t
s_valid_header (int type)
{
    fasgd_header_t h;
    memset (&h, 0, sizeof h);
    h.version = FASGD_PROTO_VERSION;
    h.type = (uint8_t) type;
    h.client_id = 0x01020304u + (uint32_t) type;
    h.seq = 0xDEADBEEFu - (uint32_t) type;
    h.timestamp = UINT64_C (0x0102030405060708) * (uint64_t) type;
    if (!s_is_request (type)) {
        h.status = type == FASGD_MSG_ERROR ? FASGD_STATUS_MALFORMED : FASGD_STATUS_OK;
        h.vbar = 0.125 * type;
    }
    else if (type != FASGD_MSG_JOIN)
        h.session = UINT64_C (0x8877665544332211) ^ (uint64_t) type;
    if (type == FASGD_MSG_FETCH)
        h.flags = FASGD_PROTO_FLAG_IF_NEWER;
    return h;
}

static void
s_assert_header_eq (const fasgd_header_t *a, const fasgd_header_t *b)
{
    ck_assert_uint_eq (a->version, b->version);
    ck_assert_uint_eq (a->type, b->type);
    ck_assert_uint_eq (a->status, b->status);
    ck_assert_uint_eq (a->flags, b->flags);
    ck_assert_uint_eq (a->client_id, b->client_id);
    ck_assert_uint_eq (a->seq, b->seq);
    ck_assert_uint_eq (a->timestamp, b->timestamp);
    ck_assert_uint_eq (s_dbits (a->vbar), s_dbits (b->vbar));
    ck_assert_uint_eq (a->session, b->session);
}

/*  Encodes h and decodes the 32 bytes again.  */
static int
s_reencode (const fasgd_header_t *h, fasgd_header_t *out)
{
    uint8_t buf [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (h, buf);
    return fasgd_proto_header_decode (buf, sizeof buf, out);
}

/*  --------------------------------------------------------------------
    Headers  */

START_TEST (test_header_round_trip_every_type)
{
    const double vbars [] = { 0.0, -0.0, 1.5, 4.9406564584124654e-324, DBL_MAX, -DBL_MAX, 1e-300 };
    /*  A request's bytes 24-31 are its session: any 64 bits, NaN's too.  */
    const uint64_t sessions [] = { 0, 1, UINT64_MAX, UINT64_C (0x7FF8000000000000),
                                   UINT64_C (0xFFF0000000000000), UINT64_C (0x8000000000000000), 42 };
    for (size_t i = 0; i < S_NTYPES; i++) {
        for (size_t v = 0; v < sizeof vbars / sizeof vbars [0]; v++) {
            fasgd_header_t h = s_valid_header (s_types [i]), back;
            if (s_is_request (s_types [i]))
                h.session = sessions [v];
            else
                h.vbar = vbars [v];
            ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_OK);
            s_assert_header_eq (&h, &back);
        }
        /*  Extreme field values survive too.  */
        fasgd_header_t h = s_valid_header (s_types [i]), back;
        h.client_id = UINT32_MAX;
        h.seq = UINT32_MAX;
        h.timestamp = UINT64_MAX;
        ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_OK);
        s_assert_header_eq (&h, &back);
        h.client_id = 0;
        h.seq = 0;
        h.timestamp = 0;
        ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_OK);
        s_assert_header_eq (&h, &back);
    }
    /*  Every reply type with every known code, FETCH with and without its
        flag.  */
    for (size_t i = 0; i < S_NTYPES; i++) {
        if (s_is_request (s_types [i]))
            continue;
        for (size_t s = 0; s < S_NSTATUSES; s++) {
            fasgd_header_t h = s_valid_header (s_types [i]), back;
            h.status = (uint16_t) s_statuses [s];
            ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_OK);
            s_assert_header_eq (&h, &back);
        }
    }
    fasgd_header_t h = s_valid_header (FASGD_MSG_FETCH), back;
    h.flags = 0;
    ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_OK);
    s_assert_header_eq (&h, &back);
}
END_TEST

START_TEST (test_header_bytes_exact)
{
    /*  A PARAMS reply with status 304: every multi-byte field has distinct
        bytes, so a swapped or misplaced byte shows.  */
    fasgd_header_t h;
    memset (&h, 0, sizeof h);
    h.version = FASGD_PROTO_VERSION;
    h.type = FASGD_MSG_PARAMS;
    h.status = FASGD_STATUS_NOT_MODIFIED;           /* 0x0130 */
    h.client_id = 0x01020304u;
    h.seq = 0xA0B0C0D0u;
    h.timestamp = UINT64_C (0x1122334455667788);
    h.vbar = 1.5;                                   /* 0x3FF8000000000000 */
    const uint8_t expect [FASGD_PROTO_HEADER_SIZE] = {
        0x5D, 0xFA, 0x03, 0x07, 0x30, 0x01, 0x00, 0x00,
        0x04, 0x03, 0x02, 0x01, 0xD0, 0xC0, 0xB0, 0xA0,
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F
    };
    uint8_t out [FASGD_PROTO_HEADER_SIZE];
    memset (out, 0xEE, sizeof out);
    fasgd_proto_header_encode (&h, out);
    ck_assert_mem_eq (out, expect, sizeof expect);
    fasgd_header_t back;
    ck_assert_int_eq (fasgd_proto_header_decode (expect, sizeof expect, &back), FASGD_PROTO_OK);
    s_assert_header_eq (&h, &back);

    /*  A FETCH request with its flag: flags at offset 6, its session at
        offset 24.  */
    memset (&h, 0, sizeof h);
    h.version = FASGD_PROTO_VERSION;
    h.type = FASGD_MSG_FETCH;
    h.flags = FASGD_PROTO_FLAG_IF_NEWER;
    h.client_id = 7;
    h.seq = 0x100;
    h.timestamp = 0x1234;
    h.session = UINT64_C (0xF1E2D3C4B5A69788);
    const uint8_t expect2 [FASGD_PROTO_HEADER_SIZE] = {
        0x5D, 0xFA, 0x03, 0x06, 0x00, 0x00, 0x01, 0x00,
        0x07, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
        0x34, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x88, 0x97, 0xA6, 0xB5, 0xC4, 0xD3, 0xE2, 0xF1
    };
    fasgd_proto_header_encode (&h, out);
    ck_assert_mem_eq (out, expect2, sizeof expect2);
    ck_assert_int_eq (fasgd_proto_header_decode (expect2, sizeof expect2, &back), FASGD_PROTO_OK);
    s_assert_header_eq (&h, &back);
}
END_TEST

START_TEST (test_header_unaligned)
{
    /*  A frame at an odd address decodes like any other (UBSan's alignment
        check would flag a cast).  */
    uint8_t store [FASGD_PROTO_HEADER_SIZE + 1];
    fasgd_header_t h = s_valid_header (FASGD_MSG_ACK), back;
    fasgd_proto_header_encode (&h, store + 1);
    ck_assert_int_eq (fasgd_proto_header_decode (store + 1, FASGD_PROTO_HEADER_SIZE, &back),
                      FASGD_PROTO_OK);
    s_assert_header_eq (&h, &back);
}
END_TEST

START_TEST (test_header_wrong_sizes)
{
    uint8_t buf [64];
    memset (buf, 0, sizeof buf);
    fasgd_header_t h = s_valid_header (FASGD_MSG_HEARTBEAT), back;
    fasgd_proto_header_encode (&h, buf);
    ck_assert_int_eq (fasgd_proto_header_decode (buf, FASGD_PROTO_HEADER_SIZE, &back), FASGD_PROTO_OK);
    const size_t sizes [] = { 0, 1, 2, 4, 16, 31, 33, 40, 64 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes [0]; i++) {
        memset (&back, 0x5A, sizeof back);
        ck_assert_int_eq (fasgd_proto_header_decode (buf, sizes [i], &back), FASGD_PROTO_MALFORMED);
        /*  Nothing from a frame of the wrong size is reported.  */
        ck_assert_uint_eq (back.seq, 0);
        ck_assert_uint_eq (back.type, 0);
    }
    ck_assert_int_eq (fasgd_proto_header_decode (NULL, 0, &back), FASGD_PROTO_MALFORMED);
}
END_TEST

START_TEST (test_header_bad_magic)
{
    const uint16_t magics [] = { 0x5DFA, 0x0000, 0xFFFF, 0xFA5C, 0xFB5D, 0x5D5D };
    for (size_t i = 0; i < sizeof magics / sizeof magics [0]; i++) {
        uint8_t buf [FASGD_PROTO_HEADER_SIZE];
        fasgd_header_t h = s_valid_header (FASGD_MSG_PUSH), back;
        fasgd_proto_header_encode (&h, buf);
        buf [0] = (uint8_t) magics [i];
        buf [1] = (uint8_t) (magics [i] >> 8);
        ck_assert_int_eq (fasgd_proto_header_decode (buf, sizeof buf, &back), FASGD_PROTO_MALFORMED);
    }
}
END_TEST

START_TEST (test_header_version_mismatch)
{
    const uint8_t versions [] = { 0, 1, 2, 4, 255 };
    for (size_t i = 0; i < sizeof versions / sizeof versions [0]; i++) {
        fasgd_header_t h = s_valid_header (FASGD_MSG_PUSH), back;
        h.version = versions [i];
        h.client_id = 42;
        h.seq = 0x12345678u;
        ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_VERSION_MISMATCH);
        /*  What the server needs for its 426 reply is there.  */
        ck_assert_uint_eq (back.version, versions [i]);
        ck_assert_uint_eq (back.type, FASGD_MSG_PUSH);
        ck_assert_uint_eq (back.client_id, 42);
        ck_assert_uint_eq (back.seq, 0x12345678u);
        ck_assert_uint_eq (back.timestamp, h.timestamp);
    }
    /*  Another version is not judged by this one's rules: an unknown
        type, flags, status and a NaN still give a mismatch.  */
    fasgd_header_t h = s_valid_header (FASGD_MSG_ACK), back;
    h.version = 2;
    h.type = 200;
    h.flags = 0xFFFF;
    h.status = 7;
    h.seq = 99;
    h.client_id = 5;
    h.vbar = NAN;
    ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_VERSION_MISMATCH);
    ck_assert_uint_eq (back.type, 200);
    ck_assert_uint_eq (back.seq, 99);
    ck_assert_uint_eq (back.client_id, 5);
    ck_assert_uint_eq (back.flags, 0xFFFF);
    ck_assert_uint_eq (back.status, 7);
}
END_TEST

START_TEST (test_header_unknown_type)
{
    const int bad [] = { 0, 11, 12, 13, 14, 16, 100, 255 };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        fasgd_header_t h = s_valid_header (FASGD_MSG_HEARTBEAT), back;
        h.type = (uint8_t) bad [i];
        h.seq = 31337;
        ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_MALFORMED);
        /*  Past the magic the fields are filled, so a 400 can echo seq.  */
        ck_assert_uint_eq (back.seq, 31337);
        ck_assert_uint_eq (back.type, (unsigned) bad [i]);
    }
}
END_TEST

START_TEST (test_header_flags)
{
    fasgd_header_t back;
    /*  FETCH: bit 0 only.  */
    const uint16_t bad_fetch [] = { 0x0002, 0x0003, 0x0100, 0x8000, 0x8001, 0xFFFF, 0xFFFE };
    for (size_t i = 0; i < sizeof bad_fetch / sizeof bad_fetch [0]; i++) {
        fasgd_header_t h = s_valid_header (FASGD_MSG_FETCH);
        h.flags = bad_fetch [i];
        ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_MALFORMED);
    }
    /*  PUSH and PUSH_REPEAT: bit 1 only, and it survives the round trip.  */
    const int pushes [] = { FASGD_MSG_PUSH, FASGD_MSG_PUSH_REPEAT };
    const uint16_t bad_push [] = { 0x0001, 0x0003, 0x0004, 0x8002, 0xFFFF };
    for (size_t t = 0; t < 2; t++) {
        fasgd_header_t h = s_valid_header (pushes [t]);
        h.flags = FASGD_PROTO_FLAG_THEN_FETCH;
        ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_OK);
        ck_assert_uint_eq (back.flags, FASGD_PROTO_FLAG_THEN_FETCH);
        for (size_t i = 0; i < sizeof bad_push / sizeof bad_push [0]; i++) {
            h.flags = bad_push [i];
            ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_MALFORMED);
        }
    }
    /*  Every other type: no flags at all, neither of the two bits.  */
    const uint16_t bad_other [] = { FASGD_PROTO_FLAG_IF_NEWER, FASGD_PROTO_FLAG_THEN_FETCH, 0x0004,
                                    0x8000, 0xFFFF };
    for (size_t t = 0; t < S_NTYPES; t++) {
        if (s_types [t] == FASGD_MSG_FETCH || s_types [t] == FASGD_MSG_PUSH
            || s_types [t] == FASGD_MSG_PUSH_REPEAT)
            continue;
        for (size_t i = 0; i < sizeof bad_other / sizeof bad_other [0]; i++) {
            fasgd_header_t h = s_valid_header (s_types [t]);
            h.flags = bad_other [i];
            ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_MALFORMED);
        }
    }
}
END_TEST

START_TEST (test_header_status)
{
    fasgd_header_t back;
    /*  Requests carry status 0, nothing else (not even a valid code).  */
    const uint16_t in_request [] = { 1, 200, 304, 400, 0x8000, 0xFFFF };
    for (size_t t = 0; t < S_NTYPES; t++) {
        if (!s_is_request (s_types [t]))
            continue;
        for (size_t i = 0; i < sizeof in_request / sizeof in_request [0]; i++) {
            fasgd_header_t h = s_valid_header (s_types [t]);
            h.status = in_request [i];
            ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_MALFORMED);
        }
    }
    /*  Replies carry one of the table's codes.  */
    const uint16_t in_reply [] = { 0, 1, 100, 201, 203, 299, 305, 402, 404, 500, 999, 0xFFFF };
    for (size_t t = 0; t < S_NTYPES; t++) {
        if (s_is_request (s_types [t]))
            continue;
        for (size_t i = 0; i < sizeof in_reply / sizeof in_reply [0]; i++) {
            fasgd_header_t h = s_valid_header (s_types [t]);
            h.status = in_reply [i];
            ck_assert_int_eq (s_reencode (&h, &back), FASGD_PROTO_MALFORMED);
        }
    }
}
END_TEST

START_TEST (test_header_nonfinite_vbar)
{
    const uint64_t bad [] = {
        UINT64_C (0x7FF8000000000000),      /* quiet NaN */
        UINT64_C (0xFFF8000000000000),      /* negative quiet NaN */
        UINT64_C (0x7FF0000000000001),      /* signalling NaN */
        UINT64_C (0x7FFFFFFFFFFFFFFF),
        UINT64_C (0x7FF0000000000000),      /* +Inf */
        UINT64_C (0xFFF0000000000000),      /* -Inf */
    };
    const int types [] = { FASGD_MSG_ACK, FASGD_MSG_PARAMS, FASGD_MSG_WELCOME, FASGD_MSG_ERROR };
    for (size_t t = 0; t < sizeof types / sizeof types [0]; t++)
        for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
            uint8_t buf [FASGD_PROTO_HEADER_SIZE];
            fasgd_header_t h = s_valid_header (types [t]), back;
            fasgd_proto_header_encode (&h, buf);
            s_put64le (buf + 24, bad [i]);
            ck_assert_int_eq (fasgd_proto_header_decode (buf, sizeof buf, &back), FASGD_PROTO_MALFORMED);
        }
    /*  The largest finite value and the smallest subnormal are fine.  */
    const uint64_t good [] = { UINT64_C (0x7FEFFFFFFFFFFFFF), UINT64_C (0x0000000000000001),
                               UINT64_C (0x8000000000000000) };
    for (size_t i = 0; i < sizeof good / sizeof good [0]; i++) {
        uint8_t buf [FASGD_PROTO_HEADER_SIZE];
        fasgd_header_t h = s_valid_header (FASGD_MSG_ACK), back;
        fasgd_proto_header_encode (&h, buf);
        s_put64le (buf + 24, good [i]);
        ck_assert_int_eq (fasgd_proto_header_decode (buf, sizeof buf, &back), FASGD_PROTO_OK);
        ck_assert_uint_eq (s_dbits (back.vbar), good [i]);
    }
}
END_TEST

START_TEST (test_names)
{
    const char *names [] = { "JOIN", "WELCOME", "PUSH", "PUSH_REPEAT", "ACK", "FETCH",
                             "PARAMS", "HEARTBEAT", "LEAVE", "EVAL", "ERROR" };
    for (size_t i = 0; i < S_NTYPES; i++)
        ck_assert_str_eq (fasgd_proto_type_name (s_types [i]), names [i]);
    ck_assert_str_eq (fasgd_proto_type_name (0), "?");
    ck_assert_str_eq (fasgd_proto_type_name (11), "?");
    ck_assert_str_eq (fasgd_proto_type_name (-1), "?");
    ck_assert_str_eq (fasgd_proto_type_name (255), "?");
    for (size_t i = 0; i < S_NSTATUSES; i++) {
        const char *text = fasgd_proto_status_text (s_statuses [i]);
        ck_assert_str_ne (text, "?");
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne (text, fasgd_proto_status_text (s_statuses [j]));
    }
    ck_assert_str_eq (fasgd_proto_status_text (FASGD_STATUS_MALFORMED), "malformed");
    ck_assert_str_eq (fasgd_proto_status_text (0), "?");
    ck_assert_str_eq (fasgd_proto_status_text (999), "?");
}
END_TEST

/*  --------------------------------------------------------------------
    Body lengths  */

static int
s_body (int type, int status, size_t len, size_t nparams)
{
    fasgd_header_t h = s_valid_header (type);
    h.status = (uint16_t) status;
    return fasgd_proto_body_check (&h, len, nparams);
}

START_TEST (test_body_vectors)
{
    const int ok = FASGD_PROTO_OK, bad = FASGD_PROTO_MALFORMED;
    const size_t D = 79510;
    /*  PUSH: exactly 4·D.  */
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, 4 * D, D), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, 4 * D - 1, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, 4 * D + 1, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, 4 * D - 4, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, 0, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, 4, 1), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, 0, 0), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, 1, 0), bad);
    /*  PARAMS: exactly 4·D, or nothing with 304 (and then nothing only).  */
    ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 200, 4 * D, D), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 200, 4 * D - 1, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 200, 4 * D + 1, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 200, 0, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 304, 0, D), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 304, 4 * D, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 304, 1, D), bad);
    /*  JOIN and ERROR: 0..255.  */
    const int texts [] = { FASGD_MSG_JOIN, FASGD_MSG_ERROR };
    for (size_t i = 0; i < 2; i++) {
        int st = texts [i] == FASGD_MSG_ERROR ? 400 : 0;
        ck_assert_int_eq (s_body (texts [i], st, 0, D), ok);
        ck_assert_int_eq (s_body (texts [i], st, 1, D), ok);
        ck_assert_int_eq (s_body (texts [i], st, 255, D), ok);
        ck_assert_int_eq (s_body (texts [i], st, 256, D), bad);
        ck_assert_int_eq (s_body (texts [i], st, 4 * D, D), bad);
    }
    /*  WELCOME: 1..65536.  */
    ck_assert_int_eq (s_body (FASGD_MSG_WELCOME, 200, 0, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_WELCOME, 200, 1, D), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_WELCOME, 200, FASGD_PROTO_DESC_MAX, D), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_WELCOME, 200, FASGD_PROTO_DESC_MAX + 1, D), bad);
    /*  EVAL: 1..255.  */
    ck_assert_int_eq (s_body (FASGD_MSG_EVAL, 0, 0, D), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_EVAL, 0, 1, D), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_EVAL, 0, 255, D), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_EVAL, 0, 256, D), bad);
    /*  The rest: no body at all.  */
    const int empty [] = { FASGD_MSG_PUSH_REPEAT, FASGD_MSG_ACK, FASGD_MSG_FETCH,
                           FASGD_MSG_HEARTBEAT, FASGD_MSG_LEAVE };
    for (size_t i = 0; i < sizeof empty / sizeof empty [0]; i++) {
        int st = s_is_request (empty [i]) ? 0 : 200;
        ck_assert_int_eq (s_body (empty [i], st, 0, D), ok);
        ck_assert_int_eq (s_body (empty [i], st, 1, D), bad);
        ck_assert_int_eq (s_body (empty [i], st, 4 * D, D), bad);
    }
    /*  An unknown type has no acceptable body, not even an empty one.  */
    ck_assert_int_eq (s_body (11, 0, 0, D), bad);
    ck_assert_int_eq (s_body (0, 0, 0, D), bad);
    ck_assert_int_eq (s_body (255, 0, 4 * D, D), bad);
}
END_TEST

START_TEST (test_body_overflow)
{
    const int ok = FASGD_PROTO_OK, bad = FASGD_PROTO_MALFORMED;
    /*  The largest D whose 4·D fits in size_t, and the smallest that does
        not: there 4·D wraps (to 0 for SIZE_MAX / 4 + 1), so an empty or a
        short body must not pass.  */
    const size_t dmax = SIZE_MAX / 4;
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, dmax * 4, dmax), ok);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, dmax * 4 - 1, dmax), bad);
    ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, dmax * 4 + 1, dmax), bad);
    const size_t over [] = { dmax + 1, dmax + 2, SIZE_MAX / 2, SIZE_MAX };
    for (size_t i = 0; i < sizeof over / sizeof over [0]; i++) {
        size_t wrapped = over [i] * 4;  /* what an unchecked product gives */
        const size_t lens [] = { 0, 4, wrapped, wrapped + 1, SIZE_MAX, SIZE_MAX - 3 };
        for (size_t j = 0; j < sizeof lens / sizeof lens [0]; j++) {
            ck_assert_int_eq (s_body (FASGD_MSG_PUSH, 0, lens [j], over [i]), bad);
            ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 200, lens [j], over [i]), bad);
        }
        /*  304 has no body whatever D is.  */
        ck_assert_int_eq (s_body (FASGD_MSG_PARAMS, 304, 0, over [i]), ok);
    }
}
END_TEST

/*  --------------------------------------------------------------------
    float32 bodies  */

static float
s_f32 (uint32_t bits)
{
    float f;
    memcpy (&f, &bits, sizeof f);
    return f;
}

START_TEST (test_floats_round_trip)
{
    const uint32_t bits [] = {
        0x00000000, 0x80000000, 0x3F800000 /* 1 */, 0xC0200000 /* -2.5 */,
        0x00800000 /* FLT_MIN */, 0x00000001 /* smallest subnormal */,
        0x807FFFFF /* negative subnormal */, 0x7F7FFFFF /* FLT_MAX */,
        0x7FC00000 /* NaN */, 0x7F800001 /* signalling NaN */, 0xFF800000 /* -Inf */,
        0x12345678
    };
    enum { N = sizeof bits / sizeof bits [0] };
    float src [N], back [N + 1];
    for (size_t i = 0; i < N; i++)
        src [i] = s_f32 (bits [i]);
    /*  At an odd offset, as in a frame with no alignment guarantee.  */
    uint8_t wire [4 * N + 1];
    fasgd_proto_floats_encode (src, N, wire + 1);
    for (size_t i = 0; i < N; i++)
        ck_assert_uint_eq (s_get_le (wire + 1 + 4 * i, 4), bits [i]);
    const uint8_t one_le [4] = { 0x00, 0x00, 0x80, 0x3F };
    ck_assert_mem_eq (wire + 1 + 8, one_le, 4);
    fasgd_proto_floats_decode (wire + 1, N, back + 1);
    ck_assert_mem_eq (back + 1, src, sizeof src);
    /*  Nothing happens for n = 0, even with no buffers.  */
    fasgd_proto_floats_encode (NULL, 0, NULL);
    fasgd_proto_floats_decode (NULL, 0, NULL);
    /*  In place: the same buffer as source and destination.  */
    float inplace [N];
    memcpy (inplace, src, sizeof inplace);
    fasgd_proto_floats_encode (inplace, N, inplace);
    fasgd_proto_floats_decode (inplace, N, inplace);
    ck_assert_mem_eq (inplace, src, sizeof src);
}
END_TEST

START_TEST (test_floats_finite)
{
    const uint32_t finite [] = {
        0x00000000, 0x80000000, 0x3F800000, 0x00000001, 0x807FFFFF, 0x007FFFFF,
        0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3EAAAAAB
    };
    const uint32_t nonfinite [] = {
        0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFFFFFFFF,
        0x7F800000, 0xFF800000
    };
    enum { N = sizeof finite / sizeof finite [0] };
    uint8_t wire [4 * N + 3];
    uint8_t *p = wire + 3;              /* misaligned on purpose */
    for (size_t i = 0; i < N; i++)
        s_put32le (p + 4 * i, finite [i]);
    ck_assert_int_eq (fasgd_proto_floats_finite (p, N), 1);
    ck_assert_int_eq (fasgd_proto_floats_finite (p, 0), 1);
    ck_assert_int_eq (fasgd_proto_floats_finite (NULL, 0), 1);
    /*  One bad value at the start, in the middle or at the end.  */
    const size_t where [] = { 0, N / 2, N - 1 };
    for (size_t b = 0; b < sizeof nonfinite / sizeof nonfinite [0]; b++)
        for (size_t w = 0; w < 3; w++) {
            for (size_t i = 0; i < N; i++)
                s_put32le (p + 4 * i, i == where [w] ? nonfinite [b] : finite [i]);
            ck_assert_int_eq (fasgd_proto_floats_finite (p, N), 0);
            /*  A count that stops short of it does not see it.  */
            ck_assert_int_eq (fasgd_proto_floats_finite (p, where [w]), 1);
        }
    /*  The encoder's output for finite floats passes.  */
    float f [3] = { -1e-45f, FLT_MAX, 0.1f };
    uint8_t enc [12];
    fasgd_proto_floats_encode (f, 3, enc);
    ck_assert_int_eq (fasgd_proto_floats_finite (enc, 3), 1);
}
END_TEST

/*  --------------------------------------------------------------------
    Model description  */

static const char s_example [] =
    "protocol=1\n"
    "params=79510\n"
    "tensors=w1:784x100,b1:1x100,w2:100x10,b2:1x10\n"
    "model=mlp\n"
    "model.sizes=784,100,10\n"
    "model.activation=relu\n"
    "rule=fasgd\n"
    "rule.lr=0.005\n"
    "gates.fetch=bfasgd\n"
    "gates.fetch.every=1\n"
    "gates.fetch.c=0.1\n"
    "gates.push=always\n"
    "gates.push.every=1\n"
    "gates.push.c=0\n"
    "gates.push.skip=resend-last\n"
    "gates.eps=0.0001\n"
    "heartbeat_ms=1000\n"
    "expiry_ms=10000\n"
    "session=12297829382473034410\n";

static int
s_decode_str (const char *text, fasgd_proto_desc_t *d, char *err, size_t errlen)
{
    return fasgd_proto_desc_decode (text, strlen (text), d, err, errlen);
}

static void
s_assert_desc_eq (const fasgd_proto_desc_t *a, const fasgd_proto_desc_t *b)
{
    ck_assert_uint_eq (a->protocol, b->protocol);
    ck_assert_uint_eq (a->params, b->params);
    ck_assert_int_eq (a->ntensors, b->ntensors);
    for (int i = 0; i < a->ntensors; i++) {
        ck_assert_str_eq (a->tensors [i].name, b->tensors [i].name);
        ck_assert_uint_eq (a->tensors [i].ndim, b->tensors [i].ndim);
        for (int k = 0; k < FASGD_PROTO_MAX_DIMS; k++)
            ck_assert_uint_eq (a->tensors [i].dims [k], b->tensors [i].dims [k]);
    }
    ck_assert_str_eq (a->model, b->model);
    ck_assert_str_eq (a->model_sizes, b->model_sizes);
    ck_assert_str_eq (a->model_activation, b->model_activation);
    ck_assert_str_eq (a->rule, b->rule);
    ck_assert_str_eq (a->fetch_gate, b->fetch_gate);
    ck_assert_str_eq (a->push_gate, b->push_gate);
    ck_assert_str_eq (a->push_skip, b->push_skip);
    ck_assert_int_eq (a->fetch_every, b->fetch_every);
    ck_assert_int_eq (a->push_every, b->push_every);
    /*  Bit for bit: -0 and subnormals included.  */
    ck_assert_uint_eq (s_dbits (a->lr), s_dbits (b->lr));
    ck_assert_uint_eq (s_dbits (a->fetch_c), s_dbits (b->fetch_c));
    ck_assert_uint_eq (s_dbits (a->push_c), s_dbits (b->push_c));
    ck_assert_uint_eq (s_dbits (a->gate_eps), s_dbits (b->gate_eps));
    ck_assert_uint_eq (a->heartbeat_ms, b->heartbeat_ms);
    ck_assert_uint_eq (a->expiry_ms, b->expiry_ms);
    ck_assert_uint_eq (a->session, b->session);
}

/*  A description at every limit: 64 tensors with 31-character names,
    strings one short of their fields, doubles that %.6g would spoil.  */
static void
s_desc_extreme (fasgd_proto_desc_t *d)
{
    memset (d, 0, sizeof *d);
    d->protocol = UINT32_MAX;
    d->ntensors = FASGD_PROTO_MAX_TENSORS;
    d->params = 0;
    for (int i = 0; i < d->ntensors; i++) {
        fasgd_proto_tensor_t *t = &d->tensors [i];
        memcpy (t->name, "00_abcdefghijklmnopqrstuvwxy.-Z", 32);
        t->name [0] = (char) ('0' + i / 10);
        t->name [1] = (char) ('0' + i % 10);
        ck_assert_uint_eq (strlen (t->name), 31);
        /*  Every rank from 1 to the most, the largest dims in tensor 0.  */
        t->ndim = 1 + (uint32_t) i % FASGD_PROTO_MAX_DIMS;
        for (uint32_t k = 0; k < t->ndim; k++)
            t->dims [k] = i == 0 ? UINT32_MAX : (k == 0 ? (uint32_t) i : 2 + k);
        d->params += fasgd_proto_tensor_size (t);
    }
    memset (d->model, 'm', sizeof d->model - 1);
    memset (d->model_sizes, '7', sizeof d->model_sizes - 1);
    snprintf (d->model_activation, sizeof d->model_activation, "tanh=weird");
    snprintf (d->rule, sizeof d->rule, "ñ utf-8 ok");
    d->lr = 0.1;
    snprintf (d->fetch_gate, sizeof d->fetch_gate, "every");
    snprintf (d->push_gate, sizeof d->push_gate, "%s", "");
    snprintf (d->push_skip, sizeof d->push_skip, "resend-last");
    d->fetch_every = INT_MAX;
    d->push_every = 0;
    d->fetch_c = 1.0 / 3.0;
    d->push_c = -0.0;
    d->gate_eps = 4.9406564584124654e-324;
    d->heartbeat_ms = UINT32_MAX;
    d->expiry_ms = 0;
    d->session = UINT64_MAX;
}

/*  Tensors of any rank from 1 to FASGD_PROTO_MAX_DIMS (a convolution's
    weights are 4-D); a zero dimension, too many dimensions or a product
    past 64 bits are refused, naming the item.  */
START_TEST (test_desc_tensor_ranks)
{
    fasgd_proto_desc_t d;
    char err [256] = "";
    ck_assert_msg (s_decode_str ("protocol=1\nparams=322\ntensors=conv1.w:32x1x3x3,conv1.b:32,x:1x1x1x1x1x1x1x2\n",
                                 &d, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq (d.ntensors, 3);
    ck_assert_uint_eq (d.tensors [0].ndim, 4);
    ck_assert_uint_eq (d.tensors [0].dims [0], 32);
    ck_assert_uint_eq (d.tensors [0].dims [3], 3);
    ck_assert_uint_eq (fasgd_proto_tensor_size (&d.tensors [0]), 288);
    ck_assert_uint_eq (d.tensors [1].ndim, 1);
    ck_assert_uint_eq (d.tensors [2].ndim, 8);
    char buf [4096];
    int n = fasgd_proto_desc_encode (&d, buf, sizeof buf);
    ck_assert_int_gt (n, 0);
    ck_assert_ptr_nonnull (strstr (buf, "tensors=conv1.w:32x1x3x3,conv1.b:32,x:1x1x1x1x1x1x1x2\n"));

    const char *bad [] = {
        "protocol=1\nparams=0\ntensors=a:2x0\n",
        "protocol=1\nparams=1\ntensors=a:1x1x1x1x1x1x1x1x1\n",
        "protocol=1\nparams=1\ntensors=a:\n",
        "protocol=1\nparams=1\ntensors=a:1xx1\n",
        "protocol=1\nparams=1\ntensors=a:1x\n",
        "protocol=1\nparams=1\ntensors=a:4294967295x4294967295x4294967295\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        err [0] = '\0';
        ck_assert_msg (s_decode_str (bad [i], &d, err, sizeof err) != 0, "accepted %s", bad [i]);
        ck_assert_msg (strstr (err, "tensors") != NULL, "%s: %s", bad [i], err);
    }
}
END_TEST

START_TEST (test_desc_example)
{
    fasgd_proto_desc_t d;
    char err [256] = "";
    ck_assert_msg (s_decode_str (s_example, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (d.protocol, 1);
    ck_assert_uint_eq (d.params, 79510);
    ck_assert_int_eq (d.ntensors, 4);
    ck_assert_str_eq (d.tensors [0].name, "w1");
    ck_assert_uint_eq (d.tensors [0].ndim, 2);
    ck_assert_uint_eq (d.tensors [0].dims [0], 784);
    ck_assert_uint_eq (d.tensors [0].dims [1], 100);
    ck_assert_str_eq (d.tensors [3].name, "b2");
    ck_assert_uint_eq (d.tensors [3].dims [0], 1);
    ck_assert_uint_eq (d.tensors [3].dims [1], 10);
    ck_assert_uint_eq (d.tensors [3].dims [2], 0);
    ck_assert_str_eq (d.model, "mlp");
    ck_assert_str_eq (d.model_sizes, "784,100,10");
    ck_assert_str_eq (d.model_activation, "relu");
    ck_assert_str_eq (d.rule, "fasgd");
    ck_assert_double_eq (d.lr, 0.005);
    ck_assert_str_eq (d.fetch_gate, "bfasgd");
    ck_assert_int_eq (d.fetch_every, 1);
    ck_assert_double_eq (d.fetch_c, 0.1);
    ck_assert_str_eq (d.push_gate, "always");
    ck_assert_int_eq (d.push_every, 1);
    ck_assert_double_eq (d.push_c, 0.0);
    ck_assert_str_eq (d.push_skip, "resend-last");
    ck_assert_double_eq (d.gate_eps, 0.0001);
    ck_assert_uint_eq (d.heartbeat_ms, 1000);
    ck_assert_uint_eq (d.expiry_ms, 10000);
    ck_assert_uint_eq (d.session, UINT64_C (0xAAAAAAAAAAAAAAAA));

    /*  CRLF line ends, no final newline, blank lines and unknown keys
        (with any value at all) read the same.  */
    char crlf [2048] = "";
    size_t k = 0;
    for (const char *p = s_example; *p; p++) {
        if (*p == '\n')
            crlf [k++] = '\r';
        crlf [k++] = *p;
    }
    crlf [k] = '\0';
    fasgd_proto_desc_t d2;
    ck_assert_msg (s_decode_str (crlf, &d2, err, sizeof err) == 0, "%s", err);
    s_assert_desc_eq (&d, &d2);
    ck_assert_int_eq (fasgd_proto_desc_decode (s_example, strlen (s_example) - 1, &d2, err, sizeof err), 0);
    s_assert_desc_eq (&d, &d2);
    char extra [4096];
    snprintf (extra, sizeof extra,
              "\nfuture.key=\x01\x7f weird = stuff\n\r\n%s\nrule.momentum=0.9\nx=\n\n", s_example);
    ck_assert_msg (s_decode_str (extra, &d2, err, sizeof err) == 0, "%s", err);
    s_assert_desc_eq (&d, &d2);

    /*  Only the three required keys: the rest is zero or empty.  */
    fasgd_proto_desc_t m;
    ck_assert_int_eq (s_decode_str ("tensors=x:2x3\nparams=6\nprotocol=1", &m, err, sizeof err), 0);
    ck_assert_uint_eq (m.params, 6);
    ck_assert_int_eq (m.ntensors, 1);
    ck_assert_str_eq (m.model, "");
    ck_assert_int_eq (m.fetch_every, 0);
    ck_assert_double_eq (m.lr, 0.0);
}
END_TEST

START_TEST (test_desc_last_key_wins)
{
    fasgd_proto_desc_t d;
    char err [256] = "";
    const char *text =
        "protocol=1\nparams=999\nmodel=external\nrule.lr=1\n"
        "tensors=a:1x1,b:1x1,c:1x1,d:1x1\n"
        "tensors=w:2x3\nparams=6\nmodel=mlp\nrule.lr=0.25\n";
    ck_assert_msg (s_decode_str (text, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (d.params, 6);
    ck_assert_int_eq (d.ntensors, 1);
    ck_assert_str_eq (d.tensors [0].name, "w");
    /*  The longer list it replaced leaves nothing behind.  */
    ck_assert_str_eq (d.tensors [1].name, "");
    ck_assert_uint_eq (d.tensors [1].ndim, 0);
    ck_assert_uint_eq (d.tensors [1].dims [0], 0);
    ck_assert_str_eq (d.model, "mlp");
    ck_assert_uint_eq ((unsigned char) d.model [4], 0);
    ck_assert_double_eq (d.lr, 0.25);
    /*  A value may hold '=': the key ends at the first one.  */
    ck_assert_int_eq (s_decode_str ("protocol=1\nparams=1\ntensors=a:1x1\nrule=a=b\n", &d, err, sizeof err), 0);
    ck_assert_str_eq (d.rule, "a=b");
}
END_TEST

START_TEST (test_desc_limits_accepted)
{
    fasgd_proto_desc_t d;
    char err [256] = "";
    /*  The largest single tensor: (2^32-1)^2 parameters.  */
    ck_assert_msg (s_decode_str ("protocol=4294967295\nparams=18446744065119617025\n"
                                 "tensors=big:4294967295x4294967295\n"
                                 "gates.fetch.every=2147483647\nheartbeat_ms=4294967295\n"
                                 "rule.lr=4.9406564584124654e-324\ngates.eps=-0\n"
                                 "gates.fetch.c=1e-400\ngates.push.c=+1.5E+3\n"
                                 "model=123456789012345\nexpiry_ms=007\n",
                                 &d, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (d.protocol, UINT32_MAX);
    ck_assert_uint_eq (d.params, UINT64_C (18446744065119617025));
    ck_assert_int_eq (d.fetch_every, INT_MAX);
    ck_assert_uint_eq (d.heartbeat_ms, UINT32_MAX);
    ck_assert_uint_eq (s_dbits (d.lr), 1);
    ck_assert_uint_eq (s_dbits (d.gate_eps), UINT64_C (0x8000000000000000));
    ck_assert_double_eq (d.fetch_c, 0.0);        /* underflows to zero */
    ck_assert_double_eq (d.push_c, 1500.0);
    ck_assert_str_eq (d.model, "123456789012345");
    ck_assert_uint_eq (d.expiry_ms, 7);

    /*  64 tensors of 1x1.  */
    char text [4096];
    int n = snprintf (text, sizeof text, "protocol=1\nparams=64\ntensors=");
    for (int i = 0; i < 64; i++)
        n += snprintf (text + n, sizeof text - (size_t) n, "%st%d:1x1", i ? "," : "", i);
    ck_assert_msg (s_decode_str (text, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq (d.ntensors, 64);
    ck_assert_str_eq (d.tensors [63].name, "t63");

    /*  Exactly FASGD_PROTO_DESC_MAX bytes (padded with blank lines) is
        fine; one more is not.  */
    char *big = malloc (FASGD_PROTO_DESC_MAX + 1);
    ck_assert_ptr_nonnull (big);
    memset (big, '\n', FASGD_PROTO_DESC_MAX + 1);
    memcpy (big, s_example, strlen (s_example));
    ck_assert_int_eq (fasgd_proto_desc_decode (big, FASGD_PROTO_DESC_MAX, &d, err, sizeof err), 0);
    ck_assert_int_eq (fasgd_proto_desc_decode (big, FASGD_PROTO_DESC_MAX + 1, &d, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "limit"));
    free (big);
}
END_TEST

START_TEST (test_desc_round_trip)
{
    fasgd_proto_desc_t d, back;
    char err [256] = "";
    char buf [8192];
    s_desc_extreme (&d);
    int n = fasgd_proto_desc_encode (&d, buf, sizeof buf);
    ck_assert_int_gt (n, 0);
    ck_assert_uint_eq (strlen (buf), (size_t) n);
    ck_assert_msg (fasgd_proto_desc_decode (buf, (size_t) n, &back, err, sizeof err) == 0, "%s", err);
    s_assert_desc_eq (&d, &back);
    /*  Encoding what was read gives the same text again.  */
    char buf2 [8192];
    ck_assert_int_eq (fasgd_proto_desc_encode (&back, buf2, sizeof buf2), n);
    ck_assert_mem_eq (buf, buf2, (size_t) n);

    /*  The example reads back identically, key order and all.  */
    ck_assert_int_eq (s_decode_str (s_example, &d, err, sizeof err), 0);
    n = fasgd_proto_desc_encode (&d, buf, sizeof buf);
    ck_assert_int_gt (n, 0);
    ck_assert_int_eq (fasgd_proto_desc_decode (buf, (size_t) n, &back, err, sizeof err), 0);
    s_assert_desc_eq (&d, &back);
    ck_assert_ptr_nonnull (strstr (buf, "protocol=1\nparams=79510\ntensors=w1:784x100,b1:1x100,w2:100x10,b2:1x10\n"));
    ck_assert_ptr_nonnull (strstr (buf, "\nrule.lr=0.0050000000000000001\n"));

    /*  Doubles that need all 17 digits.  */
    const double awkward [] = { 0.1, 1.0 / 3.0, 2.0 / 3.0, 1e-300, 1e300, DBL_MAX, -DBL_MAX,
                                DBL_MIN, DBL_TRUE_MIN, 0.30000000000000004, 5e-324, 123456789.123456789 };
    for (size_t i = 0; i < sizeof awkward / sizeof awkward [0]; i++) {
        ck_assert_int_eq (s_decode_str (s_example, &d, err, sizeof err), 0);
        d.lr = awkward [i];
        d.gate_eps = -awkward [i];
        n = fasgd_proto_desc_encode (&d, buf, sizeof buf);
        ck_assert_int_gt (n, 0);
        ck_assert_int_eq (fasgd_proto_desc_decode (buf, (size_t) n, &back, err, sizeof err), 0);
        s_assert_desc_eq (&d, &back);
    }
}
END_TEST

/*  Shards (protocol 3): an unsharded description reads as shard 0 of 1
    holding all of θ; a shard's four keys read and write back; a part
    that is not one is refused.  */
START_TEST (test_desc_shards)
{
    fasgd_proto_desc_t d, back;
    char err [256] = "";
    ck_assert_int_eq (s_decode_str (s_example, &d, err, sizeof err), 0);
    ck_assert_uint_eq (d.shard, 0);
    ck_assert_uint_eq (d.shards, 1);
    ck_assert_uint_eq (d.offset, 0);
    ck_assert_uint_eq (d.length, 79510);
    char buf [8192];
    int n = fasgd_proto_desc_encode (&d, buf, sizeof buf);
    ck_assert_int_gt (n, 0);
    ck_assert_ptr_null (strstr (buf, "shard"));

    char text [4096];
    snprintf (text, sizeof text, "%sshard=1\nshards=2\noffset=39755\nlength=39755\n", s_example);
    ck_assert_msg (s_decode_str (text, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq (d.shard, 1);
    ck_assert_uint_eq (d.shards, 2);
    ck_assert_uint_eq (d.offset, 39755);
    ck_assert_uint_eq (d.length, 39755);
    n = fasgd_proto_desc_encode (&d, buf, sizeof buf);
    ck_assert_int_gt (n, 0);
    ck_assert_ptr_nonnull (strstr (buf, "\nshard=1\nshards=2\noffset=39755\nlength=39755\n"));
    ck_assert_int_eq (fasgd_proto_desc_decode (buf, (size_t) n, &back, err, sizeof err), 0);
    ck_assert_mem_eq (&d, &back, sizeof d);

    const struct { const char *keys, *why; } bad [] = {
        { "shard=1\nshards=2\n", "no offset= line" },
        { "shards=2\noffset=0\nlength=10\n", "no shard= line" },
        { "shard=2\nshards=2\noffset=0\nlength=10\n", "does not exist" },
        { "shard=0\nshards=0\noffset=0\nlength=10\n", "does not exist" },
        { "shard=0\nshards=2\noffset=0\nlength=0\n", "is not a part" },
        { "shard=1\nshards=2\noffset=79000\nlength=511\n", "is not a part" },
        { "shard=1\nshards=2\noffset=79511\nlength=1\n", "is not a part" },
        { "shard=1\nshards=2\noffset=18446744073709551615\nlength=2\n", "is not a part" },
        { "shard=0\nshards=1\noffset=0\nlength=100\n", "must hold all" },
        { "shard=0\nshards=79511\noffset=0\nlength=1\n", "more than the" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        snprintf (text, sizeof text, "%s%s", s_example, bad [i].keys);
        fasgd_proto_desc_t keep;
        memset (&keep, 0x5a, sizeof keep);
        d = keep;
        ck_assert_int_eq (s_decode_str (text, &d, err, sizeof err), -1);
        ck_assert_msg (strstr (err, bad [i].why), "%s: %s", bad [i].keys, err);
        ck_assert_mem_eq (&d, &keep, sizeof d);
    }
    /*  The encoder writes no description the decoder would refuse.  */
    ck_assert_int_eq (s_decode_str (s_example, &d, err, sizeof err), 0);
    d.shards = 2;
    d.shard = 0;
    d.offset = 79000;
    d.length = 600;
    ck_assert_int_eq (fasgd_proto_desc_encode (&d, buf, sizeof buf), -1);
    d.length = 510;
    ck_assert_int_gt (fasgd_proto_desc_encode (&d, buf, sizeof buf), 0);
}
END_TEST

START_TEST (test_desc_encode_small_buffer)
{
    fasgd_proto_desc_t d;
    s_desc_extreme (&d);
    char ref [8192];
    int n = fasgd_proto_desc_encode (&d, ref, sizeof ref);
    ck_assert_int_gt (n, 0);
    /*  Every buffer too small for the text and its NUL is refused, and
        written only within its length (ASan sees each exact allocation).  */
    for (size_t len = 0; len <= (size_t) n; len++) {
        char *buf = malloc (len ? len : 1);
        ck_assert_ptr_nonnull (buf);
        ck_assert_int_eq (fasgd_proto_desc_encode (&d, buf, len), -1);
        free (buf);
    }
    char *buf = malloc ((size_t) n + 1);
    ck_assert_ptr_nonnull (buf);
    ck_assert_int_eq (fasgd_proto_desc_encode (&d, buf, (size_t) n + 1), n);
    ck_assert_mem_eq (buf, ref, (size_t) n + 1);
    free (buf);
    ck_assert_int_eq (fasgd_proto_desc_encode (&d, NULL, 100), -1);
}
END_TEST

START_TEST (test_desc_encode_refuses_unreadable)
{
    /*  What the decoder would refuse, the encoder does not write.  */
    char buf [8192];
    fasgd_proto_desc_t d;
    char err [128];
    ck_assert_int_eq (s_decode_str (s_example, &d, err, sizeof err), 0);
    ck_assert_int_gt (fasgd_proto_desc_encode (&d, buf, sizeof buf), 0);

    for (int c = 0; c < 18; c++) {
        ck_assert_int_eq (s_decode_str (s_example, &d, err, sizeof err), 0);
        switch (c) {
            case 0: d.ntensors = 0; d.params = 0; break;
            case 1: d.ntensors = -1; break;
            case 2: d.ntensors = FASGD_PROTO_MAX_TENSORS + 1; break;
            case 3: d.tensors [1].name [0] = '\0'; break;
            case 4: snprintf (d.tensors [1].name, sizeof d.tensors [1].name, "b 1"); break;
            case 5: memset (d.tensors [1].name, 'n', sizeof d.tensors [1].name); break;
            case 6: d.tensors [2].dims [0] = 0; break;
            case 7: snprintf (d.tensors [2].name, sizeof d.tensors [2].name, "w1"); break;
            case 8: d.params++; break;
            case 9: d.tensors [0].dims [0] = d.tensors [0].dims [1] = UINT32_MAX;
                    d.tensors [1].dims [0] = d.tensors [1].dims [1] = UINT32_MAX; break;
            case 10: memset (d.model, 'm', sizeof d.model); break;
            case 11: snprintf (d.rule, sizeof d.rule, "two\nlines"); break;
            case 12: snprintf (d.push_skip, sizeof d.push_skip, "cr\r"); break;
            case 13: d.lr = NAN; break;
            case 14: d.fetch_c = INFINITY; break;
            case 15: d.gate_eps = -INFINITY; break;
            case 16: d.fetch_every = -1; break;
            case 17: d.push_every = INT_MIN; break;
        }
        ck_assert_msg (fasgd_proto_desc_encode (&d, buf, sizeof buf) == -1, "case %d", c);
    }
}
END_TEST

/*  Each text is refused with a reason containing `why`, and the caller's
    struct is left as it was.  */
typedef struct {
    const char *text;
    size_t len;             /* 0: strlen (text) */
    const char *why;
} s_bad_desc_t;

#define S_BASE "protocol=1\nparams=6\ntensors=a:2x3\n"

static const s_bad_desc_t s_bad_descs [] = {
    { "protocol=1\nparams=6\0\ntensors=a:2x3\n", 36, "NUL byte at offset 19" },
    { "\0", 1, "NUL" },
    { S_BASE "\0", sizeof S_BASE, "NUL" },
    { "", 0, "no protocol=" },
    { "params=6\ntensors=a:2x3\n", 0, "no protocol=" },
    { "protocol=1\ntensors=a:2x3\n", 0, "no params=" },
    { "protocol=1\nparams=6\n", 0, "no tensors=" },
    { "protocol=1\nparams=6\ntensor=a:2x3\n", 0, "no tensors=" },
    { "protocol=1\nparams=6\nTensors=a:2x3\n", 0, "no tensors=" },
    { "protocol=1\nparams=6\n tensors=a:2x3\n", 0, "no tensors=" },
    /*  integers  */
    { "protocol=1\nparams=\ntensors=a:2x3\n", 0, "line 2: params must be an integer" },
    { "protocol=1\nparams=-6\ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=1\nparams=+6\ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=1\nparams= 6\ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=1\nparams=6 \ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=1\nparams=0x6\ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=1\nparams=6e0\ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=1\nparams=6.0\ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=1\nparams=18446744073709551616\ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=1\nparams=99999999999999999999999\ntensors=a:2x3\n", 0, "params must be" },
    { "protocol=4294967296\nparams=6\ntensors=a:2x3\n", 0, "line 1: protocol must be" },
    { "protocol=-1\nparams=6\ntensors=a:2x3\n", 0, "protocol must be" },
    { S_BASE "heartbeat_ms=4294967296\n", 0, "line 4: heartbeat_ms must be" },
    { S_BASE "expiry_ms=1s\n", 0, "expiry_ms must be" },
    { S_BASE "session=18446744073709551616\n", 0, "session must be" },
    { S_BASE "session=-1\n", 0, "session must be" },
    { S_BASE "gates.fetch.every=-1\n", 0, "gates.fetch.every must be" },
    { S_BASE "gates.push.every=2147483648\n", 0, "gates.push.every must be" },
    /*  doubles  */
    { S_BASE "rule.lr=\n", 0, "rule.lr must be a finite number" },
    { S_BASE "rule.lr=abc\n", 0, "rule.lr must be a finite number (got \"abc\")" },
    { S_BASE "rule.lr=nan\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=NaN\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=inf\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=-Infinity\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=1e999\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=-1e309\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=0x1p3\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=1.0x\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr= 1\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=1 \n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=1e\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=.\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=-\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=1..2\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=1e5e5\n", 0, "rule.lr must be" },
    { S_BASE "rule.lr=1,5\n", 0, "rule.lr must be" },
    { S_BASE "gates.eps=0.00000000000000000000000000000000000000000000000000000000000001\n", 0,
      "gates.eps must be" },        /* longer than any number %.17g writes */
    /*  strings  */
    { S_BASE "model=abcdefghijklmnop\n", 0, "model is 16 bytes long, the limit is 15" },
    { S_BASE "model.sizes=" "1234567890123456789012345678901234567890123456789012345678901234"
                            "1234567890123456789012345678901234567890123456789012345678901234\n",
      0, "model.sizes is 128 bytes long, the limit is 127" },
    { S_BASE "gates.push.skip=resend-last-gradient\n", 0, "gates.push.skip is" },
    { S_BASE "model=ml\tp\n", 0, "model holds a control character" },
    { S_BASE "model=ml\x7fp\n", 0, "control character" },
    { S_BASE "model=\x1b[31m\n", 0, "control character" },
    { S_BASE "model=m\rlp\n", 0, "control character" },
    { S_BASE "model=mlp\r\r\n", 0, "control character" },
    /*  tensors  */
    { "protocol=1\nparams=0\ntensors=\n", 0, "line 3: tensors: \"\" is not name:SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:2x3,\n", 0, "is not name:SHAPE" },
    { "protocol=1\nparams=6\ntensors=,a:2x3\n", 0, "is not name:SHAPE" },
    { "protocol=1\nparams=6\ntensors=a2x3\n", 0, "is not name:SHAPE" },
    { "protocol=1\nparams=6\ntensors=:2x3\n", 0, "name \"\" must be 1..31" },
    { "protocol=1\nparams=6\ntensors=a b:2x3\n", 0, "name \"a b\" must be" },
    { "protocol=1\nparams=6\ntensors=w\xc3\xa9:2x3\n", 0, "name \"w??\" must be" },
    { "protocol=1\nparams=6\ntensors=a/b:2x3\n", 0, "must be 1..31 of [A-Za-z0-9_.-]" },
    { "protocol=1\nparams=6\ntensors=abcdefghijklmnopqrstuvwxyz012345:2x3\n", 0, "must be 1..31" },
    { "protocol=1\nparams=6\ntensors=a:2*3\n", 0, "\"2*3\" must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:2X3\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:x3\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:2x\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=0\ntensors=a:0x6\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=0\ntensors=a:6x0\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:2x3x1x1x1x1x1x1x1\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:-2x3\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:+2x3\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:2x3:4\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:2 x3\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=4294967296\ntensors=a:4294967296x1\n", 0, "must be a SHAPE" },
    { "protocol=1\nparams=6\ntensors=a:1x3,a:1x3\n", 0, "\"a\" appears twice" },
    { "protocol=1\nparams=7\ntensors=a:2x3\n", 0, "tensors add up to 6 parameters, params=7" },
    { "protocol=1\nparams=5\ntensors=a:2x3\n", 0, "add up to 6" },
    { "protocol=1\nparams=6\ntensors=a:2x3\ntensors=a:1x5\n", 0, "add up to 5" },
    { "protocol=1\nparams=1\ntensors=a:4294967295x4294967295,b:4294967295x4294967295\n", 0,
      "more than 2^64" },
    /*  lines  */
    { "protocol=1\nparams=6\ngarbage\ntensors=a:2x3\n", 0, "line 3: \"garbage\" is not key=value" },
    { "protocol=1\r\nparams=6\r\n=6\r\ntensors=a:2x3\r\n", 0, "line 3: \"=6\" is not key=value" },
    { S_BASE "\x01\x02\x03\n", 0, "\"???\" is not key=value" },
};

START_TEST (test_desc_errors)
{
    for (size_t i = 0; i < sizeof s_bad_descs / sizeof s_bad_descs [0]; i++) {
        const s_bad_desc_t *b = &s_bad_descs [i];
        size_t len = b->len ? b->len : strlen (b->text);
        fasgd_proto_desc_t d, before;
        memset (&d, 0xA5, sizeof d);
        memcpy (&before, &d, sizeof d);
        char err [256] = "";
        /*  An exact copy, so ASan sees any read past len.  */
        char *text = malloc (len ? len : 1);
        ck_assert_ptr_nonnull (text);
        memcpy (text, b->text, len);
        int rc = fasgd_proto_desc_decode (text, len, &d, err, sizeof err);
        free (text);
        ck_assert_msg (rc == -1, "case %zu accepted", i);
        ck_assert_msg (strstr (err, b->why) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err, b->why);
        ck_assert_msg (memcmp (&d, &before, sizeof d) == 0, "case %zu changed d", i);
    }
    /*  65 tensors.  */
    char text [4096];
    int n = snprintf (text, sizeof text, "protocol=1\nparams=65\ntensors=");
    for (int i = 0; i < 65; i++)
        n += snprintf (text + n, sizeof text - (size_t) n, "%st%d:1x1", i ? "," : "", i);
    fasgd_proto_desc_t d;
    char err [256] = "";
    ck_assert_int_eq (s_decode_str (text, &d, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "more than 64 tensors"));
    /*  A long bad value is shown cut short.  */
    ck_assert_int_eq (s_decode_str (S_BASE "rule.lr=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
                                    &d, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "(got \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\")"));
    /*  No error buffer, or a tiny one: still -1, never an overflow.  */
    ck_assert_int_eq (s_decode_str ("protocol=1\n", &d, NULL, 0), -1);
    ck_assert_int_eq (s_decode_str ("protocol=1\n", &d, err, 0), -1);
    char tiny [1] = { 'x' };
    ck_assert_int_eq (s_decode_str ("protocol=1\n", &d, tiny, sizeof tiny), -1);
    ck_assert_int_eq (tiny [0], '\0');
    ck_assert_int_eq (fasgd_proto_desc_decode (NULL, 0, &d, err, sizeof err), -1);
}
END_TEST

/*  --------------------------------------------------------------------
    Compact wire: bfloat16 and half precision  */

static uint32_t
s_bits32 (float f)
{
    uint32_t b;
    memcpy (&b, &f, sizeof b);
    return b;
}

static uint16_t
s_enc1 (int wire, float x)
{
    uint8_t out [2];
    fasgd_proto_wire_encode (wire, &x, 1, out);
    return (uint16_t) (out [0] | out [1] << 8);
}

static float
s_dec1 (int wire, uint16_t h)
{
    uint8_t in [2] = { (uint8_t) h, (uint8_t) (h >> 8) };
    float x;
    fasgd_proto_wire_decode (wire, in, 1, &x);
    return x;
}

START_TEST (test_wire_names)
{
    ck_assert_int_eq (fasgd_proto_wire_parse ("f32"), FASGD_WIRE_F32);
    ck_assert_int_eq (fasgd_proto_wire_parse ("bf16"), FASGD_WIRE_BF16);
    ck_assert_int_eq (fasgd_proto_wire_parse ("f16"), FASGD_WIRE_F16);
    ck_assert_int_eq (fasgd_proto_wire_parse ("fp16"), -1);
    ck_assert_int_eq (fasgd_proto_wire_parse (""), -1);
    ck_assert_str_eq (fasgd_proto_wire_name (FASGD_WIRE_BF16), "bf16");
    ck_assert_str_eq (fasgd_proto_wire_name (7), "?");
    ck_assert_uint_eq (fasgd_proto_wire_size (FASGD_WIRE_F32), 4);
    ck_assert_uint_eq (fasgd_proto_wire_size (FASGD_WIRE_BF16), 2);
    ck_assert_uint_eq (fasgd_proto_wire_size (FASGD_WIRE_F16), 2);
    ck_assert_uint_eq (fasgd_proto_wire_size (-1), 0);
}
END_TEST

/*  Every code reads back as itself: decode then encode is the identity
    (NaNs stay NaNs), in both formats; and the byte order is little-endian.  */
START_TEST (test_wire_every_code)
{
    for (int wire = FASGD_WIRE_BF16; wire <= FASGD_WIRE_F16; wire++)
        for (uint32_t h = 0; h < 65536; h++) {
            float x = s_dec1 (wire, (uint16_t) h);
            uint16_t back = s_enc1 (wire, x);
            int nan = wire == FASGD_WIRE_BF16 ? (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu)
                                              : (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
            if (nan)
                ck_assert_msg (isnan (x) && isnan (s_dec1 (wire, back)), "%s %04x", fasgd_proto_wire_name (wire), h);
            else
                ck_assert_msg (back == h, "%s %04x -> %g -> %04x", fasgd_proto_wire_name (wire), h, x, back);
        }
    ck_assert_uint_eq (s_bits32 (s_dec1 (FASGD_WIRE_BF16, 0x3F80)), 0x3F800000u);      /* 1 */
    ck_assert_float_eq (s_dec1 (FASGD_WIRE_F16, 0x3C00), 1.0f);
    ck_assert_float_eq (s_dec1 (FASGD_WIRE_F16, 0x0001), 5.9604644775390625e-8f);      /* 2^-24 */
    ck_assert_float_eq (s_dec1 (FASGD_WIRE_F16, 0x7BFF), 65504.0f);
    uint8_t out [2];
    float one = 1.0f;
    fasgd_proto_wire_encode (FASGD_WIRE_F16, &one, 1, out);
    ck_assert (out [0] == 0x00 && out [1] == 0x3C);
}
END_TEST

/*  The nearest code by search, ties to the even one, finite values
    saturating: what the encoder must give.  */
static uint16_t
s_nearest (int wire, float x, const float *vals, const uint16_t *codes, size_t ncodes)
{
    size_t lo = 0, hi = ncodes;                 /* the first value >= x */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (vals [mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ncodes)
        return codes [ncodes - 1];
    if (lo == 0 || vals [lo] == x)
        return codes [lo];
    double up = (double) vals [lo] - x, down = (double) x - vals [lo - 1];
    if (up != down)
        return up < down ? codes [lo] : codes [lo - 1];
    (void) wire;
    return (codes [lo] & 1) ? codes [lo - 1] : codes [lo];
}

START_TEST (test_wire_rounding)
{
    static float vals [65536];
    static uint16_t codes [65536];
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 20261201, 7);
    for (int wire = FASGD_WIRE_BF16; wire <= FASGD_WIRE_F16; wire++) {
        /*  The finite codes in increasing order of value (−0 left out).  */
        size_t n = 0;
        for (int neg = 1; neg >= 0; neg--)
            for (uint32_t m = 0; m < 0x8000u; m++) {
                uint16_t h = (uint16_t) (neg ? 0x8000u | (0x7FFFu - m) : m);
                float x = s_dec1 (wire, h);
                if (!isfinite (x) || (neg && x == 0))
                    continue;
                vals [n] = x;
                codes [n++] = h;
            }
        float most = vals [n - 1];
        for (int i = 0; i < 200000; i++) {
            float x;
            switch (i % 4) {
                case 0:                         /* anything finite */
                    do
                        x = s_f32 (fasgd_rng_u32 (&r));
                    while (!isfinite (x));
                    break;
                case 1:                         /* within the format's range */
                    x = (float) ((fasgd_rng_uniform (&r) * 2 - 1) * most);
                    break;
                case 2:                         /* small, subnormal for f16 */
                    x = (float) ((fasgd_rng_uniform (&r) * 2 - 1) * 1e-4);
                    break;
                default: {                      /* exactly halfway between two codes: ties */
                    uint32_t k = fasgd_rng_below (&r, (uint32_t) n - 1);
                    x = (float) (((double) vals [k] + vals [k + 1]) / 2);
                    break;
                }
            }
            uint16_t got = s_enc1 (wire, x), want = x > most ? codes [n - 1] : x < -most ? codes [0]
                                                    : s_nearest (wire, x, vals, codes, n);
            if (s_dec1 (wire, want) == 0)       /* zero keeps the sign of what rounded to it */
                want = signbit (x) ? 0x8000 : 0;
            ck_assert_msg (got == want, "%s: %.9g (%08x) gave %04x, want %04x", fasgd_proto_wire_name (wire),
                           x, s_bits32 (x), got, want);
        }
    }
}
END_TEST

START_TEST (test_wire_specials)
{
    for (int wire = FASGD_WIRE_BF16; wire <= FASGD_WIRE_F16; wire++) {
        float big = wire == FASGD_WIRE_BF16 ? 3.3895313892515355e38f : 65504.0f;
        ck_assert_msg (s_dec1 (wire, s_enc1 (wire, FLT_MAX)) == big, "%s: FLT_MAX", fasgd_proto_wire_name (wire));
        ck_assert (s_dec1 (wire, s_enc1 (wire, -FLT_MAX)) == -big);
        ck_assert (isinf (s_dec1 (wire, s_enc1 (wire, INFINITY))) && s_dec1 (wire, s_enc1 (wire, INFINITY)) > 0);
        ck_assert (isinf (s_dec1 (wire, s_enc1 (wire, -INFINITY))));
        ck_assert (isnan (s_dec1 (wire, s_enc1 (wire, NAN))));
        ck_assert (s_enc1 (wire, 0.0f) == 0 && s_enc1 (wire, -0.0f) == 0x8000);
    }
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_F16, 65519.99f), 0x7BFF);
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_F16, 65520.0f), 0x7BFF);     /* would round to Inf */
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_F16, 2.9802322387695312e-8f), 0);        /* 2^-25 ties to 0 */
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_F16, 2.9802326e-8f), 1);     /* just above */
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_F16, 1023.5f / 16777216.0f), 0x400);  /* a tie up to the smallest normal */
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_F16, 1022.5f / 16777216.0f), 0x3FE);  /* a tie down, to even */
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_BF16, s_f32 (0x3F808000u)), 0x3F80);    /* a tie, to even */
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_BF16, s_f32 (0x3F818000u)), 0x3F82);
    ck_assert_uint_eq (s_enc1 (FASGD_WIRE_BF16, s_f32 (0x3F808001u)), 0x3F81);
}
END_TEST

/*  Error feedback: what is sent plus what is kept is exactly g + r, and
    what is kept is at most half a unit of the last place of what is sent.  */
START_TEST (test_wire_feedback)
{
    enum { N = 1000 };
    float g [N], res [N], next [N], sent [N];
    uint8_t buf [2 * N], plain [2 * N];
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 20261201, 8);
    for (int wire = FASGD_WIRE_BF16; wire <= FASGD_WIRE_F16; wire++) {
        for (int i = 0; i < N; i++) {
            g [i] = (float) (fasgd_rng_normal (&r) * 0.01);
            res [i] = (float) (fasgd_rng_normal (&r) * 1e-5);
        }
        /*  The sizes around the span of 32 and a remainder.  */
        size_t sizes [] = { N, 1, 31, 32, 33, 999 };
        for (size_t s = 0; s < sizeof sizes / sizeof sizes [0]; s++) {
            size_t n = sizes [s];
            fasgd_proto_wire_encode_feedback (wire, g, res, next, n, buf);
            fasgd_proto_wire_decode (wire, buf, n, sent);
            float sum [N];
            for (size_t i = 0; i < n; i++)
                sum [i] = g [i] + res [i];
            fasgd_proto_wire_encode (wire, sum, n, plain);
            ck_assert_mem_eq (buf, plain, 2 * n);
            for (size_t i = 0; i < n; i++) {
                ck_assert_msg (sent [i] + next [i] == sum [i], "%s %zu", fasgd_proto_wire_name (wire), i);
                ck_assert (fabsf (next [i]) <= fabsf (sum [i]) * (wire == FASGD_WIRE_BF16 ? 0x1p-8f : 0x1p-11f)
                           + 0x1p-25f);
            }
        }
    }
}
END_TEST

START_TEST (test_wire_body_lengths)
{
    fasgd_header_t h = s_valid_header (FASGD_MSG_PUSH);
    ck_assert_int_eq (fasgd_proto_body_check_wire (&h, 2 * 100, 100, FASGD_WIRE_BF16, FASGD_WIRE_F32), FASGD_PROTO_OK);
    ck_assert_int_eq (fasgd_proto_body_check_wire (&h, 4 * 100, 100, FASGD_WIRE_BF16, FASGD_WIRE_F32),
                      FASGD_PROTO_MALFORMED);
    ck_assert_int_eq (fasgd_proto_body_check_wire (&h, 2 * 100, 100, FASGD_WIRE_F32, FASGD_WIRE_BF16),
                      FASGD_PROTO_MALFORMED);
    ck_assert_int_eq (fasgd_proto_body_check_wire (&h, 2 * 100, 100, 9, FASGD_WIRE_F32), FASGD_PROTO_MALFORMED);
    ck_assert_int_eq (fasgd_proto_body_check_wire (&h, 0, SIZE_MAX / 2 + 1, FASGD_WIRE_F16, FASGD_WIRE_F32),
                      FASGD_PROTO_MALFORMED);
    h = s_valid_header (FASGD_MSG_PARAMS);
    ck_assert_int_eq (fasgd_proto_body_check_wire (&h, 2 * 100, 100, FASGD_WIRE_F32, FASGD_WIRE_F16), FASGD_PROTO_OK);
    ck_assert_int_eq (fasgd_proto_body_check_wire (&h, 4 * 100, 100, FASGD_WIRE_F32, FASGD_WIRE_F16),
                      FASGD_PROTO_MALFORMED);
}
END_TEST

/*  --------------------------------------------------------------------
    Random inputs  */

/*  PROTOCOL.md's header rules, restated for the fuzz loop.  */
static int
s_header_oracle (const uint8_t *p, size_t len)
{
    if (len != FASGD_PROTO_HEADER_SIZE || s_get_le (p, 2) != FASGD_PROTO_MAGIC)
        return FASGD_PROTO_MALFORMED;
    if (p [2] != FASGD_PROTO_VERSION)
        return FASGD_PROTO_VERSION_MISMATCH;
    int type = p [3];
    unsigned status = (unsigned) s_get_le (p + 4, 2), flags = (unsigned) s_get_le (p + 6, 2);
    if (!s_is_known_type (type))
        return FASGD_PROTO_MALFORMED;
    if (flags != 0 && !(type == FASGD_MSG_FETCH && flags == FASGD_PROTO_FLAG_IF_NEWER)
        && !((type == FASGD_MSG_PUSH || type == FASGD_MSG_PUSH_REPEAT)
             && flags == FASGD_PROTO_FLAG_THEN_FETCH))
        return FASGD_PROTO_MALFORMED;
    if (s_is_request (type) ? status != 0 : !s_is_known_status ((int) status))
        return FASGD_PROTO_MALFORMED;
    if (!s_is_request (type) && ((s_get_le (p + 24, 8) >> 52) & 0x7FF) == 0x7FF)    /* a non-finite vbar */
        return FASGD_PROTO_MALFORMED;
    return FASGD_PROTO_OK;
}

START_TEST (test_fuzz_header)
{
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 20261129, 1);
    int count [3] = { 0, 0, 0 };        /* OK, MALFORMED, VERSION_MISMATCH */
    for (int iter = 0; iter < 100000; iter++) {
        size_t len = fasgd_rng_below (&r, 65);
        /*  Near misses are what find bugs: most frames get a valid magic,
            version, type, status or flags so the later checks are reached.  */
        if (fasgd_rng_below (&r, 2))
            len = FASGD_PROTO_HEADER_SIZE;
        uint8_t *buf = malloc (len ? len : 1);
        ck_assert_ptr_nonnull (buf);
        for (size_t i = 0; i < len; i++)
            buf [i] = (uint8_t) fasgd_rng_u32 (&r);
        if (len >= 2 && fasgd_rng_below (&r, 8))
            buf [0] = 0x5D, buf [1] = 0xFA;
        if (len >= 3 && fasgd_rng_below (&r, 4))
            buf [2] = FASGD_PROTO_VERSION;
        if (len >= 4 && fasgd_rng_below (&r, 4))
            buf [3] = (uint8_t) s_types [fasgd_rng_below (&r, S_NTYPES)];
        if (len >= 6 && fasgd_rng_below (&r, 2)) {
            unsigned st = fasgd_rng_below (&r, 2) ? 0 : (unsigned) s_statuses [fasgd_rng_below (&r, S_NSTATUSES)];
            buf [4] = (uint8_t) st, buf [5] = (uint8_t) (st >> 8);
        }
        if (len >= 8 && fasgd_rng_below (&r, 2))
            buf [6] = (uint8_t) fasgd_rng_below (&r, 2), buf [7] = 0;
        if (len >= 32 && fasgd_rng_below (&r, 2))
            buf [31] &= 0x7F;           /* mostly finite */

        fasgd_header_t h;
        int rc = fasgd_proto_header_decode (buf, len, &h);
        ck_assert_msg (rc == FASGD_PROTO_OK || rc == FASGD_PROTO_MALFORMED
                       || rc == FASGD_PROTO_VERSION_MISMATCH, "undocumented result %d", rc);
        ck_assert_int_eq (rc, s_header_oracle (buf, len));
        if (rc == FASGD_PROTO_OK) {
            count [0]++;
            /*  Whatever is accepted re-encodes to the same bytes.  */
            uint8_t again [FASGD_PROTO_HEADER_SIZE];
            fasgd_proto_header_encode (&h, again);
            ck_assert_mem_eq (again, buf, FASGD_PROTO_HEADER_SIZE);
        }
        else
        if (rc == FASGD_PROTO_VERSION_MISMATCH) {
            count [2]++;
            ck_assert_uint_eq (h.version, buf [2]);
            ck_assert_uint_eq (h.type, buf [3]);
            ck_assert_uint_eq (h.client_id, s_get_le (buf + 8, 4));
            ck_assert_uint_eq (h.seq, s_get_le (buf + 12, 4));
        }
        else
            count [1]++;
        free (buf);
    }
    /*  Each outcome was reached often enough to mean something.  */
    ck_assert_int_gt (count [0], 1000);
    ck_assert_int_gt (count [1], 1000);
    ck_assert_int_gt (count [2], 1000);
}
END_TEST

static const char *const s_fuzz_keys [] = {
    "protocol", "params", "tensors", "model", "model.sizes", "model.activation", "rule",
    "rule.lr", "gates.fetch", "gates.fetch.every", "gates.fetch.c", "gates.push",
    "gates.push.every", "gates.push.c", "gates.push.skip", "gates.eps", "heartbeat_ms",
    "expiry_ms", "unknown", "", "params ", "tensors.x", "=", "rule.lr=="
};

static const char *const s_fuzz_values [] = {
    "", "0", "1", "6", "-1", "+1", "1e3", "0.005", "nan", "inf", "1e999", "-0", "4.9e-324",
    "18446744073709551615", "18446744073709551616", "4294967295", "4294967296",
    "2147483647", "2147483648", "mlp", "external", "relu", "resend-last",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "a:2x3", "a:2x3,b:1x1", "a:1x1,a:1x1", "a:0x1", "a:2x3,", ":1x1", "x:1x", "a:4294967295x4294967295",
    "=", "\r", "\t", "\x1b", "\xff\xfe", "a=b", "784,100,10"
};

/*  One line: mostly key=value from the pools, sometimes raw bytes.  */
static size_t
s_fuzz_line (fasgd_rng_t *r, char *out, size_t cap)
{
    char line [512];
    int n;
    if (fasgd_rng_below (r, 10) == 0) {
        size_t len = fasgd_rng_below (r, 40);
        for (size_t i = 0; i < len; i++)
            line [i] = (char) fasgd_rng_below (r, 256);
        n = (int) len;
    }
    else {
        const char *k = s_fuzz_keys [fasgd_rng_below (r, sizeof s_fuzz_keys / sizeof s_fuzz_keys [0])];
        const char *v = s_fuzz_values [fasgd_rng_below (r, sizeof s_fuzz_values / sizeof s_fuzz_values [0])];
        n = snprintf (line, sizeof line, "%s=%s", k, v);
    }
    const char *ends [] = { "\n", "\r\n", "", "\r", "\n\n" };
    const char *end = ends [fasgd_rng_below (r, 5)];
    size_t need = (size_t) n + strlen (end);
    if (need > cap)
        return 0;
    memcpy (out, line, (size_t) n);
    memcpy (out + n, end, strlen (end));
    return need;
}

/*  A description that reads, with its lines shuffled about by the caller.  */
static size_t
s_fuzz_valid_head (fasgd_rng_t *r, char *out, size_t cap)
{
    uint64_t params = 0;
    char list [512];
    int ln = 0;
    int nt = 1 + (int) fasgd_rng_below (r, 4);
    for (int i = 0; i < nt; i++) {
        uint32_t rows = 1 + fasgd_rng_below (r, 1000), cols = 1 + fasgd_rng_below (r, 1000);
        params += (uint64_t) rows * cols;
        ln += snprintf (list + ln, sizeof list - (size_t) ln, "%st%d:%" PRIu32 "x%" PRIu32,
                        i ? "," : "", i, rows, cols);
    }
    if (fasgd_rng_below (r, 8) == 0)
        params += 1;        /* off by one: must be refused */
    int n = snprintf (out, cap, "protocol=1\nparams=%" PRIu64 "\ntensors=%s\n", params, list);
    return n > 0 && (size_t) n < cap ? (size_t) n : 0;
}

static void
s_check_desc_invariants (const fasgd_proto_desc_t *d)
{
    ck_assert (d->ntensors >= 1 && d->ntensors <= FASGD_PROTO_MAX_TENSORS);
    uint64_t sum = 0;
    for (int i = 0; i < d->ntensors; i++) {
        const fasgd_proto_tensor_t *t = &d->tensors [i];
        size_t n = strnlen (t->name, sizeof t->name);
        ck_assert (n >= 1 && n < sizeof t->name);
        ck_assert (strspn (t->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n);
        ck_assert (t->ndim >= 1 && t->ndim <= FASGD_PROTO_MAX_DIMS);
        uint64_t size = 1;
        for (uint32_t k = 0; k < t->ndim; k++) {
            ck_assert (t->dims [k] >= 1);
            ck_assert (size <= UINT64_MAX / t->dims [k]);
            size *= t->dims [k];
        }
        ck_assert (size <= UINT64_MAX - sum);
        sum += size;
    }
    ck_assert_uint_eq (sum, d->params);
    const char *strings [] = { d->model, d->model_sizes, d->model_activation, d->rule,
                               d->fetch_gate, d->push_gate, d->push_skip };
    const size_t sizes [] = { sizeof d->model, sizeof d->model_sizes, sizeof d->model_activation,
                              sizeof d->rule, sizeof d->fetch_gate, sizeof d->push_gate,
                              sizeof d->push_skip };
    for (size_t i = 0; i < 7; i++) {
        size_t n = strnlen (strings [i], sizes [i]);
        ck_assert (n < sizes [i]);
        for (size_t j = 0; j < n; j++)
            ck_assert ((unsigned char) strings [i][j] >= 0x20 && strings [i][j] != 0x7F);
    }
    ck_assert (isfinite (d->lr) && isfinite (d->fetch_c) && isfinite (d->push_c) && isfinite (d->gate_eps));
    ck_assert (d->fetch_every >= 0 && d->push_every >= 0);
}

START_TEST (test_fuzz_desc)
{
    fasgd_rng_t r;
    fasgd_rng_seed (&r, 20261129, 2);
    char valid [8192];
    fasgd_proto_desc_t ex;
    ck_assert_int_eq (s_decode_str (s_example, &ex, NULL, 0), 0);
    int validlen = fasgd_proto_desc_encode (&ex, valid, sizeof valid);
    ck_assert_int_gt (validlen, 0);

    int accepted = 0, refused = 0;
    for (int iter = 0; iter < 10000; iter++) {
        char text [4096];
        size_t len = 0;
        switch (fasgd_rng_below (&r, 4)) {
            case 0:                                 /* raw bytes */
                len = fasgd_rng_below (&r, 200);
                for (size_t i = 0; i < len; i++)
                    text [i] = (char) fasgd_rng_below (&r, 256);
                break;
            case 1:                                 /* a valid text, mutated */
                memcpy (text, valid, (size_t) validlen);
                len = (size_t) validlen;
                for (int k = (int) fasgd_rng_below (&r, 4); k >= 0; k--) {
                    size_t at = fasgd_rng_below (&r, (uint32_t) len);
                    switch (fasgd_rng_below (&r, 3)) {
                        case 0: text [at] = (char) fasgd_rng_below (&r, 256); break;
                        case 1: text [at] ^= (char) (1 << fasgd_rng_below (&r, 8)); break;
                        case 2: len = at + 1; break;    /* truncate */
                    }
                }
                break;
            default:                                /* lines from the pools */
                if (fasgd_rng_below (&r, 4))
                    len = s_fuzz_valid_head (&r, text, sizeof text);
                for (int k = (int) fasgd_rng_below (&r, 12); k > 0; k--)
                    len += s_fuzz_line (&r, text + len, sizeof text - len);
                break;
        }
        /*  Exactly len bytes, so ASan sees any read past the end.  */
        char *exact = malloc (len ? len : 1);
        ck_assert_ptr_nonnull (exact);
        memcpy (exact, text, len);
        fasgd_proto_desc_t d, before;
        memset (&d, 0x5A, sizeof d);
        memcpy (&before, &d, sizeof d);
        char err [128];
        memset (err, 'X', sizeof err);
        int rc = fasgd_proto_desc_decode (exact, len, &d, err, sizeof err);
        free (exact);
        ck_assert_msg (rc == 0 || rc == -1, "undocumented result %d", rc);
        if (rc == 0) {
            accepted++;
            s_check_desc_invariants (&d);
            /*  Whatever is accepted round trips through encode.  */
            char buf [8192];
            fasgd_proto_desc_t back;
            int n = fasgd_proto_desc_encode (&d, buf, sizeof buf);
            ck_assert_int_gt (n, 0);
            ck_assert_int_eq (fasgd_proto_desc_decode (buf, (size_t) n, &back, NULL, 0), 0);
            s_assert_desc_eq (&d, &back);
        }
        else {
            refused++;
            ck_assert (memchr (err, '\0', sizeof err) != NULL);
            ck_assert (err [0] != '\0');
            ck_assert (memcmp (&d, &before, sizeof d) == 0);
        }
    }
    ck_assert_int_gt (accepted, 500);
    ck_assert_int_gt (refused, 2000);
}
END_TEST

static Suite *
proto_suite (void)
{
    Suite *s = suite_create ("proto");

    TCase *tc = tcase_create ("header");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_header_round_trip_every_type);
    tcase_add_test (tc, test_header_bytes_exact);
    tcase_add_test (tc, test_header_unaligned);
    tcase_add_test (tc, test_header_wrong_sizes);
    tcase_add_test (tc, test_header_bad_magic);
    tcase_add_test (tc, test_header_version_mismatch);
    tcase_add_test (tc, test_header_unknown_type);
    tcase_add_test (tc, test_header_flags);
    tcase_add_test (tc, test_header_status);
    tcase_add_test (tc, test_header_nonfinite_vbar);
    tcase_add_test (tc, test_names);
    suite_add_tcase (s, tc);

    tc = tcase_create ("body");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_body_vectors);
    tcase_add_test (tc, test_body_overflow);
    tcase_add_test (tc, test_floats_round_trip);
    tcase_add_test (tc, test_floats_finite);
    suite_add_tcase (s, tc);

    tc = tcase_create ("wire");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_wire_names);
    tcase_add_test (tc, test_wire_every_code);
    tcase_add_test (tc, test_wire_rounding);
    tcase_add_test (tc, test_wire_specials);
    tcase_add_test (tc, test_wire_feedback);
    tcase_add_test (tc, test_wire_body_lengths);
    suite_add_tcase (s, tc);

    tc = tcase_create ("desc");
    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_desc_example);
    tcase_add_test (tc, test_desc_tensor_ranks);
    tcase_add_test (tc, test_desc_last_key_wins);
    tcase_add_test (tc, test_desc_limits_accepted);
    tcase_add_test (tc, test_desc_round_trip);
    tcase_add_test (tc, test_desc_shards);
    tcase_add_test (tc, test_desc_encode_small_buffer);
    tcase_add_test (tc, test_desc_encode_refuses_unreadable);
    tcase_add_test (tc, test_desc_errors);
    suite_add_tcase (s, tc);

    /*  Generous: the loops run under valgrind in `make memcheck`.  */
    tc = tcase_create ("fuzz");
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, test_fuzz_header);
    tcase_add_test (tc, test_fuzz_desc);
    suite_add_tcase (s, tc);

    return s;
}

FASGD_TEST_MAIN (proto_suite)
