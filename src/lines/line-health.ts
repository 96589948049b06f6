/**
 * What a level's radio line is, from what its serial device and its nodes say, as pure
 * functions (SiteLines feeds them; test/unit/lines/line-health.test.ts is their table). The point is one
 * event per outage: a device that stays away is retried with backoff every few seconds, and
 * each retry passes through `opening` and fails again, which must not read as a new outage.
 *
 * - The device failed (`waiting`): the line is down, its reason the OS's error in words a
 *   technician can look up (`ENOENT`, `EIO`, "device closed"); announced once.
 * - The device is being opened again after a failure: still down, for the same reason.
 * - The device is open: up once a node answers (or the level has no bot to answer). A line that
 *   was up and whose every node fell silent is down at once (the link already waited its
 *   timeout); one that has just opened gets `NODE_ANSWER_GRACE_MS` for its first answer.
 *
 * `up` is announced only after a `down` (a recovery), so every 0x7009 has one 0x700A after it.
 */
import type { TransportState } from '../link/transport.js';

/** How long a freshly opened device may stay silent before its line counts as down. */
export const NODE_ANSWER_GRACE_MS = 5000;

export interface LineHealth {
  up: boolean;
  reason: string | null;
  /** A down event was raised for this outage and no up event since. */
  announcedDown: boolean;
  /** When the announced outage began (monotonic ms), for how long it lasted when it ends. */
  downSince: number | null;
}

export interface LineFacts {
  device: TransportState;
  /** The last failure of the device, in words (describeDeviceError), when it failed. */
  error: string | null;
  /** Bots of the level, and how many of them the link hears now. */
  bots: number;
  answering: number;
  /** The device has been open for NODE_ANSWER_GRACE_MS without any node answering. */
  graceOver: boolean;
  /** A monotonic clock's reading: only the length of an outage is taken from it. */
  now: number;
}

export type LineChange = { kind: 'down' } | { kind: 'up'; downMs: number } | null;

export const OPENING: LineHealth = { up: false, reason: 'opening the device', announcedDown: false, downSince: null };
export const SILENT_REASON = 'no node answers on the line (gateway or radio silent)';

/** The line's next state and whether that is news for the event log. */
export function nextLineHealth(prev: LineHealth, f: LineFacts): { next: LineHealth; change: LineChange } {
  const down = (reason: string): { next: LineHealth; change: LineChange } => prev.announcedDown
    ? { next: { ...prev, up: false, reason }, change: null }
    : { next: { up: false, reason, announcedDown: true, downSince: f.now }, change: { kind: 'down' } };
  switch (f.device) {
    case 'closed':
      return { next: prev, change: null }; // the line is being closed (shutdown, repoint)
    case 'waiting':
      return down(`device unavailable: ${f.error ?? 'unknown error'}`);
    case 'opening':
      // A retry after a failure keeps the failure as its reason; a first open says so.
      return { next: prev.announcedDown ? prev : OPENING, change: null };
    case 'open': {
      if (f.bots === 0 || f.answering > 0) {
        const next: LineHealth = { up: true, reason: null, announcedDown: false, downSince: null };
        return { next, change: prev.announcedDown ? { kind: 'up', downMs: f.now - (prev.downSince ?? f.now) } : null };
      }
      if (prev.up || prev.announcedDown || f.graceOver) return down(SILENT_REASON);
      return { next: { ...prev, up: false, reason: 'device open; waiting for a node to answer' }, change: null };
    }
  }
}

/** Linux's texts of the errors a serial device or a device server's connection gives, by code (libc strerror). */
const ERRNO_TEXT: [code: string, text: string][] = [
  ['ENOENT', 'no such file or directory'],
  ['EIO', 'input/output error'],
  ['EACCES', 'permission denied'],
  ['EBUSY', 'device or resource busy'],
  ['ENXIO', 'no such device or address'],
  ['ENODEV', 'no such device'],
  ['EBADF', 'bad file descriptor'],
  ['ENOTTY', 'inappropriate ioctl for device'],
  ['EAGAIN', 'resource temporarily unavailable'],
  ['EPERM', 'operation not permitted'],
  // A device server over TCP (tcp://host:port)
  ['ECONNREFUSED', 'connection refused'],
  ['ETIMEDOUT', 'connection timed out'],
  ['ECONNRESET', 'connection reset by peer'],
  ['EHOSTUNREACH', 'no route to host'],
  ['ENETUNREACH', 'network is unreachable'],
  ['EPIPE', 'broken pipe'],
];

/**
 * A device failure in a technician's words: the errno code first (what to search for), then
 * the OS's text; an unplugged device that closed under us says "device closed". serialport's
 * native errors carry no `code`, only strerror's text ("Error: No such file or directory,
 * cannot open /dev/ttyUSB0"), so the code is found from the text.
 */
export function describeDeviceError(err: { message: string; code?: unknown; disconnected?: unknown }): string {
  const message = err.message.replace(/^(Error: )+/, '').replace(/, cannot open .*$/, '').trim();
  const lower = message.toLowerCase();
  const code = typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code)
    ? err.code
    : ERRNO_TEXT.find(([c, text]) => lower.startsWith(text) || new RegExp(`\\b${c}\\b`).test(message))?.[0];
  const text = code ? ERRNO_TEXT.find(([c]) => c === code)?.[1] ?? message : message;
  const what = code ? `${code} (${text})` : message || 'unknown error';
  if (err.disconnected === true || lower === 'port closed') return code ? `device closed: ${what}` : 'device closed';
  return what;
}
