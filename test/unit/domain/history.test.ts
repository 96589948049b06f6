// Keeping history: what the pruner decides (table-driven), what it removes from a real store
// and what it keeps, the archive it writes first (readable, checksummed, bounded), support
// issues, the store's budget, and what a client resuming from a pruned cursor hears.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { v7 } from 'uuid';
import { Store } from '../../../src/store/store.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { EVENT } from '../../../src/domain/events/catalogue.js';
import { EVENT_COLLECTIONS, Events, type EventRecord } from '../../../src/domain/events/events.js';
import { Subscription } from '../../../src/domain/events/subscription.js';
import { REQUEST_COLLECTIONS, jobs, requests, type JobRecord, type JobStatus, type RequestRecord, type RequestStatus } from '../../../src/domain/requests/records.js';
import { SupportOutbox } from '../../../src/domain/support/outbox.js';
import { HistoryArchive } from '../../../src/domain/history/archive.js';
import { PRUNED_MARK } from '../../../src/domain/history/marks.js';
import { DELETE_EVENTS, DELETE_REQUESTS, FILE_EVENTS, HistoryPruner, type RetentionSettings } from '../../../src/domain/history/pruner.js';
import { BUDGET_LOW_WATER, DAY_MS, decideBudgetAlarm, forecast, idInstant, nextDeleteSize, nextSlice, overBudget, prunedReason, PRUNER_SHARE_LEAST, PRUNER_SHARE_MOST, prunerShare, restAfter, type HistorySnapshot } from '../../../src/domain/history/retention.js';
import { StoreUsage, USAGE_COLLECTIONS, type StorageReport } from '../../../src/domain/history/store-usage.js';
import { storeProblems } from '../../../src/cli/status.js';

const T0 = Date.UTC(2026, 0, 1);

t.test('the next slice: age first, then over the budget the oldest history of either kind', async (t) => {
  const base: HistorySnapshot = { now: T0 + 100 * DAY_MS, requestDays: 90, eventDays: 30, oldestEnded: undefined, oldestEvent: undefined };
  const rows: [string, Partial<HistorySnapshot>, boolean, ReturnType<typeof nextSlice>][] = [
    ['nothing held', {}, false, undefined],
    ['nothing held, over budget', {}, true, undefined],
    ['requests within retention', { oldestEnded: T0 + 20 * DAY_MS }, false, undefined],
    ['a request past retention', { oldestEnded: T0 + 5 * DAY_MS }, false, { kind: 'requests', before: T0 + 10 * DAY_MS, reason: 'age' }],
    ['an event past its own retention', { oldestEvent: T0 + 60 * DAY_MS }, false, { kind: 'events', before: T0 + 70 * DAY_MS, reason: 'age' }],
    ['both due: requests first', { oldestEnded: T0, oldestEvent: T0 }, false, { kind: 'requests', before: T0 + 10 * DAY_MS, reason: 'age' }],
    ['over budget, requests older', { oldestEnded: T0 + 50 * DAY_MS, oldestEvent: T0 + 80 * DAY_MS }, true, { kind: 'requests', before: T0 + 80 * DAY_MS, reason: 'size' }],
    ['over budget, events older', { oldestEnded: T0 + 80 * DAY_MS, oldestEvent: T0 + 75 * DAY_MS }, true, { kind: 'events', before: T0 + 80 * DAY_MS, reason: 'size' }],
    ['over budget, same instant: never an empty slice', { oldestEnded: T0 + 80 * DAY_MS, oldestEvent: T0 + 80 * DAY_MS }, true, { kind: 'requests', before: T0 + 80 * DAY_MS + 1, reason: 'size' }],
    ['over budget, only requests', { oldestEnded: T0 + 99 * DAY_MS }, true, { kind: 'requests', before: T0 + 100 * DAY_MS + 1, reason: 'size' }],
    ['over budget, only events', { oldestEvent: T0 + 99 * DAY_MS }, true, { kind: 'events', before: T0 + 100 * DAY_MS + 1, reason: 'size' }],
    ['a clock set back: nothing is old', { now: T0, oldestEnded: T0 + 50 * DAY_MS, oldestEvent: T0 + 50 * DAY_MS }, false, undefined],
  ];
  for (const [name, change, over, want] of rows) t.same(nextSlice({ ...base, ...change }, over), want, name);
});

