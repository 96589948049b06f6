// The two real sides of a level's radio line together: the controller as the daemon builds it
// (SerialTransport on the level's device + the native link from createLink()) against the
// simulator child process (src/sim) on its real pseudo-terminal, with the simulator's fault
// knobs. What each side does alone is tested elsewhere (test/unit/link/link.test.ts with fake bots,
// test/unit/sim/sim.test.ts with a TS-codec controller, test/unit/link/serial.test.ts with bare ptys); here the
// claims of the link are checked end to end, and what the bots executed is read back from the
// simulator (its per-node log of executed commands, in the snapshot).
//
// Noise: the "5 % corrupted bytes and 5 % dropped frames", read literally: each byte
// of every frame is damaged with probability 0.05 and 5 % of frames are lost, both ways. That
// damages about 70 % of frames and loses 9 round trips in 10, far past PROTOCOL.md section
// 10's retry budget (5 transmissions), so the strict test configures the link's own options
// for it (NOISY_LINK; docs/native.md, "Noise") and then allows no failure at all: every
// command is accepted and executed exactly once, in the order sent, per node, as the
// simulator's log (written when the node model accepts a command) shows. Timing bounds are
// one-sided, or the documented bound plus a stated slack: the machine is shared.
import t, { type Test } from 'tap';
import { existsSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SerialTransport, type TransportState } from '../../../src/link/serial.js';
import type { Command, Link, LinkEvent, LinkOptions, LinkStats } from '../../../src/native/link.js';
import { createLink } from '../../../src/native/link.js';
import { FAULT_BY_NAME } from '../../../src/link/protocol/faults.js';
import type { LinkKnobs } from '../../../src/sim/knobs.js';
import type { LevelSnapshot } from '../../../src/sim/gateway.js';
import { startSimulator, type SimulatorProcess } from '../../../src/sim/process.js';

// One level, four bots on the highway, one balcony whose LED controller is node 0x1000.
const SITE = {
  version: 1,
  name: 'Link-sim test site',
  levels: [{
    id: 1, height: 0, grid: { width: 9, height: 5 },
    rows: ['#BPPB####', '.........', '.SSS#SSS.', '.........', 'C########'],
    serial_device: 'sim',
    bots: [
      { id: 1, start: { x: 0, y: 1 }, heading: 'E' },
      { id: 2, start: { x: 8, y: 3 }, heading: 'W' },
      { id: 3, start: { x: 4, y: 1 }, heading: 'S' },
      { id: 4, start: { x: 2, y: 3 }, heading: 'N' },
    ],
  }],
  balconies: [{ id: 0, level_id: 1, ports: [{ x: 2, y: 0 }, { x: 3, y: 0 }] }],
  carriers: [],
  skus: [],
};
const BOTS = SITE.levels[0]!.bots;
const LED = 0x1000;
const NODES = [...BOTS.map((b) => b.id), LED];
/** docs/native.md: a node is lost linkTimeoutMs (1 s) after the last frame heard from it. */
const LINK_TIMEOUT_MS = 1000;
/** docs/native.md: the link's HEARTBEAT period (heartbeatPeriodMs), part of the offline slack. */
const HEARTBEAT_PERIOD_MS = 250;

const dir = mkdtempSync(path.join(tmpdir(), 'link-sim-'));
const sitePath = path.join(dir, 'site.json');
writeFileSync(sitePath, JSON.stringify(SITE));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** The controller side of one level, built as src/lines/site-lines.ts builds it. */
interface Line {
  sim: SimulatorProcess;
  transport: SerialTransport;
  link: Link;
  events: LinkEvent[];
  online: Set<number>;
  states: TransportState[];
  /** each event with the time it was delivered */
  at: Map<LinkEvent, number>;
}

