// The bot link protocol (firmware-protocol/): both codecs against the golden vectors, every
// message type round-tripped with generated field values, and bad bytes of every kind
// counted and dropped without a throw. The C codec is compiled here with the sanitizers and
// run against the same vectors, then fuzzed for a few seconds.
import t from 'tap';
import fc from 'fast-check';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FrameDecoder, crc16, encodeFrame } from '../../../src/link/protocol/codec.js';
import { DECODE_ERROR_KINDS, type Frame, type FrameInput, type Message, type MessageOf, type MessageType } from '../../../src/link/protocol/messages.js';
import { protocolTable, type Field, type MessageLayout, type UintField } from '../../../src/link/protocol/table.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FP = path.join(ROOT, 'firmware-protocol');
const table = protocolTable();

interface JsonFrame {
  version: number;
  flags: string[];
  src: number;
  dst: number;
  seq: number;
  ack: number;
  type: string;
  fields: Record<string, unknown>;
}
interface Vector {
  name: string;
  note: string;
  hex: string;
  encode: boolean;
  frames: JsonFrame[];
  errors: Record<string, number>;
}
const vectorsFile = JSON.parse(readFileSync(path.join(FP, 'vectors.json'), 'utf8')) as { vectors: Vector[] };
const vectors = vectorsFile.vectors;

const FLAG_NAMES = ['ack_req', 'is_ack', 'retransmit'] as const;

/** A decoded frame in the vectors' notation (bytes as hex, flags as a list). */
function toJson(f: Frame): JsonFrame {
  const { type, ...rest } = f.message as unknown as Record<string, unknown>;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) fields[k] = v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v;
  return {
    version: f.version,
    flags: FLAG_NAMES.filter((n) => f.flags[n]),
    src: f.src,
    dst: f.dst,
    seq: f.seq,
    ack: f.ack,
    type: type as string,
    fields,
  };
}

/** A vector's frame as encodeFrame input (bytes fields from hex, using the table's layout). */
function fromJson(j: JsonFrame): FrameInput {
  const layout = table.byName.get(j.type)!;
  const message: Record<string, unknown> = { type: j.type, ...j.fields };
  for (const f of layout.fields) if (f.kind === 'bytes') message[f.name] = Buffer.from(j.fields[f.name] as string, 'hex');
  return {
    version: j.version,
    flags: Object.fromEntries(j.flags.map((n) => [n, true])),
    src: j.src,
    dst: j.dst,
    seq: j.seq,
    ack: j.ack,
    message: message as unknown as Message,
  };
}

function allErrors(partial: Record<string, number>): Record<string, number> {
  return Object.fromEntries(DECODE_ERROR_KINDS.map((k) => [k, partial[k] ?? 0]));
}

// Test-side COBS, to damage raw frames under a correct CRC and stuff them again.
function unstuff(enc: Buffer): Buffer {
  const out: number[] = [];
  let r = 0;
  while (r < enc.length && enc[r] !== 0) {
    const code = enc[r]!;
    for (let i = 1; i < code; i++) out.push(enc[r + i]!);
    r += code;
    if (code !== 0xff && r < enc.length && enc[r] !== 0) out.push(0);
  }
  return Buffer.from(out);
}
function stuff(raw: Buffer): Buffer {
  const out: number[] = [0];
  let codeAt = 0;
  for (const b of raw) {
    if (b === 0 || out.length - codeAt === 0xff) {
      out[codeAt] = out.length - codeAt;
      codeAt = out.length;
      out.push(0);
      if (b === 0) continue;
    }
    out.push(b);
  }
  out[codeAt] = out.length - codeAt;
  out.push(0);
  return Buffer.from(out);
}
function withCrc(raw: Buffer): Buffer {
  const r = Buffer.from(raw);
  r.writeUInt16LE(crc16(r, 0, r.length - 2), r.length - 2);
  return r;
}

t.test('CRC-16/CCITT-FALSE check value', async (t) => {
  t.equal(crc16(Buffer.from('123456789')), 0x29b1);
});