t.test('the budget: size pruning starts over it and stops at the low water; alarms at 80 and 90 with hysteresis', async (t) => {
  t.equal(overBudget(101, 100, false), true);
  t.equal(overBudget(100, 100, false), false);
  t.equal(overBudget(95, 100, true), true, 'pruning goes on above the low water');
  t.equal(overBudget(100 * BUDGET_LOW_WATER, 100, true), false);
  const rows: [number, number, { raise?: number; next: number }][] = [
    [0, 50, { next: 0 }],
    [0, 80, { raise: 80, next: 80 }],
    [0, 95, { raise: 90, next: 90 }],
    [80, 85, { next: 80 }],
    [80, 91, { raise: 90, next: 90 }],
    [90, 87, { next: 90 }],
    [90, 84, { next: 80 }],
    [80, 76, { next: 80 }],
    [80, 74, { next: 0 }],
  ];
  for (const [said, share, want] of rows) t.same(decideBudgetAlarm(said as 0 | 80 | 90, share), want, `said ${said}, now ${share} %`);
});

t.test('the size of the next delete transaction follows what the last one cost, halving or doubling at most', async (t) => {
  const rows: [number, number, number][] = [
    [10, 3, 10],
    [10, 1.5, 20],
    [10, 0.1, 20],
    [10, 0, 20],
    [10, 6, 5],
    [10, 60, 5],
    [1, 60, 1],
    [100, 0.1, 100],
    [10, 2, 15],
  ];
  for (const [last, ms, want] of rows) t.equal(nextDeleteSize(last, ms, 3, 1, 100), want, `${last} records in ${ms} ms`);
});

t.test('the pruner takes what the rest of the loop leaves, within bounds', async (t) => {
  const rows: [string, number, number][] = [
    ['an idle loop: the most', 0, PRUNER_SHARE_MOST],
    ['a quiet loop', 0.1, PRUNER_SHARE_MOST],
    ['half busy: the other half', 0.5, 0.5],
    ['busy: what is left', 0.75, 0.25],
    ['saturated: still the least, to keep up with the site', 1, PRUNER_SHARE_LEAST],
    ['not measured yet: as if saturated', Number.NaN, PRUNER_SHARE_LEAST],
  ];
  for (const [name, busy, want] of rows) t.equal(prunerShare(busy), want, name);
  t.equal(restAfter(3, 0.5), 3, 'half the loop: rests as long as it held it');
  t.equal(restAfter(2, 0.2), 8, 'a fifth: rests four times as long');
  t.equal(restAfter(-1, 0.2), 0, 'a negative hold (a clock read twice) rests not at all');
});

t.test('the forecast: growth over the last day of samples, days left at that rate', async (t) => {
  const now = T0 + 10 * DAY_MS;
  t.same(forecast([], now, 1000), { growthPerDay: null, daysLeft: null }, 'no samples');
  t.same(forecast([{ at: now - 60_000, usedBytes: 0 }, { at: now, usedBytes: 100 }], now, 1000), { growthPerDay: null, daysLeft: null }, 'a minute is no trend');
  t.same(forecast([{ at: now - DAY_MS, usedBytes: 1000 }, { at: now - DAY_MS / 2, usedBytes: 1500 }, { at: now, usedBytes: 2000 }], now, 5000), { growthPerDay: 1000, daysLeft: 5 });
  t.same(forecast([{ at: now - 3 * DAY_MS, usedBytes: 0 }, { at: now - DAY_MS, usedBytes: 1000 }, { at: now, usedBytes: 1000 }], now, 5000), { growthPerDay: 0, daysLeft: null }, 'flat over the last day: not filling, whatever came before');
  t.same(forecast([{ at: now - DAY_MS, usedBytes: 2000 }, { at: now, usedBytes: 1000 }], now, 5000), { growthPerDay: -1000, daysLeft: null }, 'shrinking');
  t.same(forecast([{ at: now - 2 * 3_600_000, usedBytes: 0 }, { at: now, usedBytes: 100 }, { at: now + DAY_MS, usedBytes: 9999 }], now, 1200), { growthPerDay: 1200, daysLeft: 1 }, 'a sample from a clock that was ahead is left out');
});

