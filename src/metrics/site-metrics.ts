/**
 * The controller's figures for a monitoring system, in the Prometheus text format
 * (docs/monitoring.md): one prom-client registry per app (tests start several apps in one
 * process), the library's process, GC and event-loop families, and the `warehouse_*` families.
 * Everything the brain's thread knows comes from the last report it posted, and everything
 * else is read from counters kept as things happen: a scrape waits on nothing and holds up no
 * dispatch pass.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { SECONDS_BOUNDS, WRITES_BOUNDS } from '../domain/figures/buckets.js';
import { CommitFigures } from '../domain/figures/commits.js';
import { STORAGE_STATUSES, type LiveBot, type StorageStatus } from '../domain/system/control.js';
import { botRecords } from '../domain/bots/records.js';
import type { BrainFigures } from '../brain/messages.js';
import type { LineFigures } from '../lines/site-lines.js';
import { WAITING_FOR } from '../domain/requests/records.js';
import type { PairStatus } from '../replication/pair.js';
import type { Store } from '../store/store.js';
import { freeBytes } from '../store/storage-fault.js';
import { histogramSamples, NO_LABELS, ReadFamily, type Sample } from './family.js';
import { HttpFigures } from './http.js';

/** The `thread` labels of the store's families, kept between scrapes (family.ts, Sample). */
const MAIN_THREAD = Object.freeze({ thread: 'main' });
const BRAIN_THREAD = Object.freeze({ thread: 'brain' });

/** How long a count of the store's free pages is shown before it is counted again. */
const FREE_PAGES_EVERY_MS = 10_000;

/** What the figures are read from. */
export interface MetricsSources {
  store: Store;
  /** The store's directory (its file's size, the disk's free space). */
  storeDir: string;
  /** A commit that took this long or longer is slow (the storage watch logs it). */
  slowCommitMs: number;
  /** The brain's latest report; undefined before its first. */
  brain(): BrainFigures | undefined;
  storageStatus(): StorageStatus;
  /** The radio lines' states and counters (none while the lines are off). */
  lines(): readonly LineFigures[];
  /** The bots the radio lines know, as last heard. */
  bots(): readonly LiveBot[];
  /** On a box of a replicated pair: its role, peer and lag (none on a single box: no pair families). */
  pair?(): PairStatus;
}

/** One balcony's figures, as the KPI service gives them. */
export interface BalconyTotal {
  balcony_id: number;
  carriers_presented_total: number;
  busy_share_this_hour: number;
}

export class SiteMetrics {
  /** The content type of the exposition (text format 0.0.4). */
  readonly contentType: string;
  /** Counts requests as the pipeline answers them (the server's `meter`). */
  readonly http = new HttpFigures();
  private readonly registry = new Registry();
  private readonly commits: CommitFigures;
  private readonly stops: (() => void)[] = [];
  /** Sources several families read, read once per scrape (each costs tens of microseconds or more). */
  private scrape: { bots?: readonly LiveBot[]; lines?: readonly LineFigures[] } = {};
  /** The level of each bot in service (on a level in the bot table), read again after a commit that changed the table. */
  private botsInService: ReadonlySet<number> | undefined;
  /** Each bot's labels, made once (a scrape of 400 bots would make 1,600 otherwise). */
  private readonly botLabels = new Map<number, { bot: string; level: string }>();
  /** The store's free pages and when they were counted: counting reads every database's statistics (about 0.5 ms), and the figure moves slowly. */
  private freePages = { at: -Infinity, pages: 0 };
  private readonly pageSize: number;
  private balconySource: (() => readonly BalconyTotal[]) | undefined;

  constructor(private readonly s: MetricsSources) {
    this.contentType = this.registry.contentType;
    this.pageSize = s.store.stats().pageSize;
    collectDefaultMetrics({ register: this.registry });
    this.commits = new CommitFigures(s.slowCommitMs);
    this.stops.push(s.store.onCommitHeld(this.commits.heard));
    this.stops.push(s.store.onCommit((notice) => {
      if (notice['bots']) this.botsInService = undefined;
    }));
    for (const family of [...this.http.families(), ...this.storeFamilies(), ...this.brainFamilies(), ...this.lineFamilies(), ...this.botFamilies(), ...this.balconyFamilies(), ...(s.pair ? this.pairFamilies(s.pair) : [])]) {
      family.register(this.registry);
    }
  }

