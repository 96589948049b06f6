// GET /metrics through the real server on the demo site with its simulated bots: the body read
// by a parser independent of prom-client, every family there with its type and label names,
// requests counted under their route template, and the permission enforced.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { Client } from '../helpers/client.js';
import { parsePrometheusText, type ParsedFamily } from '../helpers/prometheus-text.js';
import { until } from '../helpers/until.js';
import { WAITING_FOR } from '../../src/domain/requests/records.js';

/** Every warehouse family: its type and the label names of its samples (a histogram's `le` aside). */
export const FAMILIES: Record<string, { type: ParsedFamily['type']; labels: string[] }> = {
  warehouse_http_requests_total: { type: 'COUNTER', labels: ['method', 'route', 'status_class'] },
  warehouse_http_request_duration_seconds: { type: 'HISTOGRAM', labels: ['method', 'route', 'status_class'] },
  warehouse_store_commit_duration_seconds: { type: 'HISTOGRAM', labels: ['thread'] },
  warehouse_store_commit_writes: { type: 'HISTOGRAM', labels: ['thread'] },
  warehouse_store_slow_commits_total: { type: 'COUNTER', labels: ['thread'] },
  warehouse_store_file_size_bytes: { type: 'GAUGE', labels: [] },
  warehouse_store_free_pages: { type: 'GAUGE', labels: [] },
  warehouse_store_page_size_bytes: { type: 'GAUGE', labels: [] },
  warehouse_disk_free_bytes: { type: 'GAUGE', labels: [] },
  warehouse_storage_status: { type: 'GAUGE', labels: ['status'] },
  warehouse_brain_pass_duration_seconds: { type: 'HISTOGRAM', labels: [] },
  warehouse_jobs_open: { type: 'GAUGE', labels: ['status', 'type'] },
  warehouse_jobs_waiting: { type: 'GAUGE', labels: ['reason'] },
  warehouse_planner_steps_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_planner_step_seconds: { type: 'GAUGE', labels: ['level', 'quantile'] },
  warehouse_planner_stalls_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_planner_escapes_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_planner_over_budget_steps_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_line_up: { type: 'GAUGE', labels: ['level'] },
  warehouse_line_frames_in_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_line_frames_out_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_line_crc_errors_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_line_protocol_errors_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_line_reconnects_total: { type: 'COUNTER', labels: ['level'] },
  warehouse_bot_online: { type: 'GAUGE', labels: ['bot', 'level'] },
  warehouse_bot_battery_ratio: { type: 'GAUGE', labels: ['bot', 'level'] },
  warehouse_bot_charging: { type: 'GAUGE', labels: ['bot', 'level'] },
  warehouse_bot_in_service: { type: 'GAUGE', labels: ['bot', 'level'] },
  warehouse_balcony_carriers_presented_total: { type: 'COUNTER', labels: ['balcony'] },
  warehouse_balcony_busy_ratio: { type: 'GAUGE', labels: ['balcony'] },
};

/** Families of prom-client's default collectors the docs and the dashboard use. */
const PROCESS_FAMILIES: Record<string, ParsedFamily['type']> = {
  process_cpu_seconds_total: 'COUNTER', process_resident_memory_bytes: 'GAUGE', nodejs_heap_size_used_bytes: 'GAUGE',
  nodejs_eventloop_lag_p99_seconds: 'GAUGE', nodejs_gc_duration_seconds: 'HISTOGRAM',
};

let a: AdminApp;
t.before(async () => {
  a = await startAdminApp({ WAREHOUSE_LINKS: 'on', WAREHOUSE_SIM_SPEED: '4' });
});
t.teardown(() => a.close());

async function scrape(): Promise<Map<string, ParsedFamily>> {
  const r = await a.admin.request('/metrics');
  if (r.status !== 200) throw new Error(`GET /metrics answered ${r.status}`);
  return new Map(parsePrometheusText(r.text).map((f) => [f.name, f]));
}

const value = (f: ParsedFamily | undefined, labels: Record<string, string>) =>
  f?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

t.test('the text format, every family with its type and label names', async (t) => {
  // Work for the brain; it reports every 5 s: wait for a report with the request's jobs.
  const post = await a.admin.post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: 'SKU-00001', quantity: 1 }] });
  t.equal(post.status, 201);
  await until('open jobs reported', async () => ((await scrape()).get('warehouse_jobs_open')?.metrics.length ?? 0) > 0, 30_000);
  const r = await a.admin.request('/metrics');
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const families = new Map(parsePrometheusText(r.text).map((f) => [f.name, f]));
  for (const [name, want] of Object.entries(FAMILIES)) {
    const f = families.get(name);
    t.ok(f, `${name} is exposed`);
    if (!f) continue;
    t.equal(f.type, want.type, `${name} is a ${want.type}`);
    t.ok(f.help.length > 10, `${name} says what it is`);
    t.ok(f.metrics.length > 0, `${name} has samples`);
    for (const m of f.metrics) t.same(Object.keys(m.labels ?? {}).sort(), want.labels, `${name} labels`);
  }
  for (const [name, type] of Object.entries(PROCESS_FAMILIES)) t.equal(families.get(name)?.type, type, `${name}: prom-client's default families`);
  t.same([...families.keys()].filter((n) => n.startsWith('warehouse_') && !(n in FAMILIES)), [], 'no family beyond those checked');
});