t.test('ids carry their instant; a 404 says when an id may have been pruned', async (t) => {
  const id = v7({ msecs: T0 + 5 });
  t.equal(idInstant(id), T0 + 5);
  t.equal(idInstant('a4c6f2a0-0000-4000-8000-000000000000'), undefined, 'a version 4 id has none');
  t.equal(idInstant('nonsense'), undefined);
  t.match(prunedReason('request', id, T0 + 10), /^request .* does not exist: it was made 2026-01-01T00:00:00.005Z, and ended requests made up to 2026-01-01T00:00:00.010Z have been pruned/);
  t.equal(prunedReason('job', id, 0), undefined, 'nothing pruned yet');
  t.equal(prunedReason('job', id, T0), undefined, 'made after the last pruned one');
});

interface Rig {
  dir: string;
  store: Store;
  events: Events;
  archive: HistoryArchive;
  pruner: HistoryPruner;
  settings: RetentionSettings;
  clock: { now: number };
  logged: { level: string; obj: object; msg: string }[];
}

async function rig(t: { teardown(fn: () => unknown): void }, o: { disk?: () => number | undefined; quota?: number; outbox?: SupportOutbox; paced?: boolean } = {}): Promise<Rig> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-history-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir: path.join(dir, 'db') }, [...REQUEST_COLLECTIONS, ...EVENT_COLLECTIONS, ...USAGE_COLLECTIONS], MIGRATIONS);
  t.teardown(() => store.close());
  const clock = { now: T0 };
  const events = new Events(store, () => clock.now);
  const archive = await HistoryArchive.open(path.join(dir, 'archive'), o.quota ?? 1 << 30);
  const settings: RetentionSettings = { requestDays: 90, eventDays: 30, storeSharePercent: 50 };
  const logged: Rig['logged'] = [];
  const log = (level: string) => (obj: object, msg: string) => logged.push({ level, obj, msg });
  const pruner = new HistoryPruner({
    store, events, archive, outbox: o.outbox, storeDir: path.join(dir, 'db'), now: () => clock.now, settings: () => ({ ...settings }), diskBytes: o.disk ?? (() => 2 ** 40), duty: o.paced ? undefined : 1,
    log: { info: log('info'), warn: log('warn'), error: log('error') },
  });
  return { dir, store, events, archive, pruner, settings, clock, logged };
}

const request = (created: number, status: RequestStatus, ended = created): RequestRecord => ({
  id: v7({ msecs: created, seq: Math.floor(Math.random() * 1e6) }), type: 'FULFILLMENT', status, priority: 10, counter: 0, level_id: null, bot_id: null, placing_pos: null,
  entities: [], warnings: [], cancel_requested: false, idempotency_key: null, abort_feedback: null, placements: null, created_at: created, updated_at: ended,
});

const job = (r: RequestRecord, status: JobStatus, n: number): JobRecord => ({
  id: v7({ msecs: r.created_at + n, seq: Math.floor(Math.random() * 1e6) }), request_id: r.id, type: 'RETRIEVING', status, entity_id: 'SKU-1', entity_index: 0,
  carrier_id: null, box_id: null, bot_id: null, level_id: 1, balcony_id: null, balcony_ids: [], sku_id: null, sku_name: null, quantity: null, measurement_unit: null,
  on_empty_sku_action: null, is_selectable: false, wait: null, ended_because: null, progress: { kind: 'control' }, attempt: 1, recovers: null, replaced_by: null,
  retry_at: null, parent_job_ids: [], target: null, seq: n, created_at: r.created_at + n, updated_at: r.updated_at,
});

/** Stores requests, each with its jobs of the given statuses. */
async function put(store: Store, ...rows: [RequestRecord, ...JobStatus[]][]): Promise<void> {
  await store.write(() => {
    for (const [r, ...statuses] of rows) {
      store.collection(requests).put(r);
      statuses.forEach((s, i) => store.collection(jobs).put(job(r, s, i + 1)));
    }
  });
}