  /** Reads the balconies' figures from `source` (the KPI service's balconyTotals); without one their families have no series. */
  balconies(source: () => readonly BalconyTotal[]): void {
    this.balconySource = source;
  }

  /** The text exposition of every family, as of now. */
  async exposition(): Promise<string> {
    this.scrape = {};
    try {
      return await this.registry.metrics();
    } finally {
      this.scrape = {};
    }
  }

  private bots(): readonly LiveBot[] {
    return (this.scrape.bots ??= this.s.bots());
  }

  private lines(): readonly LineFigures[] {
    return (this.scrape.lines ??= this.s.lines());
  }

  /** Stops following the store. */
  close(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.registry.clear();
  }

  private storeFamilies(): ReadFamily[] {
    const thread = ['thread'];
    const both = (mine: (out: Sample[], labels: { thread: string }) => void, theirs: (out: Sample[], b: BrainFigures, labels: { thread: string }) => void) => (out: Sample[]) => {
      mine(out, MAIN_THREAD);
      const b = this.s.brain();
      if (b) theirs(out, b, BRAIN_THREAD);
    };
    return [
      new ReadFamily('warehouse_store_commit_duration_seconds', 'Time from a commit\'s first write until it was durable, by the thread that committed (main: the API; brain: dispatch)', 'histogram', thread, both(
        (out, labels) => histogramSamples(out, 'warehouse_store_commit_duration_seconds', labels, SECONDS_BOUNDS, this.commits.seconds),
        (out, b, labels) => histogramSamples(out, 'warehouse_store_commit_duration_seconds', labels, SECONDS_BOUNDS, b.commit_seconds),
      )),
      new ReadFamily('warehouse_store_commit_writes', 'Writes each commit carried (the batch size), by the thread that committed', 'histogram', thread, both(
        (out, labels) => histogramSamples(out, 'warehouse_store_commit_writes', labels, WRITES_BOUNDS, this.commits.writes),
        (out, b, labels) => histogramSamples(out, 'warehouse_store_commit_writes', labels, WRITES_BOUNDS, b.commit_writes),
      )),
      new ReadFamily('warehouse_store_slow_commits_total', `Commits that took ${this.s.slowCommitMs} ms or longer, by the thread that committed`, 'counter', thread, both(
        (out, labels) => out.push({ labels, value: this.commits.slow }),
        (out, b, labels) => out.push({ labels, value: b.slow_commits }),
      )),
      new ReadFamily('warehouse_store_file_size_bytes', 'Size of the store\'s file on disk (it never shrinks; free pages inside it are used first)', 'gauge', [], (out) => {
        out.push({ labels: {}, value: this.fileBytes() });
      }),
      new ReadFamily('warehouse_store_free_pages', 'Pages of the store\'s file free for later writes', 'gauge', [], (out) => {
        const now = performance.now();
        if (now - this.freePages.at >= FREE_PAGES_EVERY_MS) this.freePages = { at: now, pages: this.s.store.pageUse().freePages };
        out.push({ labels: {}, value: this.freePages.pages });
      }),
      new ReadFamily('warehouse_store_page_size_bytes', 'Size of one page of the store\'s file (free pages times it: the bytes the file holds free)', 'gauge', [], (out) => {
        out.push({ labels: {}, value: this.pageSize });
      }),
      new ReadFamily('warehouse_disk_free_bytes', 'Free bytes on the file system of the store, for an unprivileged process', 'gauge', [], (out) => {
        const free = freeBytes(this.s.storeDir);
        if (free !== undefined) out.push({ labels: {}, value: free });
      }),
      new ReadFamily('warehouse_storage_status', 'The storage system\'s status: 1 for the current one, 0 for the others', 'gauge', ['status'], (out) => {
        const now = this.s.storageStatus();
        for (const status of STORAGE_STATUSES) out.push({ labels: { status }, value: status === now ? 1 : 0 });
      }),
    ];
  }

