/**
 * The disk under the state directory, watched from the main thread: a warning before it is
 * full, an error once when writes start failing for lack of space, a notice when they succeed
 * again, and a warning (at most one a minute) when a commit holds the event loop for long.
 * The decisions are pure functions of what was last said and what is seen now.
 */
import type { Logger } from './log/logger.js';
import type { Store } from './store/store.js';
import { freeBytes, hasRoom, type StorageFaultError } from './store/storage-fault.js';
import { EVENT, type EventKind } from './domain/events/catalogue.js';
import type { Events } from './domain/events/events.js';

/** What the watcher has already said, so that each state is announced once. */
export interface DiskState {
  low: boolean;
}

/** Free space must climb this far above the threshold before a new low warning can be raised. */
const HYSTERESIS = 1.1;

/** Whether to warn of low space now, and the state after. */
export function decideLowSpace(state: DiskState, free: number | undefined, lowBytes: number): { warn: boolean; next: DiskState } {
  if (free === undefined || lowBytes === 0) return { warn: false, next: state };
  if (!state.low && free < lowBytes) return { warn: true, next: { low: true } };
  if (state.low && free > lowBytes * HYSTERESIS) return { warn: false, next: { low: false } };
  return { warn: false, next: state };
}

const mib = (n: number) => `${Math.round(n / 1024 ** 2)} MiB`;

/** A commit that held the event loop this long is logged: every request waited that long (single fsyncs of 330 to 730 ms were seen on a busy disk). */
export const SLOW_COMMIT_MS = 250;
/** At most one slow-commit line in this many ms; the next line counts those not said. */
const SLOW_COMMIT_EVERY_MS = 60_000;

/** Slow commits not said yet, and when the last line was. */
export interface SlowCommits {
  lastSaid: number | undefined;
  unsaid: number;
  worstUnsaid: number;
}

/** Whether a commit that held the loop `ms` at `now` is said now (with the ones not said before it), and the state after. */
export function decideSlowCommit(state: SlowCommits, ms: number, now: number): { say?: { ms: number; before: number; worstBefore: number }; next: SlowCommits } {
  if (ms < SLOW_COMMIT_MS) return { next: state };
  if (state.lastSaid !== undefined && now - state.lastSaid < SLOW_COMMIT_EVERY_MS) {
    return { next: { lastSaid: state.lastSaid, unsaid: state.unsaid + 1, worstUnsaid: Math.max(state.worstUnsaid, ms) } };
  }
  return { say: { ms, before: state.unsaid, worstBefore: state.worstUnsaid }, next: { lastSaid: now, unsaid: 0, worstUnsaid: 0 } };
}

/** Starts watching; returns the stop function. `everyMs` between free-space checks. */
export function watchStorage(o: { store: Store; dir: string; lowBytes: number; events: Events; logger: Logger; everyMs: number; now: () => number }): () => void {
  const record = (kind: EventKind, message: string) => o.events.emit(kind, message).catch((err: unknown) => o.logger.error({ err }, 'could not record a storage event (the disk may be full)'));
  const stopFaults = o.store.onStorageFault((fault: StorageFaultError | undefined) => {
    if (fault) {
      o.logger.error({ code: fault.full ? 'storage_full' : 'storage_error', dir: fault.dir, free_bytes: freeBytes(fault.dir), err: fault.cause }, fault.message);
      if (fault.full) void record(EVENT.storageFull, `${fault.message}; writes answer 507 until space is freed, reads keep working`);
    } else {
      o.logger.info({ dir: o.dir, free_bytes: freeBytes(o.dir) }, 'storage writable again');
      void record(EVENT.storageWritable, `storage writable again (${mib(freeBytes(o.dir) ?? 0)} free)`);
    }
  });
  let slow: SlowCommits = { lastSaid: undefined, unsaid: 0, worstUnsaid: 0 };
  const stopHolds = o.store.onCommitHeld(({ writesMs, diskMs, onLoop, writes }) => {
    const { say, next } = decideSlowCommit(slow, writesMs + diskMs, o.now());
    slow = next;
    if (!say) return;
    const before = say.before > 0 ? `; ${say.before} more over ${SLOW_COMMIT_MS} ms since the last such line, the worst ${Math.round(say.worstBefore)} ms` : '';
    const disk = onLoop ? 'on the event loop: every request waited' : "on lmdb-js's write thread: its requests waited";
    o.logger.warn(
      { code: 'slow_commit', dir: o.dir, commit_ms: Math.round(say.ms), writes_ms: Math.round(writesMs), disk_ms: Math.round(diskMs), on_loop: onLoop, writes, slow_before: say.before, worst_before_ms: Math.round(say.worstBefore) },
      `a commit (${writes} ${writes === 1 ? 'write' : 'writes'}) took ${Math.round(say.ms)} ms: its writes ${Math.round(writesMs)} ms on the event loop, then LMDB's commit and the disk's fsync under ${o.dir} ${Math.round(diskMs)} ms ${disk}${before}`,
    );
  });
  let state: DiskState = { low: false };
  const check = () => {
    const free = freeBytes(o.dir);
    const { warn, next } = decideLowSpace(state, free, o.lowBytes);
    state = next;
    if (warn) {
      const message = `disk space low under ${o.dir}: ${mib(free!)} free, below ${mib(o.lowBytes)}; free space before writes fail`;
      o.logger.warn({ dir: o.dir, free_bytes: free, disk_low_bytes: o.lowBytes }, message);
      void record(EVENT.diskSpaceLow, message);
    }
    // Space freed while nobody writes: a probe clears the fault (and says so).
    if (o.store.storageFault() && hasRoom(o.dir)) void o.store.probeWrite();
  };
  check();
  const timer = setInterval(check, o.everyMs).unref();
  return () => {
    clearInterval(timer);
    stopFaults();
    stopHolds();
  };
}

/** Free space and fault, for status reports. */
export function storageHealth(store: Store, dir: string): { free_bytes: number | null; full: boolean; fault: string | null } {
  const fault = store.storageFault();
  return { free_bytes: freeBytes(dir) ?? null, full: fault?.full ?? false, fault: fault?.message ?? null };
}
