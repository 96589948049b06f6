// The simulator as the daemon meets it: a child process whose levels are real pseudo-terminals.
// This test process plays the controller with the TypeScript codec over SerialTransport:
// WELCOMEs the nodes, sends commands and heartbeats, and checks what comes back (acks,
// telemetry, motion, lift, charging, RFID, LED acks, duplicates, link loss, fault knobs).
// Timing checks are one-sided (a bot never arrives before its step ends) so a slow, shared
// machine cannot make them fail.
import { DEFAULT_KNOBS, mergeKnobs } from '../../../src/sim/knobs.js';
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Frame, MessageOf, Telemetry } from '../../../src/link/protocol/messages.js';
import { startSimulator, type SimulatorProcess } from '../../../src/sim/process.js';
import { Simulator } from '../../../src/sim/simulator.js';
import { FAULT_BY_NAME, FAULT_FLAGS } from '../../../src/link/protocol/faults.js';
import { TestController } from '../../helpers/sim-controller.js';
import { simSite } from '../../fixtures/sim-site.js';

const SITE = simSite('Sim test site');

const LED0 = 0x1000;
const fault = (name: string): number => FAULT_BY_NAME.get(name)!.code;

const dir = mkdtempSync(path.join(tmpdir(), 'sim-test-'));
const sitePath = path.join(dir, 'site.json');
writeFileSync(sitePath, JSON.stringify(SITE));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const logs: string[] = [];
let sim: SimulatorProcess;
let ctl: TestController;

t.before(async () => {
  // Charging and lifting compressed so a test sees them finish in a moment.
  sim = await startSimulator({ site: sitePath, seed: 42, figures: { chargePerS: 400, batteryStartMin: 500, batteryStartMax: 700, liftMs: 300 }, onLog: (l) => logs.push(l) });
  ctl = new TestController(sim.devices.get(1)!);
  await ctl.open();
});
t.teardown(async () => {
  await ctl?.close();
  await sim?.stop();
});

t.test('the simulator names one pty per simulated level', async (t) => {
  t.same([...sim.devices.keys()], [1]);
  t.match(sim.devices.get(1), /^\/dev\/pts\/\d+$/);
  t.equal(sim.seed, 42);
});

const hellos = new Map<number, Frame<MessageOf<'HELLO'>>>();

t.test('nodes say HELLO, refuse commands before WELCOME, then send telemetry', async (t) => {
  for (const src of [1, 2, 3, LED0]) {
    const hello = await ctl.nextOf(src, 'HELLO');
    hellos.set(src, hello);
    t.equal(hello.message.node_kind, src === LED0 ? 'BALCONY_LED' : 'BOT', `node ${src} kind`);
    t.ok(hello.flags.ack_req, 'HELLO is reliable');
    t.not(hello.message.session, 0);
  }
  const early = await ctl.ack(1, { type: 'PAUSE' });
  t.equal(early.result, 'NOT_WELCOMED');
  ctl.startHeartbeats();
  for (const src of [1, 2, 3, LED0]) await ctl.welcome(hellos.get(src)!);
  const tel = await ctl.telemetry(1);
  t.match(tel, { x: 0, y: 1, heading: 'E', lift: 'DOWN', carrier: false, motion: 'IDLE', step: 255, faults: 0 });
  t.ok(tel.battery >= 490 && tel.battery <= 700, `battery ${tel.battery} in the start range`);
  t.match(await ctl.telemetry(3), { x: 0, y: 4, heading: 'N' });
});

t.test('a segment is driven on its timing, then the bot is idle at its end cell', async (t) => {
  const sentAt = performance.now();
  const idle = ctl.telemetry(1, (m) => m.x === 3 && m.motion === 'IDLE');
  const moving = ctl.telemetry(1, (m) => m.motion === 'MOVING');
  const ack = await ctl.ack(1, { type: 'SEGMENT', segment: 7, start_delay_ms: 0, x: 0, y: 1, steps: [{ action: 'MOVE_E', cells: 3, duration_ms: 900 }] });
  t.equal(ack.result, 'OK');
  t.match(await moving, { segment: 7 });
  const end = await idle;
  // The bot must not reach the end before the step's slot ends (reserved by time).
  t.ok(performance.now() - sentAt >= 900 - 20, 'not early');
  t.match(end, { x: 3, y: 1, heading: 'E', segment: 7, step: 255 });
  t.ok(ctl.frames.filter((f) => f.src === 1 && f.message.type === 'TELEMETRY' && (f.message as Telemetry).x === 2).length > 0, 'passed cell 2 on the way');
});

