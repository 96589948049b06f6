// Control actions in the middle of work, end to end against the simulated site: cancel_all and
// restart_brain while carriers are on their way, and offboarding and onboarding a bot. Every
// request reaches a final state within a bound, the jobs stay few, carriers end in storage, and
// an offboarded bot gets no work until it is onboarded again.
import t from 'tap';
import { startE2eApp, type AdminApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { e2eSite } from '../fixtures/e2e-site.js';
import { carriers } from '../../src/domain/inventory/records.js';

t.setTimeout(400_000);

interface Node { id: string; type: string; status: string; bot_id?: number | null; carrier_id: string | null; details: Record<string, unknown> }

const FINAL = ['SUCCEEDED', 'CANCELLED', 'ABORTED'];
const get = async (a: AdminApp, p: string) => (await a.admin.request(p)).json;
const post = (a: AdminApp, p: string, json: unknown = {}) => a.admin.request(p, { method: 'POST', json });
const graph = async (a: AdminApp, id: string) => (await get(a, `/api/v2/requests/${id}/job-graph`)).nodes as Node[];
const inStorage = (a: AdminApp, id: string) => {
  const c = a.app.store.collection(carriers).get(id)!;
  return a.app.site.kindAt(c.level_id, c.x, c.y) === 'storage';
};

/** Confirms person jobs of these requests until all are final; fails naming the ones that are not. */
async function settle(a: AdminApp, ids: string[], ms = 120_000) {
  return until(`requests ${ids.join(', ')} to end`, async () => {
    let open = 0;
    for (const id of ids) {
      const r = (await get(a, `/api/v2/requests?id__eq=${id}`)).items[0];
      if (FINAL.includes(r.status)) continue;
      open++;
      for (const n of await graph(a, id)) {
        if (n.status === 'EXECUTING' && n.details.waiting_for === 'trigger') await post(a, `/api/v2/trigger/${n.id}`);
      }
    }
    return open === 0;
  }, ms).catch(async (err: Error) => {
    const state = [];
    for (const id of ids) state.push((await graph(a, id)).filter((n) => !FINAL.includes(n.status)).map((n) => [n.type, n.status, n.carrier_id, n.details]));
    const said = a.lines.filter((l) => l.level === 'warn' || l.level === 'error').slice(-30).map((l) => JSON.stringify(l)).join('\n');
    throw new Error(`${err.message}\nopen jobs: ${JSON.stringify(state)}\nbots: ${JSON.stringify(await get(a, '/api/v2/bots'))}\n${said}`);
  });
}

/** Three requests whose carriers are on their way when the action comes. */
async function busy(a: AdminApp): Promise<string[]> {
  const ids = [
    (await post(a, '/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] })).json.id,
    (await post(a, '/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 12 }] })).json.id,
    (await post(a, '/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C2', balcony_ids: [1] }] })).json.id,
  ] as string[];
  // Jobs seen carrying across polls, not at once: a bot that went to top up first makes the
  // carrying of two carriers follow each other, and a slow poll may see only one at a time.
  const carried = new Set<string>();
  await until('two carriers lifted', async () => {
    for (const id of ids) for (const n of await graph(a, id)) if (n.status === 'EXECUTING' && n.details.phase === 'carrying') carried.add(n.id);
    return carried.size >= 2;
  }, 60_000);
  return ids;
}

async function jobCount(a: AdminApp, ids: string[]): Promise<number> {
  let n = 0;
  for (const id of ids) n += (await graph(a, id)).length;
  return n;
}

t.test('cancel_all in the middle of work: every request ends, carriers go home, jobs stay few', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const ids = await busy(a);
  const planned = await jobCount(a, ids);
  const all = await post(a, '/api/v2/requests/cancel_all');
  t.equal(all.status, 200);
  t.equal(all.json.cancelled_count, 3);
  await settle(a, ids);
  for (const id of ids) t.equal((await get(a, `/api/v2/requests?id__eq=${id}`)).items[0].status, 'CANCELLED', `request ${id} cancelled`);
  for (const c of ['C1', 'C2', 'C3', 'C4']) t.ok(inStorage(a, c), `${c} in storage`);
  t.ok(await jobCount(a, ids) <= planned + 6, 'no churn of jobs: a bounded number of retries at most');
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const open = (await get(a, '/api/v2/requests?status__in=CREATED&status__in=ACCEPTED&status__in=EXECUTING&size=100')).items as { type: string }[];
  t.ok(open.filter((r) => r.type === 'RECHARGE').length <= 1, 'no churn of charging work either');
});

t.test('restart_brain in the middle of work: the work resumes and ends', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const ids = await busy(a);
  const planned = await jobCount(a, ids);
  for (let i = 0; i < 3; i++) {
    const r = await post(a, '/api/v2/restart_brain?timeout=30');
    t.equal(r.status, 200);
    t.equal(r.json.status, 'restarted');
  }
  await settle(a, ids);
  for (const id of ids) t.equal((await get(a, `/api/v2/requests?id__eq=${id}`)).items[0].status, 'SUCCEEDED');
  for (const c of ['C1', 'C2', 'C3', 'C4']) t.ok(inStorage(a, c), `${c} in storage`);
  t.ok(await jobCount(a, ids) <= planned + 6, 'a bounded number of retries at most');
});

