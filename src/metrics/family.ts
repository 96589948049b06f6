/**
 * A metric family whose values are read when scraped, from figures kept elsewhere (the brain's
 * latest report, the radio lines' counters, the request counts): prom-client writes the text
 * exposition from what `read` gives, so no line of the format is written here.
 */
import type { Registry } from 'prom-client';
import { cumulative, type BucketCopy } from '../domain/figures/buckets.js';

export type FamilyType = 'counter' | 'gauge' | 'histogram';
export type Labels = Record<string, string | number>;

/** One sample as prom-client's formatter takes it. */
export interface Sample {
  value: number;
  labels: Labels;
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
  for (let i = 0; i < running.length; i++) {
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: i < bounds.length ? bounds[i]! : '+Inf' }, value: running[i]! });
  }
  out.push({ metricName: `${name}_sum`, labels, value: h.sum });
  out.push({ metricName: `${name}_count`, labels, value: h.count });
}
