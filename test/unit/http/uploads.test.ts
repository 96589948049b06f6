// Request bodies over real TLS: nothing is kept before the caller is known, uploads go to spool
// files within a per-caller quota and a global cap, and no spool file outlives its request
// (success, refusal, abort, server close). The server's body counters tell what was kept.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import Type from 'typebox';
import { HttpError } from '../../../src/http/errors.js';
import { Binary } from '../../../src/http/multipart.js';
import { route, type Caller, type UploadedFile } from '../../../src/http/route.js';
import { MAX_HELD_PER_REQUEST } from '../../../src/http/body-intake.js';
import { multipart } from '../../helpers/client.js';
import { startServer, testCertificate, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/until.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** The authentication gate: while closed, every credential check waits (as a slow token check would). */
let gate: Promise<void> = Promise.resolve();
let openGate: () => void = () => undefined;
function closeGate(): void {
  gate = new Promise((resolve) => (openGate = resolve));
}

/** Bearer `u1`/`u2` may upload, `ro` is valid without the permission; anything else is refused. Asynchronous, like the app's. */
async function authenticate(headers: Readonly<Record<string, string>>): Promise<Caller> {
  await gate;
  const token = headers.authorization?.replace(/^Bearer /, '');
  if (token === 'u1' || token === 'u2') return { kind: 'user', id: token === 'u1' ? 1 : 2, permissions: new Set(['up']), authorityLevel: 1 };
  if (token === 'ro') return { kind: 'user', id: 3, permissions: new Set(), authorityLevel: 1 };
  throw new HttpError('unauthorized', 'Unknown token');
}

/** Answers the size and SHA-256 of each file as read back from where the server keeps it. */
const hashRoute = route({
  method: 'POST', path: '/api/v2/hash', tag: 'test', permission: 'up', summary: 'hash uploads',
  body: { multipart: Type.Object({ note: Type.Optional(Type.String()), files: Type.Optional(Type.Array(Binary())) }) },
  responses: { 200: Type.Object({ files: Type.Array(Type.Object({ size: Type.Integer(), sha256: Type.String() })) }) },
  handler: async ({ body }) => {
    const files = (body.files as UploadedFile[] | undefined) ?? [];
    const out = [];
    for (const f of files) {
      const hash = createHash('sha256');
      for await (const piece of f.stream()) hash.update(piece as Buffer);
      out.push({ size: f.size, sha256: hash.digest('hex') });
    }
    return { files: out };
  },
});

const jsonRoute = route({
  method: 'POST', path: '/api/v2/json', tag: 'test', permission: 'up', summary: 'json',
  body: Type.Object({ a: Type.Integer() }), responses: { 200: Type.Object({ a: Type.Integer() }) },
  handler: ({ body }) => body,
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const fileBody = (size: number, seed = 1) => {
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + seed) & 0xff;
  return data;
};

let ca: Buffer;
t.before(async () => {
  ca = readFileSync((await testCertificate()).certFile);
});

async function start(t: { teardown(fn: () => unknown): void }, options: { uploadQuota?: number; uploadTotal?: number; uploadLimit?: number } = {}): Promise<TestServer & { dir: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-uploads-test-'));
  const s = await startServer([hashRoute, jsonRoute], { authenticate, uploadDir: dir, uploadLimit: 8 * MiB, ...options });
  t.teardown(async () => {
    openGate();
    gate = Promise.resolve();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { ...s, dir };
}

/** A raw TLS request: head, then the body in pieces as the socket takes them; resolves with the answer text (or what came before the close). */
class RawUpload {
  readonly socket: tls.TLSSocket;
  private text = '';
  readonly answer: Promise<string>;
  readonly connected: Promise<void>;

  constructor(port: number, head: string, private readonly body: Buffer) {
    this.socket = tls.connect({ host: '127.0.0.1', port, ca, checkServerIdentity: () => undefined });
    this.connected = new Promise((resolve) => this.socket.once('secureConnect', () => resolve()));
    this.socket.on('data', (d: Buffer) => (this.text += d.toString('latin1')));
    this.socket.on('error', () => undefined); // EPIPE/ECONNRESET once the server closes a refused upload
    this.answer = new Promise((resolve) => this.socket.once('close', () => resolve(this.text)));
    this.socket.write(head);
  }

  /** Writes bytes [from, to) of the body. */
  send(from: number, to = this.body.length): void {
    if (!this.socket.destroyed) this.socket.write(this.body.subarray(from, to));
  }

  /** Answer head and body once a complete answer is in. */
  async response(): Promise<{ status: number; headers: string; json: any }> {
    const text = await until('a complete answer', async () => {
      const end = this.text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(this.text);
      if (end >= 0 && length && this.text.length >= end + 4 + Number(length[1])) return this.text;
      if (this.socket.destroyed) return this.text || 'closed';
      return undefined;
    });
    const end = text.indexOf('\r\n\r\n');
    let json: any;
    try {
      json = JSON.parse(text.slice(end + 4));
    } catch {
      json = undefined;
    }
    return { status: Number(text.slice(9, 12)), headers: text.slice(0, end), json };
  }
}

function uploadHead(path: string, body: Buffer, contentType: string, token?: string, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}${extra}\r\n`;
}

const counters = (s: TestServer) => s.server.bodyStats();

t.test('no credentials: 401 at once, and not one body byte is kept', async (t) => {
  const s = await start(t);
  const form = multipart([{ name: 'files', value: fileBody(4 * MiB), filename: 'big.bin' }]);
  const before = counters(s);
  const up = new RawUpload(s.server.port, uploadHead('/api/v2/hash', form.body, form.contentType), form.body);
  up.send(0);
  const r = await up.response();
  t.equal(r.status, 401);
  t.match(r.json, { code: 'unauthorized', request_id: String });
  await up.answer;
  const after = counters(s);
  t.same([after.heldTotal, after.memoryTotal, after.spooledTotal], [before.heldTotal, before.memoryTotal, before.spooledTotal], 'nothing held, buffered or spooled');
  t.same(readdirSync(s.dir), [], 'no spool file');
  t.ok(up.socket.destroyed, 'the connection is closed after the answer');

  const json = await s.client.post('/api/v2/json', { a: 1 });
  t.equal(json.status, 401, 'a JSON body likewise');
  t.equal(counters(s).memoryTotal, before.memoryTotal);
});

t.test('bad credentials and a missing permission: 401/403; only what uWS read with the headers is held, then dropped', async (t) => {
  const s = await start(t);
  const form = multipart([{ name: 'files', value: fileBody(4 * MiB), filename: 'big.bin' }]);
  for (const [token, status] of [['nope', 401], ['ro', 403]] as const) {
    const before = counters(s);
    closeGate();
    const up = new RawUpload(s.server.port, uploadHead('/api/v2/hash', form.body, form.contentType, token), form.body);
    up.send(0);
    // While the credentials are being checked the socket is paused: what arrives is bounded.
    await until('the first chunk', async () => counters(s).heldNow > 0);
    await sleep(100);
    t.ok(counters(s).heldNow <= MAX_HELD_PER_REQUEST, `${token}: at most one socket read held (${counters(s).heldNow} bytes)`);
    openGate();
    const r = await up.response();
    t.equal(r.status, status, token);
    await up.answer;
    const after = counters(s);
    t.equal(after.heldNow, 0, `${token}: the held bytes are dropped`);
    t.same([after.memoryTotal, after.spooledTotal], [before.memoryTotal, before.spooledTotal], `${token}: nothing buffered or spooled`);
    t.same(readdirSync(s.dir), [], `${token}: no spool file`);
  }
});

t.test('a paused body is resumed once the caller is allowed, intact', async (t) => {
  const s = await start(t);
  const data = fileBody(3 * MiB + 17, 5);
  const form = multipart([{ name: 'note', value: 'hi' }, { name: 'files', value: data, filename: 'a.bin' }]);
  closeGate();
  const up = new RawUpload(s.server.port, uploadHead('/api/v2/hash', form.body, form.contentType, 'u1'), form.body);
  up.send(0);
  await until('held bytes', async () => counters(s).heldNow > 0);
  await sleep(100);
  t.equal(counters(s).spooledNow, 0, 'nothing spooled before the decision');
  openGate();
  const r = await up.response();
  t.equal(r.status, 200);
  t.same(r.json.files, [{ size: data.length, sha256: sha(data) }], 'held bytes first, then the rest, in order');
  up.socket.destroy();
  t.equal(counters(s).heldNow, 0);
});

t.test('a body that came whole with its headers is never paused; one held for its caller is', async (t) => {
  const s = await start(t);
  const before = counters(s).pausesTotal;
  for (let i = 0; i < 20; i++) {
    const r = await s.client.request('/api/v2/json', { method: 'POST', json: { a: i }, headers: { authorization: 'Bearer u1' } });
    t.equal(r.status, 200);
  }
  t.equal(counters(s).pausesTotal, before, '20 small JSON bodies: no pause');
  const form = multipart([{ name: 'files', value: fileBody(3 * MiB), filename: 'a.bin' }]);
  closeGate();
  const up = new RawUpload(s.server.port, uploadHead('/api/v2/hash', form.body, form.contentType, 'u1'), form.body);
  up.send(0);
  await until('held bytes', async () => counters(s).heldNow > 0);
  t.ok(counters(s).pausesTotal > before, 'an upload waiting for its caller is paused');
  openGate();
  t.equal((await up.response()).status, 200);
  up.socket.destroy();
});

t.test('concurrent uploads arrive intact and leave no spool file', async (t) => {
  const s = await start(t, { uploadQuota: 64 * MiB });
  const files = [1, 2, 3, 4, 5, 6].map((i) => fileBody(i * 333 * KiB + i, i));
  const before = counters(s);
  const answers = await Promise.all(files.map(async (data, i) => {
    const form = multipart([{ name: 'files', value: data, filename: `f${i}` }, { name: 'files', value: Buffer.from('second'), filename: 's' }]);
    return s.client.request('/api/v2/hash', { method: 'POST', body: form.body, headers: { 'content-type': form.contentType, authorization: `Bearer u${1 + (i % 2)}` } });
  }));
  for (const [i, r] of answers.entries()) {
    t.equal(r.status, 200, r.text);
    t.same(r.json.files, [{ size: files[i]!.length, sha256: sha(files[i]!) }, { size: 6, sha256: sha(Buffer.from('second')) }]);
  }
  const after = counters(s);
  t.ok(after.spooledTotal - before.spooledTotal >= files.reduce((n, f) => n + f.length, 0), 'the bytes went to spool files');
  t.equal(after.memoryTotal, before.memoryTotal, 'not to memory');
  // Removed right after the answer is sent.
  await until('no spool file left', async () => readdirSync(s.dir).length === 0 && counters(s).spoolFiles === 0);
  t.equal(counters(s).spooledNow, 0);
});

t.test('the per-caller quota: a caller over it is refused 429 in the error shape; others are not', async (t) => {
  const s = await start(t, { uploadQuota: 1 * MiB, uploadTotal: 64 * MiB });
  const big = multipart([{ name: 'files', value: fileBody(700 * KiB), filename: 'a' }]);
  // The first upload stops half way: its 700 KiB stay reserved while it is in flight.
  const first = new RawUpload(s.server.port, uploadHead('/api/v2/hash', big.body, big.contentType, 'u1'), big.body);
  first.send(0, 300 * KiB);
  await until('the first upload spooling', async () => counters(s).spooledNow > 0);

  const second = await s.client.request('/api/v2/hash', { method: 'POST', body: big.body, headers: { 'content-type': big.contentType, authorization: 'Bearer u1' } });
  t.equal(second.status, 429);
  t.same(Object.keys(second.json).sort(), ['code', 'detail', 'request_id']);
  t.equal(second.json.code, 'too_many_requests');
  t.equal(second.headers['retry-after'], '5');
  t.match(second.json.detail, /at most 1048576/);

  const other = await s.client.request('/api/v2/hash', { method: 'POST', body: big.body, headers: { 'content-type': big.contentType, authorization: 'Bearer u2' } });
  t.equal(other.status, 200, 'another caller is not held back by it');

  first.send(300 * KiB);
  t.equal((await first.response()).status, 200, 'the first one completes');
  first.socket.destroy();
  const again = await s.client.request('/api/v2/hash', { method: 'POST', body: big.body, headers: { 'content-type': big.contentType, authorization: 'Bearer u1' } });
  t.equal(again.status, 200, 'its quota is back once it is done');
  await until('no spool file left', async () => readdirSync(s.dir).length === 0);
});

t.test('the global cap: 503 with Retry-After when all callers together are over it; chunked bodies count as they come', async (t) => {
  const s = await start(t, { uploadQuota: 8 * MiB, uploadTotal: 1 * MiB });
  const big = multipart([{ name: 'files', value: fileBody(700 * KiB), filename: 'a' }]);
  const first = new RawUpload(s.server.port, uploadHead('/api/v2/hash', big.body, big.contentType, 'u1'), big.body);
  first.send(0, 300 * KiB);
  await until('the first upload spooling', async () => counters(s).spooledNow > 0);
  const other = await s.client.request('/api/v2/hash', { method: 'POST', body: big.body, headers: { 'content-type': big.contentType, authorization: 'Bearer u2' } });
  t.equal(other.status, 503);
  t.equal(other.json.code, 'unavailable');
  t.equal(other.headers['retry-after'], '5');

  // Without a Content-Length the bytes are reserved as they arrive: refused mid-body.
  const chunked = new RawUpload(s.server.port, `POST /api/v2/hash HTTP/1.1\r\nHost: x\r\nContent-Type: ${big.contentType}\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer u2\r\n\r\n`, big.body);
  chunked.socket.write(`${big.body.length.toString(16)}\r\n`);
  chunked.send(0);
  const refused = await chunked.response();
  t.equal(refused.status, 503);
  await chunked.answer;
  first.socket.destroy();
  await until('all spool files gone', async () => readdirSync(s.dir).length === 0 && counters(s).spooledNow === 0);
  t.pass('nothing left behind');
});

t.test('spool files are removed on every outcome', async (t) => {
  const s = await start(t, { uploadLimit: 1 * MiB });
  const empty = async () => until('the uploads directory empty', async () => readdirSync(s.dir).length === 0);
  const post = (body: Buffer | string, contentType: string) => s.client.request('/api/v2/hash', { method: 'POST', body, headers: { 'content-type': contentType, authorization: 'Bearer u1' } });

  const ok = multipart([{ name: 'files', value: fileBody(200 * KiB), filename: 'a' }]);
  t.equal((await post(ok.body, ok.contentType)).status, 200);
  await empty();

  const extra = multipart([{ name: 'nope', value: 'x' }]);
  t.equal((await post(extra.body, extra.contentType)).status, 422, 'refused by validation');
  await empty();

  const bad = await post('not multipart at all', 'multipart/form-data; boundary=zz');
  t.equal(bad.status, 400, 'malformed');
  await empty();

  // Over the limit while streaming (no Content-Length to refuse it by).
  const huge = multipart([{ name: 'files', value: fileBody(2 * MiB), filename: 'h' }]);
  const streamed = new RawUpload(s.server.port, `POST /api/v2/hash HTTP/1.1\r\nHost: x\r\nContent-Type: ${huge.contentType}\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer u1\r\n\r\n`, huge.body);
  streamed.socket.write(`${huge.body.length.toString(16)}\r\n`);
  streamed.send(0);
  t.equal((await streamed.response()).status, 413, 'over the limit mid-body');
  await streamed.answer;
  await empty();

  // The client goes away mid-body.
  const cut = new RawUpload(s.server.port, uploadHead('/api/v2/hash', ok.body, ok.contentType, 'u1'), ok.body);
  cut.send(0, 100 * KiB);
  await until('spooling', async () => readdirSync(s.dir).length === 1 && counters(s).spooledNow > 0);
  cut.socket.destroy();
  await empty();
  t.equal(counters(s).spooledNow, 0, 'the aborted upload gave its bytes back');
  const line = await until('the abort logged', async () => s.lines.find((l) => l.url === '/api/v2/hash' && l.aborted === true));
  t.match(line, { status: 499 });
});

t.test('closing the server removes the spool files of requests it cut off', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-uploads-close-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await startServer([hashRoute], { authenticate, uploadDir: dir, uploadLimit: 8 * MiB });
  const form = multipart([{ name: 'files', value: fileBody(1 * MiB), filename: 'a' }]);
  const stuck = new RawUpload(s.server.port, uploadHead('/api/v2/hash', form.body, form.contentType, 'u1'), form.body);
  t.teardown(() => stuck.socket.destroy());
  stuck.send(0, 200 * KiB);
  await until('spooling', async () => readdirSync(dir).length === 1);
  t.same(await s.server.close(200), { unfinished: 1 });
  s.client.close();
  t.same(readdirSync(dir), [], 'no spool file left');
});

t.test('spool files left by an earlier process are removed at start', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-uploads-left-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { writeFileSync } = await import('node:fs');
  writeFileSync(path.join(dir, 'x-1.upload'), 'left over');
  const s = await startServer([hashRoute], { authenticate, uploadDir: dir });
  t.teardown(() => s.close());
  t.same(readdirSync(dir), []);
});

t.test('a body refused after it had all arrived leaves its connection open and reading: the next request on it is answered', async (t) => {
  const s = await start(t);
  const socket = tls.connect({ host: '127.0.0.1', port: s.server.port, ca, checkServerIdentity: () => undefined });
  t.teardown(() => socket.destroy());
  await new Promise((resolve) => socket.once('secureConnect', resolve));
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  const answers = () => text.match(/HTTP\/1\.1 \d{3}/g) ?? [];
  const post = (token: string) => `POST /api/v2/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\nAuthorization: Bearer ${token}\r\n\r\n{"a":1}`;
  // The whole body is in (held, the socket paused) before the caller is refused.
  closeGate();
  socket.write(post('ro'));
  await until('the whole body held', async () => counters(s).heldNow === 7);
  openGate();
  await until('the refusal', async () => answers().length === 1);
  t.match(text, /^HTTP\/1\.1 403 /);
  t.notMatch(text, /connection: close/i, 'nothing of the body is left unread: the connection is kept');
  socket.write(post('u1'));
  await until('the second answer on the same connection', async () => answers().length === 2);
  t.same(answers(), ['HTTP/1.1 403', 'HTTP/1.1 200']);
});