t.test('segment refusals: wrong start cell, invalid step, too short a step is late', async (t) => {
  t.equal((await ctl.ack(1, { type: 'SEGMENT', segment: 8, start_delay_ms: 0, x: 0, y: 1, steps: [{ action: 'WAIT', cells: 0, duration_ms: 10 }] })).result, 'WRONG_POSITION');
  const invalid = await ctl.ack(1, { type: 'SEGMENT', segment: 8, start_delay_ms: 0, x: 3, y: 1, steps: [{ action: 'WAIT', cells: 0, duration_ms: 10 }, { action: 'MOVE_N', cells: 5, duration_ms: 100 }] });
  t.match(invalid, { result: 'INVALID', detail: 1 });
  // Two cells in 100 ms cannot be driven (250 ms a cell): the step ends late and says so.
  const late = ctl.nextOf(1, 'FAULT', (m) => m.code === fault('SEGMENT_LATE'));
  t.equal((await ctl.ack(1, { type: 'SEGMENT', segment: 9, start_delay_ms: 0, x: 3, y: 1, steps: [{ action: 'MOVE_W', cells: 2, duration_ms: 100 }] })).result, 'OK');
  const f = await late;
  t.match(f.message, { severity: 'WARNING', fault_state: 'RAISED' });
  await ctl.telemetry(1, (m) => m.x === 1 && m.motion === 'IDLE');
});

t.test('a retransmitted command is answered again but executed once', async (t) => {
  const seg = { type: 'SEGMENT', segment: 10, start_delay_ms: 0, x: 1, y: 1, steps: [{ action: 'WAIT', cells: 0, duration_ms: 600 }] } as const;
  const seq = ctl.send(1, { ...seg, steps: [...seg.steps] }, { ack_req: true });
  const first = await ctl.nextOf(1, 'ACK', (_m, f) => f.ack === seq);
  t.equal(first.message.result, 'OK');
  const again = ctl.nextOf(1, 'ACK', (_m, f) => f.ack === seq);
  ctl.send(1, { ...seg, steps: [...seg.steps] }, { ack_req: true, seq, retransmit: true });
  const second = await again;
  t.equal(second.message.result, 'OK');
  t.equal(second.seq, first.seq, 'the same acknowledgement, byte for byte');
  // Had the duplicate been queued, this one would be BUSY.
  const next = await ctl.ack(1, { type: 'SEGMENT', segment: 11, start_delay_ms: 0, x: 1, y: 1, steps: [{ action: 'WAIT', cells: 0, duration_ms: 10 }] });
  t.equal(next.result, 'OK');
  t.equal((await ctl.ack(1, { type: 'SEGMENT', segment: 12, start_delay_ms: 0, x: 1, y: 1, steps: [{ action: 'WAIT', cells: 0, duration_ms: 10 }] })).result, 'BUSY');
  // Executed means accepted by the bot: the refusals (NOT_WELCOMED PAUSE, WRONG_POSITION and
  // INVALID segment 8, BUSY segment 12) and the duplicate are not in its log.
  const [level] = await sim.snapshot();
  t.same(level!.bots.find((b) => b.id === 1)!.executed.last.map((e) => `${e.type}:${e.ref}`), ['SEGMENT:7', 'SEGMENT:9', 'SEGMENT:10', 'SEGMENT:11']);
  await ctl.telemetry(1, (m) => m.segment === 11 && m.motion === 'IDLE');
});

