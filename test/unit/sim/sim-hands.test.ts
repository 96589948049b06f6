// People's hands on the simulated site, and a restart where the site stood: the simulator child
// process on its real pty, this test playing the controller with the TypeScript codec (as
// test/unit/sim/sim.test.ts does). A carrier put at a balcony port is lifted there by a bot; carriers are
// taken away, also off a bot; a bot taken off falls silent and holds no cell, and put on again it
// boots afresh (HELLO with a new session) at its new cell; a new bot id joins the level; a
// restart starts bots where the daemon says they stood, one holding a carrier up. Every refusal
// rejects with its reason and leaves the site as it was. No timing thresholds: the tests wait for
// what the bots report.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Frame, Heading, MessageOf } from '../../../src/link/protocol/messages.js';
import type { LevelSnapshot } from '../../../src/sim/gateway.js';
import { startSimulator, type SimulatorProcess } from '../../../src/sim/process.js';
import { TestController } from '../../helpers/sim-controller.js';
import { simSite } from '../../fixtures/sim-site.js';

const SITE = simSite('Hands test site');
const LED0 = 0x1000;

const dir = mkdtempSync(path.join(tmpdir(), 'sim-hands-'));
const sitePath = path.join(dir, 'site.json');
writeFileSync(sitePath, JSON.stringify(SITE));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** What hands and bots change on the site: where bots and carriers are, and which bots are off. */
function floor(levels: LevelSnapshot[]): unknown {
  return levels.map((l) => ({
    level_id: l.level_id,
    bots: l.bots.map((b) => ({ id: b.id, x: b.x, y: b.y, heading: b.heading, lift: b.lift, carrier: b.carrier })),
    absent_bots: l.absent_bots,
    carriers: l.carriers,
  }));
}

/** A refused action: rejected with its reason, the site as it was. */
async function refused(t: Test, sim: SimulatorProcess, what: string, act: () => Promise<unknown>, reason: RegExp): Promise<void> {
  const before = floor(await sim.snapshot());
  await t.rejects(act(), { message: reason }, what);
  t.same(floor(await sim.snapshot()), before, `${what}: nothing changed`);
}

/** Starts a simulator with a controller on its level-1 pty that has welcomed `nodes`. */
async function open(t: Test, options: Omit<Parameters<typeof startSimulator>[0], 'site'>, nodes: number[]) {
  const sim = await startSimulator({ site: sitePath, onLog: () => undefined, ...options });
  const ctl = new TestController(sim.devices.get(1)!);
  t.teardown(async () => {
    await ctl.close();
    await sim.stop();
  });
  await ctl.open();
  const hellos = new Map<number, Frame<MessageOf<'HELLO'>>>();
  for (const h of await Promise.all(nodes.map((src) => ctl.nextOf(src, 'HELLO')))) hellos.set(h.src, h);
  ctl.startHeartbeats();
  return { sim, ctl, hellos };
}

const site = (levels: LevelSnapshot[]): LevelSnapshot => levels.find((l) => l.level_id === 1)!;
const bot = (levels: LevelSnapshot[], id: number) => site(levels).bots.find((b) => b.id === id);
const tagText = (m: MessageOf<'RFID_DATA'>): string => Buffer.from(m.data).toString('utf8').replace(/\0+$/, '');

