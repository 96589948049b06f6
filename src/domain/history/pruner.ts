/**
 * The history pruner: ended requests with their jobs, events and support issues leave the store
 * once older than their retention, and, while the store takes more than its share of the disk,
 * the oldest of them first whatever their age. Open work never leaves, nor a request any of
 * whose jobs is still open (a cancelled request's carrier still on its way home).
 *
 * Each slice is archived before it is deleted: read in small runs with turns of the event loop
 * between them, written to one archive file, then deleted in small write transactions, each
 * checking again that what it deletes is what was archived. A crash between the two leaves the
 * records in the store, to be archived again by the next pass: a record may stand in two
 * archive files, never in none. Only when the store is over its budget and the archive cannot
 * be written does history leave unarchived, with an error event that says so: a full store
 * stops the site, a missing archive does not.
 */
import { statfsSync } from 'node:fs';
import type { Store } from '../../store/store.js';
import { eventRecords, type EventRecord, type Events } from '../events/events.js';
import { EVENT } from '../events/catalogue.js';
import { isFinalJob, isFinalRequest, jobs, requests, type JobRecord, type RequestRecord } from '../requests/records.js';
import type { SupportOutbox } from '../support/outbox.js';
import type { ArchiveEntry, ArchiveWriter, HistoryArchive } from './archive.js';
import { pruneKpiHours } from '../kpi/kpi.js';
import { addRequest } from './export.js';
import { PRUNED_MARK } from './marks.js';
import { DAY_MS, nextDeleteSize, nextSlice, overBudget, prunerShare, restAfter, type HistoryKind, type SliceChoice } from './retention.js';

/** Requests one archive file takes at most (with their jobs, a few MB of NDJSON before gzip). */
export const FILE_REQUESTS = 2_000;
/** Events one archive file takes at most. */
export const FILE_EVENTS = 10_000;
/** A slice pruned for size takes a tenth of a file: the store is measured again after each, so it stops near the low water. */
const SIZE_SLICE_SHARE = 10;
/**
 * Work on the event loop one delete transaction aims at: a few ms of the store's 20 ms batch
 * budget, so the API's own writes of that turn are not held up behind it. Its size in records
 * follows what the last one cost (`nextDeleteSize`), within these bounds.
 */
export const DELETE_BUDGET_MS = 3;
export const DELETE_REQUESTS = { first: 8, least: 1, most: 100 } as const;
export const DELETE_EVENTS = { first: 100, least: 10, most: 1000 } as const;
/** Reading for an archive file yields to the event loop once it has held it this long. */
const READ_BUDGET_MS = 3;
/** Events read from the store at a time while a file is written (no cursor stays open across a turn). */
const READ_RUN = 1000;

/** How long each kind of history is kept, and the store's share of its disk. */
export interface RetentionSettings {
  requestDays: number;
  eventDays: number;
  storeSharePercent: number;
}

/** What passes have removed since the daemon started. */
export interface PrunedTotals {
  requests: number;
  jobs: number;
  events: number;
  support_issues: number;
  archive_files: number;
}

export interface PrunerDeps {
  store: Store;
  events: Events;
  archive: HistoryArchive;
  outbox?: SupportOutbox;
  /** The store's directory: its filesystem's size bounds the store's share. */
  storeDir: string;
  /** Size of that filesystem (statfs by default; undefined when it cannot be read). */
  diskBytes?: () => number | undefined;
  /** A fixed share of the event loop for the pruner instead of one that follows the loop's load (`prunerShare`); 1: no rest, for tests. */
  duty?: number;
  now: () => number;
  settings: () => RetentionSettings;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Size and space left of the filesystem under `dir`, or undefined when it cannot be read. */
export function diskOf(dir: string): { total: number; free: number } | undefined {
  try {
    const s = statfsSync(dir);
    return { total: s.blocks * s.bsize, free: s.bavail * s.bsize };
  } catch {
    return undefined;
  }
}

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `fn`'s value and the ms it held the thread. */
function timed<T>(fn: () => T): { value: T; ms: number } {
  const began = performance.now();
  const value = fn();
  return { value, ms: performance.now() - began };
}

export class HistoryPruner {
  private readonly totals: PrunedTotals = { requests: 0, jobs: 0, events: 0, support_issues: 0, archive_files: 0 };
  private running: Promise<PrunedTotals> | undefined;
  /** A pass was asked for while one ran. */
  private again = false;
  private lastPassAt: number | null = null;
  private lastError: string | null = null;
  /** The share of the loop the thread's other work kept busy during the last rest (busy until measured). */
  private othersBusy = 1;
  /** A pass ended over the budget: size pruning goes on down to the low water. */
  private sizePruning = false;

  constructor(private readonly deps: PrunerDeps) {}