t.test('lift a carrier, read its tag, set it down', async (t) => {
  t.equal((await ctl.ack(1, { type: 'LIFT' })).result, 'NO_CARRIER', 'no carrier on a highway cell');
  t.equal((await ctl.ack(1, { type: 'SEGMENT', segment: 13, start_delay_ms: 0, x: 1, y: 1, steps: [{ action: 'MOVE_S', cells: 1, duration_ms: 300 }] })).result, 'OK');
  await ctl.telemetry(1, (m) => m.y === 2 && m.motion === 'IDLE');
  const up = ctl.telemetry(1, (m) => m.lift === 'UP');
  t.equal((await ctl.ack(1, { type: 'LIFT' })).result, 'OK');
  t.match(await up, { carrier: true });
  const read = await ctl.command(1, { type: 'RFID_READ', target: 'CARRIER', offset: 0, length: 2 });
  t.match(read.message, { type: 'RFID_DATA', result: 'OK' });
  t.equal(Buffer.from((read.message as MessageOf<'RFID_DATA'>).data).toString(), 'C1');
  const floor = await ctl.command(1, { type: 'RFID_READ', target: 'FLOOR', offset: 0, length: 4 });
  t.equal((floor.message as MessageOf<'RFID_DATA'>).result, 'RFID_NO_TAG', 'storage cells carry no floor tag');
  const down = ctl.telemetry(1, (m) => m.lift === 'DOWN');
  t.equal((await ctl.ack(1, { type: 'LOWER' })).result, 'OK');
  t.match(await down, { carrier: false });
});

t.test('charging at a charger only, until the target', async (t) => {
  t.equal((await ctl.ack(1, { type: 'CHARGE', target: 1000 })).result, 'NO_CHARGER');
  const charging = ctl.telemetry(3, (m) => m.charging);
  const done = ctl.telemetry(3, (m) => !m.charging && m.battery === 1000);
  t.equal((await ctl.ack(3, { type: 'CHARGE', target: 1000 })).result, 'OK');
  const during = await charging;
  t.ok(during.battery < 1000);
  await done;
});

t.test('an obstacle stops the bot with a latched fault until FAULT_CLEAR', async (t) => {
  const raised = ctl.nextOf(2, 'FAULT', (m) => m.code === fault('OBSTACLE'));
  t.equal((await ctl.ack(2, { type: 'SEGMENT', segment: 1, start_delay_ms: 0, x: 6, y: 3, steps: [{ action: 'MOVE_S', cells: 1, duration_ms: 300 }] })).result, 'OK');
  const f = await raised;
  t.match(f.message, { severity: 'ERROR', x: 6, y: 3 });
  await ctl.telemetry(2, (m) => m.motion === 'HOLDING' && (m.faults & FAULT_FLAGS.get('OBSTACLE')!) !== 0 && m.x === 6 && m.y === 3);
  const retry = { type: 'SEGMENT', segment: 2, start_delay_ms: 0, x: 6, y: 3, steps: [{ action: 'MOVE_W', cells: 1, duration_ms: 300 }] } as const;
  t.equal((await ctl.ack(2, { ...retry, steps: [...retry.steps] })).result, 'FAULT_ACTIVE');
  t.equal((await ctl.ack(2, { type: 'FAULT_CLEAR', code: 0xffff })).result, 'OK');
  t.equal((await ctl.ack(2, { ...retry, steps: [...retry.steps] })).result, 'OK');
  await ctl.telemetry(2, (m) => m.x === 5 && m.motion === 'IDLE' && m.faults === 0);
});

t.test('balcony LED controller: sequences acknowledged, bot commands unsupported', async (t) => {
  t.equal((await ctl.ack(LED0, { type: 'LED_SEQUENCE', channel: 1, repeat: 0, steps: [{ r: 0, g: 255, b: 0, duration_ms: 60000 }] })).result, 'OK');
  t.match(await ctl.ack(LED0, { type: 'LED_SEQUENCE', channel: 2, repeat: 1, steps: [{ r: 1, g: 2, b: 3, duration_ms: 100 }] }), { result: 'INVALID', detail: 0 });
  t.equal((await ctl.ack(LED0, { type: 'LIFT' })).result, 'UNSUPPORTED');
  t.equal((await ctl.ack(1, { type: 'LED_SEQUENCE', channel: 0, repeat: 1, steps: [{ r: 1, g: 2, b: 3, duration_ms: 100 }] })).result, 'UNSUPPORTED');
  const [level] = await sim.snapshot();
  t.same(level!.balconies[0]!.channels[1], [0, 255, 0], 'channel 1 shows green');
});