t.test('hands on a running site', async (t) => {
  const { sim, ctl, hellos } = await open(t, { seed: 11, figures: { liftMs: 300 } }, [1, 2, 3, LED0]);
  for (const h of hellos.values()) await ctl.welcome(h);

  t.test('a carrier put at a balcony port is lifted there by a bot, its tag holding its id', async (t) => {
    await sim.placeCarrier(1, 'P1', 2, 0);
    t.same(site(await sim.snapshot()).carriers, [{ id: 'C1', x: 1, y: 2 }, { id: 'C2', x: 1, y: 0 }, { id: 'P1', x: 2, y: 0 }]);
    const there = ctl.telemetry(1, (m) => m.x === 2 && m.y === 0 && m.motion === 'IDLE');
    const steps = [{ action: 'MOVE_E', cells: 2, duration_ms: 700 }, { action: 'MOVE_N', cells: 1, duration_ms: 1000 }] as const;
    t.equal((await ctl.ack(1, { type: 'SEGMENT', segment: 1, start_delay_ms: 0, x: 0, y: 1, steps: [...steps] })).result, 'OK');
    await there;
    const up = ctl.telemetry(1, (m) => m.lift === 'UP');
    t.equal((await ctl.ack(1, { type: 'LIFT' })).result, 'OK');
    t.match(await up, { x: 2, y: 0, carrier: true });
    const read = await ctl.command(1, { type: 'RFID_READ', target: 'CARRIER', offset: 0, length: 8 });
    t.match(read.message, { type: 'RFID_DATA', result: 'OK' });
    t.equal(tagText(read.message as MessageOf<'RFID_DATA'>), 'P1');
    const levels = await sim.snapshot();
    t.match(bot(levels, 1), { x: 2, y: 0, lift: 'UP', carrier: 'P1' });
    t.notOk(site(levels).carriers.some((c) => c.id === 'P1'), 'a carrier held up stands on no cell');
  });

  t.test('every impossible action is refused with its reason and changes nothing', async (t) => {
    // Bot 1 holds P1 up at the port (2, 0); C1 stands at (1, 2), C2 at (1, 0); bot 3 is on the charger (0, 4).
    const cases: [string, () => Promise<unknown>, RegExp][] = [
      ['a carrier under a bot', () => sim.placeCarrier(1, 'X1', 2, 0), /bot 1 is at \(2, 0\)/],
      ['a carrier on a carrier', () => sim.placeCarrier(1, 'X1', 1, 2), /carrier C1 already stands at \(1, 2\)/],
      ['a carrier on the highway', () => sim.placeCarrier(1, 'X1', 0, 1), /highway cell/],
      ['a carrier on a wall', () => sim.placeCarrier(1, 'X1', 0, 0), /wall cell/],
      ['a carrier on a charger', () => sim.placeCarrier(1, 'X1', 0, 4), /charger cell/],
      ['a carrier off the grid', () => sim.placeCarrier(1, 'X1', 7, 0), /outside the grid/],
      ['a carrier on an unknown level', () => sim.placeCarrier(9, 'X1', 3, 0), /no simulated level 9/],
      ['a carrier standing elsewhere', () => sim.placeCarrier(1, 'C1', 3, 0), /carrier C1 already stands at \(1, 2\) on level 1/],
      ['a carrier a bot holds', () => sim.placeCarrier(1, 'P1', 3, 0), /carrier P1 is held by bot 1/],
      ['an empty carrier id', () => sim.placeCarrier(1, '', 3, 0), /carrier id "" is not 1\.\.64 characters/],
      ['too long a carrier id', () => sim.placeCarrier(1, 'x'.repeat(65), 3, 0), /is not 1\.\.64 characters/],
      ['no carrier to take', () => sim.removeCarrier(1, 3, 0), /no carrier at \(3, 0\)/],
      ['a carrier from an unknown level', () => sim.removeCarrier(9, 1, 2), /no simulated level 9/],
      ['a bot holding a carrier', () => sim.takeBot(1, 1), /bot 1 holds carrier P1; set it down or take it off the bot first/],
      ['a bot not on the level', () => sim.takeBot(1, 9), /bot 9 is not on the level/],
      ['a bot from an unknown level', () => sim.takeBot(9, 1), /no simulated level 9/],
      ['a bot already on the level', () => sim.putBot(1, 1, 3, 1, 'N'), /bot 1 is already on level 1/],
      ['a bot on a wall', () => sim.putBot(1, 8, 0, 0, 'N'), /wall cell, where no bot can stand/],
      ['a bot onto a carrier', () => sim.putBot(1, 8, 1, 2, 'N'), /carrier C1 stands at \(1, 2\)/],
      ['a bot onto a bot', () => sim.putBot(1, 8, 0, 4, 'N'), /bot 3 is at \(0, 4\)/],
      ['a bot under a held carrier', () => sim.putBot(1, 8, 2, 0, 'N'), /bot 1 is at \(2, 0\)/],
      ['a bot off the grid', () => sim.putBot(1, 8, 3, 5, 'N'), /outside the grid/],
      ['a bot with no heading', () => sim.putBot(1, 8, 3, 1, 'X' as Heading), /heading "X" is not N, E, S or W/],
      ['a bot with a battery above full', () => sim.putBot(1, 8, 3, 1, 'N', 1001), /battery 1001 is not an integer in 0\.\.1000/],
      ['a bot whose id is an LED address', () => sim.putBot(1, 0x1000, 3, 1, 'N'), /bot id 4096 is not an integer in 1\.\.4095/],
      ['a bot on an unknown level', () => sim.putBot(9, 8, 3, 1, 'N'), /no simulated level 9/],
    ];
    for (const [what, act, reason] of cases) await refused(t, sim, what, act, reason);
  });

  t.test('set down at the port, the carrier is taken away by hand; a known carrier is put back', async (t) => {
    const down = ctl.telemetry(1, (m) => m.lift === 'DOWN');
    t.equal((await ctl.ack(1, { type: 'LOWER' })).result, 'OK');
    t.match(await down, { carrier: false });
    t.same(site(await sim.snapshot()).carriers.find((c) => c.id === 'P1'), { id: 'P1', x: 2, y: 0 }, 'set down at the port');
    const away = ctl.telemetry(1, (m) => m.y === 1 && m.motion === 'IDLE');
    t.equal((await ctl.ack(1, { type: 'SEGMENT', segment: 2, start_delay_ms: 0, x: 2, y: 0, steps: [{ action: 'MOVE_S', cells: 1, duration_ms: 1000 }] })).result, 'OK');
    await away;
    t.equal(await sim.removeCarrier(1, 2, 0), 'P1');
    t.equal(await sim.removeCarrier(1, 1, 0), 'C2', 'off a buffer too');
    await sim.placeCarrier(1, 'C2', 3, 0);
    t.same(site(await sim.snapshot()).carriers, [{ id: 'C1', x: 1, y: 2 }, { id: 'C2', x: 3, y: 0 }]);
  });

  t.test('a carrier held up is taken off its bot by hand; the bot may then be lowered empty', async (t) => {
    const there = ctl.telemetry(1, (m) => m.x === 3 && m.y === 0 && m.motion === 'IDLE');
    const steps = [{ action: 'MOVE_E', cells: 1, duration_ms: 900 }, { action: 'MOVE_N', cells: 1, duration_ms: 900 }] as const;
    t.equal((await ctl.ack(1, { type: 'SEGMENT', segment: 3, start_delay_ms: 0, x: 2, y: 1, steps: [...steps] })).result, 'OK');
    await there;
    const up = ctl.telemetry(1, (m) => m.lift === 'UP' && m.carrier);
    t.equal((await ctl.ack(1, { type: 'LIFT' })).result, 'OK');
    await up;
    const read = await ctl.command(1, { type: 'RFID_READ', target: 'CARRIER', offset: 0, length: 8 });
    t.equal(tagText(read.message as MessageOf<'RFID_DATA'>), 'C2', 'a carrier put back keeps its tag');
    const empty = ctl.telemetry(1, (m) => m.lift === 'UP' && !m.carrier);
    t.equal(await sim.removeCarrier(1, 3, 0), 'C2');
    await empty;
    t.match(bot(await sim.snapshot(), 1), { lift: 'UP', carrier: null });
    const down = ctl.telemetry(1, (m) => m.lift === 'DOWN');
    t.equal((await ctl.ack(1, { type: 'LOWER' })).result, 'OK');
    t.match(await down, { carrier: false });
    t.same(site(await sim.snapshot()).carriers, [{ id: 'C1', x: 1, y: 2 }], 'nothing was set down');
  });

  t.test('a bot taken off falls silent and holds no cell; put on again it boots afresh at its new cell', async (t) => {
    await sim.takeBot(1, 2);
    let levels = await sim.snapshot();
    t.same(site(levels).bots.map((b) => b.id), [1, 3]);
    t.same(site(levels).absent_bots, [2]);
    // Frames already in the line may still arrive: count only after a round of telemetry.
    let n = 0;
    await ctl.next((f) => f.src === 3 && f.message.type === 'TELEMETRY' && ++n >= 5);
    const mark = ctl.frames.length;
    ctl.send(2, { type: 'PAUSE' }, { ack_req: true });
    n = 0;
    await ctl.next((f) => f.src === 3 && f.message.type === 'TELEMETRY' && ++n >= 15);
    t.equal(ctl.frames.slice(mark).filter((f) => f.src === 2).length, 0, 'nothing from bot 2, not even an answer');
    await refused(t, sim, 'taking it again', () => sim.takeBot(1, 2), /bot 2 is not on the level \(it was taken off\)/);

    const hello = ctl.nextOf(2, 'HELLO');
    await sim.putBot(1, 2, 5, 1, 'S', 700);
    const h = await hello;
    t.not(h.message.session, hellos.get(2)!.message.session, 'a new session: a rebooted node');
    const first = ctl.telemetry(2);
    await ctl.welcome(h);
    t.match(await first, { x: 5, y: 1, heading: 'S', lift: 'DOWN', carrier: false, motion: 'IDLE', faults: 0 });
    levels = await sim.snapshot();
    t.same(site(levels).absent_bots, []);
    t.match(bot(levels, 2), { x: 5, y: 1, lift: 'DOWN', carrier: null, battery: 700, executed: { total: 0 } });
    t.equal((await ctl.ack(2, { type: 'SEGMENT', segment: 1, start_delay_ms: 0, x: 5, y: 1, steps: [{ action: 'WAIT', cells: 0, duration_ms: 10 }] })).result, 'OK', 'it takes commands');
  });

  t.test('a new bot id put on the level joins it, on the cell a bot taken off had left', async (t) => {
    const hello = ctl.nextOf(7, 'HELLO');
    await sim.putBot(1, 7, 6, 3, 'N');
    const h = await hello;
    t.equal(h.message.node_kind, 'BOT');
    const first = ctl.telemetry(7);
    await ctl.welcome(h);
    t.match(await first, { x: 6, y: 3, heading: 'N', lift: 'DOWN', carrier: false });
    t.same(site(await sim.snapshot()).bots.map((b) => b.id), [1, 3, 2, 7]);
    await refused(t, sim, 'putting it on twice', () => sim.putBot(1, 7, 6, 1, 'N'), /bot 7 is already on level 1/);
  });
});