/** Every record of the archive's files of `kind`, in file order. */
function archived(archive: HistoryArchive, kind: string): Record<string, unknown>[] {
  return archive.list().filter((e) => e.kind === kind).flatMap((e) => gunzipSync(readFileSync(path.join(archive.dir, e.file))).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
}

t.test('ended requests past the retention leave with their jobs, archived first; open work and what it holds stay', async (t) => {
  // Paced as in the daemon: the pruner rests between its holds of the event loop.
  const r = await rig(t, { paced: true });
  const { store } = r;
  const old = request(T0, 'SUCCEEDED', T0 + 3_600_000);
  const cancelled = request(T0 + 1000, 'CANCELLED', T0 + 7_200_000);
  const openOld = request(T0 + 2000, 'EXECUTING');
  const homeBound = request(T0 + 3000, 'CANCELLED', T0 + 3000);
  const young = request(T0 + 80 * DAY_MS, 'SUCCEEDED');
  await put(store, [old, 'SUCCEEDED', 'SUCCEEDED'], [cancelled, 'CANCELLED'], [openOld, 'EXECUTING'], [homeBound, 'CANCELLED', 'EXECUTING'], [young, 'SUCCEEDED']);
  r.clock.now = T0 + 95 * DAY_MS;

  const removed = await r.pruner.pass();
  t.match(removed, { requests: 2, jobs: 3, archive_files: 1 });
  t.notOk(store.collection(requests).get(old.id));
  t.notOk(store.collection(requests).get(cancelled.id));
  t.same(store.collection(jobs).keysBy('request_id', old.id), [], 'its jobs went with it');
  t.ok(store.collection(requests).get(openOld.id), 'an open request stays, however old');
  t.ok(store.collection(requests).get(homeBound.id), 'an ended request whose carrier is still on its way home stays');
  t.equal(store.collection(jobs).keysBy('request_id', homeBound.id).length, 2);
  t.ok(store.collection(requests).get(young.id), 'within the retention');

  const lines = archived(r.archive, 'requests');
  t.same(lines.filter((l) => l['kind'] === 'request').map((l) => l['id']), [old.id, cancelled.id], 'oldest ended first');
  t.same(lines.filter((l) => l['kind'] === 'job').length, 3);
  t.same(lines[0], { kind: 'request', ...old }, 'the record as it was stored');
  const [entry] = r.archive.list();
  const bytes = readFileSync(path.join(r.archive.dir, entry!.file));
  t.equal(entry!.sha256, createHash('sha256').update(bytes).digest('hex'));
  t.match(entry, { kind: 'requests', records: 5, from: new Date(old.updated_at).toISOString(), to: new Date(cancelled.updated_at).toISOString() });
  t.match(readFileSync(path.join(r.archive.dir, 'SHA256SUMS'), 'utf8'), `${entry!.sha256}  ${entry!.file}\n`);
  t.same(JSON.parse(readFileSync(path.join(r.archive.dir, 'manifest.json'), 'utf8')).files, [entry]);

  t.equal(store.sequence(PRUNED_MARK.requests), cancelled.created_at, 'the 404s know what was pruned');
  t.match(prunedReason('request', old.id, store.sequence(PRUNED_MARK.requests)), /have been pruned/);
  t.equal(prunedReason('request', young.id, store.sequence(PRUNED_MARK.requests)), undefined);
  t.match(r.logged.find((l) => l.msg.startsWith('history pruned')), { level: 'info', obj: { code: 'history_pruned', requests: 2 } });
  t.ok([...r.events.after(0)].some((e) => e.hex_value === EVENT.historyPruned.hex));

  t.match(await r.pruner.pass(), { requests: 0, jobs: 0 }, 'a second pass finds nothing more');
  t.equal(r.archive.list().length, 1, 'and writes no empty file');
  r.settings.requestDays = 1;
  t.match(await r.pruner.pass(), { requests: 1 }, 'a shorter retention from the settings takes effect at the next pass');
  t.ok(store.collection(requests).get(openOld.id));
});

t.test('events past their retention leave in several files, each deleted in small transactions', async (t) => {
  const r = await rig(t);
  const n = FILE_EVENTS + 7;
  await r.store.write(() => {
    for (let i = 0; i < n; i++) r.events.record(EVENT.jobStatus, `old ${i}`);
  });
  r.clock.now = T0 + 31 * DAY_MS;
  const young = await r.events.emit(EVENT.started, 'young');
  let largest = 0;
  const stop = r.store.onCommit((notice) => (largest = Math.max(largest, notice['events']?.length ?? 0)));
  const removed = await r.pruner.pass();
  stop();
  t.equal(removed.events, n);
  t.ok(largest <= DELETE_EVENTS.most + 1, `no transaction removed more than ${DELETE_EVENTS.most} (${largest})`);
  const left = [...r.events.after(0)].map((e) => e.description);
  t.equal(left[0], 'young', 'the young one stays');
  t.ok(left.every((d) => !d.startsWith('old ')));
  t.equal(r.archive.list().filter((e) => e.kind === 'events').length, 2);
  const lines = archived(r.archive, 'events');
  t.equal(lines.length, n);
  t.same(lines.map((l) => l['id']), Array.from({ length: n }, (_, i) => i + 1), 'every event once, in order');
  t.ok(young.id > n);
});

t.test('over its share of the disk the oldest history goes first, whatever its age, down to the low water; open work stays', async (t) => {
  let disk = 2 ** 40;
  const r = await rig(t, { disk: () => disk });
  const rows: [RequestRecord, ...JobStatus[]][] = [];
  for (let i = 0; i < 300; i++) rows.push([request(T0 + i * 60_000, 'SUCCEEDED'), 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
  const open = request(T0, 'ACCEPTED');
  rows.push([open, 'ACCEPTED']);
  await put(r.store, ...rows);
  r.clock.now = T0 + DAY_MS;
  await r.events.emit(EVENT.started, 'recent');
  const used = r.pruner.usedBytes();
  t.match(await r.pruner.pass(), { requests: 0 }, 'within the retention and the budget: nothing');
  // A disk whose half is 80 % of what the store takes: over its budget by a quarter.
  disk = Math.floor(used * 0.8 * 2);
  const removed = await r.pruner.pass();
  t.ok(removed.requests > 0 && removed.requests < 300, `some of the oldest left (${removed.requests})`);
  t.ok(r.pruner.usedBytes() <= r.pruner.budgetBytes() * BUDGET_LOW_WATER, 'down to the low water');
  t.ok(r.store.collection(requests).get(open.id), 'the open request stays');
  const kept = [...r.store.collection(requests).runsBy('ended', false)].flat();
  t.ok(kept.every((k) => k.updated_at >= T0 + removed.requests * 60_000 - 60_000), 'those that stay are the youngest');
  t.equal(archived(r.archive, 'requests').filter((l) => l['kind'] === 'request').length, removed.requests, 'archived first');
});

t.test('an archive that cannot be written: age pruning waits; over the budget history leaves unarchived and an error event says so', async (t) => {
  let disk = 2 ** 40;
  const r = await rig(t, { disk: () => disk });
  const ended = request(T0, 'SUCCEEDED');
  await put(r.store, [ended, 'SUCCEEDED']);
  r.clock.now = T0 + 100 * DAY_MS;
  // The archive's directory taken away and a file put in its place (root ignores permissions).
  rmSync(r.archive.dir, { recursive: true });
  writeFileSync(r.archive.dir, 'not a directory');
  await t.rejects(r.pruner.pass(), { code: 'ENOTDIR' });
  t.ok(r.store.collection(requests).get(ended.id), 'nothing left the store unarchived');
  t.match(r.pruner.state().last_error, /ENOTDIR/);
  t.match(r.logged.find((l) => l.level === 'error'), { obj: { code: 'history_prune_failed' } });

  r.settings.requestDays = 3650;
  disk = Math.floor(r.pruner.usedBytes() / 2);
  // Heard as it commits: over a budget no store can meet, the event is itself history that leaves.
  const heard: string[] = [];
  r.events.subscribe((e) => heard.push(e.hex_value));
  const removed = await r.pruner.pass();
  t.equal(removed.requests, 1);
  t.notOk(r.store.collection(requests).get(ended.id));
  t.ok(heard.includes(EVENT.historyUnarchived.hex), 'event 0x100C');
  t.match(r.logged.find((l) => l.level === 'error' && (l.obj as { code?: string }).code === 'history_unarchived'), { msg: /cannot be written .* the oldest requests leave unarchived/ });
  t.equal(r.pruner.state().last_error, null);
});

t.test('the archive: a crash\'s leftovers go, an unlisted file is listed, the quota drops the oldest files', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-archive-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let archive = await HistoryArchive.open(dir, 1 << 30);
  const write = async (kind: string, n: number, at: number) => {
    const w = await archive.begin(kind);
    for (let i = 0; i < n; i++) await w.add({ i, pad: 'x'.repeat(64) });
    return w.finish(at, at + 1000);
  };
  const first = await write('events', 10, T0);
  t.match(first.entry, { kind: 'events', records: 10, from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T00:00:01.000Z' });
  t.match(first.entry.file, /^events-20260101T000000Z-20260101T000001Z-[0-9a-f]{6}\.ndjson\.gz$/);
  const abandoned = await archive.begin('events');
  await abandoned.add({ i: 0 });
  await abandoned.abandon();
  writeFileSync(path.join(dir, '.tmp-events-dead'), 'half a file');
  writeFileSync(path.join(dir, 'manifest.json'), '{ torn');
  archive = await HistoryArchive.open(dir, 1 << 30);
  t.same(readdirSync(dir).filter((f) => f.startsWith('.tmp-')), [], 'leftovers removed');
  t.same(archive.list().map((e) => [e.file, e.sha256]), [[first.entry.file, first.entry.sha256]], 'a file the torn manifest lost is listed again');

  archive = await HistoryArchive.open(dir, first.entry.bytes * 2 + 10);
  const second = await write('events', 10, T0 + DAY_MS);
  t.same(second.dropped, [], 'two files fit');
  const third = await write('requests', 10, T0 + 2 * DAY_MS);
  t.same(third.dropped.map((e) => e.file), [first.entry.file], 'the oldest went');
  t.same(archive.list().map((e) => e.file), [second.entry.file, third.entry.file]);
  t.notOk(readdirSync(dir).includes(first.entry.file));
});

t.test('support issues past the retention are archived with their attachments, then removed', async (t) => {
  const clock = { now: T0 };
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-support-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const outbox = await SupportOutbox.open(stateDir, { now: () => clock.now });
  const old = await outbox.create({ payload: { title: 'old' }, files: [{ filename: 'log.txt', type: 'text/plain', data: Buffer.from('bytes of the log') }] });
  clock.now = T0 + 60 * DAY_MS;
  const young = await outbox.create({ payload: { title: 'young' }, files: [] });
  const r = await rig(t, { outbox });
  r.clock.now = T0 + 91 * DAY_MS;
  const removed = await r.pruner.pass();
  t.equal(removed.support_issues, 1);
  t.same(await outbox.keys(), [young.key]);
  const [line] = archived(r.archive, 'support');
  t.match(line, { kind: 'support_issue', key: old.key, payload: { title: 'old' }, forwarding: { status: 'pending' } });
  t.equal(Buffer.from((line!['files'] as { data_base64: string }[])[0]!.data_base64, 'base64').toString(), 'bytes of the log');
});

t.test('the storage report: size, free pages, growth and forecast from samples kept in the store; alarms at 80 and 90 %', async (t) => {
  let disk = 2 ** 40;
  const r = await rig(t, { disk: () => disk });
  const usage = new StoreUsage({
    store: r.store, events: r.events, pruner: r.pruner, archive: r.archive, archiveQuotaBytes: 1 << 30, storeDir: path.join(r.dir, 'db'),
    settings: () => r.settings, now: () => r.clock.now, log: { warn: () => undefined, error: () => undefined },
  });
  await usage.sample();
  let report = usage.report();
  t.ok(report.used_bytes > 0 && report.file_bytes >= report.used_bytes);
  t.equal(report.free_bytes, report.file_bytes - report.used_bytes);
  t.equal(report.growth_bytes_per_day, null, 'one sample is no trend');
  const rows: [RequestRecord, ...JobStatus[]][] = [];
  for (let i = 0; i < 500; i++) rows.push([request(T0 + i, 'SUCCEEDED'), 'SUCCEEDED', 'SUCCEEDED']);
  await put(r.store, ...rows);
  r.clock.now = T0 + DAY_MS / 2;
  report = usage.report();
  t.ok(report.growth_bytes_per_day! > 0, `growing ${report.growth_bytes_per_day} bytes a day`);
  t.ok(report.days_until_full! > 0);
  t.ok(report.days_until_budget! > 0);
  t.equal(report.history.oldest_ended_request_at, T0);

  disk = Math.floor((report.used_bytes / 0.85) * 2);
  await usage.sample();
  disk = Math.floor((report.used_bytes / 0.95) * 2);
  await usage.sample();
  await usage.sample();
  t.same([...r.events.after(0)].map((e: EventRecord) => e.hex_value), [EVENT.storeBudgetHigh.hex, EVENT.storeBudgetCritical.hex], 'each line said once');
});

t.test('a stream resumed from a pruned cursor hears which events went and the oldest still held', async (t) => {
  const r = await rig(t);
  for (let i = 0; i < 5; i++) await r.events.emit(EVENT.started, `old ${i}`);
  r.clock.now = T0 + 31 * DAY_MS;
  await r.events.emit(EVENT.started, 'young');
  await r.pruner.pass();
  const oldest = [...r.events.after(0)][0]!.id;
  const sent: Record<string, unknown>[] = [];
  const open = (after: number | undefined) => {
    sent.length = 0;
    const s = new Subscription(r.events, () => true, (e) => e.id, { send: (m) => (sent.push(JSON.parse(m) as Record<string, unknown>), true), close: () => undefined }, after);
    s.start();
    s.stop();
    return sent.slice();
  };
  const resumed = open(2);
  t.match(resumed[0], { type: 'ready', after: 2, oldest_retained_id: oldest });
  t.match(resumed[1], { type: 'pruned', after: 2, oldest_retained_id: oldest, message: `events 3 to ${oldest - 1} were pruned (events.retentionDays) and are in the history archive; the stream goes on from event ${oldest}` });
  t.same(resumed.slice(2).map((m) => m['event']), [...r.events.after(0)].map((e) => e.id), 'then every event held');
  t.notOk(open(oldest - 1).some((m) => m['type'] === 'pruned'), 'a cursor just before the oldest lost nothing');
  t.notOk(open(undefined).some((m) => m['type'] === 'pruned'), 'nor a stream that starts now');
});

t.test('migration 12 indexes the ended requests of a version 11 store', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-m12-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const v11def = { ...requests, indexes: requests.indexes!.filter((i) => i.name !== 'ended') };
  const v11 = await Store.open({ dir }, [v11def], MIGRATIONS.slice(0, 11));
  const done = request(T0, 'SUCCEEDED', T0 + 5);
  const open = request(T0, 'EXECUTING');
  await v11.write(() => {
    v11.collection(v11def).put(done);
    v11.collection(v11def).put(open);
  });
  await v11.close();
  const store = await Store.open({ dir }, [requests], MIGRATIONS);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), 12);
  t.same([...store.collection(requests).keysWithin('ended', {})], [done.id], 'the ended one, under when it ended');
});

t.test('delete transactions of requests stay small', async (t) => {
  const r = await rig(t);
  const rows: [RequestRecord, ...JobStatus[]][] = [];
  for (let i = 0; i < DELETE_REQUESTS.most * 2 + 1; i++) rows.push([request(T0 + i, 'SUCCEEDED'), 'SUCCEEDED']);
  await put(r.store, ...rows);
  r.clock.now = T0 + 91 * DAY_MS;
  let largest = 0;
  const stop = r.store.onCommit((notice) => (largest = Math.max(largest, notice['requests']?.length ?? 0)));
  t.equal((await r.pruner.pass()).requests, rows.length);
  stop();
  t.ok(largest <= DELETE_REQUESTS.most, `at most ${DELETE_REQUESTS.most} requests a transaction (${largest})`);
});

t.test('the store counts its pages: used and free add up to the file\'s high-water mark', async (t) => {
  const r = await rig(t);
  const before = r.store.pageUse();
  const rows: [RequestRecord, ...JobStatus[]][] = [];
  for (let i = 0; i < 2000; i++) rows.push([request(T0 + i, 'SUCCEEDED'), 'SUCCEEDED']);
  await put(r.store, ...rows);
  const full = r.store.pageUse();
  t.ok(full.usedPages > before.usedPages + 100, `records take pages (${before.usedPages} -> ${full.usedPages})`);
  t.equal(full.usedPages + full.freePages, full.lastPage + 1);
  r.clock.now = T0 + 91 * DAY_MS;
  await r.pruner.pass();
  // Two more commits: LMDB frees a transaction's old pages once no reader can still see them.
  await r.events.emit(EVENT.started, 'a');
  await r.events.emit(EVENT.started, 'b');
  const after = r.store.pageUse();
  t.ok(after.usedPages < full.usedPages / 2, `pruned records give their pages back (${full.usedPages} -> ${after.usedPages})`);
  t.ok(after.freePages > full.freePages, 'as free pages of the file');
  // As much written again: into the freed pages, so the file does not grow (LMDB's deletes copy a few pages on write).
  const again: [RequestRecord, ...JobStatus[]][] = [];
  for (let i = 0; i < 2000; i++) again.push([request(r.clock.now + i, 'SUCCEEDED'), 'SUCCEEDED']);
  await put(r.store, ...again);
  t.ok(r.store.pageUse().lastPage <= after.lastPage, `the file holds the same history again without growing (${after.lastPage} -> ${r.store.pageUse().lastPage})`);
});

t.test('status calls the store a problem when the forecast is short, the share nearly used or pruning failing', async (t) => {
  const base = {
    file_bytes: 0, used_bytes: 0, free_bytes: 0, page_size: 4096, disk_total_bytes: 1, disk_free_bytes: 1, budget_bytes: 1, budget_used_percent: 10,
    growth_bytes_per_day: 1, days_until_budget: 400, days_until_full: 900, archive: { dir: '/a', files: 0, bytes: 0, quota_bytes: 1 },
    history: { retention_days: 90, event_retention_days: 30, oldest_ended_request_at: null, last_pass_at: null, last_error: null, pruned_requests: 0, pruned_jobs: 0, pruned_events: 0, pruned_support_issues: 0, archive_files_written: 0 },
  } satisfies StorageReport;
  const rows: [string, Partial<StorageReport>, RegExp[]][] = [
    ['healthy', {}, []],
    ['growth not known', { growth_bytes_per_day: null, days_until_budget: null, days_until_full: null }, []],
    ['the disk full within a month', { days_until_full: 12.5 }, [/disk under the store is full in 12.5 days/]],
    ['the share used within a month', { days_until_budget: 3 }, [/reaches its share of the disk in 3 days/]],
    ['the share nearly used', { budget_used_percent: 91.2 }, [/takes 91.2 % of its share/]],
    ['pruning failing', { history: { ...base.history, last_error: 'ENOSPC' } }, [/history pruning failed: ENOSPC/]],
  ];
  for (const [name, change, want] of rows) {
    const got = storeProblems({ ...base, ...change });
    t.equal(got.length, want.length, name);
    want.forEach((w, i) => t.match(got[i], w, name));
  }
  t.same(storeProblems(undefined), [], 'a status file of an older build');
});

t.test('a pass asked for while one runs books another, which reads the settings anew', async (t) => {
  const r = await rig(t);
  const older = request(T0, 'SUCCEEDED');
  const newer = request(T0 + 50 * DAY_MS, 'SUCCEEDED');
  await put(r.store, [older, 'SUCCEEDED'], [newer, 'SUCCEEDED']);
  r.clock.now = T0 + 95 * DAY_MS;
  const first = r.pruner.pass();
  r.settings.requestDays = 30;
  const joined = r.pruner.pass();
  t.equal(joined, first, 'joined the pass that runs');
  t.match(await first, { requests: 1 }, 'which read the retention it started with');
  await r.pruner.settle();
  t.notOk(r.store.collection(requests).get(newer.id), 'the pass booked after it read the shorter one');
  t.equal(r.pruner.state().totals.requests, 2);
});
