// The lead-time histogram: percentiles within a bucket's width of the exact ones, and hours
// that merge to what one histogram of all the values gives.
import t from 'tap';
import { bucketOf, bucketValue, mergeInto, quantile, withValue, type Histogram } from '../../../src/domain/kpi/histogram.js';
import { seeded } from '../../helpers/seeded.js';

/** The exact nearest-rank quantile. */
function exact(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

t.test('percentiles of fixed sets', async (t) => {
  const cases: { name: string; values: number[]; p50: number | null; p95: number | null }[] = [
    { name: 'none', values: [], p50: null, p95: null },
    { name: 'one value', values: [60], p50: 60, p95: 60 },
    { name: 'ten values', values: [10, 20, 30, 40, 50, 60, 70, 80, 90, 1000], p50: 50, p95: 1000 },
    { name: 'under a second', values: [0.2, 0.3], p50: 0.5, p95: 0.5 },
  ];
  for (const c of cases) {
    let h: Histogram = {};
    for (const v of c.values) h = withValue(h, v);
    for (const [q, want] of [[0.5, c.p50], [0.95, c.p95]] as const) {
      const got = quantile(h, q);
      if (want === null) t.equal(got, null, `${c.name} p${q * 100}`);
      else t.ok(Math.abs(got! - want) / want <= 0.045 || want < 1, `${c.name} p${q * 100}: ${got} near ${want}`);
    }
  }
});

t.test('a bucket\'s value lies within its bounds', async (t) => {
  for (const v of [1, 1.5, 2, 59, 60, 61, 3600, 86_400]) {
    const b = bucketOf(v);
    t.ok(Math.abs(bucketValue(b) - v) / v <= 0.045, `${v} s in bucket ${b} read as ${bucketValue(b)}`);
  }
});

t.test('random lead times: within 4.5 % of the exact percentile, merged hours equal one histogram', async (t) => {
  const seed = Number(process.env.KPI_SEED ?? Date.now() % 1_000_000);
  t.comment(`seed ${seed} (KPI_SEED=${seed} replays it)`);
  const random = seeded(seed);
  for (let round = 0; round < 20; round++) {
    const values = Array.from({ length: 1 + Math.floor(random() * 500) }, () => 1 + Math.exp(random() * 9));
    const hours: Histogram[] = [{}, {}, {}];
    let all: Histogram = {};
    values.forEach((v, i) => {
      hours[i % 3] = withValue(hours[i % 3]!, v);
      all = withValue(all, v);
    });
    const merged: Histogram = {};
    for (const h of hours) mergeInto(merged, h);
    t.same(merged, all, `round ${round}: merged`);
    for (const q of [0.5, 0.95]) {
      const want = exact(values, q);
      const got = quantile(merged, q)!;
      if (Math.abs(got - want) / want > 0.045) t.fail(`seed ${seed} round ${round} p${q * 100}: ${got} against ${want}`);
    }
  }
  t.pass('every percentile within 4.5 %');
});
