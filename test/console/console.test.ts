// The daemon's side of the console: the page and its bundle with their caching
// headers, the level map, the live bot stream's checks, and logout revoking a refresh token.
// The console itself runs in Chromium in test/console/console-browser.test.ts.
import { readFileSync } from 'node:fs';
import t from 'tap';
import WebSocket from 'ws';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { buildConsole } from '../../scripts/build-console.js';

let a: AdminApp;
let built: Awaited<ReturnType<typeof buildConsole>>;

t.before(async () => {
  built = await buildConsole();
  a = await startAdminApp();
});
t.teardown(() => a.close());

t.test('GET /console: the page, never cached stale, under a strict CSP; hashed files cached a year', async (t) => {
  const page = await a.client.get('/console');
  t.equal(page.status, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  t.equal(page.headers['cache-control'], 'no-cache', 'the page is revalidated: a new build shows at once');
  t.match(page.headers['content-security-policy'], /default-src 'self'/);
  t.notMatch(page.headers['content-security-policy'], /unsafe-inline|unsafe-eval/, 'no inline script allowed');
  t.ok(page.text.includes(`/console/assets/${built.script}`) && page.text.includes(`/console/assets/${built.style}`), 'names the built files');
  t.match(built.script, /^main-[A-Z0-9]{8}\.js$/, 'content hash in the name');

  const script = await a.client.get(`/console/assets/${built.script}`);
  t.equal(script.status, 200);
  t.match(script.headers['content-type'], /^text\/javascript/);
  t.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.equal(script.text.length, readFileSync(`dist/console/assets/${built.script}`, 'utf8').length);
  t.ok(built.bytes < 120 * 1024, `the bundle stays small (${built.bytes} bytes of script and style)`);
  const style = await a.client.get(`/console/assets/${built.style}`);
  t.match(style.headers['content-type'], /^text\/css/);
  t.equal((await a.client.get('/console/assets/main-NOPE0000.js')).status, 404);
  t.equal((await a.client.get('/console/assets/..%2F..%2Fpackage.json')).status, 404, 'only the built files');
});

t.test('GET /levels/{level_id}/map: the level as the site file draws it', async (t) => {
  const map = await a.admin.get('/api/v2/levels/1/map');
  t.equal(map.status, 200);
  const layout = a.app.site.layout.levels.find((l) => l.id === 1)!;
  t.same(map.json.rows, layout.rows);
  t.equal(map.json.depth, layout.rows.length);
  t.equal(map.json.width, layout.grid.width);
  t.same(map.json.balconies.map((b: { id: number }) => b.id), a.app.site.balconies.filter((b) => b.level_id === 1).map((b) => b.id));
  t.equal(map.json.legend.S, 'storage');
  t.equal((await a.admin.get('/api/v2/levels/99/map')).status, 404);
  t.equal((await a.client.get('/api/v2/levels/1/map')).status, 401, 'behind the same login as the API');
  const doc = (await a.client.get('/api/openapi.json')).json;
  t.ok(doc.paths['/api/v2/levels/{level_id}/map'].get, 'documented');
  t.notOk(doc.paths['/console'], 'the page is not part of the API document');
});

function open(query: string, headers: Record<string, string>): Promise<{ ws: WebSocket; first: Promise<any>; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`wss://127.0.0.1:${a.app.port}/api/v2/bots/stream${query}`, {
      ca: readFileSync(a.app.tls.certFile), headers, checkServerIdentity: (() => undefined) as never,
    });
    const first = new Promise((done) => ws.once('message', (data) => done(JSON.parse(data.toString()))));
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('open', () => resolve({ ws, first, closed }));
    ws.on('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
    ws.on('error', reject);
  });
}

t.test('GET /bots/stream: checked like any request, and closed once its key is gone', async (t) => {
  const status = (p: Promise<{ ws: WebSocket }>) => p.then((s) => (s.ws.close(), 101), (err: { status?: number }) => err.status);
  t.equal(await status(open('', {})), 401);
  t.equal(await status(open('?level_id=zero', { authorization: `Bearer ${a.boot.api_key}` })), 422);
  t.equal((await a.admin.get('/api/v2/bots/stream')).status, 426);

  const made = await a.admin.post('/api/v2/auth/generate_api_key', { name: 'wall screen', permission_keys: ['system:view'] });
  t.equal(made.status, 201, 'a key for a wall screen');
  const keyId = (await a.admin.get('/api/v2/auth/api_keys?size=100')).json.items.find((k: { name: string }) => k.name === 'wall screen').id;
  const s = await open(`?level_id=1&access_token=${made.json.api_key}`, {});
  t.same(await s.first, { type: 'bots', bots: [] }, 'first message: every bot (none without radio lines)');
  t.equal((await a.admin.request(`/api/v2/auth/api_keys/${keyId}`, { method: 'DELETE' })).status, 200);
  t.equal(await s.closed, 4401, 'the deleted key is noticed and the stream closed');
});

t.test('POST /auth/logout ends the session: its refresh token, every token rotated from it and their access tokens', async (t) => {
  const login = await a.client.post('/api/v2/auth/login', { email: a.boot.email, password: a.boot.password });
  t.equal(login.status, 200);
  const rotated = await a.client.post('/api/v2/auth/refresh_token', { refresh_token: login.json.refresh_token });
  t.equal(rotated.status, 200);
  const other = await a.client.post('/api/v2/auth/login', { email: a.boot.email, password: a.boot.password });

  const me = (token: string) => a.client.get('/api/v2/auth/authenticate', { authorization: `Bearer ${token}` }).then((r) => r.status);
  t.equal(await me(login.json.access_token), 200, 'before the logout: the first access token of the chain works');
  t.equal(await me(rotated.json.access_token), 200, 'and so does the rotated one');

  const out = await a.client.post('/api/v2/auth/logout', { refresh_token: rotated.json.refresh_token });
  t.equal(out.status, 200);
  t.same(out.json, {});
  t.equal(await me(rotated.json.access_token), 401, 'the session\'s access token is refused at once, not when it expires');
  t.equal(await me(login.json.access_token), 401, 'as is every access token issued in its chain');
  t.equal(await me(other.json.access_token), 200, 'another session\'s access token goes on');
  t.equal((await a.client.post('/api/v2/auth/refresh_token', { refresh_token: rotated.json.refresh_token })).status, 401, 'the token no longer refreshes');
  t.equal((await a.client.post('/api/v2/auth/logout', { refresh_token: rotated.json.refresh_token })).status, 200, 'a second logout is answered the same');
  t.equal((await a.client.post('/api/v2/auth/refresh_token', { refresh_token: other.json.refresh_token })).status, 200, 'another session of the same user goes on');

  const forged = `${rotated.json.refresh_token.slice(0, -4)}AAAA`;
  t.equal((await a.client.post('/api/v2/auth/logout', { refresh_token: forged })).status, 200, 'a wrong secret changes nothing and says nothing');
  t.equal((await a.client.post('/api/v2/auth/logout', { refresh_token: 'garbage' })).status, 200);
  t.equal((await a.client.post('/api/v2/auth/logout', {})).status, 422);
  const doc = (await a.client.get('/api/openapi.json')).json;
  t.match(doc.paths['/api/v2/auth/logout'].post.description, /Extension/);
});
