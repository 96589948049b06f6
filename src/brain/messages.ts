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
import type { BucketCopy } from '../domain/figures/buckets.js';
import type { JobStatus, JobType } from '../domain/requests/vocabulary.js';
import type { WaitingFor } from '../domain/requests/records.js';

/** What the brain reads from the settings; main sends it again whenever a setting changes. */
export interface BrainSettings {
  externalPicking: boolean;
  chargeBelow: number;
  faultClearSeconds: number;
}

/**
 * The `workerData` of a thread started ahead of need (a pair's standby box keeps one): it loads
 * its modules, then waits for a `begin` message with its BrainInit.
 */
export const SPARE_THREAD = 'spare';

/** What starts a spare thread's brain; its ports travel in the message's transfer list. */
export interface BeginBrain {
  type: 'begin';
  init: BrainInit;
}

/** The worker's `workerData`, unless it is SPARE_THREAD. */
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
  /** On the active box of a replicated pair: the worker's end of the replication gate (transferred). */
  replication?: MessagePort;
}

/** A level planner's figures (its `stats()`): counters since the planner started, step times over its latest steps. */
export interface PlannerFigures {
  level_id: number;
  steps: number;
  /** Step planning time in ms over the latest 4096 steps, and the longest since start. */
  step_ms: { p50: number; p99: number; max: number };
  stalls: number;
  escapes: number;
  over_budget: number;
}

/**
 * What the brain's thread reports for /metrics every few seconds: counters and histograms
 * cumulative since the thread started, gauges as they are now. The main thread keeps the
 * latest, so a scrape reads it without asking the thread anything.
 */
export interface BrainFigures {
  /** Time of each dispatch pass, in seconds. */
  pass_seconds: BucketCopy;
  /** The commits of the brain's thread: their time in seconds and their writes. */
  commit_seconds: BucketCopy;
  commit_writes: BucketCopy;
  slow_commits: number;
  /** Open jobs by type and status. */
  jobs: { type: JobType; status: JobStatus; count: number }[];
  /** Open jobs that wait, by what they wait for. */
  waiting: { reason: WaitingFor; count: number }[];
  planners: PlannerFigures[];
}

/** The main thread's messages to the brain's thread travel in batches (src/outbox.ts), in order. */
export type ToBrain =
  | { type: 'settings'; settings: BrainSettings }
  | { type: 'log-level'; level: Config['log_level'] }
  | { type: 'bot'; event: BotEvent }
  | { type: 'line'; status: LineStatus }
  | { type: 'call'; id: number; method: 'stop' | 'chargeAllCandidates'; args: unknown[] }
  | { type: 'sent'; id: number; outcome: CommandOutcome };

/** The brain's thread's messages travel in batches too. */
export type FromBrain =
  | { type: 'ready' }
  | { type: 'status'; status: StorageStatus }
  | { type: 'figures'; figures: BrainFigures }
  | { type: 'log'; line: string }
  | { type: 'send'; id: number; levelId: number; node: number; command: Command; timeoutMs: number }
  | { type: 'result'; id: number; result?: unknown; error?: string };
