/**
 * A small histogram of durations in fixed logarithmic buckets: eight a doubling, so a
 * percentile read from it is within about 4.5 % of the true value, and histograms of any hours
 * merge by adding their counts, without the values themselves being kept.
 */

/** Buckets per doubling of the value. */
const PER_DOUBLING = 8;
/** Values below this many seconds share bucket 0. */
const LEAST_SECONDS = 1;
/** The last bucket: 2^40 s, beyond any lead time. */
const LAST_BUCKET = 40 * PER_DOUBLING;

/** Counts by bucket index (only buckets with a count are present). */
export type Histogram = Record<number, number>;

/** The bucket a duration in seconds falls in. */
export function bucketOf(seconds: number): number {
  if (!(seconds >= LEAST_SECONDS)) return 0;
  return Math.min(LAST_BUCKET, 1 + Math.floor(Math.log2(seconds / LEAST_SECONDS) * PER_DOUBLING));
}

/** The value a bucket stands for: the geometric middle of its bounds (half the least value for bucket 0). */
export function bucketValue(bucket: number): number {
  if (bucket === 0) return LEAST_SECONDS / 2;
  return LEAST_SECONDS * 2 ** ((bucket - 0.5) / PER_DOUBLING);
}

/** `h` with one more duration counted (a new object). */
export function withValue(h: Histogram, seconds: number): Histogram {
  const b = bucketOf(seconds);
  return { ...h, [b]: (h[b] ?? 0) + 1 };
}

/** Adds `h`'s counts into `into`. */
export function mergeInto(into: Histogram, h: Histogram): void {
  for (const [b, n] of Object.entries(h)) into[Number(b)] = (into[Number(b)] ?? 0) + n;
}

/** The `q` quantile (0 to 1) of the counted durations in seconds, or null when none was counted; nearest rank. */
export function quantile(h: Histogram, q: number): number | null {
  const buckets = Object.entries(h).map(([b, n]) => [Number(b), n] as const).filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [b, n] of buckets) {
    seen += n;
    if (seen >= rank) return Math.round(bucketValue(b) * 1000) / 1000;
  }
  return bucketValue(buckets.at(-1)![0]);
}
