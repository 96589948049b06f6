// The daemon with its radio lines on: the simulator over real pseudo-terminals, the native
// link, bots from live telemetry and balcony LED sequences acknowledged by their controllers.
import t from 'tap';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { smallSite, writeSite } from '../fixtures/small-site.js';
import { FAULT_FLAGS } from '../../src/link/protocol/faults.js';

let a: AdminApp;

t.before(async () => {
  a = await startAdminApp({ WAREHOUSE_SITE: writeSite(smallSite()), WAREHOUSE_LINKS: 'on' });
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

t.test('bots filter as every list does: field__eq and field__in, the older names kept, an unknown filter refused', async (t) => {
  const ids = async (qs: string) => ((await a.admin.request(`/api/v2/bots?${qs}`)).json as { id: number }[]).map((b) => b.id);
  await until(async () => ids(''), (b) => b.length > 0);
  t.same(await ids('level_id__eq=2'), [], 'a level with no bots: no bots, not every bot');
  t.same(await ids('level_id__eq=1'), [1]);
  t.same(await ids('level_id__in=2&level_id__in=1'), [1]);
  t.same(await ids('id__eq=1'), [1]);
  t.same(await ids('id__in=7'), []);
  t.same(await ids('is_charging__eq=true'), []);
  t.same(await ids('id__eq=1&id=7'), [], 'every filter given holds');
  t.same(await ids('is_charging__eq=false&is_charging=true'), []);
  const unknown = await a.admin.request('/api/v2/bots?colour__eq=red');
  t.equal(unknown.status, 422);
  t.match(unknown.json.detail[0], { loc: ['query', 'colour__eq'], msg: /no field colour/ });
  const twice = await a.admin.request('/api/v2/bots?level_id__eq=1&level_id__eq=2');
  t.equal(twice.status, 422, 'a scalar filter given twice');
  t.match(twice.json.detail[0], { loc: ['query', 'level_id__eq'], msg: /Given 2 times/ });
});

t.test('balcony LED sequences are published when the controller acknowledges them', async (t) => {
  const body = { status: [{ colors: [[0, 255, 0]], duration: 0.5 }, { colors: [[0, 0, 0]], duration: 0.5 }] };
  const r = await until(async () => a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: body }), (x) => x.json?.published === true);
  t.same(r.json, { balcony_id: 1, published: true });
  t.equal((await a.admin.request('/api/v2/balcony_leds/balcony/9', { method: 'POST', json: body })).status, 404);
  const blink = await a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: { status: [{ colors: [[255, 0, 0], [0, 0, 255]], duration: 1 }] } });
  t.same(blink.json, { balcony_id: 1, published: true }, 'a step of several colours (spec 2.9: colors is an array of colours) plays them in turn');
  const tooMany = { status: Array.from({ length: 9 }, () => ({ colors: Array.from({ length: 9 }, () => [1, 2, 3]), duration: 9 })) };
  t.equal((await a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: tooMany })).status, 422, 'more colours than the controller plays');
  for (const bad of [{ status: [] }, { status: [{ colors: [[0, 256, 0]], duration: 1 }] }, { status: [{ colors: [[0, 0]], duration: 1 }] }, { status: [{ colors: [[0, 0, 0]], duration: 0 }] }, {}]) {
    t.equal((await a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: bad })).status, 422, JSON.stringify(bad));
  }
});

t.test('an idle LED controller stays reachable: silence is supervised for bots only', async (t) => {
  await new Promise((r) => setTimeout(r, 1500)); // longer than the link timeout, with no LED traffic
  const r = await a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: { status: [{ colors: [[0, 0, 255]], duration: 1 }] } });
  t.same(r.json, { balcony_id: 1, published: true });
});

const post = (body: unknown): ReturnType<AdminApp['admin']['request']> => a.admin.request('/api/v2/balcony_leds/balcony/1', { method: 'POST', json: body });
const step = (duration: number): unknown => ({ colors: [[255, 0, 0]], duration });

t.test('LED steps outside the protocol\'s bounds are a 422, not an unpublished sequence', async (t) => {
  // firmware-protocol/messages.json LED_SEQUENCE: 1..16 steps of 10..60000 ms.
  for (const [what, body] of [
    ['17 steps', { status: Array.from({ length: 17 }, () => step(0.5)) }],
    ['5 ms', { status: [step(0.005)] }],
    ['9.9 ms', { status: [step(0.0099)] }],
    ['60.001 s', { status: [step(60.001)] }],
    ['a negative duration', { status: [step(-1)] }],
  ] as const) {
    const r = await post(body);
    t.equal(r.status, 422, what);
    t.ok(r.json.detail.some((d: { loc: unknown[] }) => d.loc.includes('status')), `${what}: the validation body points at status (${JSON.stringify(r.json.detail[0])})`);
  }
  // The bounds themselves are accepted and acknowledged by the controller.
  t.same((await until(() => post({ status: [...Array.from({ length: 15 }, () => step(0.01)), step(60)] }), (x) => x.json?.published === true)).json, { balcony_id: 1, published: true });
});

const botOne = async (): Promise<any> => (await a.admin.request('/api/v2/bots?id=1')).json[0];

t.test('online follows the link: a bot that lost the link is offline while its telemetry still arrives', async (t) => {
  const links = a.app.lines!;
  const sim = a.app.simulator!;
  await until(botOne, (b) => b.online === true);
  await sim.setKnobs({ silent_nodes: [1] });
  t.teardown(() => sim.setKnobs({ silent_nodes: [], drop_frame_rate: 0, direction: 'both' }));
  t.equal((await until(botOne, (b) => b.online === false, 5000)).online, false, 'silent: offline');

  // Its radio back for sending only: the bot, which lost the link too, sends telemetry with
  // LINK_LOST but hears no heartbeat, so it never says HELLO and the link keeps it offline.
  let lostTelemetry = 0;
  const stop = links.onBot((e) => {
    if (e.kind === 'telemetry' && e.bot.id === 1 && (e.telemetry.faults & FAULT_FLAGS.get('LINK_LOST')!) !== 0) lostTelemetry++;
  });
  t.teardown(stop);
  await sim.setKnobs({ silent_nodes: [], drop_frame_rate: 1, direction: 'downlink' });
  await until(async () => lostTelemetry, (n) => n >= 5, 5000);
  t.ok(lostTelemetry >= 5, `telemetry with LINK_LOST arrived (${lostTelemetry} frames)`);
  t.match(await botOne(), { online: false }, 'still offline in /bots');

  await sim.setKnobs({ drop_frame_rate: 0, direction: 'both' });
  t.equal((await until(botOne, (b) => b.online === true, 5000)).online, true, 'welcomed again: online');
});

t.test('an LED controller that does not answer: published is false', async (t) => {
  const sim = a.app.simulator!;
  await sim.setKnobs({ silent_nodes: [0x1001] });
  t.teardown(() => sim.setKnobs({ silent_nodes: [] }));
  t.same((await post({ status: [step(1)] })).json, { balcony_id: 1, published: false });
  await sim.setKnobs({ silent_nodes: [] });
  t.same((await until(() => post({ status: [step(1)] }), (x) => x.json?.published === true)).json, { balcony_id: 1, published: true }, 'published again once it answers');
});
