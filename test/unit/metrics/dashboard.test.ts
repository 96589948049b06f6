// The shipped Grafana dashboard and the alert rules of docs/monitoring.md query only families
// /metrics exposes: every metric name in their PromQL is a family of the exposition (a
// histogram's `_bucket`, `_sum` and `_count` series included), read with the independent parser.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { ALL_COLLECTIONS } from '../../../src/domain/collections.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { SiteMetrics } from '../../../src/metrics/site-metrics.js';
import { Buckets, SECONDS_BOUNDS, WRITES_BOUNDS } from '../../../src/domain/figures/buckets.js';
import { parsePrometheusText } from '../../helpers/prometheus-text.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DASHBOARD = path.join(ROOT, 'docs/monitoring/grafana-warehouse-controller.json');

/** The series names an exposition offers: each family's name, and a histogram's three series. */
async function exposedSeries(t: Test): Promise<Set<string>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-metrics-'));
  const store = await Store.open({ dir }, ALL_COLLECTIONS, MIGRATIONS);
  const empty = (bounds: readonly number[]) => new Buckets(bounds).copy();
  const metrics = new SiteMetrics({
    store, storeDir: dir, slowCommitMs: 250, storageStatus: () => 'RUNNING',
    brain: () => ({
      pass_seconds: empty(SECONDS_BOUNDS), commit_seconds: empty(SECONDS_BOUNDS), commit_writes: empty(WRITES_BOUNDS), slow_commits: 0,
      jobs: [{ type: 'PICKING', status: 'EXECUTING', count: 1 }], waiting: [],
      planners: [{ level_id: 1, steps: 1, step_ms: { p50: 1, p99: 1, max: 1 }, stalls: 0, escapes: 0, over_budget: 0 }],
    }),
    lines: () => [{ level_id: 1, up: true, frames_in: 1, frames_out: 1, crc_errors: 0, protocol_errors: 0, reconnects: 0 }],
    bots: () => [{ id: 1, level_id: 1, battery_level: 50, is_charging: false, carrier_held: false, online: true, x: 0, y: 0, heading: 'NORTH' }],
    // As on the active box of a replicated pair: its families exist there only.
    pair: () => ({
      name: 'a', role: 'active', leader: 'a', term: 7, peer: { name: 'b', role: 'standby', seq: 10 }, lag_entries: 0, seq: 10,
      members: { healthy: 3, total: 3 }, protected: true, warning: null, since: new Date(0).toISOString(),
    }),
  });
  metrics.balconies(() => [{ balcony_id: 1, carriers_presented_total: 3, busy_share_this_hour: 0.5 }]);
  metrics.http.record({ method: 'GET', path: '/api/v2/health' } as never, 'GET', 200, 1);
  t.teardown(async () => {
    metrics.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const names = new Set<string>();
  for (const f of parsePrometheusText(await metrics.exposition())) {
    names.add(f.name);
    if (f.type === 'HISTOGRAM' || f.type === 'SUMMARY') for (const suffix of ['_bucket', '_sum', '_count']) names.add(f.name + suffix);
  }
  return names;
}

/** Metric names in PromQL: identifiers of the controller's and prom-client's families. */
const namesIn = (expr: string) => [...expr.matchAll(/\b((?:warehouse|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!);

t.test('the dashboard parses, has a datasource variable, and queries only exposed families', async (t) => {
  const exposed = await exposedSeries(t);
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { templating: { list: { name: string; type: string; query: unknown }[] }; panels: { type: string; title: string; targets?: { expr: string }[] }[] };
  t.ok(dashboard.templating.list.some((v) => v.type === 'datasource' && v.query === 'prometheus'), 'a Prometheus datasource variable');
  const queried = new Set<string>();
  for (const panel of dashboard.panels) {
    if (panel.type === 'row') continue;
    t.ok((panel.targets ?? []).length > 0, `${panel.title} has a query`);
    for (const target of panel.targets ?? []) for (const name of namesIn(target.expr)) queried.add(name);
  }
  for (const name of queried) t.ok(exposed.has(name), `${name} is exposed`);
  // Each warehouse family has a panel.
  const families = [...exposed].filter((n) => n.startsWith('warehouse_') && !/_(bucket|sum|count)$/.test(n));
  for (const family of families) t.ok([...queried].some((q) => q === family || q.startsWith(`${family}_`)), `${family} is on the dashboard`);
});

t.test('the alert rules of docs/monitoring.md use only exposed families', async (t) => {
  const exposed = await exposedSeries(t);
  const doc = readFileSync(path.join(ROOT, 'docs/monitoring.md'), 'utf8');
  const rules = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((block) => block.includes('alert:'));
  t.ok(rules.length > 0, 'the document has alert rules');
  const names = rules.flatMap(namesIn);
  t.ok(names.length >= 5);
  for (const name of names) t.ok(exposed.has(name), `${name} is exposed`);
});