t.test('the TS message types have exactly the table fields', async (t) => {
  // A sample of every message, checked by the compiler against messages.ts; its keys are
  // then compared with the table, so a field added on one side only fails here.
  const b = Buffer.alloc(1);
  const samples: { [K in MessageType]: MessageOf<K> } = {
    HELLO: { type: 'HELLO', node_kind: 'BOT', proto_min: 1, proto_max: 1, fw_major: 0, fw_minor: 0, fw_patch: 0, hw_rev: 0, session: 1 },
    WELCOME: { type: 'WELCOME', version: 1, telemetry_period_ms: 100, controller_session: 1, node_session: 1 },
    HEARTBEAT: { type: 'HEARTBEAT', controller_session: 1, uptime_ms: 0 },
    ACK: { type: 'ACK', acked_type: 'SEGMENT', result: 'OK', detail: 0 },
    TELEMETRY: { type: 'TELEMETRY', x: 0, y: 0, heading: 'N', lift: 'DOWN', carrier: false, charging: false, motion: 'IDLE', battery: 0, faults: 0, segment: 0, step: 255 },
    FAULT: { type: 'FAULT', code: 1, severity: 'INFO', fault_state: 'RAISED', x: 0, y: 0, detail: 0 },
    FAULT_CLEAR: { type: 'FAULT_CLEAR', code: 1 },
    SEGMENT: { type: 'SEGMENT', segment: 0, start_delay_ms: 0, x: 0, y: 0, steps: [{ action: 'WAIT', cells: 0, duration_ms: 1 }] },
    STOP: { type: 'STOP', mode: 'NOW' },
    PAUSE: { type: 'PAUSE' },
    RESUME: { type: 'RESUME' },
    LIFT: { type: 'LIFT' },
    LOWER: { type: 'LOWER' },
    CHARGE: { type: 'CHARGE', target: 1000 },
    UNCHARGE: { type: 'UNCHARGE' },
    RFID_READ: { type: 'RFID_READ', target: 'FLOOR', offset: 0, length: 0 },
    RFID_DATA: { type: 'RFID_DATA', target: 'FLOOR', result: 'OK', uid: b, data: b },
    RFID_CHECK: { type: 'RFID_CHECK', target: 'FLOOR', offset: 0, expect: b },
    RFID_WRITE: { type: 'RFID_WRITE', target: 'FLOOR', offset: 0, data: b },
    RFID_WRITE_MODE: { type: 'RFID_WRITE_MODE', mode: 'OFF' },
    LED_SEQUENCE: { type: 'LED_SEQUENCE', channel: 0, repeat: 0, steps: [{ r: 0, g: 0, b: 0, duration_ms: 10 }] },
  };
  t.same(Object.keys(samples).sort(), [...table.byName.keys()].sort(), 'same message types');
  for (const [name, sample] of Object.entries(samples)) {
    const layout = table.byName.get(name)!;
    t.same(Object.keys(sample).filter((k) => k !== 'type').sort(), [...layout.keys].sort(), `${name} fields`);
    const arrays = layout.fields.filter((f) => f.kind === 'array');
    for (const a of arrays) {
      const el = (sample as unknown as Record<string, Record<string, unknown>[]>)[a.name]![0]!;
      t.same(Object.keys(el).sort(), a.fields.map((f) => f.name).sort(), `${name}.${a.name} element fields`);
    }
    // and the sample encodes and decodes to itself
    const frames = new FrameDecoder().push(encodeFrame({ src: 1, dst: 0, message: sample }));
    t.same(frames.map((f) => f.message), [sample], `${name} round trip`);
  }
});

t.test('TS codec: golden vectors', async (t) => {
  const covered = new Set<string>();
  for (const v of vectors) {
    const bytes = Buffer.from(v.hex, 'hex');
    const whole = new FrameDecoder();
    const frames = whole.push(bytes).map(toJson);
    t.same(frames, v.frames, `${v.name}: frames`);
    t.same(whole.counters.errors, allErrors(v.errors), `${v.name}: errors`);
    t.equal(whole.counters.frames, v.frames.length, `${v.name}: frames counter`);
    t.equal(whole.counters.bytes, bytes.length, `${v.name}: bytes counter`);
    const byByte = new FrameDecoder();
    const frames1: JsonFrame[] = [];
    for (const b of bytes) frames1.push(...byByte.push(Buffer.of(b)).map(toJson));
    t.same(frames1, v.frames, `${v.name}: frames, byte by byte`);
    t.same(byByte.counters.errors, allErrors(v.errors), `${v.name}: errors, byte by byte`);
    if (v.encode) {
      t.equal(encodeFrame(fromJson(v.frames[0]!)).toString('hex'), v.hex, `${v.name}: encodes to the vector`);
      covered.add(v.frames[0]!.type);
    }
  }
  t.same([...covered].sort(), [...table.byName.keys()].sort(), 'every message type has a golden vector');
  const kinds = new Set(vectors.flatMap((v) => Object.keys(v.errors)));
  t.same([...kinds].sort(), [...DECODE_ERROR_KINDS].sort(), 'every error kind has a golden vector');
});

