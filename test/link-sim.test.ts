// The two real sides of a level's radio line together: the controller as the daemon builds it
// (SerialTransport on the level's device + the native link from createLink()) against the
// simulator child process (src/sim) on its real pseudo-terminal, with the simulator's fault
// knobs. What each side does alone is tested elsewhere (test/link.test.ts with fake bots,
// test/sim.test.ts with a TS-codec controller, test/serial.test.ts with bare ptys); here the
// claims of issue 6 are checked end to end, and what the bots executed is read back from the
// simulator (its per-node log of executed commands, in the snapshot).
//
// Noise: 5 % of frames lost and about 5 % of frames damaged, both ways. The damage knob is
// per byte (corrupt_byte_rate); 0.002 damages 4.7 % of 24-byte telemetry frames and 5-6 % of
// command frames. A 5 % per-byte rate would damage 71 % of frames and lose 3 of 4 round trips,
// past what PROTOCOL.md section 10's retry budget is for; test/sim.test.ts covers that rate for
// the decoder's counts. Timing bounds are one-sided or generous: the machine is shared.
import t, { type Test } from 'tap';
import { existsSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SerialTransport, type TransportState } from '../src/link/serial.js';
import type { Command, Link, LinkEvent, LinkStats } from '../src/native/link.js';
import { createLink } from '../src/native/link.js';
import { FAULT_BY_NAME } from '../src/sim/fault-table.js';
import type { LinkKnobs } from '../src/sim/knobs.js';
import type { LevelSnapshot } from '../src/sim/gateway.js';
import { startSimulator, type SimulatorProcess } from '../src/sim/process.js';

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

const dir = mkdtempSync(path.join(tmpdir(), 'link-sim-'));
const sitePath = path.join(dir, 'site.json');
writeFileSync(sitePath, JSON.stringify(SITE));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** The controller side of one level, built as src/brain/links.ts builds it. */
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