  /** A box of a replicated pair's families (a single box has none). */
  private pairFamilies(status: () => PairStatus): ReadFamily[] {
    const pair = (fn: (out: Sample[], p: PairStatus) => void) => (out: Sample[]) => fn(out, status());
    return [
      new ReadFamily('warehouse_pair_active', 'On a box of a replicated pair: 1 while this box is the active one', 'gauge', [], pair((out, p) => out.push({ labels: {}, value: p.role === 'active' ? 1 : 0 }))),
      new ReadFamily('warehouse_pair_protected', 'On the active box of a pair: 1 while the standby follows and every etcd member (the witness too) answers; 0 when one more failure would stop the site', 'gauge', [], pair((out, p) => out.push({ labels: {}, value: p.protected ? 1 : 0 }))),
      new ReadFamily('warehouse_pair_lag_entries', 'Log entries the standby is behind the active box', 'gauge', [], pair((out, p) => {
        if (p.lag_entries !== null) out.push({ labels: {}, value: p.lag_entries });
      })),
      new ReadFamily('warehouse_pair_log_entry', 'The last replicated log entry this box holds', 'gauge', [], pair((out, p) => out.push({ labels: {}, value: p.seq }))),
    ];
  }

  private brainFamilies(): ReadFamily[] {
    const brain = (fn: (out: Sample[], b: BrainFigures) => void) => (out: Sample[]) => {
      const b = this.s.brain();
      if (b) fn(out, b);
    };
    const planner = (fn: (p: BrainFigures['planners'][number]) => number) => brain((out, b) => {
      for (const p of b.planners) out.push({ labels: { level: p.level_id }, value: fn(p) });
    });
    return [
      new ReadFamily('warehouse_brain_pass_duration_seconds', 'Time of each dispatch pass of the brain', 'histogram', [], brain((out, b) => histogramSamples(out, 'warehouse_brain_pass_duration_seconds', {}, SECONDS_BOUNDS, b.pass_seconds))),
      new ReadFamily('warehouse_jobs_open', 'Open jobs by type and status', 'gauge', ['type', 'status'], brain((out, b) => {
        for (const j of b.jobs) out.push({ labels: { type: j.type, status: j.status }, value: j.count });
      })),
      // Every reason, 0 included: an alert on one needs its series there before the first wait.
      new ReadFamily('warehouse_jobs_waiting', 'Open jobs that wait, by what they wait for (a job\'s details.waiting_for)', 'gauge', ['reason'], brain((out, b) => {
        for (const reason of WAITING_FOR) out.push({ labels: { reason }, value: b.waiting.find((w) => w.reason === reason)?.count ?? 0 });
      })),
      new ReadFamily('warehouse_planner_steps_total', 'Planning steps of each level\'s planner', 'counter', ['level'], planner((p) => p.steps)),
      new ReadFamily('warehouse_planner_step_seconds', 'Planning time of one step over the latest 4096 steps (quantile 0.5, 0.99) and the longest since the planner started (quantile 1)', 'gauge', ['level', 'quantile'], brain((out, b) => {
        for (const p of b.planners) {
          out.push({ labels: { level: p.level_id, quantile: '0.5' }, value: p.step_ms.p50 / 1000 });
          out.push({ labels: { level: p.level_id, quantile: '0.99' }, value: p.step_ms.p99 / 1000 });
          out.push({ labels: { level: p.level_id, quantile: '1' }, value: p.step_ms.max / 1000 });
        }
      })),
      new ReadFamily('warehouse_planner_stalls_total', 'Bots that stopped getting closer to their goal (deadlock or livelock detected), per level', 'counter', ['level'], planner((p) => p.stalls)),
      new ReadFamily('warehouse_planner_escapes_total', 'Stalls priority did not break, solved by a joint plan of the bots around them, per level', 'counter', ['level'], planner((p) => p.escapes)),
      new ReadFamily('warehouse_planner_over_budget_steps_total', 'Planning steps that took longer than their budget, per level', 'counter', ['level'], planner((p) => p.over_budget)),
    ];
  }

