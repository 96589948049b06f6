// The daemon with its radio lines on: the simulator over real pseudo-terminals, the native
// link, bots from live telemetry and balcony LED sequences acknowledged by their controllers.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAdminApp, type AdminApp } from './helpers/app.js';
import { smallSite } from './fixtures/small-site.js';

let a: AdminApp;

t.before(async () => {
  const siteFile = path.join(mkdtempSync(path.join(tmpdir(), 'wh-site-')), 'site.json');
  writeFileSync(siteFile, JSON.stringify(smallSite()));
  a = await startAdminApp({ WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'on' });
});
t.teardown(() => a.close());

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test('bots come online with telemetry from the simulated level', async (t) => {
  const bots = await until(async () => (await a.admin.request('/api/v2/bots')).json, (b: any[]) => b.every((x) => x.online && x.battery_level > 0));
  t.match(bots, [{ id: 1, level_id: 1, online: true, x: 0, y: 1, heading: 'E', is_charging: false, lifted_carrier: 0 }]);
  t.ok(bots[0].battery_level > 0 && bots[0].battery_level <= 100);
  t.same((await a.admin.request('/api/v2/bots?level_id=2')).json, []);
  t.equal((await a.admin.request('/api/v2/bots?id=1&id=7')).json.length, 1);
  t.equal((await a.admin.request('/api/v2/bots?is_charging=true')).json.length, 0);
  t.equal((await a.admin.request('/api/v2/bots?level_id=x')).status, 422);
});

t.test('balcony LED sequences are published when the controller acknowledges them', async (t) => {
  const body = { status: [{ colors: [[0, 255, 0]], duration: 0.5 }, { colors: [[0, 0, 0]], duration: 0.5 }] };
  const r = await until(async () => a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: body }), (x) => x.json?.published === true);
  t.same(r.json, { balcony_id: 1, published: true });
  t.equal((await a.admin.request('/api/v2/balcony_leds/balcony/9', { method: 'POST', json: body })).status, 404);
  for (const bad of [{ status: [] }, { status: [{ colors: [[0, 256, 0]], duration: 1 }] }, { status: [{ colors: [[0, 0]], duration: 1 }] }, { status: [{ colors: [[0, 0, 0]], duration: 0 }] }, {}]) {
    t.equal((await a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: bad })).status, 422, JSON.stringify(bad));
  }
});

t.test('an idle LED controller stays reachable: silence is supervised for bots only', async (t) => {
  await new Promise((r) => setTimeout(r, 1500)); // longer than the link timeout, with no LED traffic
  const r = await a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: { status: [{ colors: [[0, 0, 255]], duration: 1 }] } });
  t.same(r.json, { balcony_id: 1, published: true });
});
