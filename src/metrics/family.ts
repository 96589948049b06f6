/**
 * A metric family whose values are read when scraped, from figures kept elsewhere (the brain's
 * latest report, the radio lines' counters, the request counts): prom-client writes the text
 * exposition from what `read` gives, so no line of the format is written here.
 */
import type { Registry } from 'prom-client';
import { cumulative, type BucketCopy } from '../domain/figures/buckets.js';

export type FamilyType = 'counter' | 'gauge' | 'histogram';
export type Labels = Record<string, string | number>;

/** A sample's labels when it has none of its own beside its shared ones. */
export const NO_LABELS: Labels = Object.freeze({});

/**
 * One sample as prom-client's formatter takes it. Labels that stay the same from one scrape to
 * the next (a bot's, a route's) go in `sharedLabels` as an object kept between scrapes:
 * prom-client caches their text by the object's identity, so a scrape of 400 bots does not
 * write the same labels again; a sample without them gets NO_LABELS there for the same reason
 * (prom-client's default is a new empty object, a cache miss every sample).
 */
export interface Sample {
  value: number;
  labels: Labels;
  sharedLabels?: Labels;
  /** For a histogram: `<name>_bucket`, `<name>_sum` or `<name>_count`. */
  metricName?: string;
}

export class ReadFamily {
  /** prom-client's registry reads it when it aggregates (a single process: any value will do). */
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: FamilyType,
    /** The label names every sample carries (`le` of a histogram's buckets aside). */
    readonly labelNames: readonly string[],
    private readonly read: (out: Sample[]) => void,
  ) {}

  /** What prom-client's registry calls on a scrape. */
  get(): { name: string; help: string; type: FamilyType; values: Sample[]; aggregator: string } {
    const values: Sample[] = [];
    this.read(values);
    for (let i = 0; i < values.length; i++) values[i]!.sharedLabels ??= NO_LABELS;
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Adds it to a registry. */
  register(registry: Registry): this {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
    return this;
  }
}

/**
 * A histogram's samples from per-bucket counts: one cumulative `le` bucket per bound and +Inf,
 * then the sum and the count.
 */
export function histogramSamples(out: Sample[], name: string, labels: Labels, bounds: readonly number[], h: BucketCopy | { counts: ArrayLike<number>; sum: number; count: number }): void {
  const running = cumulative(h.counts);
  const le = leLabels(bounds);
  for (let i = 0; i < running.length; i++) out.push({ metricName: `${name}_bucket`, labels: le[i]!, sharedLabels: labels, value: running[i]! });
  out.push({ metricName: `${name}_sum`, labels: NO_LABELS, sharedLabels: labels, value: h.sum });
  out.push({ metricName: `${name}_count`, labels: NO_LABELS, sharedLabels: labels, value: h.count });
}

const leOf = new WeakMap<readonly number[], Labels[]>();
/** The `le` label of each bucket of these bounds, +Inf last, made once. */
function leLabels(bounds: readonly number[]): Labels[] {
  let le = leOf.get(bounds);
  if (!le) leOf.set(bounds, (le = [...bounds.map((b) => ({ le: b })), { le: '+Inf' }]));
  return le;
}
