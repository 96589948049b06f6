// KPIs kept by the store's hooks: a scripted run of job, request, bot and event writes against
// a real store gives the figures the script expects; a refused write counts nothing; the
// figures survive closing and reopening the store; pruning drops whole hours by key range.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { ALL_COLLECTIONS } from '../../../src/domain/collections.js';
import { jobs, newJob, requests, type JobRecord, type RequestRecord } from '../../../src/domain/requests/records.js';
import { botRecords } from '../../../src/domain/bots/records.js';
import { eventRecords } from '../../../src/domain/events/events.js';
import { EVENT } from '../../../src/domain/events/catalogue.js';
import { Kpi, pruneKpiHours } from '../../../src/domain/kpi/kpi.js';
import { kpiBotHours, kpiHours } from '../../../src/domain/kpi/records.js';

const T0 = Date.parse('2026-11-28T10:00:00Z');
const M = 60_000;

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-kpi-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const request = (id: string, status: RequestRecord['status'], created_at: number, updated_at: number) => ({
  id, type: 'FULFILLMENT', status, priority: 0, counter: 1, level_id: null, bot_id: null, placing_pos: null, entities: [], warnings: [], cancel_requested: false,
  idempotency_key: null, abort_feedback: null, placements: null, created_at, updated_at,
}) as RequestRecord;

/** The script: two carriers at balcony 1, one at balcony 2, a bot that works, charges, faults. */
async function script(store: Store): Promise<void> {
  const j = store.collection(jobs);
  const put = (job: JobRecord) => store.write(() => j.put(job));
  const base = (id: string, type: JobRecord['type'], at: number, fields: Partial<JobRecord>) => newJob({ id, request_id: 'r1', type, entity_id: 'SKU-1', entity_index: 0, seq: 1, now: at }, fields);
  const trigger = { waiting_for: 'trigger' as const, reason: '' };
  await store.write(() => {
    store.collection(botRecords).put({ id: 1, level_id: 1, updated_at: T0 });
    store.collection(botRecords).put({ id: 2, level_id: 1, updated_at: T0 });
    store.collection(requests).put(request('r1', 'EXECUTING', T0, T0));
  });
  // Bot 1 retrieves from 10:00 to 10:10.
  await put(base('ret1', 'RETRIEVING', T0, { status: 'EXECUTING', bot_id: 1, carrier_id: 'C1' }));
  await put(base('ret1', 'RETRIEVING', T0 + 10 * M, { status: 'SUCCEEDED', bot_id: 1, carrier_id: 'C1' }));
  // Two picks from carrier C1 at balcony 1, one after the other (one carrier presented), 10:10 to 10:20.
  await put(base('p1', 'PICKING', T0 + 10 * M, { status: 'EXECUTING', balcony_id: 1, carrier_id: 'C1', quantity: 3, wait: trigger }));
  await put(base('p1', 'PICKING', T0 + 15 * M, { status: 'SUCCEEDED', balcony_id: 1, carrier_id: 'C1', quantity: 3, progress: { kind: 'person', trigger_status: 'SUCCEEDED_TRIGGER', booked_quantity: 3 } }));
  await put(base('p2', 'PICKING', T0 + 15 * M, { status: 'EXECUTING', balcony_id: 1, carrier_id: 'C1', quantity: 2, wait: trigger }));
  await put(base('p2', 'PICKING', T0 + 20 * M, { status: 'SUCCEEDED', balcony_id: 1, carrier_id: 'C1', quantity: 2, progress: { kind: 'person', trigger_status: 'SHORT_PICK_TRIGGER', booked_quantity: 1 } }));
  // A second carrier at balcony 1 waits from 10:50 into the next hour, to 11:10.
  await put(base('p3', 'PICKING', T0 + 50 * M, { status: 'EXECUTING', balcony_id: 1, carrier_id: 'C2', quantity: 1, wait: trigger }));
  await put(base('p3', 'PICKING', T0 + 70 * M, { status: 'SUCCEEDED', balcony_id: 1, carrier_id: 'C2', quantity: 1, progress: { kind: 'person', trigger_status: 'SUCCEEDED_TRIGGER', booked_quantity: 1 } }));
  // Balcony 2: a carrier waiting since 10:30, still waiting.
  await put(base('p4', 'PICKING', T0 + 30 * M, { status: 'EXECUTING', balcony_id: 2, carrier_id: 'C3', quantity: 1, wait: trigger }));
  // Bot 2 charges from 10:40 to 11:00, then faults at 11:20 (not cleared).
  await put(base('ch', 'CHARGING', T0 + 40 * M, { status: 'EXECUTING', bot_id: 2 }));
  await put(base('ch', 'CHARGING', T0 + 60 * M, { status: 'SUCCEEDED', bot_id: 2 }));
  await store.write(() => store.collection(eventRecords).put({ id: 1, component: 'bots', severity: EVENT.botFault.severity, hex_value: EVENT.botFault.hex, description: '', bot_id: '2', level_id: 1, request_id: null, created_at: T0 + 80 * M }));
  await store.write(() => store.collection(eventRecords).put({ id: 2, component: 'jobs', severity: EVENT.jobAborted.severity, hex_value: EVENT.jobAborted.hex, description: '', bot_id: null, level_id: 1, request_id: null, created_at: T0 + 5 * M }));
  // The request done at 11:10, after 70 minutes.
  await store.write(() => store.collection(requests).put(request('r1', 'SUCCEEDED', T0, T0 + 70 * M)));
}

