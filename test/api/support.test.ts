// Support issues: create_issue over real HTTPS into a real outbox directory, reading issues
// and files back, every refusal, and forwarding to a real HTTPS support endpoint.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { HttpError } from '../../src/http/errors.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { supportRoutes } from '../../src/http/routes/support.js';
import { SupportOutbox, type ForwardingStatus } from '../../src/domain/support/outbox.js';
import { retryDelay, SupportForwarder } from '../../src/domain/support/forwarder.js';
import { sanitizeFileName, uniqueFileNames } from '../../src/domain/support/names.js';
import type { Caller } from '../../src/http/route.js';
import { expandPermissions } from '../../src/domain/auth/permissions.js';
import { SEEDED_ROLES } from '../../src/domain/auth/roles.js';
import { Client, multipart } from '../helpers/client.js';
import { memoryLogger, startServer, testCertificate } from '../helpers/server.js';

const MiB = 1 << 20;
const KEY_RE = /^SUP-\d{8}-[0-9A-HJKMNP-TV-Z]{6}$/;

/**
 * Bearer `support` may create and view; `reader` is valid but lacks the permissions;
 * `reporter` and `reporter2` (users 9 and 10) and `key-reporter` (API key 9) only create;
 * `manager` only views (support:view).
 */
function authenticate(headers: Readonly<Record<string, string>>): Caller {
  if (headers.authorization === 'Bearer support') return { kind: 'user', id: 7, permissions: new Set(['support:create_issue', 'support:view']), authorityLevel: 1 };
  if (headers.authorization === 'Bearer reader') return { kind: 'user', id: 8, permissions: new Set(['skus:view']), authorityLevel: 1 };
  if (headers.authorization === 'Bearer reporter') return { kind: 'user', id: 9, permissions: new Set(['support:create_issue']), authorityLevel: 1 };
  if (headers.authorization === 'Bearer reporter2') return { kind: 'user', id: 10, permissions: new Set(['support:create_issue']), authorityLevel: 1 };
  if (headers.authorization === 'Bearer key-reporter') return { kind: 'api_key', id: 9, permissions: new Set(['support:create_issue']), authorityLevel: 1 };
  if (headers.authorization === 'Bearer manager') return { kind: 'user', id: 11, permissions: new Set(['support:view']), authorityLevel: 1 };
  if (headers.authorization !== undefined) throw new HttpError('unauthorized', 'Missing or invalid credentials');
  return { kind: 'anonymous', permissions: new Set(), authorityLevel: 0 };
}

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-support-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

type Part = Parameters<typeof multipart>[0][number];
const payloadPart = (payload: unknown): Part => ({ name: 'payload', value: typeof payload === 'string' ? payload : JSON.stringify(payload) });
const filePart = (filename: string, value: Buffer | string, type = 'application/octet-stream'): Part => ({ name: 'files', filename, value, type });

async function post(c: Client, parts: Part[]) {
  const { body, contentType } = multipart(parts);
  return c.request('/api/v2/support/create_issue', { method: 'POST', body, headers: { 'content-type': contentType } });
}

