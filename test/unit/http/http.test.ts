// The HTTP framework over real TLS: routing, validation, bodies, errors, aborts.
import t from 'tap';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import Type from 'typebox';
import { Writable } from 'node:stream';
import { multipart } from '../../helpers/client.js';
import { startServer, testCertificate } from '../../helpers/server.js';
import { until } from '../../helpers/until.js';
import { routes } from '../../fixtures/routes.js';
import { listRoute } from '../../../src/http/list-route.js';
import { createLogger, REDACTED_PATHS } from '../../../src/log/logger.js';
import type { FieldTable } from '../../../src/domain/list/index.js';

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

  t.test('unknown method: 501 in the error shape, and the connection goes on', async (t) => {
    // Sent in one go on one connection: each answer must come, and the GET after them too.
    const text = await rawRequest(s.server.port, [
      'FOO /api/v2/things HTTP/1.1\r\nHost: x\r\n\r\n',
      'QUERY /api/v2/things HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n',
      'get /api/v2/things HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /api/v2/things HTTP/1.1\r\nHost: x\r\n\r\n',
    ], 1500);
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    t.same(statuses, [501, 501, 501, 200], 'methods are case-sensitive (RFC 9110): `get` is not GET');
    const bodies = [...text.matchAll(/\r\n\r\n(\{[^\r]*?\})(?=HTTP\/1\.1|$)/g)].map((m) => JSON.parse(m[1]!) as { code?: string; detail?: string; request_id?: string });
    t.match(bodies[0], { code: 'not_implemented', detail: /FOO/, request_id: String }, 'the documented error shape');
    t.match(bodies[1], { code: 'not_implemented', detail: /QUERY/ });
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

  t.test('a client that disconnects while a large answer is streamed: no error, the server serves on', async (t) => {
    const linesBefore = s.lines.length;
    // 600,000 rows (~27 MB) outgrow the loopback socket buffers: with the client not reading,
    // uWS keeps the rest and continues on onWritable, the path this exercises.
    const socket = await connect(s.server.port);
    socket.write('GET /api/v2/big?rows=600000 HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone-mid-answer\r\n\r\n');
    const head = await firstData(socket);
    socket.pause();
    t.match(head, /^HTTP\/1\.1 200 /, 'the answer had started');
    // The server logs the request once its answer is handed to uWS, i.e. while it streams.
    await until('the streamed answer', async () => s.lines.find((l) => l.req_id === 'gone-mid-answer'));
    socket.destroy();
    const after = await c.get('/api/v2/things');
    t.equal(after.status, 200, 'the next request works');
    const full = await c.get('/api/v2/big?rows=50000');
    t.equal(full.json.rows.length, 50000, 'a large answer after it is sent in full');
    t.same(unhandled(s.lines.slice(linesBefore)), [], 'no error or stack trace logged');
  });

  t.test('an aborted multipart upload: no crash, no stack trace, a healthy server', async (t) => {
    const linesBefore = s.lines.length;
    const upload = multipart([{ name: 'payload', value: 'ok' }, { name: 'files', value: Buffer.alloc(64 * 1024, 7), filename: 'part.bin' }]);
    for (const [id, framing] of [['cut-declared', `Content-Length: ${upload.body.length}`], ['cut-chunked', 'Transfer-Encoding: chunked']]) {
      const socket = await connect(s.server.port);
      // `Expect: 100-continue` makes uWS answer once the handler has the request: the cut is then certainly mid-body.
      socket.write(`POST /api/v2/upload HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nContent-Type: ${upload.contentType}\r\n${framing}\r\nExpect: 100-continue\r\n\r\n`);
      t.match(await firstData(socket), /^HTTP\/1\.1 100 Continue/, `${id}: the server took the request`);
      const part = upload.body.subarray(0, 20_000);
      socket.write(framing.startsWith('Transfer') ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part);
      await sleep(20);
      socket.destroy();
      const line = await until(`${id} logged`, async () => s.lines.find((l) => l.req_id === id));
      t.match(line, { msg: 'request', url: '/api/v2/upload', aborted: true }, `${id}: logged as aborted`);
    }
    const ok = multipart([{ name: 'payload', value: 'ok' }]);
    t.equal((await c.request('/api/v2/upload', { method: 'POST', body: ok.body, headers: { 'content-type': ok.contentType } })).status, 200, 'the next upload works');
    t.same(unhandled(s.lines.slice(linesBefore)), [], 'no error or stack trace logged');
  });

  t.test('every request is logged with method, status and request id', async (t) => {
    const r = await c.post('/api/v2/things', { name: 'log', count: 1 });
    const line = s.lines.find((l) => l.req_id === r.headers['x-request-id']);
    t.match(line, { msg: 'request', method: 'POST', url: '/api/v2/things', status: 201 });
  });
});

