// The simulator standing in for a serial-to-Ethernet device server: a level whose layout device
// is tcp://host:port listens on that port; one controller connection at a time, the newest
// winning; and a controller that goes away leaves the bots as they are, so the next one to
// connect finds the same boot of every node (same HELLO session) where it stood.
import t from 'tap';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Frame, MessageOf } from '../../../src/link/protocol/messages.js';
import { Simulator } from '../../../src/sim/simulator.js';
import { TcpLine } from '../../../src/sim/tcp-line.js';
import { TestController } from '../../helpers/sim-controller.js';
import { simSite } from '../../fixtures/sim-site.js';
import { freePort } from '../../helpers/free-port.js';

const SEED = 4242;
t.comment(`seed ${SEED}`);

/** A raw connection to the line and what it has received. */
async function connect(port: number): Promise<{ socket: net.Socket; data: () => Buffer; closed: Promise<void> }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  let data = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => (data = Buffer.concat([data, chunk])));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, data: () => data, closed };
}

async function poll(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

t.test('the line serves the newest connection and drops what it cannot deliver', async (t) => {
  const port = await freePort();
  const got: Buffer[] = [];
  const events: string[] = [];
  const line = new TcpLine(`tcp://127.0.0.1:${port}`, '127.0.0.1', port, (b) => got.push(b), {
    connected: (_remote, replaced) => events.push(replaced ? 'replaced' : 'connected'),
    disconnected: () => events.push('disconnected'),
    failed: (err) => events.push(`failed ${err.message}`),
  });
  t.teardown(() => line.close());
  await line.listening;
  t.equal(line.write(Buffer.from('nobody')), false, 'no controller: dropped');
  t.equal(line.counters.unconnected_drops, 1);

  const a = await connect(port);
  await poll('the first connection', () => line.counters.connections === 1);
  t.ok(line.write(Buffer.from('to a')));
  await poll('bytes at a', () => a.data().toString() === 'to a');
  const b = await connect(port);
  await a.closed;
  t.pass('the older connection is closed when a newer one comes');
  await poll('the second connection', () => line.counters.connections === 2);
  t.ok(line.write(Buffer.from('to b')));
  await poll('bytes at b', () => b.data().toString() === 'to b');
  b.socket.write('from b');
  await poll('bytes from b', () => Buffer.concat(got).toString() === 'from b');
  t.equal(a.data().toString(), 'to a', 'nothing more reached the older one');
  b.socket.destroy();
  await poll('b gone', () => events.includes('disconnected') && events.filter((e) => e === 'disconnected').length === 2);
  t.same(events, ['connected', 'replaced', 'disconnected', 'disconnected']);

  // A second line on a port in use says why it cannot listen.
  const taken = new TcpLine(`tcp://127.0.0.1:${port}`, '127.0.0.1', port, () => undefined);
  t.teardown(() => taken.close());
  await t.rejects(taken.listening, { code: 'EADDRINUSE' });
});

t.test('a simulated level over TCP: a second controller finds the bots as the first left them', async (t) => {
  const port = await freePort();
  const device = `tcp://127.0.0.1:${port}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'sim-tcp-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const site = simSite('Sim TCP test site');
  site.levels[0]!.serial_device = device;
  const sitePath = path.join(dir, 'site.json');
  writeFileSync(sitePath, JSON.stringify(site));

  const sim = new Simulator({ site: sitePath, seed: SEED, bind: '127.0.0.1' });
  t.teardown(() => sim.close());
  await sim.ready();
  t.same(sim.devices(), [{ level_id: 1, path: device }], 'the level is served on the layout\'s device');

  const first = new TestController(device);
  await first.open();
  const hello: Frame<MessageOf<'HELLO'>> = await first.nextOf(1, 'HELLO');
  await first.welcome(hello);
  first.startHeartbeats();
  const before = await first.telemetry(1);
  await first.close();

  // The uplink is gone; the bots are not.
  const kept = sim.snapshot()[0]!.bots.find((b) => b.id === 1)!;
  t.ok(kept, 'bot 1 is still on the level');

  const second = new TestController(device);
  second.session = 0x5eed0002;
  t.teardown(() => second.close());
  await second.open();
  second.startHeartbeats(); // a controller of another session: the node's link is lost and it says HELLO again
  const again = await second.nextOf(1, 'HELLO');
  t.equal(again.message.session, hello.message.session, 'the same boot of the bot (not rebooted)');
  await second.welcome(again);
  const after = await second.telemetry(1);
  t.same([after.x, after.y, after.heading], [before.x, before.y, before.heading], 'where the first controller left it');
  t.ok(sim.snapshot()[0]!.line.bytes_in > 0);
});
