// kill -9 of the daemon right after it acknowledged requests and a trigger: after a restart on
// the same state directory every acknowledged change is there exactly once, the reservations
// agree with the open jobs, and the brain picks the open work up again.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '../helpers/client.js';
import { exited, startDaemon, startWithClient } from '../helpers/daemon.js';
import { until } from '../helpers/until.js';
import { smallSite } from '../fixtures/small-site.js';
import { e2eSite } from '../fixtures/e2e-site.js';

// Whole daemons with simulated bots: slower than tap's default file budget on a loaded machine.
t.setTimeout(300_000);

const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-recovery-'));
const siteFile = path.join(stateDir, 'site.json');
writeFileSync(siteFile, JSON.stringify(smallSite()));
t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));

const env = { WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'off', WAREHOUSE_LOG_LEVEL: 'info' };

const start = (t: Test) => startWithClient(t, stateDir, env);

t.test('acknowledged requests, jobs, bookings and reservations survive kill -9', async (t) => {
  const first = await start(t);
  let c = first.c;
  const fulfil = await c.request('/api/v2/requests', { method: 'POST', json: { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 2 }] } });
  t.equal(fulfil.status, 201);
  const onboard = await c.request('/api/v2/requests', { method: 'POST', json: { type: 'CARRIER_ONBOARDING', carrier_id: 'C9', balcony_id: 1 } });
  t.equal(onboard.status, 201);
  const person = await until('the onboarding job to wait for its trigger', async () => {
    const j = (await c.get(`/api/v2/jobs?request_id__eq=${onboard.json.id}&type__eq=ONBOARDING`)).json.items[0];
    return j?.status === 'EXECUTING' ? j : undefined;
  });
  const trigger = await c.request(`/api/v2/trigger/${person.id}`, { method: 'POST', json: {} });
  t.equal(trigger.status, 200);
  const keyed = await c.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C4' }] }, headers: { 'idempotency-key': 'k-1' } });
  t.equal(keyed.status, 201);
  first.d.child.kill('SIGKILL');
  t.equal(await exited(first.d.child), null, 'killed');

  const second = await start(t);
  c = second.c;
  const r1 = (await c.get(`/api/v2/requests?id__eq=${fulfil.json.id}`)).json.items[0];
  t.equal(r1.status, 'ACCEPTED', 'the fulfillment is there, still open');
  const sku = (await c.get('/api/v2/skus?id__eq=A')).json.items[0];
  const picks = (await c.get(`/api/v2/requests/${fulfil.json.id}/job-graph`)).json.nodes.filter((n: { type: string }) => n.type === 'PICKING');
  t.equal(sku.total_quantity - sku.fulfillable, picks.reduce((n: number, p: { quantity: number }) => n + p.quantity, 0), 'reserved_out equals the open picks');
  const graph = (await c.get(`/api/v2/requests/${onboard.json.id}/job-graph`)).json.nodes;
  t.equal(graph.find((n: { type: string }) => n.type === 'ONBOARDING').status, 'SUCCEEDED', 'the trigger was kept');
  const again = await c.request(`/api/v2/trigger/${person.id}`, { method: 'POST', json: {} });
  t.equal(again.status, 409, 'and is not booked twice');
  const replay = await c.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C4' }] }, headers: { 'idempotency-key': 'k-1' } });
  t.equal(replay.status, 200, 'the idempotency key outlives the crash');
  t.equal(replay.json.id, keyed.json.id);
  const storing = await until('the restarted brain to explain the STORING job', async () => {
    const j = (await c.get(`/api/v2/jobs?request_id__eq=${onboard.json.id}&type__eq=STORING`)).json.items[0];
    return j?.details.waiting_for ? j : undefined;
  });
  t.equal(storing.status, 'ACCEPTED');
  t.equal((await c.get('/api/v2/storage_status')).json.storage_status, 'RUNNING');
});

interface GraphNode { id: string; type: string; status: string; carrier_id: string; details: { phase?: string; waiting_for?: string } }

/**
 * A fulfillment on the bots' site, the daemon killed once `killWhen` holds for its job graph,
 * restarted on the same state: the request must end SUCCEEDED, booked once, carriers home.
 */
