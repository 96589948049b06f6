/**
 * How full the store is and how fast it fills: a sample of its size every few minutes, kept a
 * week in the store itself (so a restart keeps the trend), the growth over the last day and the
 * days left at that rate, and the events at 80 and 90 % of its share of the disk. Read by
 * `GET /api/v2/system/storage`, the status file and `warehouse-controller status`.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { CollectionDef } from '../../store/collection.js';
import type { Store } from '../../store/store.js';
import { EVENT } from '../events/catalogue.js';
import type { Events } from '../events/events.js';
import { requests } from '../requests/records.js';
import type { HistoryArchive } from './archive.js';
import { diskOf, type HistoryPruner, type RetentionSettings } from './pruner.js';
import { DAY_MS, decideBudgetAlarm, forecast, type BudgetAlarm, type UsageSample } from './retention.js';

export interface UsageRecord {
  at: number;
  used_bytes: number;
  file_bytes: number;
}

export const usageRecords: CollectionDef<UsageRecord> = { name: 'store_usage', key: (r) => r.at };

export const USAGE_COLLECTIONS = [usageRecords] as const;

/** Samples older than this leave at the next sample: the forecast reads the last day. */
const KEEP_SAMPLES_MS = 7 * DAY_MS;

/** What the storage route answers; instants are epoch ms (the route renders them). */
export interface StorageReport {
  file_bytes: number;
  used_bytes: number;
  free_bytes: number;
  page_size: number;
  disk_total_bytes: number | null;
  disk_free_bytes: number | null;
  budget_bytes: number | null;
  budget_used_percent: number | null;
  growth_bytes_per_day: number | null;
  days_until_budget: number | null;
  days_until_full: number | null;
  archive: { dir: string; files: number; bytes: number; quota_bytes: number };
  history: {
    retention_days: number;
    event_retention_days: number;
    oldest_ended_request_at: number | null;
    last_pass_at: number | null;
    last_error: string | null;
    pruned_requests: number;
    pruned_jobs: number;
    pruned_events: number;
    pruned_support_issues: number;
    archive_files_written: number;
  };
}

export interface StoreUsageDeps {
  store: Store;
  events: Events;
  pruner: HistoryPruner;
  archive: HistoryArchive;
  archiveQuotaBytes: number;
  /** The store's directory (its data file and its filesystem). */
  storeDir: string;
  settings: () => RetentionSettings;
  now: () => number;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class StoreUsage {
  private alarm: BudgetAlarm = 0;

  constructor(private readonly deps: StoreUsageDeps) {}

  /** Takes a sample, drops those past a week, and raises the budget's event when it crossed a line. */
  async sample(): Promise<void> {
    const { store } = this.deps;
    const now = this.deps.now();
    const used = this.deps.pruner.usedBytes();
    const c = store.collection(usageRecords);
    await store.write(() => {
      c.put({ at: now, used_bytes: used, file_bytes: this.fileBytes() });
      for (const r of c.range()) {
        if (r.at >= now - KEEP_SAMPLES_MS) break;
        c.remove(r.at);
      }
    });
    const budget = this.deps.pruner.budgetBytes();
    if (!Number.isFinite(budget)) return;
    const share = (used / budget) * 100;
    const { raise, next } = decideBudgetAlarm(this.alarm, share);
    this.alarm = next;
    if (raise) {
      const message = `the store takes ${share.toFixed(1)} % of its share of the disk (${mib(used)} of ${mib(budget)}, history.maxStoreSharePercent ${this.deps.settings().storeSharePercent} %): at 100 % the oldest history is pruned whatever its age; see docs/operations.md, "Keeping history"`;
      this.deps.log[raise === 90 ? 'error' : 'warn']({ code: 'store_budget', share_percent: Math.round(share), used_bytes: used, budget_bytes: budget }, message);
      await this.deps.events.emit(raise === 90 ? EVENT.storeBudgetCritical : EVENT.storeBudgetHigh, message).catch(() => undefined);
    }
  }

  /** Samples now and every `everyMs` (unref'd); returns the stop function. */
  keep(everyMs: number, onError: (err: unknown) => void): () => void {
    const run = () => void this.sample().catch(onError);
    run();
    const timer = setInterval(run, everyMs).unref();
    return () => clearInterval(timer);
  }

  /** The store's size, free pages, growth, forecast, archive and pruning, as of now. */
  report(): StorageReport {
    const { store, pruner, archive } = this.deps;
    const now = this.deps.now();
    const use = store.pageUse();
    const used = use.usedPages * use.pageSize;
    const fileBytes = this.fileBytes();
    const free = Math.max(0, fileBytes - used);
    const disk = diskOf(this.deps.storeDir);
    const budget = pruner.budgetBytes();
    const samples: UsageSample[] = [];
    for (const r of store.collection(usageRecords).range(now - DAY_MS - 1)) samples.push({ at: r.at, usedBytes: r.used_bytes });
    samples.push({ at: now, usedBytes: used });
    const toBudget = Number.isFinite(budget) ? forecast(samples, now, budget - used) : undefined;
    const toFull = forecast(samples, now, (disk?.free ?? 0) + free);
    const settings = this.deps.settings();
    const { totals, last_pass_at, last_error } = pruner.state();
    let oldestEnded: number | null = null;
    for (const run of store.collection(requests).runsBy('ended', false)) {
      oldestEnded = run[0]?.updated_at ?? null;
      break;
    }
    return {
      file_bytes: fileBytes, used_bytes: used, free_bytes: free, page_size: use.pageSize,
      disk_total_bytes: disk?.total ?? null, disk_free_bytes: disk?.free ?? null,
      budget_bytes: Number.isFinite(budget) ? Math.round(budget) : null,
      budget_used_percent: Number.isFinite(budget) ? Math.round((used / budget) * 1000) / 10 : null,
      growth_bytes_per_day: toFull.growthPerDay,
      days_until_budget: toBudget?.daysLeft ?? null,
      days_until_full: disk ? toFull.daysLeft : null,
      archive: { dir: archive.dir, files: archive.list().length, bytes: archive.bytes(), quota_bytes: this.deps.archiveQuotaBytes },
      history: {
        retention_days: settings.requestDays, event_retention_days: settings.eventDays, oldest_ended_request_at: oldestEnded,
        last_pass_at, last_error,
        pruned_requests: totals.requests, pruned_jobs: totals.jobs, pruned_events: totals.events, pruned_support_issues: totals.support_issues,
        archive_files_written: totals.archive_files,
      },
    };
  }

  private fileBytes(): number {
    try {
      return statSync(path.join(this.deps.storeDir, 'warehouse.mdb')).size;
    } catch {
      return 0;
    }
  }
}

const mib = (n: number) => `${Math.round(n / 1024 ** 2)} MiB`;
