// npm run bench:inventory [-- --spaces 100000 --levels 4 --fill 0.92 --boxes 2.9 --skus 5000 --seed 7
//                             --iterations 200 --slow-iterations 40 --warmup 10 --no-build --keep --only text
//                             --node-flags=--max-old-space-size=768]
//
// The inventory view and the SKU list on a generated site of >= 100,000 storage spaces and
// >= 250,000 boxes, through the real daemon (dist/main.js) over TLS on loopback with its real
// LMDB store. Each query's latency percentiles are printed next to the time this process takes
// to read the same number of raw records straight from the daemon's LMDB environment, measured
// in the same run just before that query's requests. The daemon's CPU time per request is
// printed too: on a shared machine it moves less than wall time.
//
//   1. Generate the site file (src/domain/site/generate.ts) and build dist/ (tsc).
//   2. First start on an empty state directory: the daemon seeds the inventory from the layout
//      (seedFromLayout) and builds the in-memory view; both times come from its log.
//   3. Stop it and start it again on the same state: the start an operator sees every day, and
//      the process whose latency and memory are measured (no seeding garbage left in it).
//   4. Per query: the raw reads, then warm-up, then one request at a time (keep-alive).
//   5. Resident memory (VmRSS, VmHWM from /proc) of the daemon after the load, and at first start.
//
// Latency is the client's: request written to last body byte read, JSON parsing excluded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { open, type Database, type RootDatabase } from 'lmdb';
import { generateSite } from '../src/domain/site/generate.js';
import { indexDbName } from '../src/store/collection.js';
import { structuresKey } from '../src/store/store.js';
import { daemonNodeFlags } from './daemon-flags.js';
import { eachLogLine } from './log-lines.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MIN_SPACES = 100_000;
const MIN_BOXES = 250_000;
const TARGET_INDEXED_MS = 10;
const TARGET_SEARCH_MS = 300;
const TARGET_MEMORY_KIB = 1024 * 1024;

const { values: args } = parseArgs({
  options: {
    spaces: { type: 'string', default: '100000' },
    levels: { type: 'string', default: '4' },
    fill: { type: 'string', default: '0.92' },
    boxes: { type: 'string', default: '2.9' },
    skus: { type: 'string', default: '5000' },
    seed: { type: 'string', default: '7' },
    iterations: { type: 'string', default: '200' },
    'slow-iterations': { type: 'string', default: '40' },
    warmup: { type: 'string', default: '10' },
    'no-build': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    only: { type: 'string' },
    'node-flags': { type: 'string' },
  },
});
const iterations = positive(args.iterations!, 'iterations');
const slowIterations = positive(args['slow-iterations']!, 'slow-iterations');
const warmup = Number(args.warmup);

// ---------------------------------------------------------------------------- the site

const work = mkdtempSync(path.join(os.tmpdir(), 'bench-inventory-'));
const stateDir = path.join(work, 'state');
const sitePath = path.join(work, 'site.json');
let daemon: ChildProcess | undefined;
process.on('exit', () => {
  daemon?.kill('SIGKILL');
  if (!args.keep) rmSync(work, { recursive: true, force: true });
});

const cpus = os.cpus();
console.log(`bench:inventory  ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, node ${process.version}`);
console.log(`load average at start: ${loadavg()}`);

const levels = Number(args.levels);
const layout = generateSite({
  levels,
  spacesPerLevel: Math.ceil(Number(args.spaces) / levels),
  balconiesPerLevel: 2,
  chargersPerLevel: 2,
  botsPerLevel: 10,
  carrierFill: Number(args.fill),
  boxesPerCarrier: Number(args.boxes),
  skus: Number(args.skus),
  seed: Number(args.seed),
});
writeFileSync(sitePath, JSON.stringify(layout));
const boxCount = layout.carriers.reduce((n, c) => n + (c.boxes?.length ?? 0), 0);
const siteLine = `${layout.carriers.length} carriers, ${boxCount} boxes, ${layout.skus.length} SKUs, ${levels} levels (seed ${args.seed})`;

if (!args['no-build']) {
  const build = spawnSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}
// Which list engine was measured: it is being worked on beside this bench.
const engineHash = createHash('sha256').update(readFileSync(path.join(ROOT, 'dist/domain/list/execute.js'))).digest('hex').slice(0, 12);

// ---------------------------------------------------------------------------- the daemon

interface Started {
  process: ChildProcess;
  port: number;
  /** Log lines by message, with their time (epoch ms). */
  log: Map<string, { time: number; line: Record<string, unknown> }>;
  /** Time of each log line in order, to find what ran between two of them. */
  lines: { msg: string; time: number }[];
  wallMs: number;
}

