/**
 * What the daemon and its radio lines' process say to each other (src/lines/process/): the
 * daemon opens, closes and sends; the lines' process answers with each line's device state,
 * the link's events, its log lines and its counters. A line is named by a number the
 * daemon gives each open, so news from a line already replaced is told apart. Both ways the
 * messages travel in batches (src/outbox.ts), in order. Types only.
 */
import type { TransportState, TransportStats } from '../link/transport.js';
import type { Command, LinkEvent, LinkStats } from '../native/link.js';

export type ToLines =
  | { type: 'open'; line: number; path: string }
  /** `token` names the command in the answer: the `id` of its acked or failed event, or a `refused`. */
  | { type: 'send'; line: number; token: number; node: number; command: Command }
  | { type: 'close'; line: number }
  /** Closes every line, then the process ends. */
  | { type: 'stop' };

export type FromLines =
  /** The process listens: what was sent before is sent now. */
  | { type: 'ready' }
  /** `error`: what the device's last failure means, in a technician's words (describeDeviceError). */
  | { type: 'state'; line: number; state: TransportState; error: string | null }
  /** The link's events in order; an acked or failed event's `id` is the token of its send. */
  | { type: 'events'; line: number; batch: LinkEvent[] }
  /** The link would not take the command (an unknown node, a value out of range). */
  | { type: 'refused'; line: number; token: number; reason: string }
  | { type: 'log'; line: number; level: 'info' | 'warn'; fields: object; msg: string }
  /** The line's counters, sent every LINE_STATS_MS and when it closes. */
  | { type: 'stats'; line: number; link: LinkStats; transport: TransportStats }
  | { type: 'closed'; line: number };

/** What the lines' process says of one of its lines. */
export type FromLine = Exclude<FromLines, { type: 'ready' }>;

/** How often the lines' process sends each line's counters. */
export const LINE_STATS_MS = 1000;
