// End to end over HTTPS against the simulated site: bots whose battery is below the brain's
// threshold (and below the firmware's BATTERY_LOW, a warning) are sent to charge one after the
// other and charge at the site's charger. A warning does not stop a bot: before, any fault flag
// did, so a bot that reached BATTERY_LOW was never sent to charge and a carrier on it never went
// home.
import t from 'tap';
import { startE2eApp, type AdminApp } from './helpers/app.js';
import { until } from './helpers/until.js';

t.setTimeout(300_000);

let a: AdminApp;

t.before(async () => {
  a = await startE2eApp({ WAREHOUSE_SIM_BATTERY_PERMILLE: '190' });
});
t.teardown(() => a.close());

interface Bot { id: number; battery_level: number; is_charging: boolean; x: number; y: number }
interface Request { id: string; type: string; status: string; bot_id: number | null }

const get = async (p: string) => (await a.admin.request(p)).json;
const bots = async () => (await get('/api/v2/bots')) as Bot[];
const recharges = async () => ((await get('/api/v2/requests?type__eq=RECHARGE&size=100')).items as Request[]);

t.test('bots low on battery are sent to charge and charge at the charger', async (t) => {
  for (const b of await bots()) t.ok(b.battery_level < 20, `bot ${b.id} starts at ${b.battery_level} %`);
  const charging = await until('a bot charging at the charger', async () => (await bots()).find((b) => b.is_charging), 60_000);
  t.same([charging.x, charging.y], [7, 2], 'at the charger');
  const requests = await recharges();
  t.ok(requests.some((r) => r.bot_id === charging.id), 'its RECHARGE request');
  t.same(new Set(requests.map((r) => r.bot_id)), new Set((await bots()).map((b) => b.id)), 'every low bot has one: the others wait for the charger');
  // The request ends once the bot charges; the charger is its until the charge is done.
  await until('its request to end', async () => (await recharges()).find((r) => r.bot_id === charging.id && r.status === 'SUCCEEDED'), 60_000);
  const next = await until('the next bot charging', async () => (await bots()).find((b) => b.is_charging && b.id !== charging.id), 120_000);
  const first = (await bots()).find((b) => b.id === charging.id)!;
  t.ok(first.battery_level > 90, `the first charged fully before the next took the charger: ${first.battery_level} %`);
  t.same([next.x, next.y], [7, 2]);
});
