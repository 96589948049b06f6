// TcpTransport against real sockets on 127.0.0.1, playing the device server: bytes both ways,
// writes kept whole and counted when the server stops reading, and a server that closes the
// connection or goes away and comes back on the same port is reconnected with backoff, logged
// once per kind of failure.
import t from 'tap';
import net from 'node:net';
import { parseTcpDevice, TcpTransport } from '../../../src/link/tcp.js';
import type { TransportState } from '../../../src/link/transport.js';
import { createLineTransport } from '../../../src/link/device.js';
import { SerialTransport } from '../../../src/link/serial.js';
import { describeDeviceError } from '../../../src/lines/line-health.js';
import { CHUNK, collector, fillUntilDropped, tornAndDisorder } from '../../helpers/transport-bytes.js';

/** A device server's port: keeps what the newest connection sent, and that connection. */
class FarEnd {
  readonly server = net.createServer((socket) => this.accept(socket));
  received = Buffer.alloc(0);
  socket: net.Socket | undefined;
  connections = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly reading = true) {}

  /** Listens on `port` (0: any free one) and resolves with it. */
  listen(port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve((this.server.address() as net.AddressInfo).port));
    });
  }

  /** Resolves once `check` holds, looked at after every event of the far end. */
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => {
      const w = () => {
        if (!check()) return;
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve();
      };
      this.waiters.push(w);
    });
  }

  read(): void {
    this.socket?.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.wake();
    });
    this.socket?.resume();
  }

  async close(): Promise<void> {
    this.socket?.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    this.socket = socket;
    this.connections++;
    socket.on('error', () => undefined);
    if (this.reading) this.read();
    else socket.pause();
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

/** Resolves once `check` holds, polled. */
async function poll(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

t.test('the device string: tcp://host:port picks the TCP transport, anything else the serial one', async (t) => {
  t.same(parseTcpDevice('tcp://10.0.0.20:4001'), { host: '10.0.0.20', port: 4001 });
  t.same(parseTcpDevice('tcp://gw-level-2.site.lan:4002'), { host: 'gw-level-2.site.lan', port: 4002 });
  t.same(parseTcpDevice('tcp://[fd00::20]:4001'), { host: 'fd00::20', port: 4001 });
  for (const bad of ['tcp://10.0.0.20', 'tcp://10.0.0.20:0', 'tcp://10.0.0.20:65536', 'tcp://:4001', 'udp://10.0.0.20:4001', '/dev/ttyUSB0', 'sim']) {
    t.equal(parseTcpDevice(bad), undefined, bad);
  }
  t.ok(createLineTransport('tcp://127.0.0.1:4001', { onData: () => undefined }) instanceof TcpTransport);
  t.ok(createLineTransport('/dev/ttyUSB0', { onData: () => undefined }) instanceof SerialTransport);
  t.throws(() => new TcpTransport({ path: '/dev/ttyUSB0', onData: () => undefined }), RangeError);
});

t.test('every byte value crosses both ways', async (t) => {
  const far = new FarEnd();
  const port = await far.listen();
  const got = collector();
  const tr = new TcpTransport({ path: `tcp://127.0.0.1:${port}`, onData: got.onData });
  t.teardown(async () => {
    await tr.close();
    await far.close();
  });
  tr.start();
  t.equal(tr.state, 'opening');
  await tr.whenOpen();
  await far.until(() => far.socket !== undefined);
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  t.ok(tr.write(all));
  await far.until(() => far.received.length >= 256);
  t.same(far.received, all, 'transport to device server');
  far.socket!.write(Buffer.concat([all, all]));
  await got.until(512);
  t.same(got.data, Buffer.concat([all, all]), 'device server to transport');
  t.equal(tr.stats.bytesIn, 512);
  t.equal(tr.stats.bytesOut, 256);
  t.equal(tr.stats.opens, 1);
});

t.test('when the device server stops reading, writes queue up to the bound, then are dropped whole', async (t) => {
  const far = new FarEnd(false);
  const port = await far.listen();
  const tr = new TcpTransport({ path: `tcp://127.0.0.1:${port}`, onData: () => undefined, maxQueuedBytes: 16 * 1024 });
  t.teardown(async () => {
    await tr.close();
    await far.close();
  });
  tr.start();
  await tr.whenOpen();
  await far.until(() => far.socket !== undefined);
  // Numbered chunks, so the far end can tell whole from torn; 256 MiB at the most. The kernel's
  // socket buffers take megabytes before the stream pushes back, and fill between batches.
  const { accepted, written } = await fillUntilDropped(tr, 256 * 1024, 1024);
  t.ok(tr.stats.backpressureWaits > 0, 'the socket reported backpressure');
  t.ok(tr.stats.droppedFull > 0, `writes dropped when the queue was full (${tr.stats.droppedFull} of ${written})`);
  t.ok(tr.stats.queuedBytes <= 16 * 1024, 'the queue stayed within its bound');
  far.read();
  await far.until(() => far.received.length >= accepted * CHUNK);
  t.equal(far.received.length, accepted * CHUNK, 'every accepted write arrived, nothing else');
  const { torn, disorder } = tornAndDisorder(far.received);
  t.equal(torn, 0, 'no write was torn');
  t.equal(disorder, 0, 'writes arrived in order');
  await poll(() => tr.stats.queuedBytes === 0);
  t.pass('the queue drained');
});

t.test('a connection the device server closes is made again; a server away is retried with backoff until it is back', async (t) => {
  const far = new FarEnd();
  const port = await far.listen();
  const got = collector();
  const states: { state: TransportState; error?: Error }[] = [];
  const lines: { level: string; msg: string }[] = [];
  const log = {
    info: (_o: object, msg: string) => lines.push({ level: 'info', msg }),
    warn: (_o: object, msg: string) => lines.push({ level: 'warn', msg }),
  };
  const tr = new TcpTransport({
    path: `tcp://127.0.0.1:${port}`, onData: got.onData, log, initialBackoffMs: 10, maxBackoffMs: 40,
    onState: (state, error) => states.push({ state, error }),
  });
  // The device server as it comes back, on the same port.
  const second = new FarEnd();
  t.teardown(async () => {
    await tr.close();
    await far.close();
    await second.close();
  });
  tr.start();
  await tr.whenOpen();
  await far.until(() => far.connections === 1);

  // The device server drops the connection (another box connected to it): the transport waits, then connects again.
  far.socket!.destroy();
  await far.until(() => far.connections === 2);
  await tr.whenOpen();
  const closed = states.find((s) => s.state === 'waiting');
  t.ok(closed, 'the loss was a waiting state');
  t.equal(describeDeviceError(closed!.error!), 'connection closed by the device server');
  t.ok(tr.write(Buffer.from('again\n')));
  await far.until(() => far.received.toString().endsWith('again\n'));
  far.socket!.write(Buffer.from([7, 8, 9]));
  await got.until(3);
  t.same([...got.data], [7, 8, 9]);

  // The device server goes away altogether: refused, retried with backoff, writes dropped meanwhile.
  await far.close();
  await poll(() => tr.stats.failures >= 6);
  t.ok(tr.state === 'waiting' || tr.state === 'opening', 'still trying');
  const refused = states.filter((s) => s.state === 'waiting').at(-1)!;
  t.equal(describeDeviceError(refused.error!), 'ECONNREFUSED (connection refused)');
  const droppedBefore = tr.stats.droppedClosed;
  t.equal(tr.write(Buffer.from([1, 2, 3])), false, 'a write while away is refused');
  t.equal(tr.stats.droppedClosed, droppedBefore + 1, 'and counted');

  // It comes back on the same port.
  await second.listen(port);
  await tr.whenOpen();
  await second.until(() => second.socket !== undefined);
  t.ok(tr.write(Buffer.from('back\n')));
  await second.until(() => second.received.toString() === 'back\n');
  t.pass('bytes reach the device server that came back');

  const warns = lines.filter((l) => l.level === 'warn');
  // One for the first loss; then the loss as the server went away and the refusals, two kinds:
  // six or more retries are not six lines.
  t.equal(warns.length, 3, `${warns.length} warning lines for ${tr.stats.failures} failures`);
  t.equal(lines.filter((l) => l.msg === 'TCP device server reopened').length, 2);
  t.equal(tr.stats.opens, 3);
});

t.test('close() stops retrying and refuses writes', async (t) => {
  // A port nobody listens on: taken and let go again.
  const probe = new FarEnd();
  const port = await probe.listen();
  await probe.close();
  const states: TransportState[] = [];
  const tr = new TcpTransport({ path: `tcp://127.0.0.1:${port}`, onData: () => undefined, initialBackoffMs: 5, maxBackoffMs: 5, onState: (s) => states.push(s) });
  tr.start();
  const opened = tr.whenOpen();
  await poll(() => tr.stats.failures >= 3);
  await tr.close();
  await t.rejects(opened, /closed before it opened/);
  const failures = tr.stats.failures;
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(tr.stats.failures, failures, 'no retry after close');
  t.equal(tr.write(Buffer.from([1])), false);
  t.equal(states.at(-1), 'closed');
});