// --- generated frames ---

function uintArb(f: UintField): fc.Arbitrary<unknown> {
  if (f.enumMap) return fc.constantFrom(...f.enumMap.toValue.keys());
  return fc.integer({ min: f.min, max: f.max });
}

function messageArb(layout: MessageLayout): fc.Arbitrary<Message> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of layout.fields as Field[]) {
    if (f.kind === 'uint') parts[f.name] = uintArb(f);
    else if (f.kind === 'bits') {
      for (const s of f.subs) {
        parts[s.name] = s.bool ? fc.boolean() : s.enumMap ? fc.constantFrom(...s.enumMap.toValue.keys()) : fc.integer({ min: 0, max: (1 << s.width) - 1 });
      }
    } else if (f.kind === 'bytes') parts[f.name] = fc.uint8Array({ minLength: f.min, maxLength: f.max }).map((a) => Buffer.from(a));
    else {
      const el: Record<string, fc.Arbitrary<unknown>> = {};
      for (const sub of f.fields) el[sub.name] = uintArb(sub);
      parts[f.name] = fc.array(fc.record(el), { minLength: f.min, maxLength: f.max });
    }
  }
  return fc.record(parts).map((p) => ({ type: layout.name, ...p }) as unknown as Message);
}

const frameArb: fc.Arbitrary<FrameInput> = fc
  .constantFrom(...table.byName.values())
  .chain((layout) =>
    fc.record({
      flags: fc.record({ ack_req: fc.boolean(), is_ack: fc.boolean(), retransmit: fc.boolean() }),
      src: fc.integer({ min: 0, max: 0xffff }),
      dst: fc.integer({ min: 0, max: 0xffff }),
      seq: fc.integer({ min: 0, max: 255 }),
      ack: fc.integer({ min: 0, max: 255 }),
      message: messageArb(layout),
    }),
  );

function splitAt(buf: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, buf.length]) {
    out.push(buf.subarray(prev, p));
    prev = p;
  }
  return out;
}

t.test('every message type round-trips with generated values, in any chunking', async (t) => {
  for (const layout of table.byName.values()) {
    fc.assert(
      fc.property(
        fc.record({
          flags: fc.record({ ack_req: fc.boolean(), is_ack: fc.boolean(), retransmit: fc.boolean() }),
          src: fc.integer({ min: 0, max: 0xffff }),
          dst: fc.integer({ min: 0, max: 0xffff }),
          seq: fc.integer({ min: 0, max: 255 }),
          ack: fc.integer({ min: 0, max: 255 }),
          message: messageArb(layout),
        }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (input, cuts) => {
          const wire = encodeFrame(input);
          if (wire.length > table.limits.max_encoded_frame + 1) return false;
          if (wire.indexOf(0) !== wire.length - 1) return false; // one delimiter, at the end
          const d = new FrameDecoder();
          const frames = splitAt(wire, cuts).flatMap((c) => d.push(c));
          if (frames.length !== 1) return false;
          const back = toJson(frames[0]!);
          const flags = { ack_req: input.flags?.ack_req === true, is_ack: input.flags?.is_ack === true, retransmit: input.flags?.retransmit === true };
          const expected = toJson({ ...input, version: 1, flags, seq: input.seq!, ack: input.ack! });
          return JSON.stringify(back) === JSON.stringify(expected) && encodeFrame({ ...frames[0]! }).equals(wire);
        },
      ),
      { seed: 6, numRuns: 150 },
    );
    t.pass(`${layout.name}`);
  }
});

t.test('the encoder refuses what a receiver would drop', async (t) => {
  const hello: FrameInput = { src: 1, dst: 0, message: { type: 'HELLO', node_kind: 'BOT', proto_min: 1, proto_max: 1, fw_major: 0, fw_minor: 0, fw_patch: 0, hw_rev: 0, session: 1 } };
  t.ok(encodeFrame(hello));
  t.throws(() => encodeFrame({ ...hello, message: { ...hello.message, session: 0 } as Message }), /HELLO.session/);
  t.throws(() => encodeFrame({ ...hello, message: { ...hello.message, node_kind: 'ROBOT' } as unknown as Message }), /HELLO.node_kind/);
  t.throws(() => encodeFrame({ ...hello, src: 0x10000 }), /src/);
  t.throws(() => encodeFrame({ ...hello, seq: -1 }), /seq/);
  t.throws(() => encodeFrame({ ...hello, version: 16 }), /version/);
  t.throws(() => encodeFrame({ src: 1, dst: 0, message: { type: 'NOPE' } as unknown as Message }), /unknown message type/);
  t.throws(() => encodeFrame({ src: 0, dst: 1, message: { type: 'SEGMENT', segment: 0, start_delay_ms: 0, x: 0, y: 0, steps: [] } }), /SEGMENT.steps/);
  t.throws(
    () => encodeFrame({ src: 0, dst: 1, message: { type: 'RFID_WRITE', target: 'FLOOR', offset: 0, data: Buffer.alloc(33) } }),
    /RFID_WRITE.data/,
  );
  t.throws(
    () => encodeFrame({ src: 1, dst: 0, message: { type: 'TELEMETRY', x: 0, y: 0, heading: 'NE', lift: 'DOWN', carrier: false, charging: false, motion: 'IDLE', battery: 0, faults: 0, segment: 0, step: 0 } as unknown as Message }),
    /TELEMETRY.heading/,
  );
});

// --- bad bytes ---

function errorTotal(d: FrameDecoder): number {
  return Object.values(d.counters.errors).reduce((a, b) => a + b, 0);
}

t.test('random garbage in random chunks never throws and is accounted for', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 2000 }), fc.array(fc.nat(), { maxLength: 20 }), (bytes, cuts) => {
      const d = new FrameDecoder();
      const buf = Buffer.from(bytes);
      for (const c of splitAt(buf, cuts)) d.push(c);
      const delimiters = bytes.filter((b) => b === 0).length;
      // every delimiter ends at most one frame or error; an oversize run is counted when it starts
      return d.counters.bytes === bytes.length && d.counters.frames + errorTotal(d) <= delimiters + d.counters.errors.oversize;
    }),
    { seed: 7, numRuns: 500 },
  );
  // and with few zero bytes, so long runs overflow the frame buffer
  const d = new FrameDecoder();
  const noise = Buffer.alloc(5000, 0x5a);
  for (let i = 0; i < noise.length; i += 1000) noise[i + 999] = 0;
  d.push(noise);
  t.equal(d.counters.errors.oversize, 5, 'each 999-byte run is one oversize');
  t.equal(errorTotal(d), 5);
});

