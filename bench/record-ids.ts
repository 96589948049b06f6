// npm run bench:record-ids [-- --records 300000 --batches 500 --per-commit 8 --warmup 1500]
//
// What the order of new request ids costs a commit as the store grows. A real Store
// (LMDB, fsync and all) with the real `requests` and `events` collections is filled with
// --records refused requests, each with its Idempotency-Key and an event, as `POST /requests`
// under the load mix stores them; then, after --warmup commits unmeasured, --batches commits of
// --per-commit new ones are timed.
// The baseline is random ids (`randomUUID`, version 4, as requests had before the ninth round),
// in the same run against `newRecordId` (version 7, time first). Two rounds each, alternated;
// prints ms a commit, the store's size on disk, and the ratios of new to baseline.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { eventRecords, type EventRecord } from '../src/domain/events/events.js';
import { newRecordId } from '../src/domain/requests/record-id.js';
import { requests, type RequestRecord } from '../src/domain/requests/records.js';
import { Store } from '../src/store/store.js';

const { values: args } = parseArgs({ options: { records: { type: 'string', default: '300000' }, batches: { type: 'string', default: '500' }, 'per-commit': { type: 'string', default: '8' }, warmup: { type: 'string', default: '1500' } } });
const RECORDS = Number(args.records);
const BATCHES = Number(args.batches);
const PER_COMMIT = Number(args['per-commit']);
const WARMUP = Number(args.warmup);

let event = 0;

/** A refused fulfillment of one SKU, as the mix's `POST /requests` leaves it, and its event. */
function putRefused(store: Store, id: string): void {
  const now = Date.now();
  const request: RequestRecord = {
    id, type: 'FULFILLMENT', status: 'ABORTED', priority: 10, counter: event, level_id: null, bot_id: null, placing_pos: null,
    entities: [{ id: randomUUID(), entity_id: 'SKU-00001', entity_type: 'Sku', job_type: 'PICKING', sku_id: 'SKU-00001', balcony_ids: [], total_quantity: 1, completed_quantity: 0, succeeded_quantity: 0, cancelled_quantity: 1 }],
    warnings: [], cancel_requested: false, idempotency_key: randomUUID(),
    abort_feedback: [{ entity_id: 'SKU-00001', entity_type: 'Sku', error_code: '0x5002', human_string: 'asked 1 of SKU-00001, 0 can be had' }],
    placements: null, created_at: now, updated_at: now,
  };
  const record: EventRecord = { id: ++event, component: 'requests', severity: 2, hex_value: '0x6002', description: `request ${id} aborted`, bot_id: null, level_id: null, request_id: id, created_at: now };
  store.collection(requests).put(request);
  store.collection(eventRecords).put(record);
}

/** Fills a new store with `newId`'s ids, then times commits of new ones; ms a commit and the store's size on disk. */
async function run(newId: () => string): Promise<{ msPerCommit: number; mib: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wh-bench-ids-'));
  try {
    const defs = [requests as never, eventRecords as never];
    const filling = await Store.open({ dir }, defs);
    for (let done = 0; done < RECORDS; done += 10_000) {
      await filling.write(() => {
        for (let i = 0; i < Math.min(10_000, RECORDS - done); i++) putRefused(filling, newId());
      });
    }
    // Opened again: the fill's large commits would have sent the next ones to lmdb-js's write
    // thread for a while (commit-pace.ts), and the daemon commits the mix's on the event loop.
    await filling.close();
    const store = await Store.open({ dir }, defs);
    // Writes asked for in one turn commit together: one commit of PER_COMMIT requests.
    const commit = () => Promise.all(Array.from({ length: PER_COMMIT }, () => store.write(() => putRefused(store, newId()))));
    // Unmeasured first: after the fill's large transactions LMDB's free-page list is long, and
    // the first small commits pay for it (random ids: ten times the steady cost); the daemon's
    // commits are small from the start.
    for (let b = 0; b < WARMUP; b++) await commit();
    const t0 = performance.now();
    for (let b = 0; b < BATCHES; b++) await commit();
    const msPerCommit = (performance.now() - t0) / BATCHES;
    await store.close();
    // The file is sparse (LMDB maps 64 GiB): its allocated blocks are the pages written.
    return { msPerCommit, mib: (statSync(path.join(dir, 'warehouse.mdb')).blocks * 512) / 2 ** 20 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`bench:record-ids: ${RECORDS} refused requests with their events, then ${WARMUP} commits of ${PER_COMMIT} unmeasured and ${BATCHES} timed; load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
for (let round = 1; round <= 2; round++) {
  const random = await run(randomUUID);
  const ordered = await run(newRecordId);
  console.log(`round ${round}: random ids ${random.msPerCommit.toFixed(3)} ms a commit (store ${random.mib.toFixed(0)} MiB), time-ordered ${ordered.msPerCommit.toFixed(3)} ms (${ordered.mib.toFixed(0)} MiB); time-ordered / random: ${(ordered.msPerCommit / random.msPerCommit).toFixed(2)} a commit, ${(ordered.mib / random.mib).toFixed(2)} on disk`);
}