  /** Totals since start, when the last pass ended, and its error if it failed. */
  state(): { totals: Readonly<PrunedTotals>; last_pass_at: number | null; last_error: string | null } {
    return { totals: this.totals, last_pass_at: this.lastPassAt, last_error: this.lastError };
  }

  /** The store's budget in bytes: its share of the filesystem it is on (Infinity when that cannot be read). */
  budgetBytes(): number {
    const disk = (this.deps.diskBytes ?? (() => diskOf(this.deps.storeDir)?.total))();
    return disk === undefined ? Infinity : (disk * this.deps.settings().storeSharePercent) / 100;
  }

  /** Bytes the store's records take now. */
  usedBytes(): number {
    const use = this.deps.store.pageUse();
    return use.usedPages * use.pageSize;
  }

  /**
   * Runs one pass; resolves with what it removed. Asked while one runs, it joins that one and
   * books another after it, which reads the settings anew (a retention shortened meanwhile).
   */
  pass(): Promise<PrunedTotals> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.runPass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.pass().catch(() => undefined);
      }
    });
    return this.running;
  }

  /** Runs a pass now and every `everyMs` (the timer does not keep the process alive); returns the stop function. */
  keep(everyMs: number): () => void {
    const run = () => void this.pass().catch(() => undefined);
    run();
    const timer = setInterval(run, everyMs).unref();
    return () => clearInterval(timer);
  }

  /** Waits for the running pass, and one booked after it, to end (at shutdown, once the timer is stopped). */
  async settle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  private async runPass(): Promise<PrunedTotals> {
    const removed: PrunedTotals = { requests: 0, jobs: 0, events: 0, support_issues: 0, archive_files: 0 };
    const settings = this.deps.settings();
    // A kind whose slice removed nothing (every old request still has an open job) is not asked again this pass.
    const exhausted = new Set<HistoryKind>();
    try {
      for (;;) {
        const budget = this.budgetBytes();
        const used = this.usedBytes();
        this.sizePruning = overBudget(used, budget, this.sizePruning);
        const slice = nextSlice({
          now: this.deps.now(), requestDays: settings.requestDays, eventDays: settings.eventDays,
          oldestEnded: exhausted.has('requests') ? undefined : this.oldestEnded(),
          oldestEvent: exhausted.has('events') ? undefined : this.oldestEvent(),
        }, this.sizePruning);
        if (!slice) break;
        const n = slice.kind === 'requests' ? await this.pruneRequests(slice, removed) : await this.pruneEvents(slice, removed);
        if (n === 0) exhausted.add(slice.kind);
      }
      await this.pruneSupport(this.deps.now() - settings.requestDays * DAY_MS, removed);
      // KPIs are kept as long as the history they were counted from.
      await pruneKpiHours(this.deps.store, this.deps.now() - Math.max(settings.requestDays, settings.eventDays) * DAY_MS);
      this.lastError = null;
    } catch (err) {
      this.lastError = (err as Error).message;
      this.deps.log.error({ err, code: 'history_prune_failed' }, `history pruning stopped: ${(err as Error).message}; it is tried again at the next pass`);
      throw err;
    } finally {
      this.lastPassAt = this.deps.now();
      const total = removed.requests + removed.events + removed.support_issues;
      if (total > 0) {
        const message = `history pruned: ${removed.requests} ended requests with ${removed.jobs} jobs, ${removed.events} events, ${removed.support_issues} support issues, into ${removed.archive_files} archive files under ${this.deps.archive.dir}`;
        this.deps.log.info({ code: 'history_pruned', ...removed }, message);
        await this.deps.events.emit(EVENT.historyPruned, message).catch(() => undefined);
      }
    }
    return removed;
  }

  /**
   * Gives the event loop back after holding it `heldMs`: long enough that the pruner's holds are
   * its share of the time. The share follows how busy the rest of the thread's work kept the loop
   * during the last rest (its event-loop utilisation then), so the pruner takes most of an idle
   * loop and little of a busy one. Without the rests each delete followed the last commit at once,
   * and the API's p99 rose up to twofold while pruning (docs/benchmarks-history.md).
   */
  private async rest(heldMs: number): Promise<void> {
    const fixed = this.deps.duty;
    if (fixed !== undefined && fixed >= 1) return yieldTurn();
    const share = fixed ?? prunerShare(this.othersBusy);
    const from = performance.eventLoopUtilization();
    await new Promise<void>((resolve) => setTimeout(resolve, restAfter(heldMs, share)));
    this.othersBusy = performance.eventLoopUtilization(from).utilization;
  }

  /** Counts what a slice removed, in the pass's figures and at once in the totals (a pass over a backlog runs for minutes). */
  private count(removed: PrunedTotals, what: keyof PrunedTotals, n: number): void {
    removed[what] += n;
    this.totals[what] += n;
  }

  /** When the oldest ended request ended, if any is held. */
  private oldestEnded(): number | undefined {
    for (const run of this.deps.store.collection(requests).runsBy('ended', false)) return run[0]?.updated_at;
    return undefined;
  }

  /** When the oldest event was made, if any is held. */
  private oldestEvent(): number | undefined {
    for (const e of this.deps.store.collection(eventRecords).range(0)) return e.created_at;
    return undefined;
  }

  /** Archives then deletes up to FILE_REQUESTS ended requests (with their jobs) that ended before `slice.before` (a tenth of that for size); returns how many left. */
  private async pruneRequests(slice: SliceChoice, removed: PrunedTotals): Promise<number> {
    const { store } = this.deps;
    const most = slice.reason === 'size' ? FILE_REQUESTS / SIZE_SLICE_SHARE : FILE_REQUESTS;
    const taken = await this.archive('requests', slice, removed, async (file, span) => {
      const out: { id: string; updated_at: number }[] = [];
      let held = performance.now();
      for (const key of store.collection(requests).keysWithin('ended', { high: slice.before - 1 })) {
        if (out.length === most) break;
        if (performance.now() - held > READ_BUDGET_MS) {
          await this.rest(performance.now() - held);
          held = performance.now();
        }
        const r = store.collection(requests).get(key);
        if (!r || !isFinalRequest(r.status)) continue;
        const its = [...store.collection(jobs).findBy('request_id', r.id)];
        if (its.some((j) => !isFinalJob(j.status))) continue;
        out.push({ id: r.id, updated_at: r.updated_at });
        span(r.updated_at);
        if (file) await addRequest(file, r, its);
      }
      return out;
    });
    await this.deleteInParts(taken, DELETE_REQUESTS, (part) => this.deleteRequests(part), (n) => {
      this.count(removed, 'requests', n.requests);
      this.count(removed, 'jobs', n.jobs);
    });
    return taken.length;
  }

  /** Deletes requests that are still as archived (ended, unchanged) with their jobs, raising the marks the 404s read. Inside a write. */
  private deleteRequests(part: readonly { id: string; updated_at: number }[]): { requests: number; jobs: number } {
    const { store } = this.deps;
    let n = 0;
    let m = 0;
    let requestMark = 0;
    let jobMark = 0;
    for (const { id, updated_at } of part) {
      const r: RequestRecord | undefined = store.collection(requests).get(id);
      if (!r || r.updated_at !== updated_at || !isFinalRequest(r.status)) continue;
      const its: JobRecord[] = [...store.collection(jobs).findBy('request_id', id)];
      if (its.some((j) => !isFinalJob(j.status))) continue;
      for (const j of its) {
        store.collection(jobs).remove(j.id);
        jobMark = Math.max(jobMark, j.created_at);
        m++;
      }
      store.collection(requests).remove(id);
      requestMark = Math.max(requestMark, r.created_at);
      n++;
    }
    if (requestMark > 0) store.raiseSequence(PRUNED_MARK.requests, requestMark);
    if (jobMark > 0) store.raiseSequence(PRUNED_MARK.jobs, jobMark);
    return { requests: n, jobs: m };
  }

  /** Archives then deletes up to FILE_EVENTS events made before `slice.before` (a tenth of that for size); returns how many left. */
  private async pruneEvents(slice: SliceChoice, removed: PrunedTotals): Promise<number> {
    const { store } = this.deps;
    const most = slice.reason === 'size' ? FILE_EVENTS / SIZE_SLICE_SHARE : FILE_EVENTS;
    const ids = await this.archive('events', slice, removed, async (file, span) => {
      const out: number[] = [];
      // Ids grow with time: the first event made after the cutoff ends the slice. Read a run at
      // a time, with no cursor open while the file is written.
      for (let after = 0, more = true; more && out.length < most;) {
        const began = performance.now();
        const run: EventRecord[] = [];
        for (const e of store.collection(eventRecords).range(after + 1)) {
          if (e.created_at >= slice.before || out.length + run.length === most) {
            more = false;
            break;
          }
          run.push(e);
          if (run.length === READ_RUN) break;
        }
        if (run.length < READ_RUN) more = false;
        for (const e of run) {
          out.push(e.id);
          span(e.created_at);
          await file?.add(e);
        }
        after = run.at(-1)?.id ?? after;
        await this.rest(performance.now() - began);
      }
      return out;
    });
    await this.deleteInParts(ids, DELETE_EVENTS, (part) => {
      let gone = 0;
      for (const id of part) if (store.collection(eventRecords).remove(id)) gone++;
      return gone;
    }, (n) => this.count(removed, 'events', n));
    return ids.length;
  }

  /**
   * Reads a slice into a new archive file of `kind` (`read` adds the records, calls `span` with
   * each one's instant and returns what it took), and makes the file part of the archive, or
   * gives it up when nothing was taken or reading failed. `read` gets no file when the store is
   * over its budget and the archive cannot be written.
   */
  private async archive<T>(kind: HistoryKind, slice: SliceChoice, removed: PrunedTotals, read: (file: ArchiveWriter | undefined, span: (at: number) => void) => Promise<T[]>): Promise<T[]> {
    const file = await this.begin(kind, slice);
    let from = Infinity;
    let to = -Infinity;
    try {
      const taken = await read(file, (at) => {
        from = Math.min(from, at);
        to = Math.max(to, at);
      });
      if (taken.length === 0) await file?.abandon();
      else if (file) await this.finish(file, from, to, removed);
      return taken;
    } catch (err) {
      await file?.abandon();
      throw err;
    }
  }

  /** Deletes `items` in write transactions sized by time within `bounds`, resting between them; `counted` hears what each removed once it is durable. */
  private async deleteInParts<T, R>(items: readonly T[], bounds: { first: number; least: number; most: number }, remove: (part: readonly T[]) => R, counted: (r: R) => void): Promise<void> {
    let size = bounds.first;
    for (let i = 0; i < items.length;) {
      const part = items.slice(i, i + size);
      i += part.length;
      const n = await this.deps.store.write(() => timed(() => remove(part)));
      counted(n.value);
      size = nextDeleteSize(part.length, n.ms, DELETE_BUDGET_MS, bounds.least, bounds.most);
      await this.rest(n.ms);
    }
  }

  /** Archives then removes the support issues made before `cutoff` (their keys carry their day, their record the instant). */
  private async pruneSupport(cutoff: number, removed: PrunedTotals): Promise<void> {
    const outbox = this.deps.outbox;
    if (!outbox) return;
    const day = new Date(cutoff).toISOString().slice(0, 10).replace(/-/g, '');
    const old: { key: string; at: number; record: unknown }[] = [];
    for (const key of await outbox.keys()) {
      // Keys sort by their day: past the cutoff's day none can be older.
      if (key.slice(4, 12) > day) break;
      const { issue, status } = await outbox.get(key);
      const at = Date.parse(issue.created_at);
      if (!(at < cutoff)) continue;
      const files = [];
      for (const f of issue.files) files.push({ ...f, data_base64: (await outbox.readFile(key, f.name)).data.toString('base64') });
      old.push({ key, at, record: { kind: 'support_issue', ...issue, forwarding: status, files } });
    }
    if (old.length === 0) return;
    const file = await this.deps.archive.begin('support');
    try {
      for (const o of old) await file.add(o.record);
      await this.finish(file, Math.min(...old.map((o) => o.at)), Math.max(...old.map((o) => o.at)), removed);
    } catch (err) {
      await file.abandon();
      throw err;
    }
    for (const o of old) {
      await outbox.remove(o.key);
      this.count(removed, 'support_issues', 1);
    }
  }

  /**
   * A new archive file for a slice. When it cannot be made, an age slice waits for a later pass
   * (the error stops this one); a size slice goes on without it, said as an error event.
   */
  private async begin(kind: HistoryKind, slice: SliceChoice): Promise<ArchiveWriter | undefined> {
    try {
      return await this.deps.archive.begin(kind);
    } catch (err) {
      if (slice.reason === 'age') throw err;
      const message = `the history archive under ${this.deps.archive.dir} cannot be written (${(err as Error).message}) while the store is over its share of the disk: the oldest ${kind} leave unarchived`;
      this.deps.log.error({ err, code: 'history_unarchived' }, message);
      await this.deps.events.emit(EVENT.historyUnarchived, message).catch(() => undefined);
      return undefined;
    }
  }

  /** Makes an archive file part of the archive, saying which files its quota dropped. */
  private async finish(file: ArchiveWriter, from: number, to: number, removed: PrunedTotals): Promise<void> {
    const { dropped } = await file.finish(from, to);
    this.count(removed, 'archive_files', 1);
    if (dropped.length > 0) await this.sayDropped(dropped);
  }

  private async sayDropped(dropped: readonly ArchiveEntry[]): Promise<void> {
    const message = `history archive over its quota: removed the oldest ${dropped.length} file(s), ${dropped[0]!.from} to ${dropped.at(-1)!.to} (${dropped.map((d) => d.file).join(', ')})`;
    this.deps.log.warn({ code: 'history_archive_quota', files: dropped.map((d) => d.file) }, message);
    await this.deps.events.emit(EVENT.historyArchiveDropped, message).catch(() => undefined);
  }
}
