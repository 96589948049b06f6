/**
 * The radio lines' process: every level's device (a serial port, a device server's TCP
 * connection) and the native link on it are read and written here, away from the daemon's
 * main thread. The link's heartbeats, acknowledgements and silence supervision therefore keep
 * their timing while that thread is held by a long commit, a garbage collection or a burst of
 * requests; what the lines heard meanwhile waits in the IPC channel. The daemon keeps every
 * rule (SiteLines): this process only moves bytes and tells what happened.
 *
 * A process rather than a worker thread: the serialport package polls its devices on the
 * process's default event loop, which a worker thread cannot use.
 */
import { createLineTransport, type LineTransport } from '../../link/device.js';
import type { TransportLogger } from '../../link/transport.js';
import { createLink, type Link, type LinkEvent } from '../../native/link.js';
import { describeDeviceError } from '../line-health.js';
import { LINE_STATS_MS, type FromLines, type ToLines } from '../messages.js';
import { Outbox } from '../../outbox.js';

// What a turn of the event loop read on every line leaves in one message.
const outbox = new Outbox<FromLines>((batch) => {
  if (process.connected) process.send!(batch);
}, 'turn');
const post = (message: FromLines) => outbox.post(message);

interface Line {
  transport: LineTransport;
  link: Link;
  /** The daemon's token of each command in flight, by the link's id for it. */
  tokens: Map<number, number>;
}

const lines = new Map<number, Line>();

function open(id: number, path: string): void {
  const log: TransportLogger = {
    info: (fields, msg) => post({ type: 'log', line: id, level: 'info', fields, msg }),
    warn: (fields, msg) => post({ type: 'log', line: id, level: 'warn', fields, msg }),
  };
  const tokens = new Map<number, number>();
  // The transport reads only after start(), so the link exists before the first byte arrives.
  const transport = createLineTransport(path, {
    log,
    onData: (bytes) => link.receive(bytes),
    onState: (state, error) => post({ type: 'state', line: id, state, error: error ? describeDeviceError(error) : null }),
  });
  const link = createLink({
    write: (bytes) => void transport.write(bytes),
    onEvent: (batch) => post({ type: 'events', line: id, batch: withTokens(batch, tokens) }),
  });
  lines.set(id, { transport, link, tokens });
  transport.start();
}

/** The batch with each outcome's link id replaced by the daemon's token for it. */
function withTokens(batch: LinkEvent[], tokens: Map<number, number>): LinkEvent[] {
  for (const event of batch) {
    if (event.kind !== 'acked' && event.kind !== 'failed') continue;
    const token = tokens.get(event.id);
    tokens.delete(event.id);
    if (token !== undefined) event.id = token;
  }
  return batch;
}

function send(id: number, token: number, node: number, command: Extract<ToLines, { type: 'send' }>['command']): void {
  const line = lines.get(id);
  if (!line) {
    post({ type: 'refused', line: id, token, reason: 'the line is closed' });
    return;
  }
  try {
    line.tokens.set(line.link.send(node, command), token);
  } catch (err) {
    // A node the link has not heard from yet cannot be sent to.
    post({ type: 'refused', line: id, token, reason: (err as Error).message });
  }
}

function postStats(id: number, line: Line): void {
  post({ type: 'stats', line: id, link: line.link.stats(), transport: { ...line.transport.stats } });
}

async function close(id: number): Promise<void> {
  const line = lines.get(id);
  if (!line) return;
  lines.delete(id);
  line.link.close();
  await line.transport.close();
  postStats(id, line);
  post({ type: 'closed', line: id });
}

const statsTimer = setInterval(() => {
  for (const [id, line] of lines) postStats(id, line);
}, LINE_STATS_MS);

process.on('message', (batch: ToLines[]) => {
  for (const message of batch) heard(message);
});

function heard(message: ToLines): void {
  switch (message.type) {
    case 'open':
      open(message.line, message.path);
      break;
    case 'send':
      send(message.line, message.token, message.node, message.command);
      break;
    case 'close':
      void close(message.line);
      break;
    case 'stop':
      clearInterval(statsTimer);
      void Promise.all([...lines.keys()].map(close)).then(() => {
        outbox.flush();
        process.disconnect();
      });
      break;
  }
}

post({ type: 'ready' });

// The daemon gone (even killed outright): its lines are let go, so that the next daemon can
// open the devices at once.
process.on('disconnect', () => process.exit(0));
// A signal to the whole group (Ctrl-C, systemd's stop) is the daemon's to act on: it stops
// this process over IPC once it has closed its end, or this process ends when it is gone.
const signalled = () => {
  if (!process.connected) process.exit(0);
};
process.on('SIGTERM', signalled);
process.on('SIGINT', signalled);
