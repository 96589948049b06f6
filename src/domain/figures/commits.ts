/** What one thread's commits cost, kept for /metrics from the store's CommitTiming. */
import type { CommitTiming } from '../../store/store.js';
import { Buckets, SECONDS_BOUNDS, WRITES_BOUNDS } from './buckets.js';

export class CommitFigures {
  /** Seconds from a commit's first write until it was durable. */
  readonly seconds = new Buckets(SECONDS_BOUNDS);
  /** Writes each commit carried. */
  readonly writes = new Buckets(WRITES_BOUNDS);
  /** Commits that took `slowMs` or longer (the storage watch logs them). */
  slow = 0;

  constructor(private readonly slowMs: number) {}

  /** Books one commit (a store's onCommitHeld listener). */
  readonly heard = (t: CommitTiming): void => {
    const ms = t.writesMs + t.diskMs;
    this.seconds.observe(ms / 1000);
    this.writes.observe(t.writes);
    if (ms >= this.slowMs) this.slow++;
  };
}
