#!/usr/bin/env node
// Writes ../vectors.json: the golden vectors. Each frame here is packed byte by byte from
// PROTOCOL.md's layouts, next to the meaning it must decode to, with its own CRC and COBS:
// this file shares no code with either codec, so a mistake in a codec cannot carry over into
// the vectors it is checked against. Run: node firmware-protocol/tools/make-vectors.mjs
import { writeFileSync } from 'node:fs';

const u8 = (v) => [v & 0xff];
const u16 = (v) => [v & 0xff, (v >> 8) & 0xff];
const u32 = (v) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
const bytes = (hex) => {
  const b = Buffer.from(hex, 'hex');
  return [b.length, ...b];
};

function crc16(data) {
  let crc = 0xffff;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
if (crc16(Buffer.from('123456789')) !== 0x29b1) throw new Error('crc16 check value');

// Textbook COBS (with the 254-byte run rule, though no valid frame needs it).
function cobs(data) {
  const out = [0];
  let code = 1;
  let codeAt = 0;
  for (const byte of data) {
    if (byte === 0) {
      out[codeAt] = code;
      codeAt = out.length;
      out.push(0);
      code = 1;
    } else {
      out.push(byte);
      code++;
      if (code === 0xff) {
        out[codeAt] = code;
        codeAt = out.length;
        out.push(0);
        code = 1;
      }
    }
  }
  out[codeAt] = code;
  return out;
}

const FLAG_BITS = { ack_req: 1, is_ack: 2, retransmit: 4 };
const TYPE_IDS = {
  HELLO: 1, WELCOME: 2, HEARTBEAT: 3, ACK: 4, TELEMETRY: 16, FAULT: 17, FAULT_CLEAR: 18,
  SEGMENT: 32, STOP: 33, PAUSE: 34, RESUME: 35, LIFT: 36, LOWER: 37, CHARGE: 38, UNCHARGE: 39,
  RFID_READ: 48, RFID_DATA: 49, RFID_CHECK: 50, RFID_WRITE: 51, RFID_WRITE_MODE: 52, LED_SEQUENCE: 64,
};

// Header + payload + CRC (little-endian), before stuffing.
function raw({ version = 1, flags = [], src, dst, seq = 0, ack = 0, type, payload, length, crcXor = 0 }) {
  const typeId = typeof type === 'number' ? type : TYPE_IDS[type];
  const flagBits = flags.reduce((a, f) => a | FLAG_BITS[f], 0);
  const head = [(version << 4) | flagBits, ...u16(src), ...u16(dst), seq, ack, typeId, length ?? payload.length];
  const body = [...head, ...payload];
  return [...body, ...u16(crc16(body) ^ crcXor)];
}
const wire = (r) => [...cobs(r), 0];
const hex = (a) => Buffer.from(a).toString('hex');

const vectors = [];
// A good frame: its bytes, and the meaning both codecs must decode it to and encode it from.
function good(name, note, header, fields, payload) {
  const r = raw({ ...header, payload });
  const frame = {
    version: header.version ?? 1,
    flags: header.flags ?? [],
    src: header.src,
    dst: header.dst,
    seq: header.seq ?? 0,
    ack: header.ack ?? 0,
    type: header.type,
    fields,
  };
  vectors.push({ name, note, hex: hex(wire(r)), raw: hex(r), encode: true, frames: [frame], errors: {} });
  return frame;
}
function bad(name, note, wireBytes, errors, frames = []) {
  vectors.push({ name, note, hex: hex(wireBytes), encode: false, frames, errors });
}

const BOT = 17;
const CTRL = 0;

// --- every message type ---
good('hello', 'bot 17 boots: firmware 2.5.1031, protocol 1..1, session 0xA1B2C3D4',
  { flags: ['ack_req'], src: BOT, dst: CTRL, seq: 0, type: 'HELLO' },
  { node_kind: 'BOT', proto_min: 1, proto_max: 1, fw_major: 2, fw_minor: 5, fw_patch: 1031, hw_rev: 3, session: 0xa1b2c3d4 },
  [...u8(1), ...u8(1), ...u8(1), ...u8(2), ...u8(5), ...u16(1031), ...u8(3), ...u32(0xa1b2c3d4)]);
good('hello_led', 'balcony LED controller 3 (address 0x1003) boots, speaks 1..2',
  { flags: ['ack_req'], src: 0x1003, dst: CTRL, seq: 0, type: 'HELLO' },
  { node_kind: 'BALCONY_LED', proto_min: 1, proto_max: 2, fw_major: 1, fw_minor: 0, fw_patch: 0, hw_rev: 1, session: 1 },
  [...u8(2), ...u8(1), ...u8(2), ...u8(1), ...u8(0), ...u16(0), ...u8(1), ...u32(1)]);
good('welcome', 'controller answers the HELLO: version 1, telemetry every 100 ms',
  { flags: ['ack_req', 'is_ack'], src: CTRL, dst: BOT, seq: 0, ack: 0, type: 'WELCOME' },
  { version: 1, telemetry_period_ms: 100, controller_session: 0x01020304, node_session: 0xa1b2c3d4 },
  [...u8(1), ...u16(100), ...u32(0x01020304), ...u32(0xa1b2c3d4)]);
good('heartbeat', 'controller heartbeat to broadcast, uptime 3600000 ms',
  { src: CTRL, dst: 0xffff, seq: 200, type: 'HEARTBEAT' },
  { controller_session: 0x01020304, uptime_ms: 3600000 },
  [...u32(0x01020304), ...u32(3600000)]);
good('ack_ok', 'bot acknowledges the controller\'s SEGMENT seq 7: OK',
  { flags: ['is_ack'], src: BOT, dst: CTRL, seq: 12, ack: 7, type: 'ACK' },
  { acked_type: 'SEGMENT', result: 'OK', detail: 0 },
  [...u8(0x20), ...u8(0), ...u16(0)]);
good('ack_invalid', 'bot refuses a SEGMENT: step 3 inconsistent',
  { flags: ['is_ack'], src: BOT, dst: CTRL, seq: 13, ack: 8, type: 'ACK' },
  { acked_type: 'SEGMENT', result: 'INVALID', detail: 3 },
  [...u8(0x20), ...u8(9), ...u16(3)]);
good('ack_welcome', 'bot acknowledges WELCOME',
  { flags: ['is_ack'], src: BOT, dst: CTRL, seq: 1, ack: 0, type: 'ACK' },
  { acked_type: 'WELCOME', result: 'OK', detail: 0 },
  [...u8(2), ...u8(0), ...u16(0)]);
good('telemetry', 'bot 17 at (12, 7) heading E, lift UP with carrier, moving, 87.5 %, segment 4 step 2',
  { src: BOT, dst: CTRL, seq: 42, type: 'TELEMETRY' },
  { x: 12, y: 7, heading: 'E', lift: 'UP', carrier: true, charging: false, motion: 'MOVING', battery: 875, faults: 0, segment: 4, step: 2 },
  [...u16(12), ...u16(7), ...u8(1 | (1 << 2) | (1 << 4) | (0 << 5) | (1 << 6)), ...u16(875), ...u16(0), ...u8(4), ...u8(2)]);
good('telemetry_charging', 'bot 4095 at (300, 1200) heading W, charging, idle, 10.0 %, battery-low flag, no step',
  { src: 4095, dst: CTRL, seq: 255, type: 'TELEMETRY' },
  { x: 300, y: 1200, heading: 'W', lift: 'DOWN', carrier: false, charging: true, motion: 'IDLE', battery: 100, faults: 0x0004, segment: 0, step: 255 },
  [...u16(300), ...u16(1200), ...u8(3 | (0 << 2) | (0 << 4) | (1 << 5) | (0 << 6)), ...u16(100), ...u16(4), ...u8(0), ...u8(255)]);
good('telemetry_lost', 'position unknown, holding after link loss, every state bit set',
  { src: 1, dst: CTRL, seq: 0, type: 'TELEMETRY' },
  { x: 65535, y: 65535, heading: 'W', lift: 'LOWERING', carrier: true, charging: true, motion: 'HOLDING', battery: 1000, faults: 0x0fff, segment: 255, step: 255 },
  [...u16(65535), ...u16(65535), ...u8(0xff), ...u16(1000), ...u16(0x0fff), ...u8(255), ...u8(255)]);
good('fault', 'drive stall at (12, 8), 7400 mA, ERROR raised',
  { flags: ['ack_req'], src: BOT, dst: CTRL, seq: 43, type: 'FAULT' },
  { code: 0x0102, severity: 'ERROR', fault_state: 'RAISED', x: 12, y: 8, detail: 7400 },
  [...u16(0x0102), ...u8(2), ...u8(0), ...u16(12), ...u16(8), ...u32(7400)]);
good('fault_clear', 'controller clears every latched fault',
  { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 9, type: 'FAULT_CLEAR' },
  { code: 65535 },
  [...u16(65535)]);
good('segment', 'segment 4 from (12, 7): 3 cells E in 2400 ms, wait 500 ms, 2 cells S in 1800 ms',
  { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 7, type: 'SEGMENT' },
  { segment: 4, start_delay_ms: 150, x: 12, y: 7, steps: [
    { action: 'MOVE_E', cells: 3, duration_ms: 2400 },
    { action: 'WAIT', cells: 0, duration_ms: 500 },
    { action: 'MOVE_S', cells: 2, duration_ms: 1800 },
  ] },
  [...u8(4), ...u16(150), ...u16(12), ...u16(7), ...u8(3), 2, 3, ...u16(2400), 0, 0, ...u16(500), 3, 2, ...u16(1800)]);
{
  const steps = [];
  const packed = [];
  for (let i = 0; i < 32; i++) {
    const action = 1 + (i % 4);
    steps.push({ action: ['WAIT', 'MOVE_N', 'MOVE_E', 'MOVE_S', 'MOVE_W'][action], cells: 1, duration_ms: 60000 - i });
    packed.push(action, 1, ...u16(60000 - i));
  }
  good('segment_max', 'largest segment: 32 steps, start delay 60000 ms, retransmitted',
    { flags: ['ack_req', 'retransmit'], src: CTRL, dst: 4095, seq: 255, type: 'SEGMENT' },
    { segment: 255, start_delay_ms: 60000, x: 0, y: 0, steps },
    [...u8(255), ...u16(60000), ...u16(0), ...u16(0), ...u8(32), ...packed]);
}
good('stop', 'stop now', { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 10, type: 'STOP' }, { mode: 'NOW' }, [...u8(1)]);
good('stop_end_of_step', 'stop at the next cell centre', { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 11, type: 'STOP' }, { mode: 'END_OF_STEP' }, [...u8(0)]);
good('pause', 'pause', { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 12, type: 'PAUSE' }, {}, []);
good('resume', 'resume', { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 13, type: 'RESUME' }, {}, []);
good('lift', 'lift the carrier', { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 14, type: 'LIFT' }, {}, []);
good('lower', 'lower the carrier', { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 15, type: 'LOWER' }, {}, []);
good('charge', 'charge to 95.0 %', { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 16, type: 'CHARGE' }, { target: 950 }, [...u16(950)]);
good('uncharge', 'stop charging', { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 17, type: 'UNCHARGE' }, {}, []);
good('rfid_read', 'read 8 bytes at offset 0 of the floor tag',
  { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 18, type: 'RFID_READ' },
  { target: 'FLOOR', offset: 0, length: 8 }, [...u8(0), ...u8(0), ...u8(8)]);
good('rfid_data', 'answer to seq 18: 7-byte UID, data = cell (12, 7) as two u16 plus 4 zero bytes',
  { flags: ['is_ack'], src: BOT, dst: CTRL, seq: 50, ack: 18, type: 'RFID_DATA' },
  { target: 'FLOOR', result: 'OK', uid: '04a224b2c95e80', data: '0c00070000000000' },
  [...u8(0), ...u8(0), ...bytes('04a224b2c95e80'), ...bytes('0c00070000000000')]);
good('rfid_data_no_tag', 'no carrier tag found',
  { flags: ['is_ack'], src: BOT, dst: CTRL, seq: 51, ack: 19, type: 'RFID_DATA' },
  { target: 'CARRIER', result: 'RFID_NO_TAG', uid: '', data: '' },
  [...u8(1), ...u8(12), ...bytes(''), ...bytes('')]);
good('rfid_check', 'check that the carrier tag holds "C-000971" at offset 16',
  { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 20, type: 'RFID_CHECK' },
  { target: 'CARRIER', offset: 16, expect: Buffer.from('C-000971').toString('hex') },
  [...u8(1), ...u8(16), ...bytes(Buffer.from('C-000971').toString('hex'))]);
good('rfid_write', 'write cell (12, 7) into the floor tag (32 bytes, all positions)',
  { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 21, type: 'RFID_WRITE' },
  { target: 'FLOOR', offset: 0, data: '0c000700' + 'ff'.repeat(28) },
  [...u8(0), ...u8(0), ...bytes('0c000700' + 'ff'.repeat(28))]);
good('rfid_write_mode', 'writing mode AUTO_CELLS',
  { flags: ['ack_req'], src: CTRL, dst: BOT, seq: 22, type: 'RFID_WRITE_MODE' },
  { mode: 'AUTO_CELLS' }, [...u8(2)]);
good('led_sequence', 'balcony 3, channel 1: green 500 ms, off 500 ms, forever',
  { flags: ['ack_req'], src: CTRL, dst: 0x1003, seq: 1, type: 'LED_SEQUENCE' },
  { channel: 1, repeat: 0, steps: [{ r: 0, g: 255, b: 0, duration_ms: 500 }, { r: 0, g: 0, b: 0, duration_ms: 500 }] },
  [...u8(1), ...u8(0), ...u8(2), 0, 255, 0, ...u16(500), 0, 0, 0, ...u16(500)]);
{
  const steps = [];
  const packed = [];
  for (let i = 0; i < 16; i++) {
    steps.push({ r: i * 16, g: 255 - i, b: i, duration_ms: 10 + i });
    packed.push(i * 16, 255 - i, i, ...u16(10 + i));
  }
  good('led_sequence_max', 'channel 15, 16 steps, played 3 times',
    { flags: ['ack_req'], src: CTRL, dst: 0x10ff, seq: 2, type: 'LED_SEQUENCE' },
    { channel: 15, repeat: 3, steps }, [...u8(15), ...u8(3), ...u8(16), ...packed]);
}

// --- bad bytes: each must be dropped and counted under exactly this kind ---
const telemetry = raw({ src: BOT, dst: CTRL, seq: 42, type: 'TELEMETRY',
  payload: [...u16(12), ...u16(7), 0x55, ...u16(875), ...u16(0), 4, 2] });
const goodTelemetry = vectors.find((v) => v.name === 'telemetry');
{
  const r = [...telemetry];
  r[9] ^= 0x01; // x 12 -> 13, CRC unchanged
  bad('crc_bit_flip', 'telemetry with one payload bit flipped', wire(r), { crc: 1 });
}
bad('crc_wrong', 'telemetry with a CRC that is off by one bit',
  wire(raw({ src: BOT, dst: CTRL, seq: 42, type: 'TELEMETRY', payload: telemetry.slice(9, 20), crcXor: 0x0100 })), { crc: 1 });
{
  const w = wire(telemetry);
  bad('truncated_cobs', 'telemetry with its last 4 bytes lost: a COBS code points past the end',
    [...w.slice(0, w.length - 5), 0], { framing: 1 });
}
{
  // The CRC bytes lost and the rest stuffed again: the stuffing is valid, the CRC (now read
  // from the last two payload bytes) is not.
  bad('truncated_crc', 'telemetry with its last 2 CRC bytes lost: valid COBS, wrong CRC',
    [...cobs(telemetry.slice(0, telemetry.length - 2)), 0], { crc: 1 });
}
bad('short', 'a 5-byte frame', wire([0x10, 0x11, 0x00, 0x00, 0x00]), { short: 1 });
bad('framing', 'code byte 0x05 with only 2 bytes after it', [0x05, 0x01, 0x02, 0x00], { framing: 1 });
bad('oversize', '300 nonzero bytes before a delimiter', [...Array(300).fill(0x11), 0], { oversize: 1 });
{
  // 241-byte payload: a real frame one byte above max_payload; too long on the wire.
  const r = raw({ src: CTRL, dst: BOT, type: 'SEGMENT', payload: Array(241).fill(0x22), length: 241 });
  bad('oversize_frame', 'a frame with a 241-byte payload (max is 240)', wire(r), { oversize: 1 });
}
bad('length_oversize', 'header length 255 on an 11-byte payload, CRC correct',
  wire(raw({ src: BOT, dst: CTRL, type: 'TELEMETRY', payload: telemetry.slice(9, 20), length: 255 })), { length: 1 });
bad('length_short', 'header length 10 on an 11-byte payload, CRC correct',
  wire(raw({ src: BOT, dst: CTRL, type: 'TELEMETRY', payload: telemetry.slice(9, 20), length: 10 })), { length: 1 });
bad('version_2', 'header version 2, CRC correct',
  wire(raw({ version: 2, src: BOT, dst: CTRL, type: 'TELEMETRY', payload: telemetry.slice(9, 20) })), { version: 1 });
bad('version_0', 'header version 0, CRC correct',
  wire(raw({ version: 0, src: BOT, dst: CTRL, type: 'PAUSE', payload: [] })), { version: 1 });
bad('unknown_type', 'type 0x7F, CRC correct', wire(raw({ src: CTRL, dst: BOT, type: 0x7f, payload: [1, 2, 3] })), { type: 1 });
bad('unknown_type_0', 'type 0x00, CRC correct', wire(raw({ src: CTRL, dst: BOT, type: 0, payload: [] })), { type: 1 });
const payloadBad = (name, note, type, payload) =>
  bad(name, note, wire(raw({ flags: ['ack_req'], src: CTRL, dst: BOT, type, payload })), { payload: 1 });
payloadBad('payload_battery', 'telemetry battery 1001 permille', 'TELEMETRY',
  [...u16(12), ...u16(7), 0x55, ...u16(1001), ...u16(0), 4, 2]);
payloadBad('payload_fault_bits', 'telemetry faults with reserved bit 12 set', 'TELEMETRY',
  [...u16(12), ...u16(7), 0x55, ...u16(875), ...u16(0x1000), 4, 2]);
payloadBad('payload_short', 'telemetry payload of 10 bytes', 'TELEMETRY', telemetry.slice(9, 19));
payloadBad('payload_trailing', 'PAUSE with one payload byte', 'PAUSE', [0]);
payloadBad('payload_stop_mode', 'STOP mode 2', 'STOP', [2]);
payloadBad('payload_no_steps', 'SEGMENT with 0 steps', 'SEGMENT', [4, ...u16(0), ...u16(1), ...u16(1), 0]);
payloadBad('payload_33_steps', 'SEGMENT claiming 33 steps', 'SEGMENT',
  [4, ...u16(0), ...u16(1), ...u16(1), 33, ...Array(33).fill([1, 1, 100, 0]).flat()]);
payloadBad('payload_step_action', 'SEGMENT step action 5', 'SEGMENT', [4, ...u16(0), ...u16(1), ...u16(1), 1, 5, 1, ...u16(100)]);
payloadBad('payload_step_duration', 'SEGMENT step duration 0 ms', 'SEGMENT', [4, ...u16(0), ...u16(1), ...u16(1), 1, 1, 1, ...u16(0)]);
payloadBad('payload_steps_missing', 'SEGMENT claiming 2 steps, carrying 1', 'SEGMENT', [4, ...u16(0), ...u16(1), ...u16(1), 2, 1, 1, ...u16(100)]);
payloadBad('payload_session_0', 'HELLO with session 0', 'HELLO', [1, 1, 1, 2, 5, ...u16(1031), 3, ...u32(0)]);
payloadBad('payload_welcome_period', 'WELCOME telemetry period 49 ms', 'WELCOME', [1, ...u16(49), ...u32(1), ...u32(1)]);
payloadBad('payload_node_kind', 'HELLO node kind 3', 'HELLO', [3, 1, 1, 2, 5, ...u16(1031), 3, ...u32(5)]);
payloadBad('payload_ack_type', 'ACK of unknown type 0x7F', 'ACK', [0x7f, 0, 0, 0]);
payloadBad('payload_ack_result', 'ACK result 16', 'ACK', [0x20, 16, 0, 0]);
payloadBad('payload_uid_long', 'RFID_DATA with an 11-byte UID', 'RFID_DATA', [0, 0, ...bytes('00'.repeat(11)), 0]);
payloadBad('payload_uid_overrun', 'RFID_DATA whose UID length runs past the payload', 'RFID_DATA', [0, 0, 10, 1, 2, 3]);
payloadBad('payload_check_empty', 'RFID_CHECK with nothing to compare', 'RFID_CHECK', [0, 0, 0]);
payloadBad('payload_charge_target', 'CHARGE to 99 permille', 'CHARGE', [...u16(99)]);
payloadBad('payload_led_channel', 'LED_SEQUENCE channel 16', 'LED_SEQUENCE', [16, 0, 1, 1, 2, 3, ...u16(100)]);
payloadBad('payload_led_duration', 'LED_SEQUENCE step of 9 ms', 'LED_SEQUENCE', [1, 0, 1, 1, 2, 3, ...u16(9)]);

// --- streams: resynchronisation at the next delimiter ---
const tel = goodTelemetry.frames[0];
bad('garbage_then_frame', 'line noise (code byte 0xDE points past the end), then a good telemetry frame',
  [0xde, 0xad, 0xbe, 0xef, 0x00, ...wire(telemetry)], { framing: 1 }, [tel]);
bad('garbage_crc', 'noise that is valid COBS but fails the CRC',
  [0x0e, 0x10, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0x00], { crc: 1 });
bad('leading_delimiters', 'empty frames before a good one are not errors',
  [0x00, 0x00, 0x00, ...wire(telemetry)], {}, [tel]);
bad('frame_cut_then_flush', 'a frame cut short, then a frame sent with a leading delimiter: the first is lost, the second kept',
  [...wire(telemetry).slice(0, 8), 0x00, ...wire(telemetry)], { framing: 1 }, [tel]);
bad('frame_cut_no_flush', 'a frame cut short runs into the next: both are lost as one frame that fails the CRC (why senders may lead with 0x00)',
  [...wire(telemetry).slice(0, 8), ...wire(telemetry)], { crc: 1 });
{
  const two = [...wire(telemetry), ...wire(telemetry)];
  bad('two_frames', 'two frames back to back', two, {}, [tel, tel]);
}

const out = {
  doc: 'Golden vectors of PROTOCOL.md. hex: bytes on the wire (COBS, then the 0x00 delimiter); raw: the unstuffed header, payload and CRC. A decoder fed hex must return exactly frames (in order) and count exactly errors by kind, nothing else. encode: true means an encoder given the frame must produce hex byte for byte. Field values: enums by name, booleans as true/false, bytes fields as lowercase hex.',
  crc_check: { input: '123456789', crc16: '29b1' },
  vectors,
};
const path = new URL('../vectors.json', import.meta.url);
// One vector per line: a diff then shows which vectors changed.
const text = JSON.stringify({ ...out, vectors: [] }, null, 1).replace(
  '"vectors": []',
  `"vectors": [\n${vectors.map((v) => '  ' + JSON.stringify(v)).join(',\n')}\n ]`,
);
JSON.parse(text);
writeFileSync(path, text + '\n');
console.log(`${vectors.length} vectors -> ${path.pathname}`);
