// End to end over HTTPS against the simulated site (one charger, three bots):
// - bots below the brain's threshold (and below the firmware's BATTERY_LOW, a warning) are sent
//   to charge, and one with battery enough leaves the charger for the next that needs it;
// - an idle bot tops up while the charger is free, and goes back to work before its charge ends
//   when work waits for a bot.
// Before, a warning stopped a bot, so a bot at BATTERY_LOW was never sent to charge; and bots
// only charged once low, all together, a full charge each (docs/benchmarks-site.md, "the simulated hour").
import t from 'tap';
import { startE2eApp, type AdminApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { carriers } from '../../src/domain/inventory/records.js';

t.setTimeout(300_000);

interface Bot { id: number; battery_level: number; is_charging: boolean; x: number; y: number }
interface Request { id: string; type: string; status: string; bot_id: number | null }
interface Job { id: string; type: string; status: string; bot_id: number | null; details: { waiting_for?: string } }

const CHARGER = [7, 2];

function helpers(a: AdminApp) {
  const get = async (p: string) => (await a.admin.request(p)).json;
  return {
    get,
    post: (p: string, json: unknown) => a.admin.request(p, { method: 'POST', json }),
    bots: async () => (await get('/api/v2/bots')) as Bot[],
    recharges: async () => ((await get('/api/v2/requests?type__eq=RECHARGE&size=100')).items as Request[]),
  };
}

t.test('bots low on battery charge in turn: one with battery enough leaves the charger for the next', async (t) => {
  const a = await startE2eApp({ WAREHOUSE_SIM_BATTERY_PERMILLE: '190' });
  t.teardown(() => a.close());
  const { bots, recharges } = helpers(a);
  for (const b of await bots()) t.ok(b.battery_level < 20, `bot ${b.id} starts at ${b.battery_level} %`);
  const first = await until('a bot charging at the charger', async () => (await bots()).find((b) => b.is_charging), 60_000);
  t.same([first.x, first.y], CHARGER, 'at the charger');
  const requests = await recharges();
  t.ok(requests.some((r) => r.bot_id === first.id), 'its RECHARGE request');
  t.same(new Set(requests.map((r) => r.bot_id)), new Set((await bots()).map((b) => b.id)), 'every low bot has one: the others wait for the charger');
  // The request ends once the bot charges; the charger is its until a low bot needs it and it has 40 % (20 above the threshold).
  await until('its request to end', async () => (await recharges()).find((r) => r.bot_id === first.id && r.status === 'SUCCEEDED'), 60_000);
  const second = await until('the next bot charging', async () => (await bots()).find((b) => b.is_charging && b.id !== first.id), 120_000);
  t.same([second.x, second.y], CHARGER, 'at the charger');
  const left = (await bots()).find((b) => b.id === first.id)!;
  // 40 % when it left, less what its move aside drained since (0.2 % a second at 4×).
  t.ok(left.battery_level >= 39.5, `the first left with battery enough: ${left.battery_level} %`);
  t.notOk(left.is_charging, 'and no longer charges');
  t.not(`${left.x},${left.y}`, CHARGER.join(','), 'pushed aside');
  const third = await until('the last low bot charging', async () => (await bots()).find((b) => b.is_charging && b.id !== first.id && b.id !== second.id), 120_000);
  t.same([third.x, third.y], CHARGER);
  await until('every bot above the threshold', async () => (await bots()).every((b) => b.battery_level >= 20), 120_000);
});

t.test('an idle bot tops up at a free charger and goes back to work when work waits for a bot', async (t) => {
  const a = await startE2eApp({ WAREHOUSE_SIM_BATTERY_PERMILLE: '500' });
  t.teardown(() => a.close());
  const { get, post, bots, recharges } = helpers(a);
  const topping = await until('a bot topping up at the charger', async () => (await bots()).find((b) => b.is_charging), 60_000);
  t.same([topping.x, topping.y], CHARGER);
  t.same((await recharges()).map((r) => r.bot_id), [topping.id], 'one charger: one bot tops up');
  // Three carriers with nothing in front, one per free position: every bot is needed.
  const ids: string[] = [];
  for (const [carrier, balcony] of [['C4', 2], ['C3', 1], ['C1', 1]] as const) {
    const r = await post('/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: carrier, balcony_ids: [balcony] }] });
    t.equal(r.status, 201, JSON.stringify(r.json));
    ids.push(r.json.id);
  }
  const retrievals = await until('three retrievals on three bots', async () => {
    const jobs = (await get('/api/v2/jobs?type__eq=RETRIEVING&size=100')).items as Job[];
    return jobs.filter((j) => j.bot_id !== null).length === 3 ? jobs : undefined;
  }, 60_000);
  t.ok(retrievals.some((j) => j.bot_id === topping.id), 'the charging bot took one');
  const back = (await bots()).find((b) => b.id === topping.id)!;
  t.ok(back.battery_level < 95, `before its charge ended: ${back.battery_level} %`);
  await until('it to leave the charger', async () => {
    const b = (await bots()).find((x) => x.id === topping.id)!;
    return !b.is_charging && `${b.x},${b.y}` !== CHARGER.join(',');
  }, 60_000);
  // The people at the balconies check each carrier; every fetch ends.
  await until('the fetches to end', async () => {
    for (const job of (await get('/api/v2/jobs?status__eq=EXECUTING&size=100')).items as Job[]) {
      if (job.details.waiting_for === 'trigger') await post(`/api/v2/trigger/${job.id}`, {});
    }
    const requests = await Promise.all(ids.map(async (id) => (await get(`/api/v2/requests?id__eq=${id}`)).items[0] as Request));
    return requests.every((r) => r.status === 'SUCCEEDED');
  }, 180_000);
});

t.test('a bot holding a carrier at a balcony goes to charge only once the carrier is home', async (t) => {
  const a = await startE2eApp({ WAREHOUSE_SIM_BATTERY_PERMILLE: '1000' });
  t.teardown(() => a.close());
  const { get, post, bots } = helpers(a);
  const fetch = await post('/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] });
  t.equal(fetch.status, 201, JSON.stringify(fetch.json));
  const jobs = async (type: string) => (await get(`/api/v2/jobs?type__eq=${type}&size=100`)).items as Job[];
  const check = await until('the carrier at the balcony', async () => (await jobs('CHECKING')).find((j) => j.details.waiting_for === 'trigger'), 60_000);
  const holder = (await jobs('RETRIEVING'))[0]!.bot_id!;
  const recharge = await post('/api/v2/requests', { type: 'RECHARGE', bot_id: holder });
  t.equal(recharge.status, 201, JSON.stringify(recharge.json));
  const waiting = await until('the charging job to wait', async () => (await jobs('CHARGING')).find((j) => j.status === 'ACCEPTED' && /holds a carrier/.test(String((j.details as { reason?: string }).reason))), 30_000);
  t.equal(waiting.bot_id, holder);
  const at = (await bots()).find((b) => b.id === holder)!;
  t.same([at.y, at.is_charging], [0, false], 'it stays at the balcony with the carrier');
  await post(`/api/v2/trigger/${check.id}`, {});
  await until('the fetch to end', async () => (await get(`/api/v2/requests?id__eq=${fetch.json.id}`)).items[0].status === 'SUCCEEDED', 60_000);
  const charging = await until('it to charge', async () => (await bots()).find((b) => b.id === holder && b.is_charging), 60_000);
  t.same([charging.x, charging.y], CHARGER);
  const c4 = a.app.store.collection(carriers).get('C4')!;
  t.equal(a.app.site.kindAt(c4.level_id, c4.x, c4.y), 'storage', 'the carrier is home');
});

t.test('bots sent to charge on request, full already: each frees the charger for the next', async (t) => {
  const a = await startE2eApp({ WAREHOUSE_SIM_BATTERY_PERMILLE: '1000' });
  t.teardown(() => a.close());
  const { post, bots, recharges } = helpers(a);
  const at = async (id: number) => (await bots()).find((b) => b.id === id && b.x === CHARGER[0] && b.y === CHARGER[1]);
  for (const id of [1, 2]) {
    const r = await post('/api/v2/requests', { type: 'RECHARGE', bot_id: id });
    t.equal(r.status, 201, JSON.stringify(r.json));
    await until(`bot ${id} at the charger`, () => at(id), 60_000);
    await until(`its request to end`, async () => (await recharges()).find((q) => q.bot_id === id && q.status === 'SUCCEEDED'), 60_000);
  }
});