  private lineFamilies(): ReadFamily[] {
    const line = (fn: (l: LineFigures) => number) => (out: Sample[]) => {
      for (const l of this.lines()) out.push({ labels: { level: l.level_id }, value: fn(l) });
    };
    const level = ['level'];
    return [
      new ReadFamily('warehouse_line_up', 'Whether a level\'s radio line is up (its device open and a node answering)', 'gauge', level, line((l) => (l.up ? 1 : 0))),
      new ReadFamily('warehouse_line_frames_in_total', 'Good frames received on a level\'s radio line', 'counter', level, line((l) => l.frames_in)),
      new ReadFamily('warehouse_line_frames_out_total', 'Frames sent on a level\'s radio line', 'counter', level, line((l) => l.frames_out)),
      new ReadFamily('warehouse_line_crc_errors_total', 'Frames dropped for a bad CRC on a level\'s radio line', 'counter', level, line((l) => l.crc_errors)),
      new ReadFamily('warehouse_line_protocol_errors_total', 'Frames dropped for another fault of the protocol (framing, length, version, type, payload, address, unexpected)', 'counter', level, line((l) => l.protocol_errors)),
      new ReadFamily('warehouse_line_reconnects_total', 'Times a level\'s serial device was opened again after a failure', 'counter', level, line((l) => l.reconnects)),
    ];
  }

  private botFamilies(): ReadFamily[] {
    const bot = (fn: (b: LiveBot) => number) => (out: Sample[]) => {
      for (const b of this.bots()) out.push({ labels: NO_LABELS, sharedLabels: this.labelsOf(b), value: fn(b) });
    };
    const labels = ['bot', 'level'];
    return [
      new ReadFamily('warehouse_bot_online', 'Whether a bot answers on its radio line', 'gauge', labels, bot((b) => (b.online ? 1 : 0))),
      new ReadFamily('warehouse_bot_battery_ratio', 'A bot\'s battery level, 0 to 1', 'gauge', labels, bot((b) => b.battery_level / 100)),
      new ReadFamily('warehouse_bot_charging', 'Whether a bot is charging', 'gauge', labels, bot((b) => (b.is_charging ? 1 : 0))),
      new ReadFamily('warehouse_bot_in_service', 'Whether a bot is on its level in the database (dispatch may give it work)', 'gauge', labels, (out) => {
        const inService = (this.botsInService ??= this.readInService());
        for (const b of this.bots()) out.push({ labels: NO_LABELS, sharedLabels: this.labelsOf(b), value: inService.has(b.id) ? 1 : 0 });
      }),
    ];
  }

  private balconyFamilies(): ReadFamily[] {
    const balcony = (fn: (b: BalconyTotal) => number) => (out: Sample[]) => {
      for (const b of this.balconySource?.() ?? []) out.push({ labels: { balcony: b.balcony_id }, value: fn(b) });
    };
    return [
      new ReadFamily('warehouse_balcony_carriers_presented_total', 'Carriers presented at a balcony for a person to work on, since the controller began keeping its KPIs', 'counter', ['balcony'], balcony((b) => b.carriers_presented_total)),
      new ReadFamily('warehouse_balcony_busy_ratio', 'Share of the current hour so far a balcony was busy (work waiting there for a person), 0 to 1', 'gauge', ['balcony'], balcony((b) => b.busy_share_this_hour)),
    ];
  }

  /** The bots on a level in the bot table (GET /bots' in_service). */
  private readInService(): ReadonlySet<number> {
    const ids = new Set<number>();
    for (const b of this.s.store.collection(botRecords).scan()) if (b.level_id !== null) ids.add(b.id);
    return ids;
  }

  private labelsOf(b: LiveBot): { bot: string; level: string } {
    let labels = this.botLabels.get(b.id);
    if (!labels || labels.level !== String(b.level_id)) this.botLabels.set(b.id, (labels = { bot: String(b.id), level: String(b.level_id) }));
    return labels;
  }

  private fileBytes(): number {
    try {
      return statSync(path.join(this.s.storeDir, 'warehouse.mdb')).size;
    } catch {
      return 0;
    }
  }
}