t.test('closing drains in-flight requests and refuses new ones', async (t) => {
  const s = await startServer(routes);
  // The connection and its TLS handshake first: on a loaded machine they can outlast the sleep.
  await s.client.get('/api/v2/big?rows=1');
  const slow = s.client.get('/api/v2/slow');
  await sleep(50);
  const closing = s.server.close(5000);
  t.same((await slow).json, { done: true }, 'the in-flight request finished');
  t.same(await closing, { unfinished: 0 });
  s.client.close();
});

t.test('bad input: the documented error, logged as a request, never as an unhandled error', async (t) => {
  interface Row { id: number; name: string }
  const table: FieldTable<Row> = { id: { type: 'integer', filters: ['eq', 'in'] }, name: { type: 'string', filters: ['ilike'], search: true } };
  const list = listRoute<Row>({
    path: '/api/v2/rows', tag: 'test', permission: 'x', summary: 'list', fields: table, view: (r) => r,
    source: { lookup: () => undefined, scan: () => [{ id: 1, name: 'a' }] },
    item: Type.Object({ id: Type.Integer(), name: Type.String() }), options: { maxPageSize: 100, timeZone: 'Europe/Berlin' },
  });
  const s = await startServer([...routes, list]);
  t.teardown(() => s.close());
  const json = { 'content-type': 'application/json' };
  const cases: { name: string; path: string; method?: string; body?: string; headers?: Record<string, string>; status: number; code?: string; loc?: (string | number)[] }[] = [
    { name: 'malformed JSON', path: '/api/v2/things', method: 'POST', body: '{"name": ', headers: json, status: 400, loc: ['body'] },
    { name: 'wrong content type', path: '/api/v2/things', method: 'POST', body: 'a=1', headers: { 'content-type': 'text/plain' }, status: 415, code: 'unsupported_media_type' },
    { name: 'body over the limit', path: '/api/v2/things', method: 'POST', body: JSON.stringify({ name: 'x'.repeat(70_000), count: 1 }), headers: json, status: 413, code: 'payload_too_large' },
    { name: 'unknown route', path: '/api/v2/nowhere', status: 404, code: 'not_found' },
    { name: 'wrong method', path: '/api/v2/things', method: 'PATCH', body: '{}', headers: json, status: 405, code: 'method_not_allowed' },
    { name: 'query of the wrong type', path: '/api/v2/things?page=abc', status: 422, loc: ['query', 'page'] },
    { name: 'filter of the wrong type', path: '/api/v2/rows?id__eq=one', status: 422, loc: ['query', 'id__eq'] },
    { name: 'malformed search', path: '/api/v2/rows?search=name:(a', status: 422, loc: ['query', 'search'] },
    { name: 'search on an unknown field', path: '/api/v2/rows?search=nope:a', status: 422, loc: ['query', 'search'] },
    { name: 'malformed sort_by', path: '/api/v2/rows?sort_by=id,', status: 422, loc: ['query', 'sort_by'] },
    { name: 'sort_by an unknown field', path: '/api/v2/rows?sort_by=-nope', status: 422, loc: ['query', 'sort_by'] },
    { name: 'page 0', path: '/api/v2/rows?page=0', status: 422, loc: ['query', 'page'] },
    { name: 'a filter on a field the endpoint does not have (a typo)', path: '/api/v2/rows?nmae__ilike=a', status: 422, loc: ['query', 'nmae__ilike'] },
    { name: 'an operator the field does not take', path: '/api/v2/rows?id__gte=1', status: 422, loc: ['query', 'id__gte'] },
    { name: 'size 0', path: '/api/v2/rows?size=0', status: 422, loc: ['query', 'size'] },
  ];
  for (const k of cases) {
    const before = s.lines.length;
    const r = await s.client.request(k.path, { method: k.method ?? 'GET', body: k.body, headers: k.headers });
    t.equal(r.status, k.status, `${k.name}: status`);
    if (k.code) t.match(r.json, { code: k.code, request_id: r.headers['x-request-id'] }, `${k.name}: the error shape`);
    if (k.loc) t.same(r.json?.detail?.[0]?.loc, k.loc, `${k.name}: the parameter named`);
    const lines = s.lines.slice(before);
    t.match(lines.find((l) => l.req_id === r.headers['x-request-id']), { msg: 'request', status: k.status, level: 'info' }, `${k.name}: logged as a request`);
    t.same(unhandled(lines), [], `${k.name}: no error or stack trace logged`);
  }
  t.equal((await s.client.get('/api/v2/rows')).status, 200, 'the server is healthy after them');
  const typo = await s.client.get('/api/v2/rows?nmae__ilike=a&id__gte=1');
  t.same(typo.json.detail.map((d: { msg: string }) => d.msg), [
    'Unknown filter: no field nmae to filter on (fields: id, name)',
    'Unknown filter: id can be filtered with eq, in',
  ], 'each unknown filter named, with what the endpoint takes');
  t.equal((await s.client.get('/api/v2/rows?utm_source=x&page=1')).status, 200, 'other unknown parameters stay ignored, as FastAPI does');
});

