// The TypeScript codec of the bot link (firmware-protocol/PROTOCOL.md): encodeFrame turns a
// typed frame into wire bytes, FrameDecoder turns a byte stream back into frames and counts
// what it drops. Field layouts come from messages.json at runtime (table.ts), so a message
// added to the table is encoded and decoded here without new code.
import { DECODE_ERROR_KINDS, type DecodeErrorKind, type Frame, type FrameInput, type Message } from './messages.js';
import { protocolTable, type Field, type MessageLayout, type UintField } from './table.js';

const table = protocolTable();
const HEADER = table.limits.header_size;
const CRC = table.limits.crc_size;
const MAX_PAYLOAD = table.limits.max_payload;
const MAX_ENCODED = table.limits.max_encoded_frame;
export const PROTOCOL_VERSION = table.version;

const FLAG_ACK_REQ = 0x1;
const FLAG_IS_ACK = 0x2;
const FLAG_RETRANSMIT = 0x4;

// CRC-16/CCITT-FALSE, table-driven (the C codec computes it bit by bit: a different route to
// the same check value 0x29B1 for "123456789").
const CRC_TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let c = i << 8;
  for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
  CRC_TABLE[i] = c;
}

export function crc16(data: Uint8Array, start = 0, end = data.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ CRC_TABLE[((crc >> 8) ^ data[i]!) & 0xff]!;
  return crc;
}

// --- encoding ---

function checkUint(v: unknown, f: UintField, where: string): number {
  let n: unknown = v;
  if (f.enumMap) {
    n = typeof v === 'string' ? f.enumMap.toValue.get(v) : undefined;
    if (n === undefined) throw new RangeError(`${where}: ${JSON.stringify(v)} is not one of ${[...f.enumMap.toValue.keys()].join(', ')}`);
  }
  if (typeof n !== 'number' || !Number.isInteger(n) || n < f.min || n > f.max) {
    throw new RangeError(`${where}: ${JSON.stringify(v)} is not an integer in ${f.min}..${f.max}`);
  }
  return n;
}

function writeUint(buf: Buffer, at: number, size: number, n: number): number {
  if (size === 1) buf[at] = n;
  else if (size === 2) buf.writeUInt16LE(n, at);
  else buf.writeUInt32LE(n, at);
  return at + size;
}

function writeFields(layout: MessageLayout, msg: Record<string, unknown>, buf: Buffer): number {
  let at = 0;
  for (const f of layout.fields) {
    const where = `${layout.name}.${f.kind === 'bits' ? f.subs.map((s) => s.name).join('/') : f.name}`;
    if (f.kind === 'uint') {
      at = writeUint(buf, at, f.size, checkUint(msg[f.name], f, where));
    } else if (f.kind === 'bits') {
      let byte = 0;
      for (const s of f.subs) {
        const v = msg[s.name];
        let n: number | undefined;
        if (s.bool) n = v === true ? 1 : v === false ? 0 : undefined;
        else if (s.enumMap) n = typeof v === 'string' ? s.enumMap.toValue.get(v) : undefined;
        else n = typeof v === 'number' && Number.isInteger(v) ? v : undefined;
        if (n === undefined || n < 0 || n >= 1 << s.width) throw new RangeError(`${layout.name}.${s.name}: bad value ${JSON.stringify(v)}`);
        byte |= n << s.shift;
      }
      buf[at++] = byte;
    } else if (f.kind === 'bytes') {
      const v = msg[f.name];
      if (!(v instanceof Uint8Array) || v.length < f.min || v.length > f.max) {
        throw new RangeError(`${where}: expected ${f.min}..${f.max} bytes`);
      }
      buf[at++] = v.length;
      buf.set(v, at);
      at += v.length;
    } else {
      const v = msg[f.name];
      if (!Array.isArray(v) || v.length < f.min || v.length > f.max) throw new RangeError(`${where}: expected ${f.min}..${f.max} elements`);
      buf[at++] = v.length;
      v.forEach((el: Record<string, unknown>, i) => {
        for (const sub of f.fields) at = writeUint(buf, at, sub.size, checkUint(el?.[sub.name], sub, `${where}[${i}].${sub.name}`));
      });
    }
  }
  return at;
}

function cobsEncode(raw: Uint8Array): Buffer {
  const out = Buffer.alloc(raw.length + Math.ceil(raw.length / 254) + 2);
  let codeAt = 0;
  let o = 1;
  let code = 1;
  for (const byte of raw) {
    if (byte !== 0) {
      out[o++] = byte;
      code++;
    }
    if (byte === 0 || code === 0xff) {
      out[codeAt] = code;
      codeAt = o++;
      code = 1;
    }
  }
  out[codeAt] = code;
  out[o++] = 0;
  return out.subarray(0, o);
}

