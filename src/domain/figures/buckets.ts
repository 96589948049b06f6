/**
 * Counts of observations in fixed buckets, as a Prometheus histogram keeps them, in plain
 * numbers: either thread keeps its own and the main thread's /metrics exposes them (the brain's
 * thread posts a copy). Observing allocates nothing, so it can sit on the request path.
 */

/** Upper bounds in seconds for the time of a request, a commit or a brain pass: 1 ms to 10 s. */
export const SECONDS_BOUNDS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Upper bounds for the writes one commit carries. */
export const WRITES_BOUNDS: readonly number[] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/** A copy of a histogram's counts that can travel between threads (plain arrays and numbers). */
export interface BucketCopy {
  /** Observations per bucket (not cumulative); one more than the bounds: the last is above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

export class Buckets {
  /** Observations per bucket, not cumulative; the last slot is above every bound (+Inf). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Counts one observation. */
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  /** The counts as plain data, for a message to the other thread. */
  copy(): BucketCopy {
    return { counts: Array.from(this.counts), sum: this.sum, count: this.count };
  }
}

/** Cumulative counts (Prometheus' `le` buckets) from per-bucket counts; the last is the total. */
export function cumulative(counts: ArrayLike<number>): number[] {
  const out: number[] = new Array<number>(counts.length);
  let running = 0;
  for (let i = 0; i < counts.length; i++) out[i] = running += counts[i]!;
  return out;
}
