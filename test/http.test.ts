// The HTTP framework over real TLS: routing, validation, bodies, errors, aborts.
import t from 'tap';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { multipart } from './helpers/client.js';
import { startServer, testCertificate } from './helpers/server.js';
import { routes } from './fixtures/routes.js';

t.test('HTTP framework', async (t) => {
  const s = await startServer(routes);
  t.teardown(() => s.close());
  const c = s.client;

  t.test('a valid request is answered with its schema and a request id', async (t) => {
    const r = await c.get('/api/v2/things?page=2&flag=true');
    t.equal(r.status, 200);
    t.same(r.json, { page: 2, tags: [], flag: true });
    t.match(r.headers['x-request-id'], /^[0-9a-f]{8}-[0-9a-z]+$/);
    t.match(r.headers['content-type'], /application\/json/);
  });

  t.test('a given X-Request-Id is kept; a hostile one is replaced', async (t) => {
    t.equal((await c.get('/api/v2/things', { 'x-request-id': 'wms-42.a' })).headers['x-request-id'], 'wms-42.a');
    t.not((await c.get('/api/v2/things', { 'x-request-id': 'bad id\u00e9' })).headers['x-request-id'], 'bad id\u00e9');
  });

  t.test('repeated __in parameters give several values; commas are not split', async (t) => {
    const r = await c.get('/api/v2/things?tag__in=a,b&tag__in=c%20d&tag__in=e');
    t.same(r.json.tags, ['a,b', 'c d', 'e']);
  });

  t.test('query parameters of the wrong type answer 422 naming the parameter', async (t) => {
    const r = await c.get('/api/v2/things?page=abc');
    t.equal(r.status, 422);
    t.same(r.json.detail[0].loc, ['query', 'page']);
    t.equal(r.json.detail[0].type, 'int_type');
    const zero = await c.get('/api/v2/things?page=0');
    t.equal(zero.status, 422);
    t.equal(zero.json.detail[0].type, 'greater_than_equal');
    t.equal((await c.get('/api/v2/things?flag=maybe')).status, 422);
  });

  t.test('path parameters are validated and decoded', async (t) => {
    t.equal((await c.get('/api/v2/things/7')).status, 200);
    const bad = await c.get('/api/v2/things/seven');
    t.equal(bad.status, 422);
    t.same(bad.json.detail[0].loc, ['path', 'thing_id']);
    const missing = await c.get('/api/v2/things/8');
    t.equal(missing.status, 404);
    t.same(Object.keys(missing.json).sort(), ['code', 'detail', 'request_id']);
    t.equal(missing.json.code, 'not_found');
    t.equal(missing.json.request_id, missing.headers['x-request-id']);
  });

  t.test('static segments win over parameters', async (t) => {
    t.same((await c.post('/api/v2/box/swap-region', {})).json, { which: 'static' });
    t.same((await c.post('/api/v2/box/C%2F1', {})).json, { which: 'param:C/1' });
  });

  t.test('unknown route: 404 in the error shape; wrong method: 405 with Allow', async (t) => {
    const nf = await c.get('/api/v2/nope');
    t.equal(nf.status, 404);
    t.equal(nf.json.code, 'not_found');
    const wm = await c.request('/api/v2/things', { method: 'PUT', json: {} });
    t.equal(wm.status, 405);
    t.equal(wm.json.code, 'method_not_allowed');
    t.equal(wm.headers.allow, 'GET, POST');
  });

  t.test('JSON bodies: created, validated, refused', async (t) => {
    const ok = await c.post('/api/v2/things', { name: 'a', count: 1 });
    t.equal(ok.status, 201);
    t.same(ok.json, { id: 7, name: 'a', count: 1 });

    const conflict = await c.post('/api/v2/things', { name: 'taken', count: 1 });
    t.equal(conflict.status, 409);
    t.equal(conflict.json.code, 'conflict');

    const invalid = await c.post('/api/v2/things', { name: '', count: -1, extra: true });
    t.equal(invalid.status, 422);
    const byField = Object.fromEntries(invalid.json.detail.map((d: any) => [d.loc.join('.'), d.type]));
    t.same(byField, { 'body.extra': 'extra_forbidden', 'body.name': 'string_too_short', 'body.count': 'greater_than_equal' });

    const missing = await c.post('/api/v2/things', { name: 'a' });
    t.same(missing.json.detail, [{ loc: ['body', 'count'], msg: 'Field required', type: 'missing' }]);

    const wrongType = await c.post('/api/v2/things', { name: 5, count: '1' });
    t.same(wrongType.json.detail.map((d: any) => d.type).sort(), ['int_type', 'string_type']);

    const notObject = await c.post('/api/v2/things', [1, 2]);
    t.equal(notObject.status, 422);

    const empty = await c.request('/api/v2/things', { method: 'POST', headers: { 'content-type': 'application/json' } });
    t.equal(empty.status, 422);
    t.same(empty.json.detail[0].loc, ['body']);
  });

  t.test('malformed JSON answers 400 with a json_invalid detail', async (t) => {
    const r = await c.request('/api/v2/things', { method: 'POST', body: '{"name": "a", ', headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400);
    t.equal(r.json.detail[0].type, 'json_invalid');
    const garbage = await c.request('/api/v2/things', { method: 'POST', body: Buffer.from([0xff, 0xfe, 0x00, 0x01]), headers: { 'content-type': 'application/json' } });
    t.equal(garbage.status, 400);
  });

  t.test('wrong content type answers 415', async (t) => {
    const r = await c.request('/api/v2/things', { method: 'POST', body: 'name=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(r.status, 415);
    t.equal(r.json.code, 'unsupported_media_type');
  });

  t.test('a body over the limit answers 413, declared or streamed', async (t) => {
    const big = JSON.stringify({ name: 'x'.repeat(70 * 1024), count: 1 });
    const declared = await c.request('/api/v2/things', { method: 'POST', body: big, headers: { 'content-type': 'application/json' } });
    t.equal(declared.status, 413);
    t.equal(declared.json.code, 'payload_too_large');
    const streamed = await rawRequest(s.server.port, [
      'POST /api/v2/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      `${(100 * 1024).toString(16)}\r\n${'x'.repeat(100 * 1024)}\r\n0\r\n\r\n`,
    ]);
    t.match(streamed, /^HTTP\/1\.1 413/);
  });

  t.test('multipart bodies: fields and files, and their errors', async (t) => {
    const good = multipart([
      { name: 'payload', value: '{"a":1}' },
      { name: 'files', value: Buffer.alloc(1000, 1), filename: 'a.bin', type: 'application/octet-stream' },
      { name: 'files', value: 'hello', filename: 'b.txt', type: 'text/plain' },
    ]);
    const r = await c.request('/api/v2/upload', { method: 'POST', body: good.body, headers: { 'content-type': good.contentType } });
    t.equal(r.status, 200);
    t.same(r.json, { payload: '{"a":1}', files: [{ name: 'a.bin', size: 1000 }, { name: 'b.txt', size: 5 }] });

    const missing = multipart([{ name: 'files', value: 'x', filename: 'x' }]);
    const m = await c.request('/api/v2/upload', { method: 'POST', body: missing.body, headers: { 'content-type': missing.contentType } });
    t.equal(m.status, 422);
    t.same(m.json.detail[0].loc, ['body', 'payload']);

    const extra = multipart([{ name: 'payload', value: 'ok' }, { name: 'other', value: 'x' }]);
    const e = await c.request('/api/v2/upload', { method: 'POST', body: extra.body, headers: { 'content-type': extra.contentType } });
    t.equal(e.status, 422);
    t.equal(e.json.detail[0].type, 'extra_forbidden');

    const broken = await c.request('/api/v2/upload', { method: 'POST', body: 'garbage', headers: { 'content-type': 'multipart/form-data; boundary=zzz' } });
    t.equal(broken.status, 400);
    const notMultipart = await c.request('/api/v2/upload', { method: 'POST', json: { payload: 'x' } });
    t.equal(notMultipart.status, 415);
    const tooBig = multipart([{ name: 'payload', value: 'ok' }, { name: 'files', value: Buffer.alloc(300 * 1024), filename: 'big' }]);
    const b = await c.request('/api/v2/upload', { method: 'POST', body: tooBig.body, headers: { 'content-type': tooBig.contentType } });
    t.equal(b.status, 413);
  });

  t.test('a handler that throws answers 500 without details; the error is logged; the server lives on', async (t) => {
    for (const path of ['/api/v2/boom', '/api/v2/async-boom', '/api/v2/bad-shape']) {
      const r = await c.get(path);
      t.equal(r.status, 500, path);
      t.equal(r.json.code, 'internal_error');
      t.notMatch(r.text, /kaboom|secret|schema/);
      t.ok(s.lines.some((l) => l.level === 'error' && l.req_id === r.json.request_id && l.err), 'logged with its request id');
    }
    t.equal((await c.get('/api/v2/things')).status, 200);
  });

  t.test('large answers are streamed in full', async (t) => {
    const r = await c.get('/api/v2/big');
    t.equal(r.status, 200);
    t.equal(r.json.rows.length, 40000);
  });

  t.test('an aborted upload and a client gone mid-response leave no error and a healthy server', async (t) => {
    const errorsBefore = s.lines.filter((l) => l.level === 'error').length;
    await rawRequest(s.server.port, ['POST /api/v2/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"name":'], 50);
    await rawRequest(s.server.port, ['GET /api/v2/slow HTTP/1.1\r\nHost: x\r\n\r\n'], 50);
    await sleep(400);
    t.equal(s.lines.filter((l) => l.level === 'error').length, errorsBefore, 'no error logged');
    t.ok(s.lines.some((l) => l.url === '/api/v2/slow' && l.aborted === true), 'the abort is logged as such');
    t.equal((await c.get('/api/v2/things')).status, 200);
    t.same((await c.get('/api/v2/slow')).json, { done: true });
  });

  t.test('every request is logged with method, status and request id', async (t) => {
    const r = await c.post('/api/v2/things', { name: 'log', count: 1 });
    const line = s.lines.find((l) => l.req_id === r.headers['x-request-id']);
    t.match(line, { msg: 'request', method: 'POST', url: '/api/v2/things', status: 201 });
  });
});

t.test('closing drains in-flight requests and refuses new ones', async (t) => {
  const s = await startServer(routes);
  const slow = s.client.get('/api/v2/slow');
  await sleep(50);
  const closing = s.server.close(5000);
  t.same((await slow).json, { done: true }, 'the in-flight request finished');
  t.same(await closing, { unfinished: 0 });
  s.client.close();
});

/** Writes raw bytes over TLS; resolves with what came back, closing after `closeAfterMs` if given. */
async function rawRequest(port: number, pieces: string[], closeAfterMs?: number): Promise<string> {
  const { certFile } = await testCertificate();
  const { readFileSync } = await import('node:fs');
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: readFileSync(certFile), checkServerIdentity: () => undefined }, () => {
      for (const p of pieces) socket.write(p);
      if (closeAfterMs !== undefined) setTimeout(() => socket.destroy(), closeAfterMs);
    });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('close', () => resolve(text));
    socket.on('end', () => socket.destroy());
    socket.on('error', (err) => (text ? resolve(text) : reject(err)));
    setTimeout(() => socket.destroy(), 3000);
  });
}