/**
 * Encodes one frame: COBS bytes and the 0x00 delimiter, ready for the line. Throws (TypeError
 * or RangeError naming the field) on a message that does not fit its layout, so nothing that
 * a receiver would drop ever leaves. version may be set to 1..15 to test a peer's negotiation;
 * the default is this protocol's version.
 */
export function encodeFrame(input: FrameInput): Buffer {
  const layout = table.byName.get(input.message?.type);
  if (!layout) throw new TypeError(`unknown message type ${JSON.stringify(input.message?.type)}`);
  const version = input.version ?? PROTOCOL_VERSION;
  const header: [string, number, number][] = [
    ['version', version, 15],
    ['src', input.src, 0xffff],
    ['dst', input.dst, 0xffff],
    ['seq', input.seq ?? 0, 0xff],
    ['ack', input.ack ?? 0, 0xff],
  ];
  for (const [name, v, max] of header) {
    if (!Number.isInteger(v) || v < 0 || v > max || (name === 'version' && v === 0)) throw new RangeError(`header ${name}: ${v} is out of range`);
  }
  const raw = Buffer.alloc(HEADER + MAX_PAYLOAD + CRC);
  const length = writeFields(layout, input.message as unknown as Record<string, unknown>, raw.subarray(HEADER, HEADER + MAX_PAYLOAD));
  const flags = input.flags ?? {};
  raw[0] = (version << 4) | (flags.ack_req ? FLAG_ACK_REQ : 0) | (flags.is_ack ? FLAG_IS_ACK : 0) | (flags.retransmit ? FLAG_RETRANSMIT : 0);
  raw.writeUInt16LE(input.src, 1);
  raw.writeUInt16LE(input.dst, 3);
  raw[5] = input.seq ?? 0;
  raw[6] = input.ack ?? 0;
  raw[7] = layout.id;
  raw[8] = length;
  raw.writeUInt16LE(crc16(raw, 0, HEADER + length), HEADER + length);
  return cobsEncode(raw.subarray(0, HEADER + length + CRC));
}

// --- decoding ---

class PayloadError extends Error {}

class Reader {
  at = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly end: number,
  ) {}
  take(n: number): number {
    if (this.at + n > this.end) throw new PayloadError('payload too short');
    const at = this.at;
    this.at += n;
    return at;
  }
  uint(size: 1 | 2 | 4): number {
    const at = this.take(size);
    return size === 1 ? this.buf[at]! : size === 2 ? this.buf.readUInt16LE(at) : this.buf.readUInt32LE(at);
  }
  bytes(n: number): Buffer {
    const at = this.take(n);
    return Buffer.from(this.buf.subarray(at, at + n)); // a copy: the decoder reuses its buffer
  }
}

function readUint(r: Reader, f: UintField): number | string {
  const n = r.uint(f.size);
  if (n < f.min || n > f.max) throw new PayloadError(`${f.name} out of range`);
  if (!f.enumMap) return n;
  const name = f.enumMap.toName.get(n);
  if (name === undefined) throw new PayloadError(`${f.name}: no such value`);
  return name;
}

function readFields(fields: Field[], r: Reader, msg: Record<string, unknown>): void {
  for (const f of fields) {
    if (f.kind === 'uint') {
      msg[f.name] = readUint(r, f);
    } else if (f.kind === 'bits') {
      const byte = r.uint(1);
      for (const s of f.subs) {
        const n = (byte >> s.shift) & ((1 << s.width) - 1);
        if (s.bool) msg[s.name] = n === 1;
        else if (s.enumMap) {
          const name = s.enumMap.toName.get(n);
          if (name === undefined) throw new PayloadError(`${s.name}: no such value`);
          msg[s.name] = name;
        } else msg[s.name] = n;
      }
    } else if (f.kind === 'bytes') {
      const n = r.uint(1);
      if (n < f.min || n > f.max) throw new PayloadError(`${f.name}: length ${n}`);
      msg[f.name] = r.bytes(n);
    } else {
      const n = r.uint(1);
      if (n < f.min || n > f.max) throw new PayloadError(`${f.name}: count ${n}`);
      const items: Record<string, unknown>[] = [];
      for (let i = 0; i < n; i++) {
        const el: Record<string, unknown> = {};
        for (const sub of f.fields) el[sub.name] = readUint(r, sub);
        items.push(el);
      }
      msg[f.name] = items;
    }
  }
}

