/*
 * wh_proto: the warehouse bot link codec (PROTOCOL.md, messages.json), portable C99.
 *
 * No dynamic allocation, no global state, no loop without a fixed bound: the same files build
 * into bot and balcony LED firmware and into the controller's native addon. Every function
 * works on caller-owned memory; a wh_decoder is about 300 bytes and may live anywhere.
 *
 * Sending:   wh_frame f = {0}; f.src = ...; f.type = WH_T_TELEMETRY; f.u.telemetry.x = ...;
 *            size_t n = wh_encode(&f, buf, sizeof buf);   (n == 0: invalid frame or small buf)
 * Receiving: wh_decoder d; wh_decoder_init(&d);
 *            while (len > 0) {
 *                int got; size_t used = wh_decoder_feed(&d, p, len, &f, &got);
 *                p += used; len -= used;
 *                if (got) handle(&f);
 *            }
 * Bad input never stops the decoder: it counts the error by kind in d.errors[] and
 * resynchronises at the next 0x00 delimiter.
 */
#ifndef WH_PROTO_H
#define WH_PROTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WH_PROTO_VERSION 1u
#define WH_HEADER_SIZE 9u
#define WH_CRC_SIZE 2u
#define WH_MAX_PAYLOAD 240u
#define WH_MAX_RAW (WH_HEADER_SIZE + WH_MAX_PAYLOAD + WH_CRC_SIZE) /* 251 */
/* COBS adds exactly one byte to any frame shorter than 254 bytes. */
#define WH_MAX_ENCODED (WH_MAX_RAW + 1u)  /* 252, without the delimiter */
#define WH_MAX_WIRE (WH_MAX_ENCODED + 1u) /* 253, with the delimiter */

/* Header flags (low nibble of byte 0). */
#define WH_F_ACK_REQ 0x1u
#define WH_F_IS_ACK 0x2u
#define WH_F_RETRANSMIT 0x4u

/* Addresses. */
#define WH_ADDR_CONTROLLER 0x0000u
#define WH_ADDR_BOT_FIRST 0x0001u
#define WH_ADDR_BOT_LAST 0x0FFFu
#define WH_ADDR_LED_FIRST 0x1000u
#define WH_ADDR_LED_LAST 0x10FFu
#define WH_ADDR_GATEWAY 0xFFFEu
#define WH_ADDR_BROADCAST 0xFFFFu

/* Timing (ms), PROTOCOL.md section 6. */
#define WH_TELEMETRY_PERIOD_MS 100u
#define WH_HEARTBEAT_PERIOD_MS 250u
#define WH_LINK_TIMEOUT_MS 1000u
#define WH_ACK_DEADLINE_MS 20u
#define WH_ACK_TIMEOUT_MS 60u
#define WH_ACK_TIMEOUT_MAX_MS 480u
#define WH_MAX_TRANSMISSIONS 5u
#define WH_HELLO_RETRY_MS 1000u

enum wh_type {
    WH_T_HELLO = 0x01,
    WH_T_WELCOME = 0x02,
    WH_T_HEARTBEAT = 0x03,
    WH_T_ACK = 0x04,
    WH_T_TELEMETRY = 0x10,
    WH_T_FAULT = 0x11,
    WH_T_FAULT_CLEAR = 0x12,
    WH_T_SEGMENT = 0x20,
    WH_T_STOP = 0x21,
    WH_T_PAUSE = 0x22,
    WH_T_RESUME = 0x23,
    WH_T_LIFT = 0x24,
    WH_T_LOWER = 0x25,
    WH_T_CHARGE = 0x26,
    WH_T_UNCHARGE = 0x27,
    WH_T_RFID_READ = 0x30,
    WH_T_RFID_DATA = 0x31,
    WH_T_RFID_CHECK = 0x32,
    WH_T_RFID_WRITE = 0x33,
    WH_T_RFID_WRITE_MODE = 0x34,
    WH_T_LED_SEQUENCE = 0x40
};

/* Decode outcomes; the error kinds index wh_decoder.errors[]. */
enum wh_status {
    WH_OK = 0,
    WH_E_OVERSIZE, /* more than WH_MAX_ENCODED bytes before a delimiter */
    WH_E_FRAMING,  /* invalid COBS */
    WH_E_SHORT,    /* fewer than header + CRC bytes */
    WH_E_CRC,
    WH_E_VERSION,
    WH_E_LENGTH, /* header length differs from the bytes received */
    WH_E_TYPE,
    WH_E_PAYLOAD, /* layout or a field range */
    WH_E_COUNT
};