t.test('fault knob: a bot reports a fault; flags follow until it is cleared', async (t) => {
  const raised = ctl.nextOf(1, 'FAULT', (m) => m.code === fault('DRIVE_OVERCURRENT'));
  await sim.injectFault(1, 1, fault('DRIVE_OVERCURRENT'), { detail: 4200 });
  const f = await raised;
  t.match(f.message, { severity: 'ERROR', fault_state: 'RAISED', detail: 4200 });
  await ctl.telemetry(1, (m) => (m.faults & FAULT_FLAGS.get('DRIVE')!) !== 0);
  t.equal((await ctl.ack(1, { type: 'LIFT' })).result, 'FAULT_ACTIVE');
  t.equal((await ctl.ack(1, { type: 'FAULT_CLEAR', code: fault('DRIVE_OVERCURRENT') })).result, 'OK');
  await ctl.telemetry(1, (m) => m.faults === 0);
});

t.test('noise knob: with 5% of bytes damaged the decoder counts bad frames and telemetry still gets through', async (t) => {
  const before = { ...ctl.decoder.counters.errors };
  await sim.setKnobs({ corrupt_byte_rate: 0.05, direction: 'uplink' });
  let good = 0;
  await ctl.next((f) => f.message.type === 'TELEMETRY' && ++good >= 10 && ctl.decoder.counters.errors.crc + ctl.decoder.counters.errors.framing > before.crc + before.framing);
  t.ok(ctl.decoder.counters.errors.crc > before.crc || ctl.decoder.counters.errors.framing > before.framing, 'damage counted');
  // Commands still get through, with retransmission.
  t.equal((await ctl.ack(2, { type: 'PAUSE' })).result, 'BAD_STATE');
  await sim.setKnobs({ corrupt_byte_rate: 0, direction: 'both' });
  const [level] = await sim.snapshot();
  t.ok(level!.uplink.corrupted_bytes > 0);
});

t.test('silence knob: a bot that stops answering sends nothing; the others carry on', async (t) => {
  await sim.setKnobs({ silent_nodes: [2] });
  // Frames already in the line may still arrive: count only after a full round of telemetry.
  let n = 0;
  await ctl.next((f) => f.src === 1 && f.message.type === 'TELEMETRY' && ++n >= 5);
  const mark = ctl.frames.length;
  n = 0;
  await ctl.next((f) => f.src === 1 && f.message.type === 'TELEMETRY' && ++n >= 15);
  t.equal(ctl.frames.slice(mark).filter((f) => f.src === 2).length, 0, 'nothing from bot 2');
  t.ok(ctl.frames.slice(mark).some((f) => f.src === 3), 'bot 3 still talks');
  // Back on the air, it has lost the link in the meantime (it heard nothing either), so it says HELLO.
  const hello = ctl.nextOf(2, 'HELLO');
  await sim.setKnobs({ silent_nodes: [] });
  const h = await hello;
  t.equal(h.message.session, hellos.get(2)!.message.session, 'same session: a link loss, not a reboot');
  const lost = ctl.nextOf(2, 'FAULT', (m) => m.code === fault('LINK_LOST'));
  await ctl.welcome(h);
  const f = await lost;
  t.match(f.message, { x: 5, y: 3 });
});

t.test('link loss: without the controller a bot finishes its segment and holds, then returns with HELLO', async (t) => {
  const steps = [{ action: 'MOVE_N', cells: 1, duration_ms: 300 }, { action: 'MOVE_E', cells: 2, duration_ms: 600 }] as const;
  t.equal((await ctl.ack(1, { type: 'SEGMENT', segment: 20, start_delay_ms: 0, x: 1, y: 2, steps: [...steps] })).result, 'OK');
  ctl.stopHeartbeats();
  const held = await ctl.telemetry(1, (m) => m.motion === 'HOLDING' && (m.faults & FAULT_FLAGS.get('LINK_LOST')!) !== 0);
  t.match(held, { x: 3, y: 1 }, 'the active segment was finished');
  // The first frame heard again (this command) makes it say HELLO, with the same session.
  const hello = ctl.nextOf(1, 'HELLO');
  t.equal((await ctl.ack(1, { type: 'LIFT' })).result, 'NOT_WELCOMED');
  const h1 = await hello;
  t.equal(h1.message.session, hellos.get(1)!.message.session);
  const others = [2, 3, LED0].map((src) => ctl.nextOf(src, 'HELLO'));
  ctl.startHeartbeats();
  await ctl.welcome(h1);
  for (const h of await Promise.all(others)) await ctl.welcome(h);
  await ctl.telemetry(1, (m) => (m.faults & FAULT_FLAGS.get('LINK_LOST')!) === 0 && m.motion === 'HOLDING');
});