/**
 * Parses one unstuffed frame (header, payload, CRC), checking in the order PROTOCOL.md
 * gives: short, crc, version, length, type, payload. Returns the frame or the error kind.
 */
export function parseFrame(raw: Buffer, versions: ReadonlySet<number> = new Set([PROTOCOL_VERSION])): Frame | DecodeErrorKind {
  if (raw.length < HEADER + CRC) return 'short';
  if (crc16(raw, 0, raw.length - CRC) !== raw.readUInt16LE(raw.length - CRC)) return 'crc';
  const version = raw[0]! >> 4;
  if (!versions.has(version)) return 'version';
  const length = raw[8]!;
  if (length !== raw.length - HEADER - CRC) return 'length';
  const layout = table.byId.get(raw[7]!);
  if (!layout) return 'type';
  const message: Record<string, unknown> = { type: layout.name };
  const r = new Reader(raw, HEADER + length);
  r.at = HEADER;
  try {
    readFields(layout.fields, r, message);
  } catch (err) {
    if (err instanceof PayloadError) return 'payload';
    throw err;
  }
  if (r.at !== HEADER + length) return 'payload'; // trailing bytes
  const flags = raw[0]! & 0x0f;
  return {
    version,
    flags: { ack_req: (flags & FLAG_ACK_REQ) !== 0, is_ack: (flags & FLAG_IS_ACK) !== 0, retransmit: (flags & FLAG_RETRANSMIT) !== 0 },
    src: raw.readUInt16LE(1),
    dst: raw.readUInt16LE(3),
    seq: raw[5]!,
    ack: raw[6]!,
    message: message as unknown as Message,
  };
}

/** COBS decoding of one frame's bytes (without the delimiter); undefined when malformed. */
function cobsDecode(enc: Buffer, len: number, out: Buffer): number | undefined {
  let r = 0;
  let w = 0;
  while (r < len) {
    const code = enc[r]!;
    if (code === 0 || r + code > len) return undefined;
    enc.copy(out, w, r + 1, r + code);
    w += code - 1;
    r += code;
    if (code !== 0xff && r < len) out[w++] = 0;
  }
  return w;
}

export interface DecoderCounters {
  /** bytes pushed */
  bytes: number;
  /** good frames returned */
  frames: number;
  /** frames dropped, by kind */
  errors: Record<DecodeErrorKind, number>;
}

/**
 * Streaming decoder: push() whatever the serial port delivers, in any chunking; it returns
 * the frames completed by that chunk. Bad input never throws: it is counted in counters and
 * decoding resumes at the next 0x00.
 */
export class FrameDecoder {
  readonly counters: DecoderCounters = {
    bytes: 0,
    frames: 0,
    errors: Object.fromEntries(DECODE_ERROR_KINDS.map((k) => [k, 0])) as Record<DecodeErrorKind, number>,
  };
  private readonly enc = Buffer.alloc(MAX_ENCODED);
  private readonly raw = Buffer.alloc(MAX_ENCODED);
  private len = 0;
  private overflow = false;
  private readonly versions: ReadonlySet<number>;

  /** versions: the header versions accepted (default: this protocol's). */
  constructor(options: { versions?: number[] } = {}) {
    this.versions = new Set(options.versions ?? [PROTOCOL_VERSION]);
  }

  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    this.counters.bytes += chunk.length;
    let pos = 0;
    while (pos < chunk.length) {
      const zero = chunk.indexOf(0, pos);
      const end = zero === -1 ? chunk.length : zero;
      if (!this.overflow) {
        if (this.len + end - pos > MAX_ENCODED) {
          // Counted when it happens, not at the delimiter, so a sender that never sends one
          // still shows up.
          this.overflow = true;
          this.counters.errors.oversize++;
        } else {
          this.enc.set(chunk.subarray(pos, end), this.len);
          this.len += end - pos;
        }
      }
      if (zero === -1) break;
      this.endFrame(frames);
      pos = zero + 1;
    }
    return frames;
  }

  private endFrame(frames: Frame[]): void {
    // An empty frame (a leading or doubled delimiter) is allowed and not counted.
    if (!this.overflow && this.len > 0) {
      const n = cobsDecode(this.enc, this.len, this.raw);
      const result = n === undefined ? 'framing' : parseFrame(this.raw.subarray(0, n), this.versions);
      if (typeof result === 'string') this.counters.errors[result]++;
      else {
        this.counters.frames++;
        frames.push(result);
      }
    }
    this.len = 0;
    this.overflow = false;
  }
}
