// The streaming multipart scanner: the same parts as uWS's own parser (getParts, a whole body
// in memory) whatever the chunking, and the refusals of malformed bodies.
import t from 'tap';
import fc from 'fast-check';
import { getParts } from '../../../src/http/uws.js';
import { MultipartScanError, MultipartScanner } from '../../../src/http/multipart-scan.js';

const LIMITS = { maxHeaderBytes: 16 * 1024, maxParts: 256 };

interface Part {
  name: string;
  filename?: string;
  type?: string;
  value: Buffer;
}

function encode(parts: Part[], boundary: string, preamble = ''): Buffer {
  const chunks: Buffer[] = [Buffer.from(preamble)];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), p.value, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\nepilogue`));
  return Buffer.concat(chunks);
}

/** Scans `body` cut at `cuts`; returns each part's headers as text and its bytes. */
function scan(body: Buffer, boundary: string, cuts: number[]): { headers: string; data: Buffer }[] {
  const scanner = new MultipartScanner(boundary, LIMITS);
  let from = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < body.length)].sort((a, b) => a - b).concat(body.length)) {
    // A fresh copy each time, overwritten afterwards: the scanner must not keep the caller's memory.
    const piece = Buffer.from(body.subarray(from, cut));
    scanner.push(piece);
    piece.fill(0x78);
    from = cut;
  }
  return scanner.end().map((p) => ({ headers: p.headers.toString('utf8'), data: body.subarray(p.start, p.end) }));
}

const boundaryArb = fc.stringMatching(/^[A-Za-z0-9'()+_,.\/:=?-]{1,40}$/);
const nameArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);
// Values full of what a scanner can trip on: CR, LF, dashes and pieces of the boundary itself.
const valueArb = (boundary: string) => fc.array(
  fc.oneof(fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)), fc.constantFrom('\r\n', '\r\n-', '\r\n--', '--', `\r\n--${boundary.slice(0, -1)}`, `--${boundary}`, '\r', '\n').map((s) => Buffer.from(s))),
  { maxLength: 12 },
).map((pieces) => Buffer.concat(pieces)).filter((v) => !v.includes(`--${boundary}`)); // uWS splits at `--boundary` even without the CRLF before it

t.test('the parts uWS finds, whatever the chunking', async () => {
  fc.assert(
    fc.property(
      boundaryArb.chain((boundary) => fc.record({
        boundary: fc.constant(boundary),
        parts: fc.array(fc.record({ name: nameArb, filename: fc.option(nameArb.map((n) => `${n}.bin`), { nil: undefined }), type: fc.option(fc.constantFrom('text/plain', 'image/png'), { nil: undefined }), value: valueArb(boundary) }), { maxLength: 6 }),
        cuts: fc.array(fc.nat({ max: 4000 }), { maxLength: 8 }),
      })),
      ({ boundary, parts, cuts }) => {
        const body = encode(parts as Part[], boundary);
        const ours = scan(body, boundary, cuts);
        const theirs = getParts(body, `multipart/form-data; boundary=${boundary}`) ?? [];
        if (ours.length !== theirs.length) return false;
        return ours.every((p, i) => {
          const u = theirs[i]!;
          return p.data.equals(Buffer.from(u.data)) && p.headers.includes(`name="${u.name}"`)
            && (u.filename === undefined || p.headers.includes(`filename="${u.filename}"`)) && (u.type === undefined || p.headers.includes(`Content-Type: ${u.type}`));
        });
      },
    ),
    { numRuns: 400 },
  );
});

t.test('one byte at a time gives the same as all at once', async (t) => {
  const body = encode([{ name: 'a', value: Buffer.from('x\r\n--boun\r\ny') }, { name: 'b', filename: 'f.bin', value: Buffer.alloc(0) }, { name: 'c', value: Buffer.from('--') }], 'bound', 'preamble\r\n');
  const all = scan(body, 'bound', []);
  const bytewise = scan(body, 'bound', Array.from({ length: body.length }, (_, i) => i));
  t.same(bytewise, all);
  t.same(all.map((p) => p.data.toString()), ['x\r\n--boun\r\ny', '', '--']);
});

t.test('a part without header lines; transport padding after a boundary', async (t) => {
  const body = Buffer.from('--b \t\r\n\r\nno headers\r\n--b\r\nContent-Disposition: form-data; name="x"\r\n\r\nv\r\n--b--');
  t.same(scan(body, 'b', [3, 8]).map((p) => [p.headers, p.data.toString()]), [['', 'no headers'], ['Content-Disposition: form-data; name="x"', 'v']]);
});

t.test('malformed bodies and too many parts are refused', async (t) => {
  const cases: [string, string, MultipartScanError['reason']][] = [
    ['no boundary anywhere', 'just some text', 'malformed'],
    ['no closing boundary', '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nv', 'malformed'],
    ['cut inside the headers', '--b\r\nContent-Disposition: form-data; name="a"', 'malformed'],
    ['text after a boundary', '--b junk\r\n\r\nv\r\n--b--', 'malformed'],
    ['a boundary line that never ends', `--b${' '.repeat(100)}`, 'malformed'],
  ];
  for (const [name, text, reason] of cases) t.equal(refusal(() => scan(Buffer.from(text), 'b', [])), reason, name);
  const longHeader = `--b\r\nX: ${'h'.repeat(LIMITS.maxHeaderBytes + 1)}\r\n\r\nv\r\n--b--`;
  t.equal(refusal(() => scan(Buffer.from(longHeader), 'b', [100, 5000])), 'malformed', 'headers over the limit, cut across chunks');
  const many = encode(Array.from({ length: LIMITS.maxParts + 1 }, () => ({ name: 'p', value: Buffer.from('v') })), 'b');
  t.equal(refusal(() => scan(many, 'b', [])), 'too_many_parts');
  t.equal(scan(encode(Array.from({ length: LIMITS.maxParts }, () => ({ name: 'p', value: Buffer.from('v') })), 'b'), 'b', []).length, LIMITS.maxParts);
});

/** The reason the scanner refused, or 'accepted'. */
function refusal(fn: () => unknown): string {
  try {
    fn();
    return 'accepted';
  } catch (err) {
    return err instanceof MultipartScanError ? err.reason : String(err);
  }
}
