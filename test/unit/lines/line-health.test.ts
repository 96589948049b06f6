// A level's radio line as a pure decision (src/lines/line-health.ts): what its status is after
// each thing its device and its nodes say, and which of those is news for the event log. The
// sequences are what a real outage looks like to SiteLines: a device that stays away is
// retried with backoff, each retry passing through `opening` and failing again.
import t from 'tap';
import { describeDeviceError, nextLineHealth, OPENING, SILENT_REASON, type LineFacts, type LineHealth } from '../../../src/lines/line-health.js';

type Step = Partial<LineFacts> & { device: LineFacts['device'] };
const ENOENT = 'ENOENT (no such file or directory)';
const UP: LineHealth = { up: true, reason: null, announcedDown: false, downSince: null };
const DOWN: LineHealth = { up: false, reason: `device unavailable: ${ENOENT}`, announcedDown: true, downSince: 1000 };

/** Runs the steps from `start`; each step's `now` is 1000 ms after the one before. */
function run(start: LineHealth, steps: Step[]) {
  let h = start;
  const changes: string[] = [];
  steps.forEach((step, i) => {
    const { next, change } = nextLineHealth(h, { error: null, bots: 3, answering: 0, graceOver: false, now: 1000 * (i + 1), ...step });
    h = next;
    if (change) changes.push(change.kind === 'up' ? `up after ${change.downMs}` : 'down');
  });
  return { health: h, changes };
}

const retry = (error = ENOENT): Step[] => [{ device: 'opening' }, { device: 'waiting', error }];

const cases: { name: string; start?: LineHealth; steps: Step[]; up: boolean; reason: RegExp | null; changes: string[] }[] = [
  { name: 'a start where the nodes answer: up, nothing to announce', steps: [{ device: 'opening' }, { device: 'open' }, { device: 'open', answering: 1 }], up: true, reason: null, changes: [] },
  { name: 'a level without bots is up as soon as its device opens', steps: [{ device: 'opening' }, { device: 'open', bots: 0 }], up: true, reason: null, changes: [] },
  { name: 'freshly open, nobody answered yet: not up, but not an outage either', steps: [{ device: 'opening' }, { device: 'open' }], up: false, reason: /waiting for a node/, changes: [] },
  { name: 'freshly open and silent past the grace: down once', steps: [{ device: 'opening' }, { device: 'open' }, { device: 'open', graceOver: true }, { device: 'open', graceOver: true }], up: false, reason: /no node answers/, changes: ['down'] },
  { name: 'the device is missing at start: down at the first failure, once over every retry', steps: [{ device: 'opening' }, { device: 'waiting', error: ENOENT }, ...retry(), ...retry(), ...retry()], up: false, reason: /^device unavailable: ENOENT/, changes: ['down'] },
  { name: 'an up line whose device is lost: one down event across the retries, one up when it answers again', start: UP, steps: [{ device: 'waiting', error: 'device closed: EIO (input/output error)' }, ...retry(), ...retry(), { device: 'opening' }, { device: 'open' }, { device: 'open', answering: 2 }], up: true, reason: null, changes: ['down', 'up after 7000'] },
  { name: 'the failure changes kind while down (EIO, then ENOENT): the reason follows, no second event', start: UP, steps: [{ device: 'waiting', error: 'EIO (input/output error)' }, ...retry()], up: false, reason: /ENOENT/, changes: ['down'] },
  { name: 'a retry keeps the failure as the reason while it opens', start: DOWN, steps: [{ device: 'opening' }], up: false, reason: /^device unavailable: ENOENT/, changes: [] },
  { name: 'reopened but still silent: down without a second event (the grace is not waited again)', start: DOWN, steps: [{ device: 'opening' }, { device: 'open' }], up: false, reason: new RegExp(SILENT_REASON.replace(/[()]/g, '\\$&')), changes: [] },
  { name: 'every node falls silent on an open device (gateway stopped): down at once, up when one answers', start: UP, steps: [{ device: 'open', answering: 0 }, { device: 'open', answering: 0 }, { device: 'open', answering: 1 }], up: true, reason: null, changes: ['down', 'up after 2000'] },
  { name: 'one bot lost while another answers: the line stays up', start: UP, steps: [{ device: 'open', answering: 1 }], up: true, reason: null, changes: [] },
  { name: 'closing the line (shutdown, a repoint) is not news', start: UP, steps: [{ device: 'closed' }], up: true, reason: null, changes: [] },
  { name: 'an outage carried over a repoint ends with its up event on the new device', start: DOWN, steps: [{ device: 'opening' }, { device: 'open', answering: 3 }], up: true, reason: null, changes: ['up after 1000'] },
];

t.test('line health after each thing the device and the nodes say', async (t) => {
  for (const c of cases) {
    const { health, changes } = run(c.start ?? OPENING, c.steps);
    t.equal(health.up, c.up, `${c.name}: up`);
    if (c.reason) t.match(health.reason, c.reason, `${c.name}: reason`);
    else t.equal(health.reason, null, `${c.name}: no reason`);
    t.same(changes, c.changes, `${c.name}: events`);
  }
});

t.test('device errors in a technician\'s words: the errno code, then the text', async (t) => {
  const table: { name: string; err: { message: string; code?: string; disconnected?: boolean }; want: string }[] = [
    { name: 'serialport open of a missing device', err: { message: 'Error: No such file or directory, cannot open /dev/serial/by-id/usb-gw' }, want: ENOENT },
    { name: 'a permission problem (service user not in dialout)', err: { message: 'Error: Permission denied, cannot open /dev/ttyUSB0' }, want: 'EACCES (permission denied)' },
    { name: 'another process holds the device', err: { message: 'Error Resource temporarily unavailable Cannot lock port' }, want: 'Error Resource temporarily unavailable Cannot lock port' },
    { name: 'a read error of an unplugged adapter', err: { message: 'EIO: i/o error, read', code: 'EIO' }, want: 'EIO (input/output error)' },
    { name: 'the device closed under the reader (serialport DisconnectedError)', err: { message: 'bad file descriptor', disconnected: true }, want: 'device closed: EBADF (bad file descriptor)' },
    { name: 'a port closed without an error', err: { message: 'port closed' }, want: 'device closed' },
    { name: 'a code named in the text', err: { message: 'Error: ENXIO something' }, want: 'ENXIO (no such device or address)' },
    { name: 'a text with no known code is kept', err: { message: 'Error: the gateway said no' }, want: 'the gateway said no' },
  ];
  for (const c of table) t.equal(describeDeviceError(c.err), c.want, c.name);
});