t.test('the controller can close and reopen the device; the simulator keeps the line', async (t) => {
  await ctl.transport.close();
  const again = new TestController(sim.devices.get(1)!);
  await again.open();
  t.teardown(() => again.close());
  again.startHeartbeats();
  const tel = await again.telemetry(3);
  t.equal(tel.x, 0);
});

t.test('the same seed gives the same sessions; another seed other ones', async (t) => {
  const a = new Simulator({ site: sitePath, seed: 7 });
  const b = new Simulator({ site: sitePath, seed: 7 });
  const c = new Simulator({ site: sitePath, seed: 8 });
  try {
    const session = (s: Simulator): number[] => [...s.levels.get(1)!.bots.values()].map((bot) => bot.endpoint.session);
    t.same(session(a), session(b));
    t.notSame(session(a), session(c));
    t.same([...a.levels.get(1)!.bots.values()].map((x) => x.battery), [...b.levels.get(1)!.bots.values()].map((x) => x.battery));
  } finally {
    a.close();
    b.close();
    c.close();
  }
});

t.test('stopping the simulator removes its device', async (t) => {
  const other = await startSimulator({ site: sitePath, seed: 1, onLog: () => undefined });
  const device = other.devices.get(1)!;
  await other.stop();
  t.equal(await other.exited, 0);
  const { existsSync } = await import('node:fs');
  t.notOk(existsSync(device), `${device} is gone`);
});

t.test('a bad site stops the simulator with the reason', async (t) => {
  await t.rejects(startSimulator({ site: path.join(dir, 'missing.json'), onLog: () => undefined }), /simulator failed to start: [\s\S]*cannot read/);
});