/** What the script should give, read at 11:30 for the hours 10:00 and 11:00. */
function check(t: Test, kpi: Kpi): void {
  const now = T0 + 90 * M;
  const w = kpi.window(T0, T0 + 120 * M, now);
  t.same(w.hours, [T0, T0 + 60 * M]);
  const b1 = w.balconies.find((b) => b.balcony_id === 1)!.hours;
  const b2 = w.balconies.find((b) => b.balcony_id === 2)!.hours;
  t.same(b1.map((h) => [h.carriers_presented, h.order_lines_picked, h.pieces_picked, h.busy_seconds, h.idle_seconds]),
    [[2, 2, 4, 20 * 60, 40 * 60], [0, 1, 1, 10 * 60, 20 * 60]], 'balcony 1: two carriers, picks in the hour confirmed, busy split at 11:00, idle to now');
  t.same(b2.map((h) => [h.carriers_presented, h.busy_seconds, h.idle_seconds]), [[1, 30 * 60, 30 * 60], [0, 30 * 60, 0]], 'balcony 2 busy until now');
  t.same(w.balconies.map((b) => b.balcony_id), [1, 2, 3], 'every balcony of the site, in order');
  t.same(w.bots.hours.map((h) => [h.working_seconds, h.charging_seconds, h.faulted_seconds, h.offline_seconds, h.idle_seconds]),
    [[600, 1200, 0, 0, 2 * 3600 - 1800], [0, 0, 600, 0, 2 * 1800 - 600]], 'the fleet of two bots');
  t.equal(w.bots.count, 2);
  t.equal(w.requests.done, 1);
  t.same(w.requests.hours.map((h) => h.done), [0, 1]);
  t.ok(Math.abs(w.requests.lead_time_p50_seconds! - 4200) / 4200 < 0.05, `lead time ${w.requests.lead_time_p50_seconds} near 4200 s`);
  t.same(w.errors.by_code, [{ code: '0x6005', count: 1 }, { code: '0x7001', count: 1 }]);
  t.same(w.errors.hours, [{ hour: T0, code: '0x6005', count: 1 }, { hour: T0 + 60 * M, code: '0x7001', count: 1 }]);
  const bots = kpi.bots(T0, T0 + 120 * M, now);
  t.same(bots.map((b) => [b.bot_id, b.seconds.working_seconds, b.seconds.charging_seconds, b.seconds.faulted_seconds, b.seconds.idle_seconds]),
    [[1, 600, 0, 0, 5400 - 600], [2, 0, 1200, 600, 5400 - 1800]], 'per bot');
  const totals = kpi.balconyTotals(now);
  t.same(totals.map((b) => [b.balcony_id, b.carriers_presented_total, b.busy_share_this_hour]), [[1, 2, 1 / 3], [2, 1, 1], [3, 0, 0]]);
}

t.test('a scripted run gives the figures it should, and they survive a restart', async (t) => {
  const dir = tempDir(t);
  let store = await Store.open({ dir }, ALL_COLLECTIONS);
  await new Kpi({ store, balconyIds: [1, 2, 3] }).begin(T0);
  await script(store);
  check(t, new Kpi({ store, balconyIds: [1, 2, 3] }));
  await store.close();
  store = await Store.open({ dir }, ALL_COLLECTIONS);
  t.teardown(() => store.close());
  check(t, new Kpi({ store, balconyIds: [1, 2, 3] }));
});

t.test('a refused write counts nothing', async (t) => {
  const dir = tempDir(t);
  const store = await Store.open({ dir }, ALL_COLLECTIONS);
  t.teardown(() => store.close());
  const kpi = new Kpi({ store, balconyIds: [1] });
  await kpi.begin(T0);
  const waiting = newJob({ id: 'p', request_id: 'r', type: 'PICKING', entity_id: 'S', entity_index: 0, seq: 1, now: T0 }, { status: 'EXECUTING', balcony_id: 1, carrier_id: 'C', wait: { waiting_for: 'trigger', reason: '' } });
  await t.rejects(store.write(() => {
    store.collection(jobs).put(waiting);
    throw new Error('refused');
  }));
  const w = kpi.window(T0, T0 + 60 * M, T0 + 30 * M);
  t.equal(w.balconies[0]!.hours[0]!.carriers_presented, 0);
  t.equal(w.balconies[0]!.hours[0]!.busy_seconds, 0, 'no balcony state was left busy');
  await store.write(() => store.collection(jobs).put(waiting));
  t.equal(kpi.window(T0, T0 + 60 * M, T0 + 30 * M).balconies[0]!.hours[0]!.carriers_presented, 1, 'the same change, committed, counts');
});

t.test('pruning drops the hours before the cutoff and nothing after', async (t) => {
  const dir = tempDir(t);
  const store = await Store.open({ dir }, ALL_COLLECTIONS);
  t.teardown(() => store.close());
  await new Kpi({ store, balconyIds: [1] }).begin(T0);
  await script(store);
  const before = store.collection(kpiHours).count() + store.collection(kpiBotHours).count();
  const n = await pruneKpiHours(store, T0 + 60 * M + 5 * M);
  const left = [...store.collection(kpiHours).range()].map((r) => r.hour).concat([...store.collection(kpiBotHours).range()].map((r) => r.hour));
  t.ok(n > 0, `${n} records pruned`);
  t.equal(left.length, before - n);
  t.ok(left.length > 0 && left.every((h) => h === T0 + 60 * M), 'only the hour from 11:00 is left');
});
