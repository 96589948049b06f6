// What every answer and handshake looks like from outside: security headers (HSTS, nosniff,
// no-store behind credentials), no server banner, and TLS 1.2/1.3 with ECDHE and AEAD only,
// checked with Node's TLS client against the real listener.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import selfsigned from 'selfsigned';
import Type from 'typebox';
import { HttpError } from '../../../src/http/errors.js';
import { Reply, route, type Caller } from '../../../src/http/route.js';
import { startServer, type TestServer } from '../../helpers/server.js';

const authenticate = (headers: Readonly<Record<string, string>>): Caller => {
  if (headers.authorization === 'Bearer ok') return { kind: 'user', id: 1, permissions: new Set(['x:view']), authorityLevel: 1 };
  if (headers.authorization !== undefined) throw new HttpError('unauthorized', 'Unknown token');
  return { kind: 'anonymous', permissions: new Set(), authorityLevel: 0 };
};

const routes = [
  route({
    method: 'GET', path: '/api/v2/public', tag: 'test', permission: null, summary: 'public, cached a day',
    responses: { 200: { description: 'text', contentType: 'text/plain' } },
    handler: () => new Reply('hello', 'text/plain', 200, { 'cache-control': 'public, max-age=86400' }),
  }),
  route({
    method: 'GET', path: '/api/v2/private', tag: 'test', permission: 'x:view', summary: 'behind credentials',
    responses: { 200: Type.Object({ ok: Type.Boolean() }) },
    handler: () => ({ ok: true }),
  }),
  route({
    method: 'GET', path: '/api/v2/private-cached', tag: 'test', permission: 'x:view', summary: 'asks to be cached, behind credentials',
    responses: { 200: { description: 'bytes', contentType: 'application/octet-stream' } },
    handler: () => new Reply(Buffer.from('x'), 'application/octet-stream', 200, { 'cache-control': 'private, max-age=60', 'x-content-type-options': 'nosniff' }),
  }),
];

