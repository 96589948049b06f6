// Stops under load, with the daemon as a process on the simulated end-to-end site: SIGTERM while
// integrations write and bots move ends the process with 0 well within the unit's
// TimeoutStopSec (20 s), every time, and nothing acknowledged is lost; restart_brain over and
// over while work waits never takes the process down (before, a worker terminated while a
// native planner delivered aborted the whole daemon).
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '../helpers/client.js';
import { exited, startWithClient, type Daemon } from '../helpers/daemon.js';
import { until } from '../helpers/until.js';
import { e2eSite } from '../fixtures/e2e-site.js';

t.setTimeout(400_000);

const TIMEOUT_STOP_MS = 20_000;
const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-stop-'));
const siteFile = path.join(stateDir, 'site.json');
writeFileSync(siteFile, JSON.stringify(e2eSite()));
t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
const env = { WAREHOUSE_PORT: '0', WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'on', WAREHOUSE_SIM_SPEED: '4', WAREHOUSE_LOG_LEVEL: 'info' };

async function start(t: Test): Promise<{ d: Daemon; c: Client }> {
  const { d, c } = await startWithClient(t, stateDir, env);
  await until('three bots online', async () => (await c.get('/api/v2/bots')).json.filter((b: { online: boolean }) => b.online).length === 3, 30_000);
  return { d, c };
}

t.test('SIGTERM under write load ends the daemon with 0 within TimeoutStopSec, and every acknowledged write is kept', async (t) => {
  const acknowledged: string[] = [];
  for (let round = 0; round < 3; round++) {
    const { d, c } = await start(t);
    // Work for the bots, and an integration that keeps writing while the stop comes.
    await c.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] } });
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const r = await c.request('/api/v2/sku', { method: 'POST', json: { id: `STOP-${round}-${i}`, name: 'written during a stop' } }).catch(() => undefined);
        if (r?.status === 201) acknowledged.push(`STOP-${round}-${i}`);
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const stopAt = Date.now();
    d.child.kill('SIGTERM');
    const code = await exited(d.child);
    const took = Date.now() - stopAt;
    writing = false;
    await writer;
    t.equal(code, 0, `round ${round}: exit 0 (${d.stderr().slice(-500)})`);
    t.ok(took < TIMEOUT_STOP_MS, `round ${round}: stopped in ${took} ms`);
    t.notOk(/FATAL ERROR/.test(d.stderr()), 'no fatal error from the addon');
  }
  const { c } = await start(t);
  const missing: string[] = [];
  for (const id of acknowledged) if ((await c.get(`/api/v2/skus?id__eq=${id}`)).json.total !== 1) missing.push(id);
  t.ok(acknowledged.length > 0, `${acknowledged.length} writes acknowledged during the stops`);
  t.same(missing, [], 'none of them lost');
});

t.test('restart_brain over and over with work waiting: the daemon lives and the brain comes back every time', async (t) => {
  const { d, c } = await start(t);
  // Jobs that wait: a pause, and tag maintenance behind it.
  await c.request('/api/v2/requests', { method: 'POST', json: { type: 'PAUSE' } });
  for (let i = 0; i < 3; i++) await c.request('/api/v2/requests', { method: 'POST', json: { type: 'RFID_WRITE', level_id: 1 } });
  await c.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C1', balcony_ids: [1] }] } });
  for (let i = 0; i < 8; i++) {
    const r = await c.request('/api/v2/restart_brain?timeout=30', { method: 'POST', json: {} });
    t.equal(r.status, 200, `restart ${i}`);
    t.equal(r.json.status, 'restarted');
  }
  t.equal(d.child.exitCode, null, 'the daemon lives');
  t.notOk(/FATAL ERROR/.test(d.stderr()), 'no fatal error from the addon');
  t.equal((await c.get('/api/v2/storage_status')).json.storage_status, 'PAUSED', 'the brain came back with the stored pause');
});