t.test('the logger redacts secrets, at the top level and two levels down', async (t) => {
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const log = createLogger('info', sink);
  const secrets = { password: 'pw-1', token: 'tok-2', api_key: 'key-3', authorization: 'Bearer abc', access_token: 'at-4', refresh_token: 'rt-5', secret: 's-6', otp: '123456' };
  log.info({ ...secrets, user: 'ann', body: { ...secrets, email: 'ann@example.com' }, headers: { authorization: 'Basic xyz', 'user-agent': 'curl' } }, 'login');
  log.child({ req_id: 'r1' }).warn({ req: { new_password: 'np-7', old_password: 'op-8', key_pem: '-----BEGIN' } }, 'change');
  log.info({ body: { user: { email: 'bo@example.com', password: 'pw-deep' } } }, 'nested');
  await until('the three lines', async () => lines.length === 3);
  const [first, second, third] = lines;
  t.same(third.body.user, { email: 'bo@example.com', password: '[redacted]' }, 'two levels down');
  for (const key of Object.keys(secrets)) {
    t.equal(first[key], '[redacted]', key);
    t.equal(first.body[key], '[redacted]', `body.${key}`);
  }
  t.equal(first.headers.authorization, '[redacted]');
  t.same({ user: first.user, email: first.body.email, agent: first.headers['user-agent'] }, { user: 'ann', email: 'ann@example.com', agent: 'curl' }, 'other fields kept');
  t.same(second.req, { new_password: '[redacted]', old_password: '[redacted]', key_pem: '[redacted]' });
  const text = JSON.stringify(lines);
  for (const value of [...Object.values(secrets), 'Basic xyz', 'np-7', 'op-8', 'BEGIN', 'pw-deep']) t.notOk(text.includes(value), `${value} appears nowhere`);
  t.ok(REDACTED_PATHS.includes('*.password'));
});

t.test('a request in flight when closing finishes; one past the timeout is cut off at the bound', async (t) => {
  const s = await startServer(routes);
  t.teardown(() => s.client.close());
  // In flight: a body still arriving (Expect: 100-continue tells that the server has it).
  const socket = await connect(s.server.port);
  socket.write('POST /api/v2/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 25\r\nExpect: 100-continue\r\n\r\n');
  await firstData(socket);
  socket.write('{"name":"late",');
  const closing = s.server.close(60_000);
  const answer = collect(socket);
  socket.write('"count":1}');
  t.match(await answer, /^HTTP\/1\.1 201 /, 'the in-flight request was answered');
  t.same(await closing, { unfinished: 0 }, 'close waited for it');
  socket.destroy();

  const s2 = await startServer(routes);
  t.teardown(() => s2.client.close());
  const stuck = await connect(s2.server.port);
  t.teardown(() => stuck.destroy());
  stuck.write('POST /api/v2/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 24\r\nExpect: 100-continue\r\n\r\n');
  await firstData(stuck);
  t.same(await s2.server.close(200), { unfinished: 1 }, 'close gives up after its timeout and says what is left');
});

/** Lines that report an error or carry a stack trace. */
function unhandled(lines: any[]): any[] {
  return lines.filter((l) => l.level === 'error' || l.level === 'fatal' || l.err !== undefined || /"stack"/.test(JSON.stringify(l)));
}

/** A TLS connection to the test server. */
async function connect(port: number): Promise<tls.TLSSocket> {
  const { certFile } = await testCertificate();
  const { readFileSync } = await import('node:fs');
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: readFileSync(certFile), checkServerIdentity: () => undefined }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The next chunk the server sends. */
function firstData(socket: tls.TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.once('data', (d: Buffer) => resolve(d.toString('latin1')));
    socket.once('close', () => reject(new Error('closed before any data')));
  });
}

/** Everything the server sends until a complete small answer (headers and Content-Length bytes) arrived. */
function collect(socket: tls.TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text);
      if (end >= 0 && length && text.length >= end + 4 + Number(length[1])) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed after ${JSON.stringify(text)}`)));
  });
}

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
