// GET /api/v2/kpi and /api/v2/kpi/bots through the real server: the documented shape, dense
// hours for every balcony of the site, the window's defaults and rounding, the permission, and
// bad windows answered with the validation error body, never a 500.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { Client } from '../helpers/client.js';

let a: AdminApp;
const H = 3_600_000;

t.before(async () => {
  a = await startAdminApp();
});
t.teardown(() => a.close());

const get = (p: string) => a.admin.request(p);

t.test('the default window: the last 24 hours up to the next whole hour, every balcony, dense hours', async (t) => {
  const before = Date.now();
  const r = await get('/api/v2/kpi');
  t.equal(r.status, 200);
  const k = r.json;
  const to = Date.parse(k.to);
  const from = Date.parse(k.from);
  t.equal(to % H, 0, 'to is a whole hour');
  t.equal(from % H, 0, 'from is a whole hour');
  t.ok(to >= before && to - before <= H, 'to: now, rounded up');
  const now = Date.parse(k.generated_at);
  t.equal(to, Math.ceil(now / H) * H, 'to: now, rounded up');
  t.equal(from, Math.floor((now - 24 * H) / H) * H, 'from: now less 24 h, rounded down');
  t.equal(k.hours.length, (to - from) / H);
  t.same(k.hours, [...k.hours].sort(), 'ascending');
  t.same(k.balconies.map((b: any) => b.balcony_id), a.app.site.balconies.map((b) => b.id).sort((x, y) => x - y), 'every balcony of the site');
  for (const b of k.balconies) t.same(b.hours.map((h: any) => h.hour), k.hours, `balcony ${b.balcony_id}: one entry per hour`);
  t.same(k.bots.hours.map((h: any) => h.hour), k.hours);
  t.same(k.requests.hours.map((h: any) => h.hour), k.hours);
  t.equal(k.requests.done, 0);
  t.equal(k.requests.lead_time_p50_seconds, null);
  t.equal(k.bots.count, 20, 'the demo\'s bots');
  t.equal(typeof k.timezone, 'string');
  t.ok(Math.abs(Date.parse(k.generated_at) - Date.now()) < 60_000);
  const current = k.balconies[0].hours.at(-1);
  t.ok(current.idle_seconds <= 3600 && current.busy_seconds === 0, 'the current hour counts up to now only');
  t.equal(k.balconies[0].hours[0].idle_seconds, 0, 'nothing elapsed before keeping began');
});

t.test('an explicit window rounds out to whole hours', async (t) => {
  const r = await get('/api/v2/kpi?from=2026-11-27T10:30:00Z&to=2026-11-27T12:10:00%2B01:00');
  t.equal(r.status, 200);
  t.equal(r.json.from, '2026-11-27T10:00:00.000Z');
  t.equal(r.json.to, '2026-11-27T12:00:00.000Z');
  t.same(r.json.hours, ['2026-11-27T10:00:00.000Z', '2026-11-27T11:00:00.000Z']);
  const bots = await get('/api/v2/kpi/bots?from=2026-11-27T10:30:00Z&to=2026-11-27T12:10:00Z');
  t.equal(bots.status, 200);
  t.equal(bots.json.to, '2026-11-27T13:00:00.000Z');
  t.equal(bots.json.bots.length, 20);
  t.match(bots.json.bots[0], { bot_id: 1, working_seconds: 0, charging_seconds: 0, faulted_seconds: 0, offline_seconds: 0, idle_seconds: 0 });
});

t.test('bad windows and unknown fields are a 422 in the validation error body', async (t) => {
  const cases: [string, string][] = [
    ['from=yesterday', 'from'],
    ['to=2026-13-01T00:00:00Z', 'to'],
    ['from=2026-11-27T10:00:00Z&to=2026-11-27T10:00:00Z', 'from'],
    ['from=2026-11-27T12:00:00Z&to=2026-11-27T10:00:00Z', 'from'],
    ['from=2026-10-01T00:00:00Z&to=2026-11-27T00:00:00Z', 'to'],
    ['from=0000-01-01T00:00:00Z&to=9999-12-31T23:59:59Z', 'to'],
  ];
  for (const path of ['/api/v2/kpi', '/api/v2/kpi/bots']) {
    for (const [q, field] of cases) {
      const r = await get(`${path}?${q}`);
      t.equal(r.status, 422, `${path}?${q}`);
      t.ok(Array.isArray(r.json?.detail) && r.json.detail.some((d: any) => d.loc.includes(field)), `${path}?${q}: names ${field}: ${r.text}`);
    }
  }
  // As on every route, a parameter the route does not declare is ignored (src/http/query.ts); only unknown filters are refused.
  t.equal((await get('/api/v2/kpi?balcony=1')).status, 200, 'an undeclared parameter');
  const longest = await get('/api/v2/kpi?from=2026-10-27T00:00:00Z&to=2026-11-27T00:00:00Z');
  t.equal(longest.status, 200, '31 days exactly');
  t.equal(longest.json.hours.length, 31 * 24);
});

t.test('the permission kpi:view', async (t) => {
  const key = async (permission_keys: string[]) => (await a.admin.request('/api/v2/auth/generate_api_key', { method: 'POST', json: { name: `kpi ${permission_keys.join()}`, permission_keys } })).json.api_key as string;
  const without = new Client(a.app.port, readFileSync(a.app.tls.certFile), await key(['system:view']));
  const withIt = new Client(a.app.port, readFileSync(a.app.tls.certFile), await key(['kpi:view']));
  const anonymous = new Client(a.app.port, readFileSync(a.app.tls.certFile));
  t.teardown(() => [without, withIt, anonymous].forEach((c) => c.close()));
  t.equal((await without.request('/api/v2/kpi')).status, 403);
  t.equal((await without.request('/api/v2/kpi/bots')).status, 403);
  t.equal((await anonymous.request('/api/v2/kpi')).status, 401);
  t.equal((await withIt.request('/api/v2/kpi')).status, 200);
  t.equal((await withIt.request('/api/v2/kpi/bots')).status, 200);
});

t.test('documented in the OpenAPI document', async (t) => {
  const doc = (await a.admin.request('/api/openapi.json')).json;
  t.ok(doc.paths['/api/v2/kpi']?.get, 'GET /api/v2/kpi');
  t.ok(doc.paths['/api/v2/kpi/bots']?.get, 'GET /api/v2/kpi/bots');
  t.match(doc.paths['/api/v2/kpi'].get.summary, /beyond the spec/);
});
