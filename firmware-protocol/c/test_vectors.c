/*
 * Checks wh_proto against the golden vectors (vectors.h, generated from vectors.json by
 * tools/vectors-to-c.mjs). For every vector:
 *   - the bytes fed in one call, and again one byte per call, give exactly the expected
 *     frames and the expected error counts;
 *   - each decoded frame means the same as the expected one: same header, and both encode to
 *     the same bytes (the encoder writes every payload field, so equal bytes = equal fields);
 *   - vectors marked encode: the expected frame encodes to the vector's bytes exactly.
 * Prints one line per failure and a summary; exit status 0 only if all pass.
 *
 *   node ../tools/vectors-to-c.mjs > vectors.h && cc -std=c99 -Wall -Wextra -I. wh_proto.c test_vectors.c
 */
#include "wh_proto.h"

#include <stdio.h>
#include <string.h>

#include "vectors.h"

static int failures;

static void fail(const char *name, const char *what)
{
    printf("FAIL %s: %s\n", name, what);
    failures++;
}

static int same_frame(const wh_frame *a, const wh_frame *b)
{
    uint8_t ea[WH_MAX_WIRE], eb[WH_MAX_WIRE];
    size_t na, nb;
    if (a->version != b->version || a->flags != b->flags || a->src != b->src || a->dst != b->dst ||
        a->seq != b->seq || a->ack != b->ack || a->type != b->type)
        return 0;
    na = wh_encode(a, ea, sizeof ea);
    nb = wh_encode(b, eb, sizeof eb);
    return na != 0 && na == nb && memcmp(ea, eb, na) == 0;
}

/* Decodes v's bytes in chunks of `chunk` bytes (0: all at once). */
static void check_decode(const struct vector *v, size_t chunk)
{
    wh_decoder d;
    wh_frame expected[VECTOR_MAX_FRAMES + 1], got[VECTOR_MAX_FRAMES + 1], f;
    int ngot = 0, k, have;
    size_t off = 0, n, used;

    memset(expected, 0, sizeof expected);
    v->frames(expected);
    wh_decoder_init(&d);
    while (off < v->len) {
        n = chunk == 0 || v->len - off < chunk ? v->len - off : chunk;
        while (n > 0) {
            used = wh_decoder_feed(&d, v->hex + off, n, &f, &have);
            if (used == 0 || used > n) {
                fail(v->name, "feed consumed no bytes or too many");
                return;
            }
            off += used;
            n -= used;
            if (have) {
                if (ngot <= VECTOR_MAX_FRAMES)
                    got[ngot] = f;
                ngot++;
            }
        }
    }
    if (ngot != v->nframes) {
        fail(v->name, chunk ? "frame count (byte by byte)" : "frame count");
        return;
    }
    for (k = 0; k < ngot; k++)
        if (!same_frame(&got[k], &expected[k]))
            fail(v->name, "decoded frame differs from the expected meaning");
    if (d.frames != (uint32_t)v->nframes)
        fail(v->name, "frames counter");
    if (d.bytes != v->len)
        fail(v->name, "bytes counter");
    for (k = 0; k < WH_E_COUNT; k++) {
        if (d.errors[k] != v->errors[k]) {
            char what[64];
            snprintf(what, sizeof what, "errors[%s] = %u, expected %u", wh_status_name((enum wh_status)k),
                     (unsigned)d.errors[k], v->errors[k]);
            fail(v->name, what);
        }
    }
}

static void check_encode(const struct vector *v)
{
    wh_frame expected[VECTOR_MAX_FRAMES + 1];
    uint8_t out[WH_MAX_WIRE];
    size_t n;
    memset(expected, 0, sizeof expected);
    v->frames(expected);
    n = wh_encode(&expected[0], out, sizeof out);
    if (n != v->len || memcmp(out, v->hex, n) != 0)
        fail(v->name, "encoding differs from the vector");
    /* One byte short of room must fail cleanly rather than write past the buffer. */
    if (wh_encode(&expected[0], out, v->len - 1) != 0)
        fail(v->name, "encode into a buffer one byte too small did not fail");
}

int main(void)
{
    size_t i;
    const uint8_t check[] = "123456789";
    if (wh_crc16(check, 9) != 0x29B1)
        fail("crc_check", "CRC-16/CCITT-FALSE of 123456789 is not 0x29B1");
    for (i = 0; i < VECTOR_COUNT; i++) {
        check_decode(&vectors[i], 0);
        check_decode(&vectors[i], 1);
        if (vectors[i].encode)
            check_encode(&vectors[i]);
    }
    printf("%u vectors, %d failures\n", (unsigned)VECTOR_COUNT, failures);
    return failures == 0 ? 0 : 1;
}
