/*
 * Bounded-time fuzz run of wh_proto, meant to be built with -fsanitize=address,undefined:
 *   cc -std=c99 -O1 -g -fsanitize=address,undefined -I. wh_proto.c fuzz_decoder.c -o fuzz
 *   ./fuzz [seconds=3] [seed=1]
 * Feeds the streaming decoder random bytes, mutated valid frames (bit flips, cuts, inserted
 * delimiters) in random chunk sizes, and random frame structs to the encoder. Besides "no
 * crash" (the sanitizers), it checks the invariants a link layer relies on:
 *   - feed always consumes at least one byte and never more than given;
 *   - bytes == bytes fed, and every delimiter ends in either a frame, an error or an empty
 *     frame, so frames + errors never exceed the delimiters seen (+1 for an oversize count);
 *   - whatever the decoder returns, the encoder accepts and it decodes back the same;
 *   - whatever the encoder produces fits WH_MAX_WIRE and decodes back to the same bytes.
 * A fixed seed makes a failure reproducible.
 */
#include "wh_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state;

static uint32_t rnd(void)
{
    /* xorshift64*: small, no library state, same sequence everywhere. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}

static const uint8_t types[] = {0x01, 0x02, 0x03, 0x04, 0x10, 0x11, 0x12, 0x20, 0x21, 0x22, 0x23,
                                0x24, 0x25, 0x26, 0x27, 0x30, 0x31, 0x32, 0x33, 0x34, 0x40};

/* COBS for the fuzzer's own re-stuffing of damaged raw frames (n <= 253, so no 254-runs). */
static size_t stuff(const uint8_t *raw, size_t n, uint8_t *out)
{
    size_t i, code_at = 0, o = 1;
    for (i = 0; i < n; i++) {
        if (raw[i] == 0) {
            out[code_at] = (uint8_t)(o - code_at);
            code_at = o++;
        } else {
            out[o++] = raw[i];
        }
    }
    out[code_at] = (uint8_t)(o - code_at);
    out[o++] = 0;
    return o;
}

/* Inverse of stuff() for a frame the encoder just produced (known valid). */
static size_t unstuff(const uint8_t *in, size_t n, uint8_t *raw)
{
    size_t r = 0, w = 0, i;
    while (r < n && in[r] != 0) {
        uint8_t code = in[r++];
        for (i = 1; i < code; i++)
            raw[w++] = in[r++];
        if (r < n && in[r] != 0)
            raw[w++] = 0;
    }
    return w;
}

static void die(const char *what, unsigned long iter)
{
    printf("FAIL at iteration %lu: %s\n", iter, what);
    exit(1);
}

/* A random frame struct: often valid, sometimes not (the encoder must refuse those). */
static void random_frame(wh_frame *f)
{
    uint8_t *p = (uint8_t *)&f->u;
    size_t i;
    memset(f, 0, sizeof *f);
    f->version = (rnd() % 8) ? 1 : (uint8_t)(rnd() % 16);
    f->flags = (uint8_t)(rnd() % 16);
    f->src = (uint16_t)rnd();
    f->dst = (uint16_t)rnd();
    f->seq = (uint8_t)rnd();
    f->ack = (uint8_t)rnd();
    f->type = (rnd() % 16) ? types[rnd() % sizeof types] : (uint8_t)rnd();
    /* Small values keep enums, counts and lengths in range often enough to produce frames. */
    for (i = 0; i < sizeof f->u; i++)
        p[i] = (uint8_t)((rnd() % 4) ? rnd() % 3 : rnd());
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    unsigned long seed = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
    clock_t end = clock() + (clock_t)(seconds * CLOCKS_PER_SEC);
    static uint8_t stream[4096];
    uint8_t enc[WH_MAX_WIRE], enc2[WH_MAX_WIRE];
    wh_decoder d, d2;
    wh_frame f, g;
    unsigned long iter, frames_out = 0, encoded = 0;
    uint32_t delimiters = 0, errors;
    size_t len, off, n, used, m, i, k;
    int got, got2;

    rng_state = 0x9E3779B97F4A7C15ULL ^ seed;
    wh_decoder_init(&d);
    for (iter = 0; clock() < end; iter++) {
        /* Build a stream: random bytes, or encoded frames with damage. */
        len = 0;
        while (len < sizeof stream - WH_MAX_WIRE) {
            if (rnd() % 64 == 0) {
                /* a long run without delimiter: oversize */
                m = 200 + rnd() % 400;
                if (len + m > sizeof stream)
                    break;
                for (i = 0; i < m; i++)
                    stream[len + i] = (uint8_t)(1 + rnd() % 255);
                len += m;
                continue;
            }
            if (rnd() % 4 == 0) {
                m = rnd() % 300;
                if (len + m > sizeof stream)
                    break;
                for (i = 0; i < m; i++)
                    stream[len + i] = (rnd() % 8) ? (uint8_t)rnd() : 0;
                len += m;
                continue;
            }
            random_frame(&f);
            m = wh_encode(&f, enc, sizeof enc);
            if (m == 0)
                continue;
            encoded++;
            if (m > WH_MAX_WIRE || enc[m - 1] != 0)
                die("encoded frame too long or without delimiter", iter);
            for (i = 0; i + 1 < m; i++)
                if (enc[i] == 0)
                    die("delimiter inside an encoded frame", iter);
            /* The encoder's output decodes to a frame that encodes to the same bytes. */
            wh_decoder_init(&d2);
            used = wh_decoder_feed(&d2, enc, m, &g, &got2);
            if (!got2 || used != m)
                die("encoded frame does not decode", iter);
            if (wh_encode(&g, enc2, sizeof enc2) != m || memcmp(enc, enc2, m) != 0)
                die("decode(encode(f)) encodes differently", iter);
            switch (rnd() % 5) {
            case 0: /* intact */
                break;
            case 4: { /* damage under a correct CRC: reaches the version/length/type/payload checks */
                uint8_t raw[WH_MAX_WIRE];
                size_t r = unstuff(enc, m, raw);
                uint16_t crc;
                raw[rnd() % (r - 2)] = (uint8_t)((rnd() % 2) ? rnd() : raw[rnd() % (r - 2)] + 1u);
                if (rnd() % 4 == 0 && r > 11)
                    r--; /* drop the last payload byte (the CRC is rewritten below) */
                crc = wh_crc16(raw, r - 2);
                raw[r - 2] = (uint8_t)(crc & 0xFF);
                raw[r - 1] = (uint8_t)(crc >> 8);
                m = stuff(raw, r, enc);
                break;
            }
            case 1: /* flip bits */
                for (k = rnd() % 3 + 1; k > 0; k--)
                    enc[rnd() % m] ^= (uint8_t)(1u << (rnd() % 8));
                break;
            case 2: /* cut */
                m = rnd() % m;
                break;
            default: /* replace a byte */
                enc[rnd() % m] = (uint8_t)rnd();
                break;
            }
            memcpy(stream + len, enc, m);
            len += m;
        }
        for (i = 0; i < len; i++)
            delimiters += stream[i] == 0;

        /* Feed it in random chunks. */
        for (off = 0; off < len;) {
            n = 1 + rnd() % 64;
            if (n > len - off)
                n = len - off;
            while (n > 0) {
                used = wh_decoder_feed(&d, stream + off, n, &f, &got);
                if (used == 0 || used > n)
                    die("feed consumed none or too many bytes", iter);
                off += used;
                n -= used;
                if (!got)
                    continue;
                frames_out++;
                /* A decoded frame is valid by definition: the encoder must take it back. */
                m = wh_encode(&f, enc, sizeof enc);
                if (m == 0)
                    die("encoder refuses a decoded frame", iter);
                wh_decoder_init(&d2);
                used = wh_decoder_feed(&d2, enc, m, &g, &got2);
                if (!got2 || wh_encode(&g, enc2, sizeof enc2) != m || memcmp(enc, enc2, m) != 0)
                    die("decoded frame does not round-trip", iter);
            }
        }
        errors = 0;
        for (k = 0; k < WH_E_COUNT; k++)
            errors += d.errors[k];
        if (d.errors[WH_OK] != 0 || d.frames + errors > delimiters + d.errors[WH_E_OVERSIZE])
            die("counters disagree with the stream", iter);
    }
    printf("fuzz: %lu rounds, %u bytes, %lu frames decoded, %lu frames encoded; errors:", iter,
           (unsigned)d.bytes, frames_out, encoded);
    for (k = 1; k < WH_E_COUNT; k++)
        printf(" %s=%u", wh_status_name((enum wh_status)k), (unsigned)d.errors[k]);
    printf("\n");
    return 0;
}
