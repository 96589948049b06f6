/**
 * The Prometheus text format read by parse-prometheus-text-format, a parser independent of the
 * library that writes it. Its 1.1.1 merges the series of a histogram that has labels into one
 * sample without labels (flattenMetrics keeps only `le`), so each histogram is read a second
 * time as untyped, where its `_bucket`, `_sum` and `_count` lines keep their labels, and its
 * series are put together from those.
 */
import { createRequire } from 'node:module';

/** One sample of a family as the parser gives it: a value, or a histogram's buckets, count and sum. */
export interface ParsedSample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

export interface ParsedFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: ParsedSample[];
}

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => ParsedFamily[];

/** Parses a text exposition (throws on text that is not in the format); a histogram's samples are its series, each with its labels. */
export function parsePrometheusText(text: string): ParsedFamily[] {
  const families = parse(text);
  const histograms = families.filter((f) => f.type === 'HISTOGRAM');
  if (histograms.length === 0) return families;
  const untyped = parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'));
  for (const h of histograms) {
    const series = new Map<string, ParsedSample>();
    const seriesOf = (labels: Record<string, string> = {}) => {
      const { le: _le, ...rest } = labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      let s = series.get(key);
      if (!s) series.set(key, (s = Object.keys(rest).length > 0 ? { labels: rest, buckets: {} } : { buckets: {} }));
      return s;
    };
    for (const f of untyped) {
      for (const m of f.metrics) {
        if (f.name === `${h.name}_bucket`) seriesOf(m.labels).buckets![m.labels!.le!] = m.value!;
        else if (f.name === `${h.name}_sum`) seriesOf(m.labels).sum = m.value;
        else if (f.name === `${h.name}_count`) seriesOf(m.labels).count = m.value;
      }
    }
    h.metrics = [...series.values()];
  }
  return families;
}
