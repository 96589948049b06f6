#!/usr/bin/env node
// Turns ../vectors.json into a C header for ../c/test_vectors.c, so the C test needs no JSON
// parser. Expected frames become assignment statements on wh_frame, using that the C struct
// members are named like the fields in messages.json (enum names become their numbers).
// Usage: node firmware-protocol/tools/vectors-to-c.mjs [vectors.json] > vectors.h
import { readFileSync } from 'node:fs';

const dir = new URL('..', import.meta.url);
const table = JSON.parse(readFileSync(new URL('messages.json', dir), 'utf8'));
const { vectors } = JSON.parse(readFileSync(process.argv[2] ?? new URL('vectors.json', dir), 'utf8'));

const enumValue = (enumName, name) => {
  if (enumName === 'type') {
    const m = table.messages.find((x) => x.name === name);
    if (!m) throw new Error(`unknown message type ${name}`);
    return m.type;
  }
  const e = table.enums[enumName].find((x) => x.name === name);
  if (!e) throw new Error(`unknown ${enumName} value ${name}`);
  return e.value;
};
const FLAGS = Object.fromEntries(table.flags.map((f) => [f.name, 1 << f.bit]));

function scalar(lhs, field, value, lines) {
  if (field.enum) lines.push(`${lhs} = ${enumValue(field.enum, value)};`);
  else if (field.type === 'bool') lines.push(`${lhs} = ${value ? 1 : 0};`);
  else lines.push(`${lhs} = ${value}u;`);
}

function frameLines(f, i) {
  const msg = table.messages.find((m) => m.name === f.type);
  const lines = [
    `f[${i}].version = ${f.version};`,
    `f[${i}].flags = ${f.flags.reduce((a, n) => a | FLAGS[n], 0)};`,
    `f[${i}].src = ${f.src}u; f[${i}].dst = ${f.dst}u;`,
    `f[${i}].seq = ${f.seq}; f[${i}].ack = ${f.ack};`,
    `f[${i}].type = ${msg.type};`,
  ];
  const m = `f[${i}].u.${msg.name.toLowerCase()}`;
  for (const field of msg.fields) {
    if (field.type === 'bits8') {
      for (const bit of field.bits) scalar(`${m}.${bit.name}`, bit, f.fields[bit.name], lines);
    } else if (field.type === 'bytes') {
      const b = Buffer.from(f.fields[field.name], 'hex');
      lines.push(`${m}.${field.name}_len = ${b.length};`);
      b.forEach((v, k) => lines.push(`${m}.${field.name}[${k}] = ${v};`));
    } else if (field.type === 'array') {
      const items = f.fields[field.name];
      lines.push(`${m}.${field.name}_count = ${items.length};`);
      items.forEach((item, k) => {
        for (const sub of field.fields) scalar(`${m}.${field.name}[${k}].${sub.name}`, sub, item[sub.name], lines);
      });
    } else {
      scalar(`${m}.${field.name}`, field, f.fields[field.name], lines);
    }
  }
  return lines;
}

const out = ['/* Generated from vectors.json by tools/vectors-to-c.mjs; do not edit. */', '#include <stddef.h>', ''];
const KINDS = table.decode_errors.map((e) => e.name);
vectors.forEach((v, n) => {
  const bytes = Buffer.from(v.hex, 'hex');
  out.push(`static const unsigned char vec${n}_hex[] = {${[...bytes].join(',')}};`);
  out.push(`static void vec${n}_frames(wh_frame *f) {`);
  out.push(`    (void)f;`);
  v.frames.forEach((f, i) => out.push(...frameLines(f, i).map((l) => `    ${l}`)));
  out.push('}');
  for (const k of Object.keys(v.errors)) if (!KINDS.includes(k)) throw new Error(`${v.name}: unknown error kind ${k}`);
});
out.push('', 'struct vector {', '    const char *name;', '    const unsigned char *hex;', '    size_t len;', '    int encode;',
  '    int nframes;', '    void (*frames)(wh_frame *f);', '    unsigned errors[WH_E_COUNT];', '};', '');
out.push('static const struct vector vectors[] = {');
vectors.forEach((v, n) => {
  const errors = ['0', ...KINDS.map((k) => String(v.errors[k] ?? 0))];
  out.push(`    {${JSON.stringify(v.name)}, vec${n}_hex, sizeof vec${n}_hex, ${v.encode ? 1 : 0}, ${v.frames.length}, vec${n}_frames, {${errors.join(',')}}},`);
});
out.push('};', `#define VECTOR_COUNT ${vectors.length}`, `#define VECTOR_MAX_FRAMES ${Math.max(...vectors.map((v) => v.frames.length))}`, '');
process.stdout.write(out.join('\n'));