t.test('a restart where the site stood: bots where they were, one holding a carrier up, one off the level', async (t) => {
  const bots = [
    { id: 1, level_id: 1, x: 5, y: 3, heading: 'S' as const, battery_permille: 640, carrier: 'R9' },
    // Put on by hand before the restart: the layout does not have it.
    { id: 12, level_id: 1, x: 3, y: 3, heading: 'E' as const },
  ];
  const { sim, ctl, hellos } = await open(t, { seed: 12, bots, absentBots: [2] }, [1, 3, 12, LED0]);
  const levels = await sim.snapshot();
  t.same(site(levels).bots.map((b) => b.id), [1, 3, 12]);
  t.same(site(levels).absent_bots, [2]);
  t.match(bot(levels, 1), { x: 5, y: 3, heading: 'S', lift: 'UP', carrier: 'R9', battery: 640 });
  t.match(bot(levels, 3), { x: 0, y: 4, heading: 'N', lift: 'DOWN', carrier: null }, 'an unlisted bot starts as in the layout');
  t.match(bot(levels, 12), { x: 3, y: 3, heading: 'E' });
  t.same(site(levels).carriers, [{ id: 'C1', x: 1, y: 2 }, { id: 'C2', x: 1, y: 0 }], 'the held carrier stands on no cell');

  const first = ctl.telemetry(1);
  for (const h of hellos.values()) await ctl.welcome(h);
  t.match(await first, { x: 5, y: 3, heading: 'S', lift: 'UP', carrier: true, motion: 'IDLE' }, 'its first telemetry');
  const read = await ctl.command(1, { type: 'RFID_READ', target: 'CARRIER', offset: 0, length: 8 });
  t.equal(tagText(read.message as MessageOf<'RFID_DATA'>), 'R9', 'the held carrier\'s tag holds its id');
  let n = 0;
  await ctl.next((f) => f.src === 3 && f.message.type === 'TELEMETRY' && ++n >= 15);
  t.equal(ctl.frames.filter((f) => f.src === 2).length, 0, 'the bot off the level says nothing');
  await refused(t, sim, 'the held carrier put down by hand', () => sim.placeCarrier(1, 'R9', 2, 0), /carrier R9 is held by bot 1/);
});