t.test('a brain started while a carrier is carried off its cell does not bar that cell: the bot behind it in the lane gets out', async (t) => {
  // Lane 1 (C1 in front, C2 behind it) walled on both sides: a bot holding C2 gets out through
  // C1's old cell (1,2) or not at all. Full batteries: no bot goes to top up meanwhile.
  const site = e2eSite();
  site.levels[0]!.rows = ['#PP#BPP#', '........', 'BS#SSSSC', '#S#SSSS#', '#S#SSSS#', '########'];
  const a = await startE2eApp({ WAREHOUSE_SIM_BATTERY_PERMILLE: '1000' }, site);
  t.teardown(() => a.close());
  const first = (await post(a, '/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C1', balcony_ids: [2] }] })).json.id as string;
  await until('C1 lifted and carried', async () => (await graph(a, first)).some((n) => n.type === 'RETRIEVING' && n.status === 'EXECUTING' && n.details.phase === 'carrying'), 60_000);
  // The store books C1 at (1,2) until it reaches the balcony; the new brain's planner must not
  // take it as standing there, or the bot that lifts C2 behind it at (1,3) never gets out.
  const r = await post(a, '/api/v2/restart_brain?timeout=30');
  t.equal(r.status, 200);
  const second = (await post(a, '/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C2', balcony_ids: [1] }] })).json.id as string;
  await settle(a, [first, second]);
  for (const id of [first, second]) t.equal((await get(a, `/api/v2/requests?id__eq=${id}`)).items[0].status, 'SUCCEEDED');
  const failed = a.lines.filter((l) => l.msg === 'bot job failed');
  t.same(failed.map((l) => l.reason), [], 'no job failed');
});

