/* wh_proto: see wh_proto.h and PROTOCOL.md. */
#include "wh_proto.h"

#include <string.h>

uint16_t wh_crc16(const uint8_t *data, size_t len)
{
    /* Bitwise rather than a 512-byte table: frames are short and small MCUs keep the flash. */
    uint16_t crc = 0xFFFFu;
    size_t i;
    int b;
    for (i = 0; i < len; i++) {
        crc ^= (uint16_t)(data[i] << 8);
        for (b = 0; b < 8; b++)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

/*
 * Each message's layout is written once, as a function over this cursor, and runs in both
 * directions: encoding writes the struct's fields, decoding reads them. Encoder and decoder
 * therefore cannot disagree on order, size or range, and the encoder refuses to send a value
 * the decoder would reject.
 */
typedef struct {
    const uint8_t *in; /* decoding: the payload */
    uint8_t *out;      /* encoding: where the payload goes */
    size_t len;        /* decoding: payload length; encoding: room */
    size_t pos;
    int bad; /* overrun or a value out of range; sticky */
} wh_io;

static void io_u8(wh_io *io, uint8_t *v)
{
    if (io->bad || io->pos >= io->len) {
        io->bad = 1;
        return;
    }
    if (io->out)
        io->out[io->pos] = *v;
    else
        *v = io->in[io->pos];
    io->pos++;
}

static void io_u16(wh_io *io, uint16_t *v)
{
    uint8_t lo = (uint8_t)(*v & 0xFFu), hi = (uint8_t)(*v >> 8);
    io_u8(io, &lo);
    io_u8(io, &hi);
    *v = (uint16_t)(lo | (hi << 8));
}

static void io_u32(wh_io *io, uint32_t *v)
{
    uint16_t lo = (uint16_t)(*v & 0xFFFFu), hi = (uint16_t)(*v >> 16);
    io_u16(io, &lo);
    io_u16(io, &hi);
    *v = (uint32_t)lo | ((uint32_t)hi << 16);
}

static void io_u8r(wh_io *io, uint8_t *v, uint8_t min, uint8_t max)
{
    io_u8(io, v);
    if (*v < min || *v > max)
        io->bad = 1;
}

static void io_u16r(wh_io *io, uint16_t *v, uint16_t min, uint16_t max)
{
    io_u16(io, v);
    if (*v < min || *v > max)
        io->bad = 1;
}

/* A length byte, then that many bytes; the length is checked before the copy, so a hostile
 * length never runs past the caller's array. */
static void io_bytes(wh_io *io, uint8_t *n, uint8_t *data, uint8_t min, uint8_t max)
{
    uint8_t i;
    io_u8r(io, n, min, max);
    if (io->bad)
        return;
    for (i = 0; i < *n; i++)
        io_u8(io, &data[i]);
}

static void io_hello(wh_io *io, wh_hello *m)
{
    io_u8r(io, &m->node_kind, WH_NODE_BOT, WH_NODE_BALCONY_LED);
    io_u8r(io, &m->proto_min, 1, 15);
    io_u8r(io, &m->proto_max, 1, 15);
    io_u8(io, &m->fw_major);
    io_u8(io, &m->fw_minor);
    io_u16(io, &m->fw_patch);
    io_u8(io, &m->hw_rev);
    io_u32(io, &m->session);
    if (m->session == 0)
        io->bad = 1;
}

static void io_welcome(wh_io *io, wh_welcome *m)
{
    io_u8r(io, &m->version, 1, 15);
    io_u16r(io, &m->telemetry_period_ms, 50, 1000);
    io_u32(io, &m->controller_session);
    io_u32(io, &m->node_session);
    if (m->controller_session == 0 || m->node_session == 0)
        io->bad = 1;
}

static void io_heartbeat(wh_io *io, wh_heartbeat *m)
{
    io_u32(io, &m->controller_session);
    io_u32(io, &m->uptime_ms);
    if (m->controller_session == 0)
        io->bad = 1;
}

static void io_ack(wh_io *io, wh_ack *m)
{
    io_u8(io, &m->acked_type);
    io_u8r(io, &m->result, WH_R_OK, WH_R_RFID_WRITE_DISABLED);
    io_u16(io, &m->detail);
    if (!wh_type_known(m->acked_type))
        io->bad = 1;
}

static void io_telemetry(wh_io *io, wh_telemetry *m)
{
    /* heading:2 lift:2 carrier:1 charging:1 motion:2, low bits first: one byte instead of
     * five keeps the 200-bot, 10 Hz telemetry load near half of the line. */
    uint8_t st;
    if (m->heading > 3 || m->lift > 3 || m->carrier > 1 || m->charging > 1 || m->motion > 3)
        io->bad = 1;
    st = (uint8_t)(m->heading | m->lift << 2 | m->carrier << 4 | m->charging << 5 | m->motion << 6);
    io_u16(io, &m->x);
    io_u16(io, &m->y);
    io_u8(io, &st);
    m->heading = st & 3u;
    m->lift = (st >> 2) & 3u;
    m->carrier = (st >> 4) & 1u;
    m->charging = (st >> 5) & 1u;
    m->motion = (st >> 6) & 3u;
    io_u16r(io, &m->battery, 0, 1000);
    io_u16r(io, &m->faults, 0, 0x0FFF);
    io_u8(io, &m->segment);
    io_u8(io, &m->step);
}

static void io_fault(wh_io *io, wh_fault *m)
{
    io_u16r(io, &m->code, 1, 0xFFFF);
    io_u8r(io, &m->severity, WH_SEV_INFO, WH_SEV_FATAL);
    io_u8r(io, &m->fault_state, WH_FAULT_RAISED, WH_FAULT_CLEARED);
    io_u16(io, &m->x);
    io_u16(io, &m->y);
    io_u32(io, &m->detail);
}

static void io_segment(wh_io *io, wh_segment *m)
{
    uint8_t i;
    io_u8(io, &m->segment);
    io_u16r(io, &m->start_delay_ms, 0, 60000);
    io_u16(io, &m->x);
    io_u16(io, &m->y);
    io_u8r(io, &m->steps_count, 1, WH_MAX_STEPS);
    if (io->bad)
        return;
    for (i = 0; i < m->steps_count; i++) {
        io_u8r(io, &m->steps[i].action, WH_STEP_WAIT, WH_STEP_MOVE_W);
        io_u8(io, &m->steps[i].cells);
        io_u16r(io, &m->steps[i].duration_ms, 1, 60000);
    }
}

static void io_rfid_data(wh_io *io, wh_rfid_data *m)
{
    io_u8r(io, &m->target, WH_RFID_FLOOR, WH_RFID_CARRIER);
    io_u8r(io, &m->result, WH_R_OK, WH_R_RFID_WRITE_DISABLED);
    io_bytes(io, &m->uid_len, m->uid, 0, WH_MAX_UID);
    io_bytes(io, &m->data_len, m->data, 0, WH_MAX_RFID_DATA);
}

static void io_led_sequence(wh_io *io, wh_led_sequence *m)
{
    uint8_t i;
    io_u8r(io, &m->channel, 0, 15);
    io_u8(io, &m->repeat);
    io_u8r(io, &m->steps_count, 1, WH_MAX_LED_STEPS);
    if (io->bad)
        return;
    for (i = 0; i < m->steps_count; i++) {
        io_u8(io, &m->steps[i].r);
        io_u8(io, &m->steps[i].g);
        io_u8(io, &m->steps[i].b);
        io_u16r(io, &m->steps[i].duration_ms, 10, 60000);
    }
}

/* Runs the layout of f->type; 0 for an unknown type. */
static int io_message(wh_io *io, wh_frame *f)
{
    switch (f->type) {
    case WH_T_HELLO: io_hello(io, &f->u.hello); return 1;
    case WH_T_WELCOME: io_welcome(io, &f->u.welcome); return 1;
    case WH_T_HEARTBEAT: io_heartbeat(io, &f->u.heartbeat); return 1;
    case WH_T_ACK: io_ack(io, &f->u.ack); return 1;
    case WH_T_TELEMETRY: io_telemetry(io, &f->u.telemetry); return 1;
    case WH_T_FAULT: io_fault(io, &f->u.fault); return 1;
    case WH_T_FAULT_CLEAR: io_u16r(io, &f->u.fault_clear.code, 1, 0xFFFF); return 1;
    case WH_T_SEGMENT: io_segment(io, &f->u.segment); return 1;
    case WH_T_STOP: io_u8r(io, &f->u.stop.mode, WH_STOP_END_OF_STEP, WH_STOP_NOW); return 1;
    case WH_T_PAUSE:
    case WH_T_RESUME:
    case WH_T_LIFT:
    case WH_T_LOWER:
    case WH_T_UNCHARGE: return 1;
    case WH_T_CHARGE: io_u16r(io, &f->u.charge.target, 100, 1000); return 1;
    case WH_T_RFID_READ:
        io_u8r(io, &f->u.rfid_read.target, WH_RFID_FLOOR, WH_RFID_CARRIER);
        io_u8(io, &f->u.rfid_read.offset);
        io_u8r(io, &f->u.rfid_read.length, 0, WH_MAX_RFID_DATA);
        return 1;
    case WH_T_RFID_DATA: io_rfid_data(io, &f->u.rfid_data); return 1;
    case WH_T_RFID_CHECK:
        io_u8r(io, &f->u.rfid_check.target, WH_RFID_FLOOR, WH_RFID_CARRIER);
        io_u8(io, &f->u.rfid_check.offset);
        io_bytes(io, &f->u.rfid_check.expect_len, f->u.rfid_check.expect, 1, WH_MAX_RFID_DATA);
        return 1;
    case WH_T_RFID_WRITE:
        io_u8r(io, &f->u.rfid_write.target, WH_RFID_FLOOR, WH_RFID_CARRIER);
        io_u8(io, &f->u.rfid_write.offset);
        io_bytes(io, &f->u.rfid_write.data_len, f->u.rfid_write.data, 1, WH_MAX_RFID_DATA);
        return 1;
    case WH_T_RFID_WRITE_MODE:
        io_u8r(io, &f->u.rfid_write_mode.mode, WH_RFID_WRITE_OFF, WH_RFID_WRITE_AUTO_CELLS);
        return 1;
    case WH_T_LED_SEQUENCE: io_led_sequence(io, &f->u.led_sequence); return 1;
    default: return 0;
    }
}

int wh_type_known(uint8_t type)
{
    return (type >= WH_T_HELLO && type <= WH_T_ACK) || (type >= WH_T_TELEMETRY && type <= WH_T_FAULT_CLEAR) ||
           (type >= WH_T_SEGMENT && type <= WH_T_UNCHARGE) || (type >= WH_T_RFID_READ && type <= WH_T_RFID_WRITE_MODE) ||
           type == WH_T_LED_SEQUENCE;
}

size_t wh_encode(const wh_frame *f, uint8_t *out, size_t cap)
{
    /* The raw frame is built at out + 1 and then COBS-stuffed in place: every zero becomes
     * the length code of the run that follows it, and the run before the first zero gets its
     * code in out[0]. A frame is at most 251 bytes, so no run reaches COBS's 254-byte limit
     * and the stuffed frame is always exactly one byte longer. */
    uint8_t *raw = out + 1;
    wh_frame m = *f; /* the layout functions take non-const pointers; they only read here */
    wh_io io;
    size_t n, i, code_pos;
    uint16_t crc;

    if (m.version == 0)
        m.version = WH_PROTO_VERSION;
    /* Only the version this decoder reads: never send what we would drop ourselves. */
    if (cap < 1 + WH_HEADER_SIZE + WH_CRC_SIZE + 1 || m.version != WH_PROTO_VERSION || m.flags > 15)
        return 0;
    io.in = NULL;
    io.out = raw + WH_HEADER_SIZE;
    io.len = cap - (1 + WH_HEADER_SIZE + WH_CRC_SIZE + 1);
    if (io.len > WH_MAX_PAYLOAD)
        io.len = WH_MAX_PAYLOAD;
    io.pos = 0;
    io.bad = 0;
    if (!io_message(&io, &m) || io.bad)
        return 0;

    raw[0] = (uint8_t)(m.version << 4 | m.flags);
    raw[1] = (uint8_t)(m.src & 0xFFu);
    raw[2] = (uint8_t)(m.src >> 8);
    raw[3] = (uint8_t)(m.dst & 0xFFu);
    raw[4] = (uint8_t)(m.dst >> 8);
    raw[5] = m.seq;
    raw[6] = m.ack;
    raw[7] = m.type;
    raw[8] = (uint8_t)io.pos;
    n = WH_HEADER_SIZE + io.pos;
    crc = wh_crc16(raw, n);
    raw[n++] = (uint8_t)(crc & 0xFFu);
    raw[n++] = (uint8_t)(crc >> 8);

    code_pos = 0;
    for (i = 1; i <= n; i++) {
        if (out[i] == 0) {
            out[code_pos] = (uint8_t)(i - code_pos);
            code_pos = i;
        }
    }
    out[code_pos] = (uint8_t)(n + 1 - code_pos);
    out[n + 1] = 0;
    return n + 2;
}

enum wh_status wh_parse(const uint8_t *raw, size_t len, wh_frame *f)
{
    wh_io io;
    uint16_t crc;

    if (len < WH_HEADER_SIZE + WH_CRC_SIZE)
        return WH_E_SHORT;
    crc = (uint16_t)(raw[len - 2] | raw[len - 1] << 8);
    if (wh_crc16(raw, len - 2) != crc)
        return WH_E_CRC;
    if (raw[0] >> 4 != WH_PROTO_VERSION)
        return WH_E_VERSION;
    if (raw[8] != len - WH_HEADER_SIZE - WH_CRC_SIZE)
        return WH_E_LENGTH;
    if (!wh_type_known(raw[7]))
        return WH_E_TYPE;

    memset(f, 0, sizeof *f);
    f->version = raw[0] >> 4;
    f->flags = raw[0] & 0x0Fu;
    f->src = (uint16_t)(raw[1] | raw[2] << 8);
    f->dst = (uint16_t)(raw[3] | raw[4] << 8);
    f->seq = raw[5];
    f->ack = raw[6];
    f->type = raw[7];
    io.in = raw + WH_HEADER_SIZE;
    io.out = NULL;
    io.len = raw[8];
    io.pos = 0;
    io.bad = 0;
    io_message(&io, f);
    /* Trailing bytes are an error too: a payload has exactly one valid length per content. */
    if (io.bad || io.pos != io.len)
        return WH_E_PAYLOAD;
    return WH_OK;
}

/* Reverses COBS in place (the output never overtakes the input); 0 on a code byte that
 * points past the end. */
static int cobs_unstuff(uint8_t *b, size_t n, size_t *out_len)
{
    size_t r = 0, w = 0;
    uint8_t code, i;
    while (r < n) {
        code = b[r];
        if (code == 0 || r + code > n)
            return 0;
        r++;
        for (i = 1; i < code; i++)
            b[w++] = b[r++];
        if (code != 0xFFu && r < n)
            b[w++] = 0;
    }
    *out_len = w;
    return 1;
}

void wh_decoder_init(wh_decoder *d)
{
    memset(d, 0, sizeof *d);
}

size_t wh_decoder_feed(wh_decoder *d, const uint8_t *data, size_t len, wh_frame *f, int *got)
{
    size_t i, raw_len;
    enum wh_status st;

    *got = 0;
    for (i = 0; i < len; i++) {
        d->bytes++;
        if (data[i] != 0) {
            if (d->len < WH_MAX_ENCODED) {
                d->buf[d->len++] = data[i];
            } else if (!d->overflow) {
                /* Counted once, now: a sender that never sends a delimiter is still seen. */
                d->overflow = 1;
                d->errors[WH_E_OVERSIZE]++;
            }
            continue;
        }
        /* A delimiter. An empty frame (00 00, or a leading 00 a sender uses to flush a
         * receiver's partial frame) is not an error. */
        if (!d->overflow && d->len > 0) {
            if (!cobs_unstuff(d->buf, d->len, &raw_len))
                st = WH_E_FRAMING;
            else
                st = wh_parse(d->buf, raw_len, f);
            if (st == WH_OK) {
                d->frames++;
                d->len = 0;
                *got = 1;
                return i + 1;
            }
            d->errors[st]++;
        }
        d->len = 0;
        d->overflow = 0;
    }
    return len;
}

const char *wh_status_name(enum wh_status s)
{
    static const char *const names[WH_E_COUNT] = {"ok",  "oversize", "framing", "short",  "crc",
                                                  "version", "length", "type", "payload"};
    return (unsigned)s < WH_E_COUNT ? names[s] : "unknown";
}