async function open(t: Test, options: { knobs?: Partial<LinkKnobs>; seed: number; device?: (simPath: string) => string; link?: Partial<LinkOptions> }): Promise<Line> {
  const sim = await startSimulator({ site: sitePath, seed: options.seed, knobs: options.knobs, onLog: () => undefined });
  const simPath = sim.devices.get(1)!;
  const events: LinkEvent[] = [];
  const at = new Map<LinkEvent, number>();
  const online = new Set<number>();
  const states: TransportState[] = [];
  const transport: SerialTransport = new SerialTransport({
    path: options.device?.(simPath) ?? simPath,
    onData: (bytes) => link.receive(bytes),
    onState: (state) => states.push(state),
  });
  const link = createLink({
    ...options.link,
    write: (bytes) => void transport.write(bytes),
    onEvent: (batch) => {
      const now = performance.now();
      for (const e of batch) {
        events.push(e);
        at.set(e, now);
        if (e.kind === 'online') online.add(e.node);
        if (e.kind === 'offline') online.delete(e.node);
      }
    },
  });
  t.teardown(async () => {
    link.close();
    await transport.close();
    await sim.stop();
  });
  transport.start();
  await transport.whenOpen();
  await until('every node online', () => NODES.every((n) => online.has(n)));
  return { sim, transport, link, events, online, states, at };
}

async function until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const telemetryOf = (line: Line, node: number): number =>
  line.events.filter((e) => e.kind === 'message' && e.node === node && e.message.type === 'TELEMETRY').length;

/** The key the simulator's executed log gives a command (src/sim/endpoint.ts, executedOf). */
function keyOf(c: Command): string {
  if (c.type === 'SEGMENT') return `SEGMENT:${c.segment}`;
  if (c.type === 'LED_SEQUENCE') return `LED_SEQUENCE:${c.channel}`;
  return c.type;
}

function executedBy(level: LevelSnapshot, node: number): { total: number; duplicates: number; keys: string[] } {
  const n = node >= LED ? level.balconies.find((b) => b.address === node)! : level.bots.find((b) => b.id === node)!;
  return { ...n.executed, keys: n.executed.last.map((e) => (e.ref === undefined ? e.type : `${e.type}:${e.ref}`)) };
}

/** One node's command stream: what is to be sent, in order, and the answer to each. */
interface Stream {
  node: number;
  commands: Command[];
  /** index of the command in flight (or next to send) */
  next: number;
  /** link id of the command in flight */
  inFlight: number | undefined;
  /** the accepted answer of each command, by index */
  answers: LinkEvent[];
  busy: number;
}

/**
 * The link's options for the literal 5 %-per-byte noise (docs/native.md, "Noise"): a 26-byte
 * command and its 17-byte ACK both get through about 1 round trip in 10, so the link tries up
 * to 255 times (its maximum) on a 30..60 ms backoff instead of 5 on 60..480 ms. Heartbeats and
 * telemetry every 50 ms, so that several good frames a second still reach each side, and 3 s
 * of silence before a peer is lost on both sides (NOISY_KNOBS): only about one heartbeat in
 * three arrives whole, and on a loaded machine a 1 s gap in them was seen to cost a bot its link.
 */
const NOISY_LINK: Partial<LinkOptions> = {
  heartbeatPeriodMs: 50, telemetryPeriodMs: 50, linkTimeoutMs: 3000, ackTimeoutMs: 30, ackTimeoutMaxMs: 60, maxTransmissions: 255,
};

/** The literal noise, and the bots' silence limit matched to the controller's (NOISY_LINK). */
const NOISY_KNOBS: Partial<LinkKnobs> = { drop_frame_rate: 0.05, corrupt_byte_rate: 0.05, node_link_timeout_ms: 3000 };

