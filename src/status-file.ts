/**
 * `<state_dir>/status.json`: what the running daemon knows that its store does not (live bots,
 * radio lines, storage status, disk), rewritten every few seconds for `warehouse-controller
 * status` and `bots`. Written to a temporary file and renamed: a reader never sees half of it.
 * A stale `written_at`, or no daemon holding the state directory's lock, means it is old news.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LineStatus } from './lines/events.js';
import type { LiveBot, StorageStatus } from './domain/system/control.js';
import type { StorageReport } from './domain/history/store-usage.js';
import type { PairStatus } from './replication/pair.js';

export const STATUS_FILE = 'status.json';
/** How often the daemon rewrites it; a reader calls it stale after three periods. */
export const STATUS_PERIOD_MS = 5000;

export interface DaemonStatus {
  version: string;
  pid: number;
  started_at: string;
  written_at: string;
  port: number;
  storage_status: StorageStatus;
  storage: { free_bytes: number | null; full: boolean; fault: string | null };
  /** The store's size, growth and forecast, and the history pruner's state (absent in a file of an older build). */
  store?: StorageReport;
  certificate: { file: string; valid_to: string };
  lines: LineStatus[];
  bots: LiveBot[];
  /** On a box of a replicated pair: its role, its peer, the lag (absent on a single box). */
  replication?: PairStatus;
}

/** Writes the status atomically. */
export function writeStatusFile(stateDir: string, status: DaemonStatus): void {
  const file = path.join(stateDir, STATUS_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(status)}\n`, { mode: 0o640 });
  renameSync(temporary, file);
}

/** Removes the status at a clean stop: nobody reads a stopped daemon's bots as live. */
export function removeStatusFile(stateDir: string): void {
  rmSync(path.join(stateDir, STATUS_FILE), { force: true });
}