t.test('a second site run: battery faults and charging, RFID tags read on the way, PAUSE and RESUME', async (t) => {
  // Low batteries from the start and a fast drain while driving, so the faults and the drain show in a moment.
  const sim2 = await startSimulator({ site: sitePath, seed: 9, figures: { batteryStartMin: 150, batteryStartMax: 160, moveDrainPerS: 40, chargePerS: 400 }, onLog: () => undefined });
  const c = new TestController(sim2.devices.get(1)!);
  t.teardown(async () => {
    await c.close();
    await sim2.stop();
  });
  await c.open();
  const hellos2 = await Promise.all([1, 2, 3, LED0].map((src) => c.nextOf(src, 'HELLO')));
  const low = [1, 2, 3].map((src) => c.nextOf(src, 'FAULT', (m) => m.code === fault('BATTERY_LOW') && m.fault_state === 'RAISED'));
  c.startHeartbeats();
  for (const h of hellos2) await c.welcome(h);

  t.test('BATTERY_LOW below 200 ‰, cleared by charging above 250 ‰', async (t) => {
    for (const f of await Promise.all(low)) t.match(f.message, { severity: 'WARNING' }, `bot ${f.src} reports its low battery`);
    t.ok(((await c.telemetry(3)).faults & FAULT_FLAGS.get('BATTERY_LOW')!) !== 0, 'the flag is set in telemetry');
    const cleared = c.nextOf(3, 'FAULT', (m) => m.code === fault('BATTERY_LOW') && m.fault_state === 'CLEARED');
    t.equal((await c.ack(3, { type: 'CHARGE', target: 900 })).result, 'OK');
    t.match((await cleared).message, { severity: 'WARNING' });
    const full = await c.telemetry(3, (m) => !m.charging);
    t.ok(full.battery >= 900 && (full.faults & FAULT_FLAGS.get('BATTERY_LOW')!) === 0, `charged to its target (${full.battery} ‰), flag clear`);
  });

  t.test('PAUSE holds the bot at a cell centre, RESUME moves the remaining slots by the pause', async (t) => {
    t.equal((await c.ack(2, { type: 'RESUME' })).result, 'BAD_STATE', 'nothing to resume');
    const start = await c.telemetry(2);
    const sentAt = performance.now();
    const onTheWay = c.telemetry(2, (m) => m.x === 5 && m.motion === 'MOVING');
    t.equal((await c.ack(2, { type: 'SEGMENT', segment: 1, start_delay_ms: 0, x: 6, y: 3, steps: [{ action: 'MOVE_W', cells: 3, duration_ms: 900 }] })).result, 'OK');
    await onTheWay;
    t.equal((await c.ack(2, { type: 'PAUSE' })).result, 'OK');
    const paused = await c.telemetry(2, (m) => m.motion === 'PAUSED');
    t.ok(paused.x === 5 || paused.x === 4, `paused at a cell centre on the way (x=${paused.x})`);
    const pausedSeen = performance.now();
    const mark = c.frames.length;
    await new Promise((r) => setTimeout(r, 600));
    const during = c.frames.slice(mark).filter((f) => f.src === 2 && f.message.type === 'TELEMETRY').map((f) => f.message as Telemetry);
    t.ok(during.length > 0 && during.every((m) => m.x === paused.x && m.motion === 'PAUSED'), `stays at x=${paused.x} while paused (${during.length} frames)`);
    const resumeSent = performance.now();
    const idle = c.telemetry(2, (m) => m.x === 3 && m.motion === 'IDLE');
    t.equal((await c.ack(2, { type: 'RESUME' })).result, 'OK');
    const end = await idle;
    // The 900 ms slot moved by the pause, which lasted at least from when PAUSED was seen to
    // when RESUME was sent: the bot never arrives before that.
    t.ok(performance.now() - sentAt >= 900 + (resumeSent - pausedSeen) - 20, 'not early after the pause');
    t.ok(end.battery < start.battery - 10, `the drive drained the battery (${start.battery} → ${end.battery} ‰)`);
  });

  t.test('floor tags: written in MANUAL mode, checked, and read on the way (POSITION_MISMATCH)', async (t) => {
    t.equal((await c.ack(1, { type: 'RFID_WRITE', target: 'FLOOR', offset: 0, data: new Uint8Array([5, 0, 5, 0]) })).result, 'RFID_WRITE_DISABLED');
    t.equal((await c.ack(1, { type: 'RFID_WRITE_MODE', mode: 'MANUAL' })).result, 'OK');
    t.equal((await c.ack(1, { type: 'RFID_CHECK', target: 'FLOOR', offset: 0, expect: new Uint8Array([0, 0, 1, 0]) })).result, 'OK', 'the tag under (0, 1) holds its cell');
    t.equal((await c.ack(1, { type: 'RFID_WRITE', target: 'FLOOR', offset: 0, data: new Uint8Array([5, 0, 5, 0]) })).result, 'OK');
    t.equal((await c.ack(1, { type: 'RFID_CHECK', target: 'FLOOR', offset: 0, expect: new Uint8Array([0, 0, 1, 0]) })).result, 'RFID_MISMATCH');
    const [before] = await sim2.snapshot();
    const reads = before!.bots.find((b) => b.id === 1)!.counters.tag_reads;
    // Out to (1, 1) and back onto the rewritten tag, which now names another cell.
    const mismatch = c.nextOf(1, 'FAULT', (m) => m.code === fault('POSITION_MISMATCH'));
    t.equal((await c.ack(1, { type: 'SEGMENT', segment: 2, start_delay_ms: 0, x: 0, y: 1, steps: [{ action: 'MOVE_E', cells: 1, duration_ms: 300 }, { action: 'MOVE_W', cells: 1, duration_ms: 1200 }] })).result, 'OK');
    const f = await mismatch;
    t.match(f.message, { severity: 'ERROR', fault_state: 'RAISED', x: 0, y: 1, detail: 0 | (1 << 16) });
    await c.telemetry(1, (m) => m.motion === 'HOLDING' && (m.faults & FAULT_FLAGS.get('POSITION_LOST')!) !== 0);
    const [after] = await sim2.snapshot();
    t.equal(after!.bots.find((b) => b.id === 1)!.counters.tag_reads - reads, 2, 'both tags on the way were read');
  });
});

t.test('knobs are checked: a node silence limit below the protocol\'s or beyond a minute is refused', async (t) => {
  t.equal(mergeKnobs(DEFAULT_KNOBS, {}).node_link_timeout_ms, 1000, 'the protocol\'s link_timeout_ms by default');
  t.equal(mergeKnobs(DEFAULT_KNOBS, { node_link_timeout_ms: 3000 }).node_link_timeout_ms, 3000);
  for (const bad of [999, 60_001, 1500.5]) t.throws(() => mergeKnobs(DEFAULT_KNOBS, { node_link_timeout_ms: bad }), { name: 'RangeError', message: /node_link_timeout_ms/ }, String(bad));
});
