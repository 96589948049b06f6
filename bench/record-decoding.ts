// npm run bench:record-decoding [-- --records 20000 --rounds 10]
//
// What a read of a stored record costs (decoding field names was a third of both
// threads), over a real store of `--records` jobs:
//   baseline  the jobs as the build before wrote them: lmdb-js's own encoder, each record
//             carrying its field names (written and read through a plain database);
//   shared    the same jobs through the Store, whose records name their fields by shared
//             structures kept in the meta database.
// Prints µs a record for a scan and for reads by key, the bytes a record takes, and the
// shared / baseline ratios (below 1: cheaper).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { open } from 'lmdb';
import { Store } from '../src/store/store.js';
import { jobs, newJob, type JobRecord } from '../src/domain/requests/records.js';

const { values: args } = parseArgs({ options: { records: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '10' } } });
const RECORDS = Number(args.records);
const ROUNDS = Number(args.rounds);

function job(n: number): JobRecord {
  return newJob({ id: `J-${String(n).padStart(7, '0')}`, request_id: `R-${n >> 2}`, type: 'RETRIEVING', entity_id: `C-${n % 900}`, entity_index: n & 3, seq: n, now: 1_700_000_000_000 + n },
    { status: 'SUCCEEDED', carrier_id: `C-${n % 900}`, level_id: 1 + (n & 1), balcony_id: 1, sku_id: `SKU-${n % 5000}`, sku_name: `bolt ${n % 5000}`, quantity: n % 40, target: { x: n % 30, y: n % 17 } });
}

interface Figures { scan: number; get: number; bytes: number }

/** µs a record for `rounds` scans and as many reads by key in a scrambled order. */
function time(scan: () => Iterable<JobRecord>, get: (key: string) => JobRecord | undefined): Omit<Figures, 'bytes'> {
  const keys = Array.from({ length: RECORDS }, (_, i) => job((i * 7919) % RECORDS).id);
  let sink = 0;
  for (const r of scan()) sink += r.seq; // warm
  let t0 = performance.now();
  for (let round = 0; round < ROUNDS; round++) for (const r of scan()) sink += r.seq;
  const scanUs = ((performance.now() - t0) * 1000) / (ROUNDS * RECORDS);
  t0 = performance.now();
  for (let round = 0; round < ROUNDS; round++) for (const key of keys) sink += get(key)!.seq;
  const getUs = ((performance.now() - t0) * 1000) / (ROUNDS * RECORDS);
  if (sink === 0) throw new Error('nothing read');
  return { scan: scanUs, get: getUs };
}

async function baseline(): Promise<Figures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-bench-decoding-'));
  const root = open({ path: path.join(dir, 'warehouse.mdb'), maxDbs: 128, compression: false });
  const db = root.openDB<JobRecord, string>({ name: 'jobs' });
  await root.transaction(() => {
    for (let n = 0; n < RECORDS; n++) void db.put(job(n).id, job(n));
  });
  const figures = { ...time(() => (function* () {
    for (const { value } of db.getRange()) yield value;
  })(), (key) => db.get(key)), bytes: db.getBinary(job(1).id)!.length };
  await root.close();
  rmSync(dir, { recursive: true, force: true });
  return figures;
}

async function shared(): Promise<Figures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-bench-decoding-'));
  const store = await Store.open({ dir }, [jobs as never]);
  const c = store.collection(jobs);
  await store.write(() => {
    for (let n = 0; n < RECORDS; n++) c.put(job(n));
  });
  const figures = time(() => c.scan(), (key) => c.get(key));
  await store.close();
  const root = open({ path: path.join(dir, 'warehouse.mdb'), maxDbs: 128, compression: false, readOnly: true });
  const bytes = root.openDB({ name: 'jobs', encoding: 'binary' }).getBinary(job(1).id)!.length;
  await root.close();
  rmSync(dir, { recursive: true, force: true });
  return { ...figures, bytes };
}

const before = await baseline();
const after = await shared();
console.log(`bench:record-decoding: ${RECORDS} jobs, ${ROUNDS} rounds`);
const line = (label: string, a: number, b: number, digits: number) => console.log(`${label.padEnd(34)} ${a.toFixed(digits).padStart(9)} ${b.toFixed(digits).padStart(9)}   shared / baseline ${(b / a).toFixed(2)}`);
console.log(`${''.padEnd(34)} ${'baseline'.padStart(9)} ${'shared'.padStart(9)}`);
line('µs a record, scan', before.scan, after.scan, 3);
line('µs a record, read by key', before.get, after.get, 3);
line('bytes a record', before.bytes, after.bytes, 0);