function killMidFlow(name: string, killWhen: (nodes: GraphNode[]) => boolean): void {
  t.test(name, async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wh-recovery-bots-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const layout = path.join(dir, 'site.json');
    writeFileSync(layout, JSON.stringify(e2eSite()));
    const botsEnv = { WAREHOUSE_STATE_DIR: dir, WAREHOUSE_PORT: '0', WAREHOUSE_SITE: layout, WAREHOUSE_LINKS: 'on', WAREHOUSE_SIM_SPEED: '4', WAREHOUSE_LOG_LEVEL: 'info' };
    const run = async () => {
      const d = startDaemon(botsEnv);
      t.teardown(() => d.child.kill('SIGKILL'));
      const port = await Promise.race([d.listening, exited(d.child).then((code) => {
        throw new Error(`the daemon exited (${code}) before it listened: ${d.lines.filter((l) => l.level === 'error' || l.level === 'fatal').map((l) => JSON.stringify(l)).join('\n')}`);
      })]);
      const key = JSON.parse(readFileSync(path.join(dir, 'bootstrap-admin.json'), 'utf8')).api_key as string;
      const c = new Client(port, readFileSync(path.join(dir, 'tls/self-signed-cert.pem')), key);
      t.teardown(() => c.close());
      // Until the radio lines are up /bots may answer with an error body: say which, if it stays so.
      let last: unknown;
      await until('bots online', async () => {
        const r = await c.get('/api/v2/bots');
        last = [r.status, r.json];
        return Array.isArray(r.json) && r.json.filter((b: { online: boolean }) => b.online).length === 3;
      }, 30_000).catch((err: Error) => {
        throw new Error(`${err.message}; GET /bots answered ${JSON.stringify(last)}`);
      });
      return { d, c };
    };
    const first = await run();
    const before = (await first.c.get('/api/v2/skus?id__eq=A')).json.items[0].total_quantity as number;
    const r = await first.c.request('/api/v2/requests', { method: 'POST', json: { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 12 }] } });
    t.equal(r.status, 201);
    await until('the moment to kill', async () => killWhen((await first.c.get(`/api/v2/requests/${r.json.id}/job-graph`)).json.nodes), 60_000);
    first.d.child.kill('SIGKILL');
    await exited(first.d.child);

    const second = await run();
    const c = second.c;
    const done = await until('the request to end after the restart', async () => {
      for (const job of (await c.get(`/api/v2/jobs?request_id__eq=${r.json.id}&status__eq=EXECUTING&size=100`)).json.items) {
        if (job.details.waiting_for === 'trigger') await c.request(`/api/v2/trigger/${job.id}`, { method: 'POST', json: {} });
      }
      const req = (await c.get(`/api/v2/requests?id__eq=${r.json.id}`)).json.items[0];
      return ['SUCCEEDED', 'CANCELLED', 'ABORTED'].includes(req.status) ? req : undefined;
    }, 90_000).catch(async (err: Error) => {
      if (second.d.child.exitCode !== null || second.d.child.signalCode !== null) {
        const last = second.d.lines.slice(-30).map((l) => JSON.stringify(l)).join('\n');
        throw new Error(`${err.message}; the restarted daemon exited (${second.d.child.exitCode ?? second.d.child.signalCode}):\n${last}\n${second.d.stderr().slice(-3000)}`);
      }
      // The jobs as they stand, the bots, and what the restarted daemon said: the why.
      const jobs = (await c.get(`/api/v2/jobs?request_id__eq=${r.json.id}&size=100`)).json.items.map((j: Record<string, unknown>) => [j.type, j.status, j.carrier_id, j.bot_id, j.target, j.details]);
      const bots = (await c.get('/api/v2/bots')).json;
      const waiting = (await c.get(`/api/v2/jobs?request_id__eq=${r.json.id}&status__eq=EXECUTING&size=100`)).json.items.find((j: { details: { waiting_for?: string } }) => j.details.waiting_for === 'trigger');
      const tried = waiting ? await c.request(`/api/v2/trigger/${waiting.id}`, { method: 'POST', json: {} }) : undefined;
      // The daemon's own line for a failed trigger reaches the pipe a moment after its answer.
      if (tried && tried.status >= 500) await new Promise((r) => setTimeout(r, 500));
      const said = second.d.lines.filter((l) => ['warn', 'error', 'fatal'].includes(l.level) || /brain|job|planner|bot/.test(l.msg) || (tried && l.req_id === tried.json?.request_id)).slice(-60).map((l) => JSON.stringify(l)).join('\n');
      throw new Error(`${err.message}\njobs: ${JSON.stringify(jobs)}\nbots: ${JSON.stringify(bots)}\ntrigger: ${tried?.status} ${JSON.stringify(tried?.json)}\n${said}`);
    });
    t.equal(done.status, 'SUCCEEDED');
    t.equal(done.entities[0].succeeded_quantity, 12);
    t.equal((await c.get('/api/v2/skus?id__eq=A')).json.items[0].total_quantity, before - 12, 'booked exactly once');
    // The inventory view follows the brain's commits by message, a moment after the store.
    for (const id of ['C1', 'C3']) {
      const row = await until(`${id} back in a storage space in the inventory view`, async () => {
        const item = (await c.get(`/api/v2/inventory_view?carrier_id__eq=${id}&size=10`)).json.items[0];
        return item.position_y >= 2 ? item : undefined;
      }, 10_000);
      t.ok(row.position_y >= 2, `${id} is back in a storage space`);
    }
  });
}

killMidFlow('kill -9 while a bot carries work: after the restart the request finishes, booked once, carriers home',
  (nodes) => nodes.some((n) => n.type === 'RETRIEVING' && n.status === 'EXECUTING' && n.details.phase === 'carrying'));
// The simulated site then starts with the carrier at the balcony, where the store says it is.
killMidFlow('kill -9 while a carrier waits at the balcony for its pick: after the restart the pick is made there',
  (nodes) => nodes.some((n) => n.type === 'PICKING' && n.status === 'EXECUTING' && n.details.waiting_for === 'trigger'));