enum wh_node_kind { WH_NODE_BOT = 1, WH_NODE_BALCONY_LED = 2 };
enum wh_heading { WH_HEADING_N = 0, WH_HEADING_E, WH_HEADING_S, WH_HEADING_W };
enum wh_lift { WH_LIFT_DOWN = 0, WH_LIFT_UP, WH_LIFT_LIFTING, WH_LIFT_LOWERING };
enum wh_motion { WH_MOTION_IDLE = 0, WH_MOTION_MOVING, WH_MOTION_PAUSED, WH_MOTION_HOLDING };
enum wh_step_action { WH_STEP_WAIT = 0, WH_STEP_MOVE_N, WH_STEP_MOVE_E, WH_STEP_MOVE_S, WH_STEP_MOVE_W };
enum wh_stop_mode { WH_STOP_END_OF_STEP = 0, WH_STOP_NOW };
enum wh_rfid_target { WH_RFID_FLOOR = 0, WH_RFID_CARRIER };
enum wh_rfid_mode { WH_RFID_WRITE_OFF = 0, WH_RFID_WRITE_MANUAL, WH_RFID_WRITE_AUTO_CELLS };
enum wh_severity { WH_SEV_INFO = 0, WH_SEV_WARNING, WH_SEV_ERROR, WH_SEV_FATAL };
enum wh_fault_state { WH_FAULT_RAISED = 0, WH_FAULT_CLEARED };
enum wh_result {
    WH_R_OK = 0,
    WH_R_BUSY,
    WH_R_BAD_STATE,
    WH_R_WRONG_POSITION,
    WH_R_FAULT_ACTIVE,
    WH_R_LOW_BATTERY,
    WH_R_NOT_WELCOMED,
    WH_R_VERSION_UNSUPPORTED,
    WH_R_UNSUPPORTED,
    WH_R_INVALID,
    WH_R_NO_CARRIER,
    WH_R_NO_CHARGER,
    WH_R_RFID_NO_TAG,
    WH_R_RFID_MISMATCH,
    WH_R_RFID_WRITE_FAILED,
    WH_R_RFID_WRITE_DISABLED
};

/* Telemetry fault flag bits. */
#define WH_FF_DRIVE (1u << 0)
#define WH_FF_LIFT (1u << 1)
#define WH_FF_BATTERY_LOW (1u << 2)
#define WH_FF_BATTERY_CRITICAL (1u << 3)
#define WH_FF_POSITION_LOST (1u << 4)
#define WH_FF_OBSTACLE (1u << 5)
#define WH_FF_LINK_LOST (1u << 6)
#define WH_FF_ESTOP (1u << 7)
#define WH_FF_OVERTEMP (1u << 8)
#define WH_FF_RFID (1u << 9)
#define WH_FF_CHARGER (1u << 10)
#define WH_FF_BUMPER (1u << 11)

#define WH_POS_UNKNOWN 0xFFFFu
#define WH_STEP_NONE 0xFFu
#define WH_FAULT_ALL 0xFFFFu
#define WH_MAX_STEPS 32u
#define WH_MAX_LED_STEPS 16u
#define WH_MAX_UID 10u
#define WH_MAX_RFID_DATA 32u

/*
 * One struct per message, members named as the fields in messages.json (the vector generator
 * relies on that). Enum fields are plain uint8_t so a struct has a fixed, small size; the
 * codec checks their ranges. A bytes field "f" is f[] plus f_len; an array field "steps" is
 * steps[] plus steps_count.
 */
typedef struct {
    uint8_t node_kind, proto_min, proto_max, fw_major, fw_minor;
    uint16_t fw_patch;
    uint8_t hw_rev;
    uint32_t session;
} wh_hello;

typedef struct {
    uint8_t version;
    uint16_t telemetry_period_ms;
    uint32_t controller_session, node_session;
} wh_welcome;

typedef struct {
    uint32_t controller_session, uptime_ms;
} wh_heartbeat;

typedef struct {
    uint8_t acked_type, result;
    uint16_t detail;
} wh_ack;

typedef struct {
    uint16_t x, y;
    uint8_t heading, lift, carrier, charging, motion; /* packed into one byte on the wire */
    uint16_t battery, faults;
    uint8_t segment, step;
} wh_telemetry;

