/**
 * The messages between the daemon's main thread (HTTP, radio lines) and the brain's worker
 * thread. Both sides post plain objects; nothing here is shared memory. What either thread
 * commits travels on a port of its own (src/store/commit-bridge.ts), not here.
 */
import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../config/config.js';
import type { SiteLayout } from '../domain/site/layout.js';
import type { StorageStatus } from '../domain/system/control.js';
import type { BotEvent, CommandOutcome, LineStatus } from '../lines/events.js';
import type { Command } from '../native/link.js';

/** What the brain reads from the settings; main sends it again whenever a setting changes. */
export interface BrainSettings {
  externalPicking: boolean;
  chargeBelow: number;
  faultClearSeconds: number;
}

/** The worker's `workerData`. */
export interface BrainInit {
  config: Config;
  /** The site's geometry (levels, balconies) without its initial carriers and SKUs, which the store holds. */
  layout: SiteLayout;
  settings: BrainSettings;
  /** Whether the radio lines run (main forwards bot and line news and sends commands). */
  links: boolean;
  /** Each line's state when the worker starts. */
  lines: LineStatus[];
  /** The worker's end of the commit bridge (transferred). */
  commits: MessagePort;
}

export type ToBrain =
  | { type: 'settings'; settings: BrainSettings }
  | { type: 'log-level'; level: Config['log_level'] }
  | { type: 'bot'; event: BotEvent }
  | { type: 'line'; status: LineStatus }
  | { type: 'call'; id: number; method: 'stop' | 'chargeAllCandidates'; args: unknown[] }
  | { type: 'sent'; id: number; outcome: CommandOutcome };

export type FromBrain =
  | { type: 'ready' }
  | { type: 'status'; status: StorageStatus }
  | { type: 'log'; line: string }
  | { type: 'send'; id: number; levelId: number; node: number; command: Command; timeoutMs: number }
  | { type: 'result'; id: number; result?: unknown; error?: string };