t.test('a restart state that cannot be is refused with every reason', async (t) => {
  const bots = [
    { id: 1, level_id: 1, x: 0, y: 0, heading: 'N' as const },
    { id: 3, level_id: 1, x: 6, y: 3, heading: 'N' as const },
    { id: 4, level_id: 1, x: 3, y: 3, heading: 'N' as const, carrier: 'C1' },
    { id: 5, level_id: 9, x: 1, y: 1, heading: 'N' as const },
    { id: 6, level_id: 1, x: 1, y: 2, heading: 'N' as const, carrier: 'R1' },
  ];
  const error = await startSimulator({ site: sitePath, bots, absentBots: [4], onLog: () => undefined }).then(() => undefined, (e: Error) => e);
  t.ok(error, 'not started');
  for (const reason of [
    /\(0, 0\) on level 1 is not a cell a bot can stand on/,
    /bots 2 and 3 would both start at \(6, 3\) on level 1/,
    /carrier C1 held by bot 4 also stands at \(1, 2\) on level 1 in the site file/,
    /bot 4 is also in absentBots/,
    /has no level 9/,
    /bot 6 holds carrier R1 up under carrier C1/,
  ]) t.match(error?.message, reason);
});

t.test('a crash and a stop tell themselves apart; stop() on a dead simulator resolves', async (t) => {
  const sim = await startSimulator({ site: sitePath, seed: 13, onLog: () => undefined });
  t.equal(sim.stopping, false);
  process.kill(sim.pid, 'SIGKILL');
  t.equal(await sim.exited, 'SIGKILL');
  t.equal(sim.stopping, false, 'nobody asked it to stop: a crash');
  await sim.stop();
  t.equal(sim.stopping, true);
  await t.rejects(sim.placeCarrier(1, 'X1', 3, 0), /simulator is not running/);

  const other = await startSimulator({ site: sitePath, seed: 14, onLog: () => undefined });
  await other.stop();
  t.equal(other.stopping, true);
  t.equal(await other.exited, 0, 'a stop');
  await other.stop();
});