typedef struct {
    uint16_t code;
    uint8_t severity, fault_state;
    uint16_t x, y;
    uint32_t detail;
} wh_fault;

typedef struct {
    uint16_t code;
} wh_fault_clear;

typedef struct {
    uint8_t action, cells;
    uint16_t duration_ms;
} wh_step;

typedef struct {
    uint8_t segment;
    uint16_t start_delay_ms, x, y;
    uint8_t steps_count;
    wh_step steps[WH_MAX_STEPS];
} wh_segment;

typedef struct {
    uint8_t mode;
} wh_stop;

typedef struct {
    uint16_t target;
} wh_charge;

typedef struct {
    uint8_t target, offset, length;
} wh_rfid_read;

typedef struct {
    uint8_t target, result;
    uint8_t uid_len, uid[WH_MAX_UID];
    uint8_t data_len, data[WH_MAX_RFID_DATA];
} wh_rfid_data;

typedef struct {
    uint8_t target, offset;
    uint8_t expect_len, expect[WH_MAX_RFID_DATA];
} wh_rfid_check;

typedef struct {
    uint8_t target, offset;
    uint8_t data_len, data[WH_MAX_RFID_DATA];
} wh_rfid_write;

typedef struct {
    uint8_t mode;
} wh_rfid_write_mode;

typedef struct {
    uint8_t r, g, b;
    uint16_t duration_ms;
} wh_led_step;

typedef struct {
    uint8_t channel, repeat;
    uint8_t steps_count;
    wh_led_step steps[WH_MAX_LED_STEPS];
} wh_led_sequence;

/* A decoded frame: header plus the message selected by type. PAUSE, RESUME, LIFT, LOWER and
 * UNCHARGE have no payload and use no union member. */
typedef struct {
    uint8_t version, flags;
    uint16_t src, dst;
    uint8_t seq, ack, type;
    union {
        wh_hello hello;
        wh_welcome welcome;
        wh_heartbeat heartbeat;
        wh_ack ack;
        wh_telemetry telemetry;
        wh_fault fault;
        wh_fault_clear fault_clear;
        wh_segment segment;
        wh_stop stop;
        wh_charge charge;
        wh_rfid_read rfid_read;
        wh_rfid_data rfid_data;
        wh_rfid_check rfid_check;
        wh_rfid_write rfid_write;
        wh_rfid_write_mode rfid_write_mode;
        wh_led_sequence led_sequence;
    } u;
} wh_frame;

/* Streaming decoder. Zero-initialised by wh_decoder_init; counters only ever grow (wrap at
 * 2^32). bytes counts every byte fed, frames the good frames returned. */
typedef struct {
    uint8_t buf[WH_MAX_ENCODED];
    uint16_t len;
    uint8_t overflow; /* the current frame exceeded buf; discard until the delimiter */
    uint32_t bytes;
    uint32_t frames;
    uint32_t errors[WH_E_COUNT]; /* indexed by enum wh_status; errors[WH_OK] stays 0 */
} wh_decoder;

/* CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final xor. */
uint16_t wh_crc16(const uint8_t *data, size_t len);

/* Encodes f into out as COBS bytes plus the 0x00 delimiter (f->version 0 means
 * WH_PROTO_VERSION; other versions are refused). Returns the number of bytes written, or 0
 * when a field is out of range, the type is unknown, or cap is too small (WH_MAX_WIRE always
 * suffices). */
size_t wh_encode(const wh_frame *f, uint8_t *out, size_t cap);

/* Parses one unstuffed frame (header, payload, CRC). Returns WH_OK and fills *f, or the
 * error kind. */
enum wh_status wh_parse(const uint8_t *raw, size_t len, wh_frame *f);

void wh_decoder_init(wh_decoder *d);

/* Consumes bytes from data up to and including the first delimiter that completes a good
 * frame (then *got = 1 and *f holds it) or all of len (then *got = 0). Returns the bytes
 * consumed; call again with the rest. */
size_t wh_decoder_feed(wh_decoder *d, const uint8_t *data, size_t len, wh_frame *f, int *got);

/* 1 if type is a message type of this protocol version, else 0. */
int wh_type_known(uint8_t type);

const char *wh_status_name(enum wh_status s);

#ifdef __cplusplus
}
#endif

#endif