t.test('5 % lost frames and 5 % damaged bytes: bots announce, telemetry flows, every command executed exactly once and in order', async (t) => {
  const started = performance.now();
  const line = await open(t, { seed: 61, knobs: NOISY_KNOBS, link: NOISY_LINK });
  t.comment(`every node welcomed after ${(performance.now() - started).toFixed(0)} ms`);
  t.pass('all four bots and the LED controller announced themselves and were welcomed through the noise');
  await until('telemetry from every bot', () => BOTS.every((b) => telemetryOf(line, b.id) >= 10));
  for (const b of BOTS) {
    const first = line.events.find((e) => e.kind === 'message' && e.node === b.id && e.message.type === 'TELEMETRY');
    if (first?.kind === 'message' && first.message.type === 'TELEMETRY') t.same([first.message.x, first.message.y], [b.start.x, b.start.y], `bot ${b.id} reports its cell`);
  }
  const [before] = await line.sim.snapshot();
  const mark = line.events.length;

  // Per bot: segments of one WAIT step (ids 1..N, the simulator logs them by id) and every
  // fifth an RFID_READ (answered with RFID_DATA, not ACK); per LED controller: sequences on
  // alternating channels. One of ours per node at a time, so a BUSY (the bot still holds its
  // active and queued segment) is sent again in its place and the order stays the order sent.
  const N = 20;
  const streams: Stream[] = NODES.map((node) => {
    const bot = BOTS.find((b) => b.id === node);
    const commands: Command[] = Array.from({ length: N }, (_, i): Command => {
      if (!bot) return { type: 'LED_SEQUENCE', channel: i % 2, repeat: 0, steps: [{ r: i, g: 255 - i, b: 0, duration_ms: 100 }] };
      if (i % 5 === 4) return { type: 'RFID_READ', target: 'FLOOR', offset: 0, length: 4 };
      return { type: 'SEGMENT', segment: i + 1, start_delay_ms: 0, x: bot.start.x, y: bot.start.y, steps: [{ action: 'WAIT', cells: 0, duration_ms: 20 }] };
    });
    return { node, commands, next: 0, inFlight: undefined, answers: [], busy: 0 };
  });
  const byId = new Map<number, Stream>();
  const sendNext = (s: Stream): void => {
    const id = line.link.send(s.node, s.commands[s.next]!);
    s.inFlight = id;
    byId.set(id, s);
  };
  let seen = line.events.length;
  const failed: LinkEvent[] = [];
  const twice: number[] = [];
  const sending = performance.now();
  for (const s of streams) sendNext(s);
  await until('an answer to every command', () => {
    for (; seen < line.events.length; seen++) {
      const e = line.events[seen]!;
      if (e.kind === 'failed') failed.push(e);
      if (e.kind !== 'acked' && e.kind !== 'failed') continue;
      const s = byId.get(e.id);
      if (!s) continue;
      if (s.inFlight !== e.id) {
        twice.push(e.id);
        continue;
      }
      s.inFlight = undefined;
      if (e.kind === 'acked' && e.result === 'BUSY') s.busy++;
      else {
        s.answers.push(e);
        s.next++;
      }
      if (s.next < N) sendNext(s);
    }
    return failed.length > 0 || streams.every((s) => s.next === N);
  }, 120_000);
  t.comment(`${N * streams.length} commands answered in ${(performance.now() - sending).toFixed(0)} ms`);
  t.same(failed, [], 'no command failed: none given up, no node lost');
  t.same(twice, [], 'one outcome per command');
  t.same(line.events.slice(mark).filter((e) => e.kind === 'offline'), [], 'no node went offline');

  const [after] = await line.sim.snapshot();
  let duplicates = 0;
  for (const s of streams) {
    const was = executedBy(before!, s.node);
    const now = executedBy(after!, s.node);
    duplicates += now.duplicates - was.duplicates;
    const executed = now.keys.slice(now.keys.length - (now.total - was.total));
    t.same(executed, s.commands.map(keyOf), `node ${s.node}: each of its ${N} commands accepted and executed once, in the order sent (${s.busy} BUSY answers sent again)`);
    const wrong = s.answers.flatMap((e, i) => {
      if (e.kind !== 'acked') return [];
      const c = s.commands[i]!;
      const ok = c.type === 'RFID_READ' ? e.message?.type === 'RFID_DATA' && e.result === 'OK' : e.result === 'OK';
      return ok ? [] : [`${keyOf(c)} ${e.result}`];
    });
    t.same(wrong, [], `node ${s.node}: every command accepted (OK, or RFID_DATA OK)`);
  }
  const stats: LinkStats = line.link.stats();
  t.ok(stats.retransmits > 0, `the link retransmitted (${stats.retransmits})`);
  t.ok(duplicates > 0, `the simulated nodes answered ${duplicates} retransmissions without executing them again`);
  t.ok(stats.dropped.crc + stats.dropped.framing + stats.dropped.short + stats.dropped.length > 0, `damaged frames were counted: ${JSON.stringify(stats.dropped)}`);
  const up = after!.uplink;
  const down = after!.downlink;
  t.ok(up.dropped > 0 && down.dropped > 0 && up.corrupted_bytes > 0 && down.corrupted_bytes > 0, 'the knobs acted both ways');
  t.comment(`uplink ${JSON.stringify(up)}, downlink ${JSON.stringify(down)}, rtt ${JSON.stringify(stats.rtt)}`);
});