/** One HTTP/1.1 GET over a TLS connection with `options`; resolves with the protocol, cipher and raw answer, or rejects with the handshake error. */
function get(port: number, urlPath: string, options: tls.ConnectionOptions = {}, headers = ''): Promise<{ protocol: string; cipher: string; raw: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options }, () => {
      socket.write(`GET ${urlPath} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
    });
    let raw = '';
    socket.on('data', (d: Buffer) => {
      raw += d.toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(raw);
      if (end >= 0 && length && raw.length >= end + 4 + Number(length[1])) {
        resolve({ protocol: socket.getProtocol() ?? '', cipher: socket.getCipher().name, raw });
        socket.destroy();
      }
    });
    socket.once('error', reject);
  });
}

/** The answer's header lines by lower-case name (repeated names keep every value). */
function headersOf(raw: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    map.set(name, [...(map.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return map;
}

let s: TestServer;
t.before(async () => {
  s = await startServer(routes, { authenticate });
});
t.teardown(() => s.close());

// The server's handshake_failure alert, as the client's OpenSSL names it: SSLV3 in 3.0 (Node.js
// 20), SSL/TLS from 3.2 on (Node.js 22, 24).
const HANDSHAKE_REFUSED = /^ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_HANDSHAKE_FAILURE$/;

t.test('every answer: HSTS and nosniff, once each; no uWebSockets banner', async (t) => {
  for (const [urlPath, auth, status] of [
    ['/api/v2/public', '', 200], ['/api/v2/private', 'Authorization: Bearer ok\r\n', 200], ['/api/v2/private', '', 401],
    ['/api/v2/nowhere', '', 404], ['/api/v2/private-cached', 'Authorization: Bearer ok\r\n', 200],
  ] as const) {
    const { raw } = await get(s.server.port, urlPath, {}, auth);
    const h = headersOf(raw);
    t.match(raw, new RegExp(`^HTTP/1\\.1 ${status} `), `${urlPath} ${status}`);
    t.same(h.get('strict-transport-security'), ['max-age=31536000'], `${urlPath} ${status}: HSTS`);
    t.same(h.get('x-content-type-options'), ['nosniff'], `${urlPath} ${status}: nosniff`);
    t.notOk(h.has('uwebsockets'), `${urlPath} ${status}: no uWebSockets header`);
    t.notOk(h.has('server'), `${urlPath} ${status}: no Server header`);
  }
});

t.test('behind credentials: Cache-Control no-store, errors included, over a handler\'s own; public routes keep theirs', async (t) => {
  const ok = headersOf((await get(s.server.port, '/api/v2/private', {}, 'Authorization: Bearer ok\r\n')).raw);
  t.same(ok.get('cache-control'), ['no-store']);
  const refused = headersOf((await get(s.server.port, '/api/v2/private')).raw);
  t.same(refused.get('cache-control'), ['no-store'], 'a 401 of such a route too');
  const cached = headersOf((await get(s.server.port, '/api/v2/private-cached', {}, 'Authorization: Bearer ok\r\n')).raw);
  t.same(cached.get('cache-control'), ['no-store'], 'the handler\'s max-age is not sent');
  t.same(headersOf((await get(s.server.port, '/api/v2/public')).raw).get('cache-control'), ['public, max-age=86400']);
  t.notOk(headersOf((await get(s.server.port, '/api/v2/nowhere')).raw).has('cache-control'), 'an unknown path has no permission');
});

t.test('TLS: 1.3 and 1.2 with ECDHE and AEAD work; TLS 1.1, CBC and SHA-1 suites are refused', async (t) => {
  const port = s.server.port;
  const v13 = await get(port, '/api/v2/public', { minVersion: 'TLSv1.3' });
  t.equal(v13.protocol, 'TLSv1.3');
  t.match(v13.cipher, /^TLS_(AES_(128|256)_GCM|CHACHA20_POLY1305)_SHA(256|384)$/);
  for (const cipher of ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305']) {
    const v12 = await get(port, '/api/v2/public', { maxVersion: 'TLSv1.2', ciphers: cipher });
    t.same([v12.protocol, v12.cipher], ['TLSv1.2', cipher], cipher);
    t.ok(headersOf(v12.raw).has('strict-transport-security'), `${cipher}: headers present`);
  }
  for (const cipher of ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA', 'ECDHE-ECDSA-AES128-SHA256', 'ECDHE-ECDSA-AES256-SHA384']) {
    await t.rejects(get(port, '/api/v2/public', { maxVersion: 'TLSv1.2', ciphers: cipher }), { code: HANDSHAKE_REFUSED }, `${cipher} refused`);
  }
  // OpenSSL 3 offers TLS 1.1 only at security level 0.
  for (const version of ['TLSv1.1', 'TLSv1'] as const) {
    await t.rejects(get(port, '/api/v2/public', { minVersion: version, maxVersion: version, ciphers: 'DEFAULT@SECLEVEL=0' }), { code: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION' }, `${version} refused`);
  }
});

t.test('TLS with an RSA site certificate: ECDHE-RSA with AEAD only, no static RSA key exchange', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-rsa-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'rsa', keySize: 2048, algorithm: 'sha256' });
  writeFileSync(path.join(dir, 'cert.pem'), pems.cert);
  writeFileSync(path.join(dir, 'key.pem'), pems.private, { mode: 0o600 });
  const rsa = await startServer(routes, { authenticate, certFile: path.join(dir, 'cert.pem'), keyFile: path.join(dir, 'key.pem') });
  t.teardown(() => rsa.close());
  t.equal(readFileSync(path.join(dir, 'cert.pem'), 'utf8').includes('BEGIN CERTIFICATE'), true);
  for (const cipher of ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305']) {
    t.equal((await get(rsa.server.port, '/api/v2/public', { maxVersion: 'TLSv1.2', ciphers: cipher })).cipher, cipher, cipher);
  }
  for (const cipher of ['AES128-GCM-SHA256', 'AES256-GCM-SHA384', 'AES128-SHA', 'ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES256-SHA384']) {
    await t.rejects(get(rsa.server.port, '/api/v2/public', { maxVersion: 'TLSv1.2', ciphers: cipher }), { code: HANDSHAKE_REFUSED }, `${cipher} refused`);
  }
  t.equal((await get(rsa.server.port, '/api/v2/public')).protocol, 'TLSv1.3');
});
