// Loads firmware-protocol/messages.json, the one message table, and compiles it into layouts
// the TypeScript codec walks. Written apart from the C codec on purpose (DESIGN.md: two
// independent codecs that must both pass the golden vectors), so a misreading of the spec in
// one shows up as a vector failure instead of being shared.
import { readFileSync } from 'node:fs';

export const TABLE_URL = new URL('../../../firmware-protocol/messages.json', import.meta.url);

interface EnumMap {
  toName: Map<number, string>;
  toValue: Map<string, number>;
}

/** A whole-byte unsigned integer field (or array element field). */
export interface UintField {
  kind: 'uint';
  name: string;
  size: 1 | 2 | 4;
  min: number;
  max: number;
  enumMap?: EnumMap;
}

/** Sub-fields packed into one byte, first listed = lowest bits. */
export interface BitsField {
  kind: 'bits';
  subs: { name: string; shift: number; width: number; bool: boolean; enumMap?: EnumMap }[];
}

/** A length byte, then that many bytes. */
export interface BytesField {
  kind: 'bytes';
  name: string;
  min: number;
  max: number;
}

/** A count byte, then that many elements of whole-byte fields. */
export interface ArrayField {
  kind: 'array';
  name: string;
  min: number;
  max: number;
  fields: UintField[];
}

export type Field = UintField | BitsField | BytesField | ArrayField;

export interface MessageLayout {
  id: number;
  name: string;
  direction: string;
  ackReq: boolean;
  fields: Field[];
  /** names of the properties of the TS message object, in wire order */
  keys: string[];
}

export interface ProtocolTable {
  version: number;
  limits: { header_size: number; crc_size: number; max_payload: number; max_raw_frame: number; max_encoded_frame: number };
  timing: Record<string, number>;
  byId: Map<number, MessageLayout>;
  byName: Map<string, MessageLayout>;
}

type Json = Record<string, unknown>;

function fail(where: string, what: string): never {
  throw new Error(`${TABLE_URL.pathname}: ${where}: ${what}`);
}

function int(v: unknown, where: string, lo: number, hi: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) fail(where, `expected an integer in ${lo}..${hi}, got ${JSON.stringify(v)}`);
  return v;
}

function str(v: unknown, where: string): string {
  if (typeof v !== 'string' || v === '') fail(where, 'expected a non-empty string');
  return v;
}

function list(v: unknown, where: string): Json[] {
  if (!Array.isArray(v)) fail(where, 'expected an array');
  return v as Json[];
}

const SIZES: Record<string, 1 | 2 | 4> = { u8: 1, u16: 2, u32: 4 };