t.test('damaged frames are counted by kind and the next frame still decodes', async (t) => {
  const kinds = { crc: 0, truncated: 0, length: 0, type: 0, version: 0 };
  fc.assert(
    fc.property(
      frameArb,
      fc.constantFrom('crc', 'truncated', 'length', 'type', 'version'),
      fc.integer({ min: 1, max: 0xffff }),
      (input, damage, r) => {
        const wire = encodeFrame(input);
        const raw = unstuff(wire);
        let bad: Buffer;
        let expect: string[];
        if (damage === 'crc') {
          bad = Buffer.from(raw);
          bad.writeUInt16LE(bad.readUInt16LE(bad.length - 2) ^ r, bad.length - 2);
          expect = ['crc'];
        } else if (damage === 'truncated') {
          // lost tail bytes: stuffing redone, so only the CRC (or the size) can tell
          bad = raw.subarray(0, Math.max(0, raw.length - 1 - (r % raw.length)));
          expect = bad.length < 11 ? ['short'] : ['crc'];
          if (bad.length === 0) return true; // an empty frame is no frame at all
        } else if (damage === 'length') {
          bad = withCrc(raw);
          bad[8] = raw[8]! + 1 + (r % (255 - raw[8]!)) || 255; // claims more than arrived, up to 255
          if (bad[8] === raw[8]) return true;
          bad = withCrc(bad);
          expect = ['length'];
        } else if (damage === 'type') {
          const known = new Set(table.byId.keys());
          const unknown = [...Array(256).keys()].filter((id) => !known.has(id));
          bad = Buffer.from(raw);
          bad[7] = unknown[r % unknown.length]!;
          bad = withCrc(bad);
          expect = ['type'];
        } else {
          bad = Buffer.from(raw);
          bad[0] = ((2 + (r % 14)) << 4) | (bad[0]! & 0x0f); // versions 2..15
          bad = withCrc(bad);
          expect = ['version'];
        }
        kinds[damage]++;
        const d = new FrameDecoder();
        const frames = [...d.push(stuff(bad)), ...d.push(wire)];
        const errors = Object.entries(d.counters.errors).filter(([, n]) => n > 0);
        // a truncated frame may, once in 65536, still pass the CRC: then it is caught later
        if (damage === 'truncated' && errors.length === 1 && ['length', 'payload'].includes(errors[0]![0])) return frames.length === 1;
        return frames.length === 1 && JSON.stringify(errors) === JSON.stringify(expect.map((k) => [k, 1]));
      },
    ),
    { seed: 8, numRuns: 1000 },
  );
  for (const [k, n] of Object.entries(kinds)) t.ok(n > 50, `${k}: ${n} cases`);
});