t.test('a silent bot goes offline within the link timeout and online again when it answers', async (t) => {
  const line = await open(t, { seed: 62 });
  await until('telemetry from bot 2', () => telemetryOf(line, 2) >= 3);
  const mark = line.events.length;
  const asked = performance.now();
  await line.sim.setKnobs({ silent_nodes: [2] });
  const set = performance.now();
  await until('bot 2 offline', () => !line.online.has(2));
  const offline = line.events.slice(mark).find((e) => e.kind === 'offline' && e.node === 2)!;
  t.same({ kind: offline.kind, reason: offline.kind === 'offline' ? offline.reason : '' }, { kind: 'offline', reason: 'silent' });
  const took = line.at.get(offline)! - asked;
  // Its last frame came at most one telemetry period (100 ms) before the knob took effect, and
  // at the latest when the knob was confirmed set. docs/native.md: lost linkTimeoutMs after the
  // last frame heard; the stated slack, one heartbeat period (250 ms) plus 500 ms, covers the
  // thread's wake-up and delivery to a busy JS event loop.
  t.ok(took >= LINK_TIMEOUT_MS - 150, `not before the link timeout (${took.toFixed(0)} ms after the knob)`);
  const sinceSet = line.at.get(offline)! - set;
  t.ok(sinceSet <= LINK_TIMEOUT_MS + HEARTBEAT_PERIOD_MS + 500, `within the link timeout + ${HEARTBEAT_PERIOD_MS + 500} ms of slack (${sinceSet.toFixed(0)} ms after the knob was set)`);
  t.same(line.events.slice(mark).filter((e) => e.kind === 'offline').map((e) => e.node), [2], 'the other nodes stay online');

  const id = line.link.send(2, { type: 'STOP', mode: 'NOW' });
  await until('the command to the lost bot fails', () => line.events.some((e) => e.kind === 'failed' && e.id === id));
  t.match(line.events.find((e) => e.kind === 'failed' && e.id === id), { reason: 'offline' }, 'nothing is sent to a lost bot');

  const back = line.events.length;
  await line.sim.setKnobs({ silent_nodes: [] });
  await until('bot 2 online again', () => line.online.has(2));
  t.match(line.events.slice(back).find((e) => e.kind === 'online' && e.node === 2), { reason: 'welcomed' }, 'it lost the link itself, said HELLO and was welcomed');
  await until('its LINK_LOST fault', () =>
    line.events.slice(back).some((e) => e.kind === 'message' && e.node === 2 && e.message.type === 'FAULT' && e.message.code === FAULT_BY_NAME.get('LINK_LOST')!.code),
  );
  const again = line.link.send(2, { type: 'RFID_READ', target: 'FLOOR', offset: 0, length: 4 });
  await until('a command acknowledged again', () => line.events.some((e) => e.kind === 'acked' && e.id === again));
  t.pass('the bot takes commands again');
});

