/**
 * The open requests and jobs, in memory and kept current on every commit (this thread's and,
 * through the commit bridge, the other's): what dispatch and its snapshots ask about many times
 * a pass (the jobs of a level, of a carrier, of a bot) without decoding the store each time.
 * A final record leaves the index; an open one replaces its older copy.
 */
import type { CommitNotice, Store } from '../../store/store.js';
import { compareKeys } from '../../store/collection.js';
import { isFinalJob, isFinalRequest, jobs, requests, type JobRecord, type JobStatus, type RequestRecord } from './records.js';

/** What one commit changed in the open work: the levels whose open jobs changed (0: jobs of no level), and the requests touched. */
export interface OpenWorkChange {
  levels: ReadonlySet<number>;
  requests: ReadonlySet<string>;
}

export class OpenWork {
  private readonly jobsById = new Map<string, JobRecord>();
  private readonly requestsById = new Map<string, RequestRecord>();
  /** Open jobs of a level by seq, rebuilt on the first read after a change. */
  private readonly byLevel = new Map<number, readonly JobRecord[]>();
  /** Open jobs of a status in id order, rebuilt on the first read after a change of that status. */
  private readonly byStatus = new Map<JobStatus, readonly JobRecord[]>();
  /**
   * Open jobs of each status by creation (`created_at`, then id), changed in place on each
   * commit: a poll of the newest jobs of a status reads its page from the end instead of
   * sorting every job of the status, which changes hundreds of times a second under load.
   */
  private readonly byCreation = new Map<JobStatus, JobRecord[]>();
  private readonly listeners = new Set<(change: OpenWorkChange) => void>();
  private readonly stop: () => void;

  /** Reads the open work of the site's levels (`levels`, and jobs of no level) and follows the store from then on. */
  constructor(private readonly store: Store, levels: readonly number[]) {
    for (const level of [0, ...levels]) for (const key of store.collection(jobs).keysBy('open', level)) this.putJob(store.collection(jobs).get(key));
    for (const key of store.collection(requests).keysBy('open', 1)) this.putRequest(store.collection(requests).get(key));
    this.stop = store.onCommit((notice) => this.apply(notice));
  }

  /** Stops following the store. */
  close(): void {
    this.stop();
  }

  /** Hears what changed, after the index took it in. */
  onChange(listener: (change: OpenWorkChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Open jobs of a level (0: of no level), oldest first. */
  jobsOn(levelId: number): readonly JobRecord[] {
    let list = this.byLevel.get(levelId);
    if (!list) {
      list = [...this.jobsById.values()].filter((j) => (j.level_id ?? 0) === levelId).sort((a, b) => a.seq - b.seq);
      this.byLevel.set(levelId, list);
    }
    return list;
  }

  /**
   * Open jobs with this status in id order: the order of the store's `status` index, so a list
   * reads them here instead of decoding them (GET /jobs?status__eq=EXECUTING).
   * Empty for a final status: those are not held.
   */
  jobsWithStatus(status: JobStatus): readonly JobRecord[] {
    let list = this.byStatus.get(status);
    if (!list) {
      list = [...this.jobsByCreation(status)].sort((a, b) => compareKeys(a.id, b.id));
      this.byStatus.set(status, list);
    }
    return list;
  }

  /** Open jobs with this status by creation (`created_at`, then id); the array changes with the next commit, so read it before then. */
  jobsByCreation(status: JobStatus): readonly JobRecord[] {
    return this.byCreation.get(status) ?? [];
  }

  /** Every open job. */
  allJobs(): Iterable<JobRecord> {
    return this.jobsById.values();
  }

  job(id: string): JobRecord | undefined {
    return this.jobsById.get(id);
  }

  /** An open request, or undefined once it is final. */
  request(id: string): RequestRecord | undefined {
    return this.requestsById.get(id);
  }

  requests(): Iterable<RequestRecord> {
    return this.requestsById.values();
  }

  private apply(notice: CommitNotice): void {
    const levels = new Set<number>();
    const touched = new Set<string>();
    for (const key of notice['jobs'] ?? []) {
      const before = this.jobsById.get(String(key));
      if (before) {
        levels.add(before.level_id ?? 0);
        this.byStatus.delete(before.status);
      }
      const now = this.store.collection(jobs).get(key);
      if (before) this.leaveCreationOrder(before);
      this.jobsById.delete(String(key));
      if (now) {
        touched.add(now.request_id);
        levels.add(now.level_id ?? 0);
        this.byStatus.delete(now.status);
        this.putJob(now);
      }
    }
    for (const key of notice['requests'] ?? []) {
      this.requestsById.delete(String(key));
      this.putRequest(this.store.collection(requests).get(key));
      touched.add(String(key));
    }
    for (const level of levels) this.byLevel.delete(level);
    if (levels.size === 0 && touched.size === 0) return;
    for (const listener of this.listeners) listener({ levels, requests: touched });
  }

  private putJob(job: JobRecord | undefined): void {
    if (!job || isFinalJob(job.status)) return;
    this.jobsById.set(job.id, job);
    let list = this.byCreation.get(job.status);
    if (!list) this.byCreation.set(job.status, (list = []));
    list.splice(creationPoint(list, job), 0, job);
  }

  private leaveCreationOrder(job: JobRecord): void {
    const list = this.byCreation.get(job.status);
    const at = list ? creationPoint(list, job) : -1;
    if (list?.[at] === job) list.splice(at, 1);
  }

  private putRequest(request: RequestRecord | undefined): void {
    if (request && !isFinalRequest(request.status)) this.requestsById.set(request.id, request);
  }
}

/** First position in `list` (by `created_at`, then id) not before `job`. */
function creationPoint(list: readonly JobRecord[], job: JobRecord): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const other = list[mid]!;
    if (other.created_at < job.created_at || (other.created_at === job.created_at && compareKeys(other.id, job.id) < 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