t.test('an offboarded bot is out of service and gets no work until it is onboarded again', async (t) => {
  // Full batteries: no bot goes to top up at the charger, which would make bot 3 busy (409) at random.
  const a = await startE2eApp({ WAREHOUSE_SIM_BATTERY_PERMILLE: '1000' });
  t.teardown(() => a.close());
  const off = await post(a, '/api/v2/requests', { type: 'OFFBOARD', bot_id: 3, balcony_id: 1 });
  t.equal(off.status, 201, JSON.stringify(off.json));
  t.equal((await settle(a, [off.json.id])) && (await get(a, `/api/v2/requests?id__eq=${off.json.id}`)).items[0].status, 'SUCCEEDED');
  t.same((await graph(a, off.json.id)).map((n) => `${n.type} ${n.status}`), ['OFFBOARDING SUCCEEDED', 'OFFBOARDING_BC SUCCEEDED', 'OFFBOARDING_BD SUCCEEDED'],
    'the bot drove to the balcony, was parked, and was taken off');
  const bot3 = async () => ((await get(a, '/api/v2/bots')) as { id: number; in_service: boolean }[]).find((b) => b.id === 3);
  t.equal((await bot3())?.in_service, false, 'GET /bots says bot 3 is out of service');
  const again = await post(a, '/api/v2/requests', { type: 'OFFBOARD', bot_id: 3 });
  t.equal(again.status, 409, 'offboarding it again is refused');
  t.equal(again.json.entity_feedback[0].error_code, '0x500F');
  const fetches = [];
  for (const c of ['C4', 'C2']) fetches.push((await post(a, '/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: c, balcony_ids: [2] }] })).json.id as string);
  await settle(a, fetches);
  for (const id of fetches) {
    for (const n of await graph(a, id)) t.not((await get(a, `/api/v2/jobs?id__eq=${n.id}`)).items[0]?.bot_id, 3, `${n.type} ran without bot 3`);
  }
  const on = await post(a, '/api/v2/requests', { type: 'ONBOARD', bot_id: 3, level_id: 1, balcony_id: 1 });
  t.equal(on.status, 201, JSON.stringify(on.json));
  await settle(a, [on.json.id]);
  await until('bot 3 back in service', async () => (await bot3())?.in_service === true && (await bot3()) !== undefined, 30_000);
});

t.test('a carrier onboarded at a balcony by a person is stored', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const r = await post(a, '/api/v2/requests', { type: 'CARRIER_ONBOARDING', carrier_id: 'C9', balcony_id: 1 });
  t.equal(r.status, 201, JSON.stringify(r.json));
  await settle(a, [r.json.id]);
  t.equal((await get(a, `/api/v2/requests?id__eq=${r.json.id}`)).items[0].status, 'SUCCEEDED');
  t.ok(inStorage(a, 'C9'), 'C9 is in storage');
});

t.test('UNCHARGING without a bot takes every charging bot off its charger (UNCHARGE_ALL)', async (t) => {
  // Batteries above the top-up level (80 %) and below full: no bot goes to top up by itself,
  // which would make bot 2 busy (409) at random, and bot 2 still has charging to do.
  const a = await startE2eApp({ WAREHOUSE_SIM_BATTERY_PERMILLE: '850' });
  t.teardown(() => a.close());
  const charge = await post(a, '/api/v2/requests', { type: 'RECHARGE', bot_id: 2 });
  t.equal(charge.status, 201, JSON.stringify(charge.json));
  await settle(a, [charge.json.id]);
  await until('bot 2 charging', async () => (await get(a, '/api/v2/bots?id=2'))[0].is_charging === true, 60_000);
  const off = await post(a, '/api/v2/requests', { type: 'UNCHARGING' });
  t.equal(off.status, 201, JSON.stringify(off.json));
  await settle(a, [off.json.id]);
  t.same((await graph(a, off.json.id)).map((n) => `${n.type} ${n.status}`), ['UNCHARGE_ALL SUCCEEDED']);
  await until('bot 2 off its charger', async () => (await get(a, '/api/v2/bots?id=2'))[0].is_charging === false, 30_000);
});

t.test('a carrier left on a bot with no work is taken home (CLEAR_AUTOBAHN)', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const r = await post(a, '/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] });
  const check = await until('C4 held at its balcony', async () => (await graph(a, r.json.id)).find((n) => n.type === 'CHECKING' && n.status === 'EXECUTING'), 60_000);
  // Its storing fails for good: a person gives it up, and the carrier is left on its bot.
  await post(a, '/api/v2/requests', { type: 'PAUSE' });
  t.equal((await post(a, `/api/v2/trigger/${check.id}`)).status, 200);
  const storing = await until('the storing to be ready', async () => (await graph(a, r.json.id)).find((n) => n.type === 'STORING' && n.status === 'ACCEPTED'));
  await a.app.requests.write(() => a.app.requests.failJob(a.app.requests.job(storing.id), 'it could not go on'));
  t.equal((await post(a, `/api/v2/trigger/${storing.id}`, { TriggerStatus: 'CANCELLED_TRIGGER' })).status, 200, 'a person gives it up');
  t.equal((await get(a, `/api/v2/requests?id__eq=${r.json.id}`)).items[0].status, 'CANCELLED');
  await post(a, '/api/v2/requests', { type: 'RESUME' });
  const clear = await until('the brain to take it home', async () => {
    for (const q of (await get(a, '/api/v2/requests?type__eq=RESUME&size=20')).items) {
      const nodes = await graph(a, q.id);
      if (nodes.some((n) => n.type === 'CLEAR_AUTOBAHN' && n.carrier_id === 'C4' && n.status === 'SUCCEEDED')) return q;
    }
    return undefined;
  }, 90_000);
  t.ok(clear, 'a CLEAR_AUTOBAHN took C4 home');
  t.ok(inStorage(a, 'C4'), 'C4 is in storage');
  t.equal((await get(a, '/api/v2/bots')).filter((b: { lifted_carrier: number }) => b.lifted_carrier === 1).length, 0, 'no bot holds a carrier');
});