/** Compiles the table; a malformed table stops the process at startup with a precise message. */
export function compileTable(raw: unknown): ProtocolTable {
  const t = raw as Json;
  const enums = new Map<string, EnumMap>();
  for (const [name, values] of Object.entries((t.enums ?? {}) as Json)) {
    if (name === 'type') continue; // built from the message list below
    const m: EnumMap = { toName: new Map(), toValue: new Map() };
    for (const e of list(values, `enums.${name}`)) {
      const value = int(e.value, `enums.${name}`, 0, 255);
      const n = str(e.name, `enums.${name}`);
      if (m.toName.has(value) || m.toValue.has(n)) fail(`enums.${name}`, `duplicate ${n}`);
      m.toName.set(value, n);
      m.toValue.set(n, value);
    }
    enums.set(name, m);
  }
  const typeEnum: EnumMap = { toName: new Map(), toValue: new Map() };
  enums.set('type', typeEnum);

  const uintField = (f: Json, where: string): UintField => {
    const size = SIZES[str(f.type, `${where}.type`)] ?? fail(where, `unknown type ${String(f.type)}`);
    const top = 2 ** (8 * size) - 1;
    const field: UintField = {
      kind: 'uint',
      name: str(f.name, where),
      size,
      min: f.min === undefined ? 0 : int(f.min, `${where}.min`, 0, top),
      max: f.max === undefined ? top : int(f.max, `${where}.max`, 0, top),
    };
    if (f.enum !== undefined) field.enumMap = enums.get(str(f.enum, where)) ?? fail(where, `unknown enum ${String(f.enum)}`);
    return field;
  };

  const byId = new Map<number, MessageLayout>();
  const byName = new Map<string, MessageLayout>();
  for (const m of list(t.messages, 'messages')) {
    const name = str(m.name, 'messages[].name');
    const where = `messages.${name}`;
    const id = int(m.type, `${where}.type`, 1, 255);
    const fields: Field[] = [];
    const keys: string[] = [];
    for (const f of list(m.fields, `${where}.fields`)) {
      const fw = `${where}.${String(f.name)}`;
      if (f.type === 'bits8') {
        let shift = 0;
        const subs: BitsField['subs'] = [];
        for (const b of list(f.bits, `${fw}.bits`)) {
          const width = int(b.width, `${fw}.width`, 1, 8);
          const bool = b.type === 'bool';
          if (bool && width !== 1) fail(fw, 'a bool is one bit wide');
          const sub: BitsField['subs'][number] = { name: str(b.name, fw), shift, width, bool };
          if (b.enum !== undefined) sub.enumMap = enums.get(str(b.enum, fw)) ?? fail(fw, `unknown enum ${String(b.enum)}`);
          subs.push(sub);
          keys.push(sub.name);
          shift += width;
        }
        if (shift > 8) fail(fw, 'more than 8 bits');
        fields.push({ kind: 'bits', subs });
      } else if (f.type === 'bytes') {
        fields.push({ kind: 'bytes', name: str(f.name, fw), min: int(f.min, `${fw}.min`, 0, 255), max: int(f.max, `${fw}.max`, 0, 255) });
        keys.push(String(f.name));
      } else if (f.type === 'array') {
        const elements = list(f.fields, `${fw}.fields`).map((e) => uintField(e, `${fw}.${String(e.name)}`));
        fields.push({ kind: 'array', name: str(f.name, fw), min: int(f.min, `${fw}.min`, 0, 255), max: int(f.max, `${fw}.max`, 0, 255), fields: elements });
        keys.push(String(f.name));
      } else {
        const u = uintField(f, fw);
        fields.push(u);
        keys.push(u.name);
      }
    }
    const layout: MessageLayout = { id, name, direction: str(m.direction, where), ackReq: m.ack_req === true, fields, keys };
    if (byId.has(id) || byName.has(name)) fail(where, 'duplicate type id or name');
    byId.set(id, layout);
    byName.set(name, layout);
    typeEnum.toName.set(id, name);
    typeEnum.toValue.set(name, id);
  }
  const limits = t.limits as ProtocolTable['limits'];
  int(limits?.max_payload, 'limits.max_payload', 1, 255);
  return { version: int(t.version, 'version', 1, 15), limits, timing: t.timing as Record<string, number>, byId, byName };
}

let loaded: ProtocolTable | undefined;

/** The table, read once (the file ships with the code, next to the firmware's copy of it). */
export function protocolTable(): ProtocolTable {
  loaded ??= compileTable(JSON.parse(readFileSync(TABLE_URL, 'utf8')));
  return loaded;
}

/** What a balcony's LED controller plays: most steps of a LED_SEQUENCE, and the shortest and longest step in milliseconds. */
export function ledSequenceLimits(): { maxSteps: number; minMs: number; maxMs: number } {
  const steps = protocolTable().byName.get('LED_SEQUENCE')!.fields.find((f): f is ArrayField => f.kind === 'array' && f.name === 'steps')!;
  const duration = steps.fields.find((f) => f.name === 'duration_ms')!;
  return { maxSteps: steps.max, minMs: duration.min, maxMs: duration.max };
}