async function open(t: Test, options: { knobs?: Partial<LinkKnobs>; seed: number; device?: (simPath: string) => string }): Promise<Line> {
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

/** One node's command stream: what was sent, in order, and what came back for each. */
interface Stream {
  node: number;
  commands: Command[];
  next: number;
  outstanding: number;
  outcome: Map<number, LinkEvent>;
  ids: number[];
}

t.test('5 % lost and ~5 % damaged frames: bots announce, telemetry flows, every command executed once and in order', async (t) => {
  const line = await open(t, { seed: 61, knobs: { drop_frame_rate: 0.05, corrupt_byte_rate: 0.002 } });
  t.pass('all four bots and the LED controller announced themselves and were welcomed through the noise');
  await until('telemetry from every bot', () => BOTS.every((b) => telemetryOf(line, b.id) >= 10));
  for (const b of BOTS) {
    const first = line.events.find((e) => e.kind === 'message' && e.node === b.id && e.message.type === 'TELEMETRY');
    if (first?.kind === 'message' && first.message.type === 'TELEMETRY') t.same([first.message.x, first.message.y], [b.start.x, b.start.y], `bot ${b.id} reports its cell`);
  }
  const [before] = await line.sim.snapshot();

  // Per bot: segments of one WAIT step (ids 1..N, the simulator logs them by id) and every
  // fifth an RFID_READ (answered with RFID_DATA, not ACK); per LED controller: sequences on
  // alternating channels. At most two of ours per node at a time (one in flight, one queued)
  // so a give-up, which fails the queue, costs little.
  const N = 50;
  const streams: Stream[] = NODES.map((node) => {
    const bot = BOTS.find((b) => b.id === node);
    const commands: Command[] = Array.from({ length: N }, (_, i): Command => {
      if (!bot) return { type: 'LED_SEQUENCE', channel: i % 2, repeat: 0, steps: [{ r: i, g: 255 - i, b: 0, duration_ms: 100 }] };
      if (i % 5 === 4) return { type: 'RFID_READ', target: 'FLOOR', offset: 0, length: 4 };
      return { type: 'SEGMENT', segment: i + 1, start_delay_ms: 0, x: bot.start.x, y: bot.start.y, steps: [{ action: 'WAIT', cells: 0, duration_ms: 20 }] };
    });
    return { node, commands, next: 0, outstanding: 0, outcome: new Map(), ids: [] };
  });
  const byId = new Map<number, Stream>();
  const pump = (): void => {
    for (const s of streams) {
      while (s.outstanding < 2 && s.next < s.commands.length && line.online.has(s.node)) {
        const id = line.link.send(s.node, s.commands[s.next++]!);
        s.ids.push(id);
        s.outstanding++;
        byId.set(id, s);
      }
    }
  };
  let seen = line.events.length;
  const twice: number[] = [];
  pump();
  await until('an outcome for every command', () => {
    for (; seen < line.events.length; seen++) {
      const e = line.events[seen]!;
      if (e.kind !== 'acked' && e.kind !== 'failed') continue;
      const s = byId.get(e.id);
      if (!s) continue;
      if (s.outcome.has(e.id)) twice.push(e.id);
      s.outcome.set(e.id, e);
      s.outstanding--;
    }
    pump();
    return streams.every((s) => s.next === N && s.outcome.size === N);
  }, 90_000);

  const [after] = await line.sim.snapshot();
  let duplicates = 0;
  for (const s of streams) {
    const was = executedBy(before!, s.node);
    const now = executedBy(after!, s.node);
    duplicates += now.duplicates - was.duplicates;
    const executed = now.keys.slice(now.keys.length - (now.total - was.total));
    // Walk what was sent in order: an acknowledged command must be the next one executed; a
    // failed one (gave up, or the node was lost) may or may not have been; nothing else may be.
    const missing: string[] = [];
    let j = 0;
    s.commands.forEach((c, i) => {
      const outcome = s.outcome.get(s.ids[i]!)!;
      if (executed[j] === keyOf(c)) j++;
      else if (outcome.kind === 'acked') missing.push(`${i}:${keyOf(c)}`);
    });
    t.same(missing, [], `node ${s.node}: every acknowledged command was executed, in the order sent`);
    t.equal(j, executed.length, `node ${s.node}: nothing executed twice or unasked (${executed.length} executed)`);
    const acked = [...s.outcome.values()].filter((e) => e.kind === 'acked');
    const failed = [...s.outcome.values()].filter((e) => e.kind === 'failed');
    t.ok(acked.length >= N - 2, `node ${s.node}: ${acked.length} of ${N} acknowledged, ${failed.length} failed (${failed.map((e) => (e.kind === 'failed' ? e.reason : '')).join(',')})`);
    // The answers fit the commands: RFID_DATA for a read, OK for an LED sequence, OK or BUSY
    // for a segment (one runs and one waits; a third arriving before the first ends is refused).
    const wrong = acked.flatMap((e) => {
      if (e.kind !== 'acked') return [];
      const c = s.commands[s.ids.indexOf(e.id)]!;
      const fits = c.type === 'RFID_READ' ? e.message?.type === 'RFID_DATA' : c.type === 'LED_SEQUENCE' ? e.result === 'OK' : e.result === 'OK' || e.result === 'BUSY';
      return fits ? [] : [`${keyOf(c)} ${e.result}`];
    });
    t.same(wrong, [], `node ${s.node}: every answer fits its command`);
  }
  t.same(twice, [], 'one outcome per command');
  const stats: LinkStats = line.link.stats();
  t.ok(stats.retransmits > 0, `the link retransmitted (${stats.retransmits})`);
  t.ok(duplicates > 0, `the simulated nodes answered ${duplicates} retransmissions without executing them again`);
  t.ok(stats.dropped.crc + stats.dropped.framing + stats.dropped.short + stats.dropped.length > 0, `damaged frames were counted: ${JSON.stringify(stats.dropped)}`);
  t.ok(after!.uplink.dropped > 0 && after!.downlink.dropped > 0 && after!.uplink.corrupted_bytes > 0 && after!.downlink.corrupted_bytes > 0, 'the knobs acted both ways');
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
  // Its last frame came at most one telemetry period (100 ms) before the knob took effect.
  t.ok(took >= LINK_TIMEOUT_MS - 150, `not before the link timeout (${took.toFixed(0)} ms after the knob)`);
  t.ok(line.at.get(offline)! - set < 4 * LINK_TIMEOUT_MS, `within the link timeout, with room for a loaded machine (${took.toFixed(0)} ms)`);
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