t.test('the latency knob: round trips grow by the added delay each way', async (t) => {
  const line = await open(t, { seed: 64 });
  const rtts = async (n: number): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const id = line.link.send(1, { type: 'RFID_READ', target: 'FLOOR', offset: 0, length: 4 });
      await until('the read answered', () => line.events.some((e) => (e.kind === 'acked' || e.kind === 'failed') && e.id === id));
      const e = line.events.find((x) => (x.kind === 'acked' || x.kind === 'failed') && x.id === id)!;
      if (e.kind !== 'acked') throw new Error(`RFID_READ ${id} failed: ${e.kind === 'failed' ? e.reason : ''}`);
      out.push(e.rttMs);
    }
    return out;
  };
  const before = await rtts(5);
  const LATENCY_MS = 120;
  await line.sim.setKnobs({ latency_ms: LATENCY_MS });
  const after = await rtts(5);
  // One-way delay on the command and on its answer: each round trip takes at least twice it
  // (a lower bound only; retransmissions meanwhile are answered late too, never early), less
  // 5 ms for the rounding of Node's timers in the simulator and of the link's millisecond clock.
  t.ok(after.every((r) => r >= 2 * LATENCY_MS - 5), `round trips ${after.join(', ')} ms with ${LATENCY_MS} ms each way (before: ${before.join(', ')} ms)`);
});

t.test('a vanished serial device is reopened by the transport and the bots come back', async (t) => {
  // The controller opens a symlink, as it would open /dev/serial/by-id/…: a replugged adapter
  // may come back under another ttyUSBn, and udev points the link at it.
  const device = path.join(dir, 'gateway');
  const line = await open(t, {
    seed: 63,
    device: (simPath) => {
      symlinkSync(simPath, device);
      return device;
    },
  });
  await until('telemetry from every bot', () => BOTS.every((b) => telemetryOf(line, b.id) >= 3));
  const oldPath = line.sim.devices.get(1)!;
  const mark = line.events.length;
  const unplugged = line.sim.unplug(1, 1500);
  await until('the transport notices the device is gone', () => line.transport.state !== 'open');
  const newPath = await unplugged;
  t.notOk(line.states.slice(1).includes('closed'), 'the transport never gave up');
  const lost = (): Set<number> => new Set(line.events.slice(mark).flatMap((e) => (e.kind === 'offline' && e.reason === 'silent' ? [e.node] : [])));
  await until('every bot reported offline', () => BOTS.every((b) => lost().has(b.id)));
  t.pass('the bots went offline while the line was away (silent)');

  const tmp = `${device}.new`;
  symlinkSync(newPath, tmp);
  renameSync(tmp, device);
  const back = line.events.length;
  await until('the transport reopened the device', () => line.transport.state === 'open' && line.transport.stats.opens >= 2);
  t.ok(line.transport.stats.failures >= 1, `failures while away: ${line.transport.stats.failures}`);
  await until('every bot online again', () => BOTS.every((b) => line.online.has(b.id)));
  t.ok(existsSync(newPath), `the new device ${newPath} (was ${oldPath}; a freed pty number is often reused)`);
  await until('telemetry again', () => BOTS.every((b) => line.events.slice(back).some((e) => e.kind === 'message' && e.node === b.id && e.message.type === 'TELEMETRY')));
  const ids = BOTS.map((b) => line.link.send(b.id, { type: 'RFID_READ', target: 'FLOOR', offset: 0, length: 4 }));
  await until('every bot acknowledges a command', () => ids.every((id) => line.events.some((e) => e.kind === 'acked' && e.id === id)));
  t.pass('commands flow again');
});