t.test('brain, planner, line and bot figures of the running demo site', async (t) => {
  const families = await scrape();
  const pass = families.get('warehouse_brain_pass_duration_seconds')!.metrics[0]!;
  t.ok(Number(pass.count) > 0, 'dispatch passes counted');
  t.equal(pass.buckets?.['+Inf'], pass.count, 'the +Inf bucket holds every pass');
  for (const level of ['1', '2']) {
    t.ok(Number(value(families.get('warehouse_planner_steps_total'), { level })?.value) > 0, `level ${level}'s planner stepped`);
    t.ok(Number(value(families.get('warehouse_planner_step_seconds'), { level, quantile: '1' })?.value) > 0, `and its longest step is known`);
    t.equal(value(families.get('warehouse_line_up'), { level })?.value, '1', `level ${level}'s line is up`);
    t.ok(Number(value(families.get('warehouse_line_frames_in_total'), { level })?.value) > 0, 'frames came in');
  }
  t.equal(families.get('warehouse_jobs_waiting')!.metrics.length, WAITING_FOR.length, 'every reason a job can wait for, 0 or not');
  const jobs = families.get('warehouse_jobs_open')!.metrics;
  t.ok(jobs.every((m) => Number(m.value) > 0), 'only job types and statuses that have open jobs');
  t.equal(families.get('warehouse_bot_online')!.metrics.length, 20, 'one series per bot of the demo site');
  t.equal(value(families.get('warehouse_storage_status'), { status: 'RUNNING' })?.value, '1');
  t.equal(families.get('warehouse_storage_status')!.metrics.filter((m) => m.value === '1').length, 1, 'one status at a time');
  t.ok(Number(value(families.get('warehouse_store_commit_duration_seconds'), { thread: 'brain' })?.count) > 0, 'the brain thread\'s commits');
  // The KPI service's figures: the demo's four balconies, the same as GET /api/v2/kpi would say.
  const totals = (await a.admin.request('/metrics')).text;
  const balconies = new Map(parsePrometheusText(totals).map((f) => [f.name, f]));
  t.same(balconies.get('warehouse_balcony_busy_ratio')!.metrics.map((m) => m.labels?.balcony).sort(), ['1', '2', '3', '4'], 'one series per balcony');
  for (const m of balconies.get('warehouse_balcony_busy_ratio')!.metrics) t.ok(Number(m.value) >= 0 && Number(m.value) <= 1, 'a share');
});

t.test('a request is counted under its route template, never its raw path', async (t) => {
  const id = '01a2229f-02cf-7614-b93c-1fa90c2bb0c7';
  t.equal((await a.admin.request(`/api/v2/requests/${id}/job-graph`)).status, 404);
  // Letters, not digits: a figure of the scrape (bytes, frames) may hold any run of digits.
  t.equal((await a.admin.request('/api/v2/no-such-thing/qzxjv')).status, 404);
  const text = (await a.admin.request('/metrics')).text;
  t.notOk(text.includes(id), 'the id appears nowhere');
  t.notOk(text.includes('qzxjv'), 'nor an unmatched path');
  const families = new Map(parsePrometheusText(text).map((f) => [f.name, f]));
  const count = value(families.get('warehouse_http_requests_total'), { route: '/api/v2/requests/{request_id}/job-graph', method: 'GET', status_class: '4xx' });
  t.equal(count?.value, '1', 'one 4xx under the template');
  const unmatched = value(families.get('warehouse_http_requests_total'), { route: 'unmatched', method: 'GET', status_class: '4xx' });
  t.ok(Number(unmatched?.value) >= 1, 'the unknown path under "unmatched"');
  const time = value(families.get('warehouse_http_request_duration_seconds'), { route: '/api/v2/requests/{request_id}/job-graph', method: 'GET', status_class: '4xx' });
  t.equal(time?.count, '1', 'its time in the histogram');
  t.equal(time?.buckets?.['+Inf'], '1');
  const metricsCount = value(families.get('warehouse_http_requests_total'), { route: '/metrics', method: 'GET', status_class: '2xx' });
  t.ok(Number(metricsCount?.value) >= 1, 'the scrapes themselves are counted');
});

t.test('401 without credentials, 403 without metrics:view, 200 with a key that has only it', async (t) => {
  t.equal((await a.client.request('/metrics')).status, 401);
  const cert = readFileSync(a.app.tls.certFile);
  const make = async (permission_keys: string[]) => {
    const r = await a.admin.post('/api/v2/auth/generate_api_key', { name: `metrics ${permission_keys.join(',')}`, permission_keys });
    t.equal(r.status, 201);
    return new Client(a.app.port, cert, r.json.api_key);
  };
  const other = await make(['system:view']);
  t.teardown(() => other.close());
  const forbidden = await other.request('/metrics');
  t.equal(forbidden.status, 403);
  t.match(forbidden.json, { code: 'forbidden' });
  const scraper = await make(['metrics:view']);
  t.teardown(() => scraper.close());
  t.equal((await scraper.request('/metrics')).status, 200);
});