t.test('a decoder can accept a later version for negotiation tests', async (t) => {
  const frame = encodeFrame({ version: 2, src: 0, dst: 1, message: { type: 'PAUSE' } });
  t.equal(new FrameDecoder().push(frame).length, 0);
  t.equal(new FrameDecoder({ versions: [1, 2] }).push(frame)[0]?.version, 2);
});

// --- the C codec ---

function haveCc(): boolean {
  return spawnSync('cc', ['--version'], { encoding: 'utf8' }).status === 0;
}

const CFLAGS = ['-std=c99', '-Wall', '-Wextra', '-Werror', '-pedantic', '-g', '-fsanitize=address,undefined', '-fno-sanitize-recover=all'];

t.test('C codec: golden vectors (cc, sanitizers)', { skip: haveCc() ? false : 'no C compiler (cc) on this machine' }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-proto-c-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const build = (vectorsJson: string, exe: string) => {
    const header = execFileSync(process.execPath, [path.join(FP, 'tools/vectors-to-c.mjs'), vectorsJson], { encoding: 'utf8' });
    writeFileSync(path.join(dir, 'vectors.h'), header);
    execFileSync('cc', [...CFLAGS, `-I${path.join(FP, 'c')}`, `-I${dir}`, path.join(FP, 'c/wh_proto.c'), path.join(FP, 'c/test_vectors.c'), '-o', exe], { stdio: 'pipe' });
  };
  const exe = path.join(dir, 'test_vectors');
  build(path.join(FP, 'vectors.json'), exe);
  const run = spawnSync(exe, { encoding: 'utf8' });
  t.equal(run.status, 0, run.stdout + run.stderr);
  t.match(run.stdout, new RegExp(`^${vectors.length} vectors, 0 failures$`, 'm'));

  // The C check can fail: one wrong byte in an expected field, one wrong error kind.
  const broken = JSON.parse(readFileSync(path.join(FP, 'vectors.json'), 'utf8')) as { vectors: Vector[] };
  broken.vectors.find((v) => v.name === 'telemetry')!.frames[0]!.fields.battery = 874;
  broken.vectors.find((v) => v.name === 'crc_wrong')!.errors = { length: 1 };
  const brokenPath = path.join(dir, 'broken.json');
  writeFileSync(brokenPath, JSON.stringify(broken));
  const exe2 = path.join(dir, 'test_broken');
  build(brokenPath, exe2);
  const run2 = spawnSync(exe2, { encoding: 'utf8' });
  t.equal(run2.status, 1);
  t.match(run2.stdout, /FAIL telemetry: encoding differs/);
  t.match(run2.stdout, /FAIL crc_wrong: errors\[crc\] = 1, expected 0/);
});

t.test('C codec: bounded fuzz run (cc, sanitizers)', { skip: haveCc() ? false : 'no C compiler (cc) on this machine' }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-proto-fuzz-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['wh_proto.c', 'wh_proto.h', 'fuzz_decoder.c']) copyFileSync(path.join(FP, 'c', f), path.join(dir, f));
  const exe = path.join(dir, 'fuzz');
  execFileSync('cc', [...CFLAGS, '-O1', `-I${dir}`, path.join(dir, 'wh_proto.c'), path.join(dir, 'fuzz_decoder.c'), '-o', exe], { stdio: 'pipe' });
  const run = spawnSync(exe, ['2.5', '1'], { encoding: 'utf8', timeout: 60_000 });
  t.equal(run.status, 0, run.stdout + run.stderr);
  const m = /fuzz: (\d+) rounds.* (\d+) frames decoded.*oversize=(\d+) framing=(\d+) short=(\d+) crc=(\d+) version=(\d+) length=(\d+) type=(\d+) payload=(\d+)/.exec(run.stdout);
  t.ok(m, run.stdout);
  // every error path was reached, and good frames came through as well
  const names = ['frames decoded', 'oversize', 'framing', 'short', 'crc', 'version', 'length', 'type', 'payload'];
  m!.slice(2).forEach((n, i) => t.ok(Number(n) > 0, `${names[i]}: ${n}`));
});