/** Starts dist/main.js on the state directory and waits for 'HTTPS API listening'. */
async function startDaemon(): Promise<Started> {
  const t0 = performance.now();
  const flags = [...daemonNodeFlags(), ...(args['node-flags']?.split(/\s+/).filter(Boolean) ?? [])];
  const child = spawn(process.execPath, [...flags, path.join(ROOT, 'dist/main.js')], {
    cwd: ROOT,
    // Info level: the start-up lines carry the seeding and view-build times. Nothing is logged
    // per request at info, so it costs nothing during the measurement.
    env: { ...process.env, WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_SITE: sitePath, WAREHOUSE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  daemon = child;
  const log = new Map<string, { time: number; line: Record<string, unknown> }>();
  const lines: { msg: string; time: number }[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    eachLogLine(child.stdout!, (line, text) => {
      const msg = String(line.msg);
      const time = Date.parse(String(line.time));
      log.set(msg, { time, line });
      lines.push({ msg, time });
      if (msg === 'HTTPS API listening') resolve(Number(line.port));
      if (line.level === 'fatal' || line.level === 60) reject(new Error(`daemon failed: ${text}`));
    });
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code} before listening`)));
  });
  return { process: child, port, log, lines, wallMs: performance.now() - t0 };
}

async function stopDaemon(started: Started): Promise<void> {
  const exited = new Promise((resolve) => started.process.once('exit', resolve));
  started.process.kill('SIGTERM');
  await exited;
  daemon = undefined;
}

/** VmRSS and VmHWM of a process, KiB. */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(/\s(\d+) kB/.exec(status.split('\n').find((l) => l.startsWith(`${name}:`)) ?? '')?.[1] ?? NaN);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** User + system CPU time of a process so far, ms. */
function cpuMs(pid: number): number {
  // Fields 14 and 15 of /proc/<pid>/stat, counted after the command name (which may hold spaces).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** Milliseconds between the log line before `msg` and `msg` itself: the step that logs `msg` when done. */
function stepMs(started: Started, msg: string): number | undefined {
  const i = started.lines.findIndex((l) => l.msg === msg);
  return i > 0 ? started.lines[i]!.time - started.lines[i - 1]!.time : undefined;
}

console.log(`site: ${siteLine}; list engine dist/domain/list/execute.js sha256 ${engineHash}`);
if (args['node-flags']) console.log(`daemon node flags (beyond the unit's): ${args['node-flags']}`);
const first = await startDaemon();
const firstMemory = memory(first.process.pid!);
const seededMs = stepMs(first, 'inventory seeded from the site layout');
const firstBuildMs = first.log.get('inventory view built')?.line.ms as number | undefined;
const spaces = first.log.get('site layout loaded')?.line.spaces as number;
if (seededMs === undefined) throw new Error('the first start did not seed the inventory (state directory not empty?)');
console.log(`first start: ${(first.wallMs / 1000).toFixed(1)} s to listening; seeding ${(seededMs / 1000).toFixed(1)} s, view build ${((firstBuildMs ?? NaN) / 1000).toFixed(1)} s; ` +
  `VmRSS ${mib(firstMemory.rss)} VmHWM ${mib(firstMemory.hwm)}`);
await stopDaemon(first);

const second = await startDaemon();
const pid = second.process.pid!;
const restartBuildMs = second.log.get('inventory view built')?.line.ms as number;
const startMemory = memory(pid);
console.log(`restart:     ${(second.wallMs / 1000).toFixed(1)} s to listening; view build ${(restartBuildMs / 1000).toFixed(1)} s; VmRSS ${mib(startMemory.rss)} VmHWM ${mib(startMemory.hwm)}`);
if (spaces < MIN_SPACES || boxCount < MIN_BOXES) console.log(`NOTE: below the issue's size (${MIN_SPACES} spaces, ${MIN_BOXES} boxes)`);

// ---------------------------------------------------------------------------- HTTP client

const apiKey = (JSON.parse(readFileSync(path.join(stateDir, 'bootstrap-admin.json'), 'utf8')) as { api_key: string }).api_key;
const ca = readFileSync(path.join(stateDir, 'tls', 'self-signed-cert.pem'), 'utf8');
// One keep-alive connection: requests go one at a time, as a UI or an integration sends them.
const newAgent = () => new https.Agent({ keepAlive: true, maxSockets: 1, ca });
let agent = newAgent();

/** One GET; `ms` covers writing the request to reading the last byte. */
function get(pathAndQuery: string): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    https.get({ host: '127.0.0.1', port: second.port, path: pathAndQuery, agent, headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
    }).on('error', reject);
  });
}

async function pageOf(pathAndQuery: string): Promise<{ total: number; items: unknown[]; bytes: number }> {
  const r = await get(pathAndQuery);
  if (r.status !== 200) throw new Error(`GET ${pathAndQuery}: ${r.status} ${r.body.slice(0, 300)}`);
  const page = JSON.parse(r.body) as { total: number; items: unknown[] };
  return { ...page, bytes: Buffer.byteLength(r.body) };
}

// ---------------------------------------------------------------------------- raw LMDB reads

// The daemon's environment, read-only, with the options of src/store/store.ts (lmdb-js needs
// the same ones in every process that opens it).
const env: RootDatabase = open({ path: path.join(stateDir, 'db', 'warehouse.mdb'), readOnly: true, maxDbs: 128, compression: false });
// Records name their fields by structures the store keeps in its meta database.
const meta = env.openDB<unknown, string>({ name: 'meta' });
const records = <K extends string | number>(name: string) => env.openDB<Record<string, unknown>, K>({ name, getStructures: () => meta.get(structuresKey(name)) } as never);
const db = {
  boxes: records<number>('boxes'),
  carriers: records<string>('carriers'),
  skus: records<string>('skus'),
};
// A secondary index is a database of [value, primary key] keys (src/store/collection.ts).
type IndexDb = Database<number, [string | number, string | number]>;
const index = (collection: string, name: string): IndexDb => env.openDB({ name: indexDbName(collection, name), encoding: 'ordered-binary' }) as unknown as IndexDb;
const boxesBySku = index('boxes', 'sku_id');
const boxesByCarrier = index('boxes', 'carrier_id');
const skusByUnit = index('skus', 'measurement_unit');

/** Reads `n` records in key order: boxes, then carriers, then SKUs, again from the start if need be. */
function readSequential(n: number): number {
  let read = 0;
  let sink = 0;
  while (read < n) {
    for (const d of [db.boxes, db.carriers, db.skus] as Database<Record<string, unknown>, string | number>[]) {
      for (const { value } of d.getRange({ limit: n - read })) {
        sink += Object.keys(value).length;
        read++;
      }
      if (read >= n) break;
    }
  }
  return sink;
}

/** Reads the records a secondary index lists under `value`, as the store's findBy does. */
function readByIndex(idx: IndexDb, records: Database<Record<string, unknown>, string | number>, value: string): number {
  let n = 0;
  for (const [, key] of idx.getKeys({ start: [value], end: [value, '\uffff'] })) if (records.get(key) !== undefined) n++;
  return n;
}

// ---------------------------------------------------------------------------- the queries

// Values that make each query a heavy one of its kind, read from the store.
let busiestSku = '';
let mostLoads = -1;
for (const { value } of db.skus.getRange()) {
  if ((value.load_count as number) > mostLoads) [busiestSku, mostLoads] = [value.id as string, value.load_count as number];
}
const perCarrier = new Map<string, number>();
for (const { value } of db.boxes.getRange()) perCarrier.set(value.carrier_id as string, (perCarrier.get(value.carrier_id as string) ?? 0) + 1);
const [busiestCarrier] = [...perCarrier].reduce((a, b) => (b[1] > a[1] ? b : a));
const units = new Map<string, number>();
for (const { value } of db.skus.getRange()) units.set(value.measurement_unit as string, (units.get(value.measurement_unit as string) ?? 0) + 1);
const [commonUnit] = [...units].reduce((a, b) => (b[1] > a[1] ? b : a));

const viewRows = (await pageOf('/api/v2/inventory_view?size=1')).total;
const level3Rows = (await pageOf('/api/v2/inventory_view?level_id__in=3&size=1')).total;
const skuCount = (await pageOf('/api/v2/skus?size=1')).total;

interface Query {
  name: string;
  path: string;
  /** Target p95 in ms, and which target it is. */
  target?: { ms: number; what: string };
  slow?: boolean;
  /** Records the engine examines; set from the answer or the source size. */
  touches: (total: number) => number;
  /** The raw read of as many records. */
  raw: (n: number) => unknown;
  rawWhat: string;
}
const V = '/api/v2/inventory_view?';
const PLAIN_LIKE = 'skus name__ilike=%bo%t% (a plain pattern)';
const HOSTILE_LIKE = 'skus name__ilike=%a%a%a%a%a%a%a%ab (a hostile pattern)';
const S = '/api/v2/skus?';
const indexed = { ms: TARGET_INDEXED_MS, what: 'indexed filter' };
const search = { ms: TARGET_SEARCH_MS, what: 'search with sort' };
const QUERIES: Query[] = [
  { name: 'inventory_view sku_id__eq', path: `${V}sku_id__eq=${busiestSku}`, target: indexed,
    touches: (t) => t, raw: () => readByIndex(boxesBySku, db.boxes, busiestSku), rawWhat: 'boxes by the sku_id index' },
  { name: 'inventory_view carrier_id__eq', path: `${V}carrier_id__eq=${busiestCarrier}`, target: indexed,
    touches: (t) => t, raw: () => readByIndex(boxesByCarrier, db.boxes, busiestCarrier), rawWhat: 'boxes by the carrier_id index' },
  { name: 'inventory_view level_id__in=1,2 sort_by=-eta', path: `${V}level_id__in=1&level_id__in=2&sort_by=-eta`, target: indexed,
    touches: (t) => t, raw: readSequential, rawWhat: 'records in key order' },
  // An eta sort with a filter no index holds: every row of level 3 is tested to count the
  // matches, then the page is read in eta order (no target in the issue; for comparison).
  { name: 'inventory_view level_id__in=3 depth__gte=2 sort_by=eta', path: `${V}level_id__in=3&depth__gte=2&sort_by=eta`,
    touches: () => level3Rows, raw: readSequential, rawWhat: 'records in key order' },
  { name: 'inventory_view search=*:bolt sort_by=sku_name', path: `${V}search=${encodeURIComponent('*:bolt')}&sort_by=sku_name`, target: search, slow: true,
    touches: () => viewRows, raw: readSequential, rawWhat: 'records in key order' },
  { name: 'inventory_view search=*:qqq sort_by=-eta', path: `${V}search=${encodeURIComponent('*:qqq')}&sort_by=-eta`, target: search, slow: true,
    touches: () => viewRows, raw: readSequential, rawWhat: 'records in key order' },
  { name: 'skus id__eq', path: `${S}id__eq=${busiestSku}`, target: indexed,
    touches: (t) => t, raw: () => db.skus.get(busiestSku), rawWhat: 'SKU by key' },
  { name: `skus measurement_unit__in=${commonUnit}`, path: `${S}measurement_unit__in=${commonUnit}`, target: indexed,
    touches: (t) => t, raw: () => readByIndex(skusByUnit, db.skus, commonUnit), rawWhat: 'SKUs by the measurement_unit index' },
  { name: 'skus name__ilike=bolt sort_by=-total_quantity', path: `${S}name__ilike=bolt&sort_by=-total_quantity`,
    touches: () => skuCount, raw: (n) => { let k = 0; for (const _ of db.skus.getRange({ limit: n })) k++; return k; }, rawWhat: 'SKUs in key order' },
  // A plain wildcard pattern and a hostile one (eight `%a` blocks, which a backtracking regular
  // expression took 95 s over): the hostile one must cost no more than twice the plain one.
  { name: PLAIN_LIKE, path: `${S}name__ilike=${encodeURIComponent('%bo%t%')}`, slow: true,
    touches: () => skuCount, raw: (n) => { let k = 0; for (const _ of db.skus.getRange({ limit: n })) k++; return k; }, rawWhat: 'SKUs in key order' },
  { name: HOSTILE_LIKE, path: `${S}name__ilike=${encodeURIComponent(`${'%a'.repeat(8)}b`)}`, slow: true,
    touches: () => skuCount, raw: (n) => { let k = 0; for (const _ of db.skus.getRange({ limit: n })) k++; return k; }, rawWhat: 'SKUs in key order' },
];

interface Result {
  q: Query;
  total: number;
  bytes: number;
  n: number;
  http: number[];
  raw: number[];
  /** Daemon CPU time (user + system, all threads) per request, ms; /proc resolution is 10 ms in all. */
  cpuPerRequest: number;
}
const results: Result[] = [];
console.log(`view rows ${viewRows}, SKUs ${skuCount}; busiest SKU ${busiestSku} (${mostLoads} loads), busiest carrier ${busiestCarrier} (${perCarrier.get(busiestCarrier)} boxes)`);
console.log(`one request at a time on one keep-alive TLS connection; ${warmup} warm-up requests, then ${iterations} (searches: ${slowIterations}); as many raw reads before each query's requests\n`);
for (const q of QUERIES.filter((x) => args.only === undefined || x.name.includes(args.only))) {
  const page = await pageOf(q.path);
  const n = q.touches(page.total);
  const count = q.slow ? slowIterations : iterations;
  // The raw reads first, then the requests, each in a block: interleaved one by one, the
  // garbage of a raw read (up to 281,092 decoded records) was still being collected by this
  // process's GC threads while the daemon answered, on a 2-core machine. The warm-up requests
  // sit between the two blocks and take what is left of that.
  const raw: number[] = [];
  for (let i = 0; i < warmup; i++) q.raw(n);
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    q.raw(n);
    raw.push(performance.now() - t0);
  }
  // A fresh connection: the daemon closes one left idle through the raw reads.
  agent = newAgent();
  for (let i = 0; i < warmup; i++) await get(q.path);
  const http: number[] = [];
  const cpu0 = cpuMs(pid);
  for (let i = 0; i < count; i++) {
    const r = await get(q.path);
    if (r.status !== 200) throw new Error(`GET ${q.path}: ${r.status}`);
    http.push(r.ms);
  }
  const cpuPerRequest = (cpuMs(pid) - cpu0) / count;
  const mem = memory(pid);
  results.push({ q, total: page.total, bytes: page.bytes, n, http, raw, cpuPerRequest });
  console.log(`${q.name}: ${page.total} rows match, ${page.items.length} on the page (${page.bytes} bytes); the engine examines ${n}; ` +
    `daemon VmRSS ${mib(mem.rss)} VmHWM ${mib(mem.hwm)}`);
}
const afterMemory = memory(pid);
console.log(`\nload average at end:   ${loadavg()}\n`);

// ---------------------------------------------------------------------------- report

const verdicts: boolean[] = [];
for (const r of results) {
  const h = percentiles(r.http);
  const w = percentiles(r.raw);
  let verdict = '(no target)';
  if (r.q.target) {
    const ok = h.p95 < r.q.target.ms;
    verdicts.push(ok);
    verdict = `target ${r.q.target.what} p95 < ${r.q.target.ms} ms ${ok ? 'PASS' : 'MISSED'}`;
  }
  console.log(`${r.q.name}: p50 ${ms(h.p50)} p95 ${ms(h.p95)} p99 ${ms(h.p99)} max ${ms(h.max)} ms (daemon CPU ${ms(r.cpuPerRequest)} ms/req)` +
    ` | raw LMDB read of ${r.n} records (${r.q.rawWhat}): p50 ${ms(w.p50)} p95 ${ms(w.p95)} ms | ${verdict}`);
}
const plain = results.find((r) => r.q.name === PLAIN_LIKE);
const hostile = results.find((r) => r.q.name === HOSTILE_LIKE);
if (plain && hostile) {
  const ratio = percentiles(hostile.http).p50 / percentiles(plain.http).p50;
  const ok = ratio <= 2;
  verdicts.push(ok);
  console.log(`\nhostile __ilike pattern against a plain one, p50: ${ratio.toFixed(2)}x | target <= 2x ${ok ? 'PASS' : 'MISSED'}`);
}
const worstHwm = Math.max(firstMemory.hwm, afterMemory.hwm);
const memOk = worstHwm < TARGET_MEMORY_KIB;
verdicts.push(memOk);
console.log(`\nmemory of the daemon after the load: VmRSS ${mib(afterMemory.rss)}, VmHWM ${mib(afterMemory.hwm)} (since restart); ` +
  `at first start VmHWM ${mib(firstMemory.hwm)} (seeding) | target < 1024 MiB ${memOk ? 'PASS' : 'MISSED'}`);
console.log(`seeding of ${boxCount} boxes at first start: ${(seededMs / 1000).toFixed(1)} s; view build ${((firstBuildMs ?? NaN) / 1000).toFixed(1)} s (restart: ${(restartBuildMs / 1000).toFixed(1)} s)`);
console.log(`\n${verdicts.every(Boolean) ? 'ALL TARGETS HOLD' : `${verdicts.filter((v) => !v).length} target(s) missed`}`);

await stopDaemon(second);
agent.destroy();
await env.close();

// ---------------------------------------------------------------------------- helpers

function percentiles(samples: number[]): { p50: number; p95: number; p99: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: s[s.length - 1]! };
}

function ms(x: number): string {
  return x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0);
}

function mib(kib: number): string {
  return `${(kib / 1024).toFixed(0)} MiB`;
}

function loadavg(): string {
  return os.loadavg().map((l) => l.toFixed(2)).join(' ');
}

function positive(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${JSON.stringify(text)}`);
  return n;
}
