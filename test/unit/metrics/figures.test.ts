// The counting behind /metrics: buckets as Prometheus reads them, requests by route template and
// status class with a bounded set of label values, and the brain's report of its open work.
import t from 'tap';
import { Buckets, cumulative, SECONDS_BOUNDS } from '../../../src/domain/figures/buckets.js';
import { CommitFigures } from '../../../src/domain/figures/commits.js';
import { HttpFigures, statusClassIndex, STATUS_CLASSES } from '../../../src/metrics/http.js';
import { histogramSamples, type Sample } from '../../../src/metrics/family.js';
import { brainFigures } from '../../../src/brain/worker/figures.js';
import type { AnyRoute } from '../../../src/http/route.js';
import type { OpenWork } from '../../../src/domain/requests/open-work.js';
import type { LevelPlannerStats } from '../../../src/native/planner.js';

t.test('buckets: a value on a bound counts in that bucket; above every bound in the last', async (t) => {
  const b = new Buckets([1, 5]);
  for (const v of [0.5, 1, 3, 5, 9]) b.observe(v);
  t.same(Array.from(b.counts), [2, 2, 1]);
  t.same(cumulative(b.counts), [2, 4, 5]);
  t.equal(b.sum, 18.5);
  t.equal(b.count, 5);
  t.same(b.copy(), { counts: [2, 2, 1], sum: 18.5, count: 5 });
});

t.test('histogram samples: cumulative le buckets ending in +Inf, then sum and count', async (t) => {
  const b = new Buckets([1, 5]);
  b.observe(2);
  const out: Sample[] = [];
  histogramSamples(out, 'x', { a: 'b' }, b.bounds, b);
  t.same(out.map((s) => ({ name: s.metricName, labels: { ...s.sharedLabels, ...s.labels }, value: s.value })), [
    { name: 'x_bucket', labels: { a: 'b', le: 1 }, value: 0 },
    { name: 'x_bucket', labels: { a: 'b', le: 5 }, value: 1 },
    { name: 'x_bucket', labels: { a: 'b', le: '+Inf' }, value: 1 },
    { name: 'x_sum', labels: { a: 'b' }, value: 2 },
    { name: 'x_count', labels: { a: 'b' }, value: 1 },
  ]);
  const again: Sample[] = [];
  histogramSamples(again, 'x', out[0]!.sharedLabels!, b.bounds, b);
  t.equal(again[0]!.labels, out[0]!.labels, 'the le labels are made once, so prom-client\'s text cache finds them');
});

t.test('status classes', async (t) => {
  t.same([200, 204, 304, 401, 499, 500, 507].map((s) => STATUS_CLASSES[statusClassIndex(s)]), ['2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx']);
});

t.test('requests: by route template; unmatched ones by method, unknown methods as "other" however many', async (t) => {
  const http = new HttpFigures();
  const route = { method: 'GET', path: '/api/v2/requests/{request_id}/job-graph' } as AnyRoute;
  http.record(route, 'GET', 200, 3);
  http.record(route, 'GET', 404, 1);
  http.record(route, 'HEAD', 200, 1);
  http.record(undefined, 'GET', 404, 1);
  for (let i = 0; i < 100; i++) http.record(undefined, `M${i}`, 501, 1);
  const [requests, times] = http.families();
  const values = requests!.get().values.map((v) => ({ ...v.sharedLabels, ...v.labels, value: v.value }));
  t.equal(requests!.get().values[0]!.sharedLabels, requests!.get().values[0]!.sharedLabels, 'a series\' labels are the same object from one scrape to the next');
  t.same(values, [
    { route: '/api/v2/requests/{request_id}/job-graph', method: 'GET', status_class: '2xx', value: 2 },
    { route: '/api/v2/requests/{request_id}/job-graph', method: 'GET', status_class: '4xx', value: 1 },
    { route: 'unmatched', method: 'GET', status_class: '4xx', value: 1 },
    { route: 'unmatched', method: 'other', status_class: '5xx', value: 100 },
  ]);
  const count = times!.get().values.find((v) => v.metricName === 'warehouse_http_request_duration_seconds_count' && v.sharedLabels?.['status_class'] === '2xx');
  t.equal(count?.value, 2);
  const sum = times!.get().values.find((v) => v.metricName === 'warehouse_http_request_duration_seconds_sum' && v.sharedLabels?.['status_class'] === '2xx');
  t.equal(sum?.value, 0.004, 'seconds, not milliseconds');
  t.equal(SECONDS_BOUNDS.length + 3, times!.get().values.filter((v) => v.sharedLabels?.['status_class'] === '2xx').length, 'each bound, +Inf, sum and count');
});

t.test('commits: time, writes and the slow ones', async (t) => {
  const c = new CommitFigures(250);
  c.heard({ writesMs: 2, diskMs: 8, onLoop: false, writes: 3 });
  c.heard({ writesMs: 50, diskMs: 200, onLoop: true, writes: 40 });
  t.equal(c.slow, 1, 'the commit of 250 ms is slow');
  t.equal(c.seconds.count, 2);
  t.equal(c.seconds.sum, 0.26);
  t.equal(c.writes.sum, 43);
});

t.test('the brain\'s report: open jobs by type and status, waits by reason, each planner', async (t) => {
  const jobs = [
    { type: 'RETRIEVING', status: 'ACCEPTED', wait: { waiting_for: 'bot', reason: 'x' } },
    { type: 'RETRIEVING', status: 'ACCEPTED', wait: { waiting_for: 'bot', reason: 'y' } },
    { type: 'PICKING', status: 'EXECUTING', wait: { waiting_for: 'trigger', reason: 'z' } },
    { type: 'STORING', status: 'EXECUTING', wait: null },
  ];
  const stats = { steps: 10, stepMs: { p50: 1, p99: 4, max: 9, samples: 10, last: 1 }, stalls: { detected: 2, broken: 1 }, escapes: { planned: 1, done: 1, aborted: 0, unsolved: 0 }, overBudget: 3 } as LevelPlannerStats;
  const passes = new Buckets(SECONDS_BOUNDS);
  passes.observe(0.002);
  const figures = brainFigures({ passes, commits: new CommitFigures(250), work: { allJobs: () => jobs } as unknown as OpenWork, planners: () => [[1, stats]] });
  t.same(figures.jobs, [{ type: 'RETRIEVING', status: 'ACCEPTED', count: 2 }, { type: 'PICKING', status: 'EXECUTING', count: 1 }, { type: 'STORING', status: 'EXECUTING', count: 1 }]);
  t.same(figures.waiting, [{ reason: 'bot', count: 2 }, { reason: 'trigger', count: 1 }]);
  t.same(figures.planners, [{ level_id: 1, steps: 10, step_ms: { p50: 1, p99: 4, max: 9 }, stalls: 2, escapes: 1, over_budget: 3 }]);
  t.equal(figures.pass_seconds.count, 1);
  t.same(JSON.parse(JSON.stringify(figures)), figures, 'plain data, as a message between threads carries it');
});