async function download(c: Client, url: string, token = 'support'): Promise<{ status: number; headers: Record<string, unknown>; bytes: Buffer }> {
  // Client.request decodes text; files need their exact bytes, so this reads them raw.
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: c.port, path: url, headers: { authorization: `Bearer ${token}` }, ca: certPem, checkServerIdentity: () => undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

let certPem: Buffer;

t.before(async () => {
  certPem = readFileSync((await testCertificate()).certFile);
});

t.test('names: sanitized, unique, never a path', async (t) => {
  t.equal(sanitizeFileName('../../etc/passwd'), 'passwd');
  t.equal(sanitizeFileName('C:\\Users\\op\\log 1.txt'), 'log_1.txt');
  t.equal(sanitizeFileName('..'), 'file');
  t.equal(sanitizeFileName('.bashrc'), 'bashrc');
  t.equal(sanitizeFileName('-rf'), 'rf');
  t.equal(sanitizeFileName('café.txt'), 'cafe.txt');
  t.equal(sanitizeFileName(''), 'file');
  const long = sanitizeFileName(`${'a'.repeat(300)}.log`);
  t.equal(long.length, 100);
  t.ok(long.endsWith('.log'));
  t.same(uniqueFileNames(['a.txt', 'A.txt', 'dir/a.txt', 'b']), ['a.txt', 'A-2.txt', 'a-3.txt', 'b']);
});

t.test('retry delays grow exponentially, are jittered and capped', async (t) => {
  t.equal(retryDelay(1, 1000, 60_000, () => 0), 500);
  t.equal(retryDelay(1, 1000, 60_000, () => 1), 1000);
  t.equal(retryDelay(4, 1000, 60_000, () => 1), 8000);
  t.equal(retryDelay(50, 1000, 60_000, () => 1), 60_000);
  t.equal(retryDelay(50, 1000, 60_000, () => 0), 30_000);
});

t.test('create_issue over HTTPS', async (t) => {
  const stateDir = tempDir(t);
  const outbox = await SupportOutbox.open(stateDir);
  const s = await startServer(supportRoutes({ outbox, timeZone: 'Europe/Berlin' }), { authenticate, uploadLimit: 16 * MiB });
  t.teardown(() => s.close());
  const c = new Client(s.client.port, certPem, 'support');
  t.teardown(() => c.close());

  const log = Buffer.from('line 1\nline 2\n');
  const photo = Buffer.alloc(300_000);
  for (let i = 0; i < photo.length; i++) photo[i] = (i * 7919) % 256;
  const payload = {
    title: 'Bot 3 stops at the balcony', description: 'Since the update, twice an hour.', severity: 'high', category: 'bots',
    contact: { name: 'Ana', email: 'ana.secret@example.com' }, request_id: 'r-17', box_id: 12, carrier_id: 'C-001', level_id: 0, bot_id: 3,
  };

  t.test('a good issue with two files: key and url, readable back byte for byte', async (t) => {
    const r = await post(c, [payloadPart(payload), filePart('logs/controller.log', log, 'text/plain'), filePart('photo.jpg', photo, 'image/jpeg')]);
    t.equal(r.status, 201, r.text);
    t.match(r.json.key, KEY_RE);
    t.equal(r.json.url, `/api/v2/support/issues/${r.json.key}`);
    t.equal(r.json.key.slice(4, 12), new Date().toISOString().slice(0, 10).replaceAll('-', ''));

    const got = await c.get(r.json.url);
    t.equal(got.status, 200, got.text);
    t.equal(got.json.key, r.json.key);
    t.same(got.json.payload, payload);
    t.same(got.json.created_by, { kind: 'user', id: 7 });
    t.match(got.json.created_at_utc, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    t.same(got.json.forwarding, {
      status: 'pending', attempts: 0, last_error: null, last_attempt_at: null, last_attempt_at_utc: null, next_attempt_at: null, next_attempt_at_utc: null,
      forwarded_at: null, forwarded_at_utc: null, remote_key: null, remote_url: null,
    });
    t.same(got.json.files.map((f: any) => [f.name, f.original_name, f.type, f.bytes, f.sha256]), [
      ['controller.log', 'logs/controller.log', 'text/plain', log.length, createHash('sha256').update(log).digest('hex')],
      ['photo.jpg', 'photo.jpg', 'image/jpeg', photo.length, createHash('sha256').update(photo).digest('hex')],
    ]);
    const [first, second] = await Promise.all(got.json.files.map((f: any) => download(c, f.url)));
    t.equal(first!.status, 200);
    t.ok(first!.bytes.equals(log), 'first file byte-identical');
    t.ok(second!.bytes.equals(photo), 'second file byte-identical');
    t.equal(second!.headers['content-type'], 'application/octet-stream');
    t.equal(second!.headers['content-disposition'], 'attachment; filename="photo.jpg"');
    t.equal(second!.headers['x-content-type-options'], 'nosniff');

    // On disk: owner-only modes, the layout docs/support.md describes, no temporary leftovers.
    const dir = path.join(stateDir, 'support', r.json.key);
    t.equal(statSync(path.join(stateDir, 'support')).mode & 0o777, 0o700);
    t.equal(statSync(dir).mode & 0o777, 0o700);
    t.equal(statSync(path.join(dir, 'files')).mode & 0o777, 0o700);
    for (const f of ['issue.json', 'status.json', 'files/controller.log', 'files/photo.jpg']) t.equal(statSync(path.join(dir, f)).mode & 0o777, 0o600, f);
    t.same(readdirSync(dir).sort(), ['files', 'issue.json', 'status.json']);
    t.same(readdirSync(path.join(stateDir, 'support')).filter((n) => n.startsWith('.')), []);
  });

  t.test('severity defaults to normal; no files is fine; an empty nameless file part is ignored', async (t) => {
    const r = await post(c, [payloadPart({ title: 'Question' }), filePart('', '')]);
    t.equal(r.status, 201, r.text);
    const got = await c.get(r.json.url);
    t.equal(got.json.payload.severity, 'normal');
    t.same(got.json.files, []);
  });

  t.test('the log names the key, never the contact address or file contents', async (t) => {
    const secret = 'TOP-SECRET-FILE-CONTENT';
    const r = await post(c, [payloadPart(payload), filePart('x.txt', secret)]);
    t.equal(r.status, 201);
    const text = JSON.stringify(s.lines);
    t.ok(s.lines.some((l) => l.msg === 'support issue stored' && l.key === r.json.key && l.files === 1), 'stored line');
    t.notOk(text.includes('ana.secret@example.com'), 'no email in the log');
    t.notOk(text.includes(secret), 'no file content in the log');
  });

  t.test('a payload that is not JSON: 422 under body.payload', async (t) => {
    const r = await post(c, [payloadPart('{"title": "x",')]);
    t.equal(r.status, 422);
    t.same(r.json.detail[0].loc, ['body', 'payload']);
    t.equal(r.json.detail[0].type, 'json_invalid');
  });

  t.test('a missing payload: 422 missing', async (t) => {
    const r = await post(c, [filePart('a.txt', 'a')]);
    t.equal(r.status, 422);
    t.same(r.json.detail, [{ loc: ['body', 'payload'], msg: 'Field required', type: 'missing' }]);
  });

  t.test('each schema rule of the payload answers 422 at its field', async (t) => {
    const cases: [string, unknown, (string | number)[], string][] = [
      ['title missing', { description: 'x' }, ['body', 'payload', 'title'], 'missing'],
      ['title empty', { title: '' }, ['body', 'payload', 'title'], 'string_too_short'],
      ['title too long', { title: 'x'.repeat(201) }, ['body', 'payload', 'title'], 'string_too_long'],
      ['title only spaces', { title: '   ' }, ['body', 'payload', 'title'], 'string_pattern_mismatch'],
      ['title not a string', { title: 5 }, ['body', 'payload', 'title'], 'string_type'],
      ['description too long', { title: 'x', description: 'd'.repeat(20_001) }, ['body', 'payload', 'description'], 'string_too_long'],
      ['severity unknown', { title: 'x', severity: 'urgent' }, ['body', 'payload', 'severity'], 'literal_error'],
      ['category empty', { title: 'x', category: '' }, ['body', 'payload', 'category'], 'string_too_short'],
      ['category too long', { title: 'x', category: 'c'.repeat(65) }, ['body', 'payload', 'category'], 'string_too_long'],
      ['contact email invalid', { title: 'x', contact: { email: 'not-an-address' } }, ['body', 'payload', 'contact', 'email'], 'value_error'],
      ['contact extra field', { title: 'x', contact: { phone: '123' } }, ['body', 'payload', 'contact', 'phone'], 'extra_forbidden'],
      ['request_id empty', { title: 'x', request_id: '' }, ['body', 'payload', 'request_id'], 'string_too_short'],
      ['box_id zero', { title: 'x', box_id: 0 }, ['body', 'payload', 'box_id'], 'greater_than_equal'],
      ['box_id a string', { title: 'x', box_id: '12' }, ['body', 'payload', 'box_id'], 'int_type'],
      ['carrier_id too long', { title: 'x', carrier_id: 'c'.repeat(65) }, ['body', 'payload', 'carrier_id'], 'string_too_long'],
      ['level_id negative', { title: 'x', level_id: -1 }, ['body', 'payload', 'level_id'], 'greater_than_equal'],
      ['bot_id fractional', { title: 'x', bot_id: 1.5 }, ['body', 'payload', 'bot_id'], 'int_type'],
      ['extra top-level property', { title: 'x', priority: 1 }, ['body', 'payload', 'priority'], 'extra_forbidden'],
      ['payload an array', [{ title: 'x' }], ['body', 'payload'], 'dict_type'],
    ];
    for (const [name, value, loc, type] of cases) {
      const r = await post(c, [payloadPart(value)]);
      t.equal(r.status, 422, name);
      t.ok(r.json.detail.some((d: any) => JSON.stringify(d.loc) === JSON.stringify(loc) && d.type === type), `${name}: ${JSON.stringify(r.json.detail)}`);
    }
  });

  t.test('too many files: 422 under body.files', async (t) => {
    const files = Array.from({ length: 11 }, (_, i) => filePart(`f${i}.txt`, `file ${i}`));
    const r = await post(c, [payloadPart({ title: 'x' }), ...files]);
    t.equal(r.status, 422);
    t.same(r.json.detail[0].loc, ['body', 'files']);
    t.equal(r.json.detail[0].type, 'too_long');
  });

  t.test('a file over 10 MiB: 413; files over the upload limit together: 413', async (t) => {
    const big = await post(c, [payloadPart({ title: 'x' }), filePart('big.bin', Buffer.alloc(10 * MiB + 1))]);
    t.equal(big.status, 413);
    t.equal(big.json.code, 'payload_too_large');
    t.match(big.json.detail, /big\.bin/);
    const c2 = new Client(s.client.port, certPem, 'support'); // the 413 below closes its connection
    t.teardown(() => c2.close());
    const two = await post(c2, [payloadPart({ title: 'x' }), filePart('a.bin', Buffer.alloc(9 * MiB)), filePart('b.bin', Buffer.alloc(9 * MiB))]);
    t.equal(two.status, 413);
  });

  t.test('a malformed multipart body: 400', async (t) => {
    const c3 = new Client(s.client.port, certPem, 'support');
    t.teardown(() => c3.close());
    const r = await c3.request('/api/v2/support/create_issue', {
      method: 'POST', body: 'this is not multipart', headers: { 'content-type': 'multipart/form-data; boundary=nope' },
    });
    t.equal(r.status, 400);
    t.equal(r.json.code, 'bad_request');
  });

  t.test('nothing half-written stays behind after the refusals', async (t) => {
    t.same(readdirSync(path.join(stateDir, 'support')).filter((n) => !KEY_RE.test(n)), []);
  });

  t.test('unknown and malformed keys, path traversal in keys and file names', async (t) => {
    const created = await post(c, [payloadPart({ title: 'x' }), filePart('../../../../tmp/evil.sh', '#!/bin/sh'), filePart('a/b\\c.txt', 'c')]);
    t.equal(created.status, 201);
    const issue = (await c.get(created.json.url)).json;
    t.same(issue.files.map((f: any) => f.name), ['evil.sh', 'c.txt'], 'names sanitized to their last segment');

    const unknown = await c.get('/api/v2/support/issues/SUP-20200101-ABCDEF');
    t.equal(unknown.status, 404);
    t.equal(unknown.json.code, 'not_found');
    t.equal((await c.get(`${created.json.url}/files/nope.txt`)).status, 404);
    t.equal((await c.get(`${created.json.url}/files/issue.json`)).status, 404, 'only listed files are served');

    for (const bad of [
      '/api/v2/support/issues/..%2F..%2Fetc%2Fpasswd',
      '/api/v2/support/issues/..%2Fsupport',
      `/api/v2/support/issues/${created.json.key}%2F..%2F${created.json.key}`,
      `${created.json.url}/files/..%2Fissue.json`,
      `${created.json.url}/files/..%2F..%2F..%2Ftls%2Fself-signed-key.pem`,
      `${created.json.url}/files/%2Fetc%2Fpasswd`,
      `${created.json.url}/files/.status.json`,
      `${created.json.url}/files/..`,
    ]) {
      const r = await c.get(bad);
      t.ok(r.status === 422 || r.status === 404, `${bad} refused (${r.status})`);
      t.notOk(r.text.includes('title'), `${bad} reveals nothing`);
    }
    // Path segments the router splits on never reach a parameter either.
    t.equal((await c.get('/api/v2/support/issues/../../x')).status, 404);
  });

  t.test('credentials: 401 without, 403 without the permission, for creating and reading', async (t) => {
    const anon = new Client(s.client.port, certPem);
    const reader = new Client(s.client.port, certPem, 'reader');
    t.teardown(() => {
      anon.close();
      reader.close();
    });
    const created = await post(c, [payloadPart({ title: 'x' })]);
    t.equal((await post(anon, [payloadPart({ title: 'x' })])).status, 401);
    t.equal((await post(reader, [payloadPart({ title: 'x' })])).status, 403);
    t.equal((await anon.get(created.json.url)).status, 401);
    t.equal((await reader.get(created.json.url)).status, 403);
  });

  t.test('reading: the creator and support managers only', async (t) => {
    const as = (token: string) => {
      const client = new Client(s.client.port, certPem, token);
      t.teardown(() => client.close());
      return client;
    };
    const reporter = as('reporter');
    const created = await post(reporter, [payloadPart({ title: 'mine', contact: { email: 'op@example.com' } }), filePart('log.txt', 'secret log')]);
    t.equal(created.status, 201, created.text);
    const fileUrl = `${created.json.url}/files/log.txt`;

    const own = await reporter.get(created.json.url);
    t.equal(own.status, 200, 'the creator reads it with support:create_issue alone');
    t.same(own.json.created_by, { kind: 'user', id: 9 }, 'who created it is stored');
    t.equal((await download(reporter, fileUrl, 'reporter')).status, 200, 'and its attachment');

    for (const [token, status, why] of [
      ['manager', 200, 'a support manager (support:view) reads every issue'],
      ['support', 200, 'so does one holding both permissions'],
      ['reporter2', 404, 'another reporter: as if it did not exist'],
      ['key-reporter', 404, 'an API key with the same id is not the user who created it'],
      ['reader', 403, 'neither permission'],
    ] as const) {
      const got = await as(token).get(created.json.url);
      t.equal(got.status, status, `issue: ${why}`);
      if (status !== 200) t.notOk(got.text.includes('op@example.com'), `${token}: nothing of the issue revealed`);
      const file = await download(reporter, fileUrl, token);
      t.equal(file.status, status, `attachment: ${why}`);
      if (status !== 200) t.notOk(file.bytes.toString().includes('secret log'), `${token}: nothing of the file revealed`);
    }
    const unknown = await as('reporter2').get('/api/v2/support/issues/SUP-20200101-ABCDEF');
    t.equal(unknown.status, 404, 'the same answer as an unknown key');
    t.equal((await as('reporter2').get(created.json.url)).json.detail, unknown.json.detail.replace('SUP-20200101-ABCDEF', created.json.key));

    // An issue an API key created is its key's, not its owner's.
    const byKey = await post(as('key-reporter'), [payloadPart({ title: 'from a key' })]);
    t.equal((await as('key-reporter').get(byKey.json.url)).status, 200);
    t.equal((await reporter.get(byKey.json.url)).status, 404);
  });
});

t.test('the seeded roles: only Super Admin and Admin read every issue; the Operator reads its own', async (t) => {
  const holders = (key: string) => SEEDED_ROLES.filter((r) => expandPermissions(r.permissions).has(key)).map((r) => r.id);
  t.same(holders('support:view'), ['super_admin', 'admin'], 'a Viewer is not a support manager');
  t.same(holders('support:create_issue'), ['super_admin', 'admin', 'operator']);
});

// ------------------------------------------------------------------------------ forwarding

interface Received {
  headers: Record<string, string | string[] | undefined>;
  form: FormData;
}

/** A real HTTPS support endpoint; `answer` decides each reply, `received` keeps what came in. */
async function supportEndpoint(answer: (n: number) => { status: number; body?: string; headers?: Record<string, string> } | 'hang', port = 0) {
  const cert = await testCertificate();
  const received: Received[] = [];
  let n = 0;
  const server = https.createServer({ cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const form = await new Response(body, { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
      received.push({ headers: req.headers, form });
      const a = answer(++n);
      if (a === 'hang') return;
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
      res.end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/tickets`,
    port: (server.address() as AddressInfo).port,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A port nothing listens on (yet): connections to it are refused. */
async function freePort(): Promise<number> {
  const probe = https.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const statusWhere = (outbox: SupportOutbox, key: string, test: (s: ForwardingStatus) => boolean) => async () => {
  const { status } = await outbox.get(key);
  return test(status) ? status : undefined;
};

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

const FAST = { baseDelayMs: 20, maxDelayMs: 200, timeoutMs: 5_000 };

t.test('forwarding: refused, then 503, then accepted; what arrives is the issue', async (t) => {
  const stateDir = tempDir(t);
  const outbox = await SupportOutbox.open(stateDir);
  const port = await freePort();
  const { logger, lines } = memoryLogger('info');
  const baseline = timers();
  const forwarder = new SupportForwarder({ outbox, url: `https://127.0.0.1:${port}/tickets`, logger, ca: certPem, ...FAST });
  await forwarder.start();

  const log = Buffer.from('controller log\n');
  const photo = Buffer.from([0xff, 0xd8, 0xff, 0, 1, 2, 3, 0x0d, 0x0a, 0x2d, 0x2d]);
  const payload = { title: 'Forward me', contact: { email: 'ana.secret@example.com' } };
  const issue = await outbox.create({ payload, files: [{ filename: 'c.log', type: 'text/plain', data: log }, { filename: 'p.jpg', type: 'image/jpeg', data: photo }] });

  const refused = await waitFor('a refused attempt', statusWhere(outbox, issue.key, (s) => s.attempts >= 1));
  t.equal(refused.status, 'pending');
  t.match(refused.last_error, /ECONNREFUSED/);
  t.ok(refused.next_attempt_at);

  const endpoint = await supportEndpoint((n) => (n === 1
    ? { status: 503, body: '{"detail":"maintenance"}', headers: { 'retry-after': '0' } }
    : { status: 201, body: JSON.stringify({ key: 'REMOTE-42', url: 'https://support.example/REMOTE-42' }) }), port);
  t.teardown(() => endpoint.close());

  const done = await waitFor('forwarded', statusWhere(outbox, issue.key, (s) => s.status === 'forwarded'));
  t.ok(done.attempts >= 3, `attempts ${done.attempts}`);
  t.equal(done.last_error, null);
  t.ok(done.forwarded_at);
  t.equal(done.next_attempt_at, null);
  t.equal(done.remote_key, 'REMOTE-42');
  t.equal(done.remote_url, 'https://support.example/REMOTE-42');
  t.equal(endpoint.received.length, 2, 'the 503 was retried once');

  const last = endpoint.received[1]!;
  t.equal(last.headers['idempotency-key'], issue.key);
  t.equal(endpoint.received[0]!.headers['idempotency-key'], issue.key, 'same key on every attempt');
  t.match(last.headers['user-agent'], /^warehouse-controller\//);
  t.same(JSON.parse(last.form.get('payload') as string), { ...payload, severity: 'normal' });
  const source = JSON.parse(last.form.get('source') as string);
  t.equal(source.key, issue.key);
  t.same(source.files.map((f: any) => f.sha256), issue.files.map((f) => f.sha256));
  const files = last.form.getAll('files') as File[];
  t.same(files.map((f) => f.name), ['c.log', 'p.jpg']);
  t.ok(Buffer.from(await files[0]!.arrayBuffer()).equals(log));
  t.ok(Buffer.from(await files[1]!.arrayBuffer()).equals(photo));

  // Nothing further is sent once accepted.
  await sleep(300);
  t.equal(endpoint.received.length, 2);

  await forwarder.close();
  t.equal(timers(), baseline, 'no timer left after close()');
  const text = JSON.stringify(lines);
  t.notOk(text.includes('ana.secret@example.com'), 'no email in the log');
  t.notOk(text.includes('controller log'), 'no file content in the log');
  t.ok(lines.some((l) => l.msg === 'support issue forwarded' && l.key === issue.key && l.level === 'info'));
  t.ok(lines.some((l) => l.msg === 'support issue not forwarded yet' && l.level === 'warn'));
});

t.test('forwarding survives a restart: a new outbox and forwarder over the same directory resume', async (t) => {
  const stateDir = tempDir(t);
  const down = await supportEndpoint(() => ({ status: 503, body: 'down for maintenance' }));
  t.teardown(() => down.close());
  const { logger } = memoryLogger('info');

  const outbox1 = await SupportOutbox.open(stateDir);
  const forwarder1 = new SupportForwarder({ outbox: outbox1, url: down.url, logger, ca: certPem, ...FAST });
  await forwarder1.start();
  const a = await outbox1.create({ payload: { title: 'first' }, files: [{ filename: 'a.txt', type: 'text/plain', data: Buffer.from('a') }] });
  const b = await outbox1.create({ payload: { title: 'second' }, files: [] });
  await waitFor('two failed attempts each', async () => {
    const sa = (await outbox1.get(a.key)).status;
    const sb = (await outbox1.get(b.key)).status;
    return sa.attempts >= 2 && sb.attempts >= 2 ? true : undefined;
  });
  await forwarder1.close();
  const before = (await outbox1.get(a.key)).status;
  t.equal(before.status, 'pending');
  t.match(before.last_error, /^HTTP 503: down for maintenance$/);

  // "Restart": new objects, the same directory; the endpoint is up now.
  const up = await supportEndpoint(() => ({ status: 202 }));
  t.teardown(() => up.close());
  const outbox2 = await SupportOutbox.open(stateDir);
  const forwarder2 = new SupportForwarder({ outbox: outbox2, url: up.url, logger, ca: certPem, ...FAST });
  t.teardown(() => forwarder2.close());
  await forwarder2.start();
  const doneA = await waitFor('a forwarded', statusWhere(outbox2, a.key, (s) => s.status === 'forwarded'));
  await waitFor('b forwarded', statusWhere(outbox2, b.key, (s) => s.status === 'forwarded'));
  t.equal(doneA.attempts, before.attempts + 1, 'the attempt count carries over');
  t.equal(doneA.remote_key, null, 'an answer without a key');
  t.same(up.received.map((r) => JSON.parse(r.form.get('payload') as string).title).sort(), ['first', 'second']);

  // A third start finds nothing pending and sends nothing again.
  await forwarder2.close();
  const forwarder3 = new SupportForwarder({ outbox: await SupportOutbox.open(stateDir), url: up.url, logger, ca: certPem, ...FAST });
  await forwarder3.start();
  await sleep(200);
  await forwarder3.close();
  t.equal(up.received.length, 2);
});

t.test('close() during an attempt aborts it, leaves the issue pending and no timer behind', async (t) => {
  const stateDir = tempDir(t);
  const hanging = await supportEndpoint(() => 'hang');
  t.teardown(() => hanging.close());
  const { logger } = memoryLogger('info');
  const outbox = await SupportOutbox.open(stateDir);
  const baseline = timers();
  const forwarder = new SupportForwarder({ outbox, url: hanging.url, logger, ca: certPem, ...FAST, timeoutMs: 60_000 });
  await forwarder.start();
  const issue = await outbox.create({ payload: { title: 'stuck' }, files: [] });
  await waitFor('the request to arrive', async () => (hanging.received.length > 0 ? true : undefined));
  const started = Date.now();
  await forwarder.close();
  t.ok(Date.now() - started < 1000, 'close() does not wait for the endpoint');
  t.equal(timers(), baseline, 'no timer left');
  const { status } = await outbox.get(issue.key);
  t.equal(status.status, 'pending');
  t.equal(status.attempts, 0, 'an attempt cut by shutdown is not counted');
  // Created after close(): stored, not sent.
  await outbox.create({ payload: { title: 'later' }, files: [] });
  await sleep(100);
  t.equal(hanging.received.length, 1);
});

t.test('an untrusted endpoint certificate is a failed attempt, not an accepted one', async (t) => {
  const stateDir = tempDir(t);
  const endpoint = await supportEndpoint(() => ({ status: 201 }));
  t.teardown(() => endpoint.close());
  const { logger } = memoryLogger('info');
  const outbox = await SupportOutbox.open(stateDir);
  const forwarder = new SupportForwarder({ outbox, url: endpoint.url, logger, ...FAST }); // no ca
  t.teardown(() => forwarder.close());
  await forwarder.start();
  const issue = await outbox.create({ payload: { title: 'tls' }, files: [] });
  const status = await waitFor('a failed attempt', statusWhere(outbox, issue.key, (s) => s.attempts >= 1));
  t.equal(status.status, 'pending');
  t.match(status.last_error, /certificate/i);
  t.equal(endpoint.received.length, 0);
});

t.test('the outbox itself refuses keys and names that could leave its directory', async (t) => {
  const outbox = await SupportOutbox.open(tempDir(t));
  const issue = await outbox.create({ payload: { title: 'x' }, files: [{ filename: 'a.txt', type: 'text/plain\r\nX-Evil: 1', data: Buffer.from('a') }] });
  t.equal(issue.files[0]!.type, 'application/octet-stream', 'a claimed type that is not a plain media type is not kept');
  for (const key of ['../support', '..', `${issue.key}/..`, '', 'SUP-20200101-ABCDEF/../../x']) {
    await t.rejects(outbox.get(key), { code: 'not_found' }, JSON.stringify(key));
  }
  for (const name of ['../issue.json', 'issue.json', '..', '.', 'files/a.txt', '/etc/passwd']) {
    await t.rejects(outbox.readFile(issue.key, name), { code: 'not_found' }, JSON.stringify(name));
  }
  t.equal((await outbox.readFile(issue.key, 'a.txt')).data.toString(), 'a');
});

t.test('the OpenAPI document of the support routes is valid and documents the form', async (t) => {
  const outbox = await SupportOutbox.open(tempDir(t));
  const doc = openApiDocument(supportRoutes({ outbox }), { title: 't', version: '1', description: 'd' }) as any;
  const result = await new Validator().validate(doc);
  t.same(result.errors ?? [], []);
  const create = doc.paths['/api/v2/support/create_issue'].post;
  t.equal(create['x-permission'], 'support:create_issue');
  const form = create.requestBody.content['multipart/form-data'].schema;
  t.equal(form.properties.files.items.format, 'binary');
  t.same(form.required, ['payload']);
  t.ok(create.responses['201'] && create.responses['413'] && create.responses['422']);
  t.match(create.responses['429'].description, /upload_quota_bytes/, 'the per-caller upload quota');
  t.match(create.responses['503'].description, /upload_total_bytes/, 'and the global cap');
  t.ok(doc.paths['/api/v2/support/issues/{key}'].get.responses['404']);
  t.equal(doc.paths['/api/v2/support/issues/{key}'].get['x-permission'], 'support:view');
  t.same(doc.paths['/api/v2/support/issues/{key}'].get['x-permission-also'], ['support:create_issue'], 'creators read their own');
  t.ok(doc.paths['/api/v2/support/issues/{key}/files/{name}'].get.responses['200'].content['application/octet-stream']);
});

t.test('a crash mid-creation leaves no issue: leftovers are removed at open', async (t) => {
  const stateDir = tempDir(t);
  const outbox = await SupportOutbox.open(stateDir);
  const kept = await outbox.create({ payload: { title: 'kept' }, files: [] });
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(path.join(outbox.dir, '.tmp-SUP-20200101-AAAAAA', 'files'), { recursive: true });
  writeFileSync(path.join(outbox.dir, kept.key, '.status.json.1234.tmp'), '{');
  const reopened = await SupportOutbox.open(stateDir);
  t.same(await reopened.keys(), [kept.key]);
  t.same(readdirSync(outbox.dir), [kept.key]);
  t.same(readdirSync(path.join(outbox.dir, kept.key)).sort(), ['files', 'issue.json', 'status.json']);
});
