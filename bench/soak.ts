// npm run bench:soak [-- --minutes 60 --speed 60 --interval-minutes 5 --rate 20 --seed 1
//                         --sim-speed 5 --open-per-balcony 3 --pick-seconds 6 --retention-days 1
//                         --no-build --keep --nudge-pruner]
//
// Whether a box stays flat over time: the whole daemon (dist/main.js, the demo site simulated in
// its child process, the brain on its thread) for --minutes of wall time with its wall clock
// running --speed times faster, so that days of history age through it, and with the retention
// of history and events shortened to --retention-days. Two clients meanwhile:
//
//   work   the site's request stream: FULFILLMENT and REPLENISHMENT requests of one item, in
//          turn, kept at --open-per-balcony open per balcony, and the people at the balconies,
//          who confirm each job waiting for them after --pick-seconds of simulated time (one
//          person a balcony, oldest job first), and try again a job that failed too often.
//   mix    the everyday calls of bench:load (mix-kinds.ts) at a fixed --rate a second, open
//          loop: each call is sent at its place in a timetable whether or not the ones before
//          it were answered, and its latency counts from that place, so a stall of the daemon
//          shows in full instead of slowing the client down (coordinated omission).
//          Left out of the mix: post_sku and post_request (new SKUs and new requests at that
//          rate grow the data and the open work without end: the work's requests come at the
//          site's pace instead) and patch_setting (it sets events.retentionDays back to 30).
//
// Every --interval-minutes it prints: the daemon's RSS; the V8 heap a full collection keeps on the
// API's thread and on the brain's; the store file's size, its free pages and the pages in use (GET
// /api/v2/system/storage; without that route, the data file's size alone); the open jobs; the
// mix's p50/p99 over the interval; the brain's dispatch pass p99; the API thread's event-loop
// delay p99 (the last two from a probe preloaded into the daemon: bench/soak-probe.ts); the
// requests posted, ended and pruned; the daemon's and this process's CPU. At the end, for each
// figure, the least-squares slope per hour of the samples after the first retention window
// beside their standard deviation, flagged when its rise over those samples exceeds it; then
// the checks: errors (5xx, connection errors, statuses a call does not expect, error lines in
// the daemon's log) and lost work (a request answered 201 that is gone while open, or gone
// without having ended before the retention), and ended requests kept past the retention at
// the pruner's last pass. It exits 1 when there is an error or lost work.
//
// Why only the wall clock is faked, and in steps. The retention is by wall-clock instants (when
// a request ended), so the wall clock is what has to run fast for history to age. The monotonic
// clock drives everything that paces the site: the simulator's motion, the planner's steps, the
// brain's passes, every timer. Faked too, the site and its timers would run 60 times faster,
// which two cores cannot carry, and the request stream would have to follow. So libfaketime
// moves CLOCK_REALTIME alone (DONT_FAKE_MONOTONIC=1: performance.now and setTimeout keep real
// pace), in the daemon and its simulator only (preloaded into the process itself, as
// test/helpers/faketime.ts does, not through the `faketime` wrapper, which would put itself
// between this bench and the daemon's pid and signals). Not as a rate (FAKETIME='+0 x60'),
// though: with a rate libfaketime also divides every poll and epoll_wait timeout by it, so each
// thread's event loop wakes about 60 times as often as its timers ask. Measured on this box: a
// node process running a 1 ms timer took 1.9-5.0 s of CPU in 5 s at x60 against 0.4 s at x1, and
// the daemon with its site 130 % of a core against 20 %. Instead this bench writes an offset to a
// file libfaketime reads (FAKETIME_TIMESTAMP_FILE, read again each second) once a second,
// (speed - 1) times the seconds since the start: the daemon's wall clock runs at real pace and
// steps forward by a minute each second, 60 times real time on average, the way a wall clock
// stepped by NTP moves, which the daemon has to bear anyway. Its own timers (the pruner's pass
// every 10 minutes, the store's size samples) keep their real periods, as on a site.
//
// --nudge-pruner (the suite's short form) writes the retention setting again at every sample:
// a settings write runs a pruner pass, and a run of a minute or two sees no timer's pass.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as Undici from 'undici';
import { mixKinds, seededRandom, type Call } from './mix-kinds.js';
import { cpuMs, startDaemon, stopDaemon, type Daemon } from './load-daemon.js';
import { installProbe, readProbe, type ProbeWindow } from './soak-probe.js';
import { libfaketime } from '../test/helpers/faketime.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '60' },
    speed: { type: 'string', default: '60' },
    'interval-minutes': { type: 'string', default: '5' },
    rate: { type: 'string', default: '20' },
    seed: { type: 'string', default: String(Date.now() % 100000) },
    'sim-speed': { type: 'string', default: '5' },
    'open-per-balcony': { type: 'string', default: '3' },
    'pick-seconds': { type: 'string', default: '6' },
    'retention-days': { type: 'string', default: '1' },
    'no-build': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'nudge-pruner': { type: 'boolean', default: false },
  },
});
const RUN_MS = Number(args.minutes) * 60_000;
const SPEED = Number(args.speed);
const INTERVAL_MS = Number(args['interval-minutes']) * 60_000;
const RATE = Number(args.rate);
const SEED = Number(args.seed);
const SIM_SPEED = Number(args['sim-speed']);
const OPEN_PER_BALCONY = Number(args['open-per-balcony']);
const PERSON_MS = (Number(args['pick-seconds']) * 1000) / SIM_SPEED;
const RETENTION_DAYS = Number(args['retention-days']);
const DAY_MS = 24 * 3600_000;
/** Wall time of one retention window: history made at the start may be pruned after it. */
const WINDOW_MS = (RETENTION_DAYS * DAY_MS) / SPEED;
for (const [name, v] of Object.entries({ minutes: RUN_MS, speed: SPEED, 'interval-minutes': INTERVAL_MS, rate: RATE, 'sim-speed': SIM_SPEED, 'retention-days': RETENTION_DAYS })) {
  if (!(v > 0)) throw new RangeError(`--${name} must be a positive number`);
}
if (!Number.isInteger(RETENTION_DAYS)) throw new RangeError('--retention-days must be a whole number of days (the settings are integers)');

console.log(`bench:soak seed ${SEED}: ${args.minutes} min at a wall clock ${SPEED}x (${((RUN_MS * SPEED) / DAY_MS).toFixed(1)} days of the daemon's), `
  + `retention ${RETENTION_DAYS} d (${(WINDOW_MS / 60_000).toFixed(1)} min), mix ${RATE}/s, site at ${SIM_SPEED}x with ${OPEN_PER_BALCONY} open requests a balcony, `
  + `${os.cpus().length} cores, load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);

// ------------------------------------------------------------------ HTTP

interface Answer {
  status: number;
  json: any;
}

/** Sends one call on `pool`; status 0 for a connection error or no answer within the pool's timeouts. */
async function send(pool: Undici.Pool, d: Daemon, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  try {
    const res = await pool.request({
      method: method as Undici.Dispatcher.HttpMethod, path: url, body: text,
      headers: { authorization: `Bearer ${d.key}`, ...(text === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    });
    const raw = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = raw;
    }
    return { status: res.statusCode, json };
  } catch {
    return { status: 0, json: undefined };
  }
}

function newPool(d: Daemon, connections: number): Undici.Pool {
  return new Undici.Pool(`https://127.0.0.1:${d.port}`, {
    connections, pipelining: 1, connect: { ca: d.ca }, headersTimeout: 60_000, bodyTimeout: 60_000,
    // uWS closes a connection idle for 10 s; a connection it is closing must not be reused.
    keepAliveTimeout: 5_000, keepAliveMaxTimeout: 5_000,
  });
}

// ------------------------------------------------------------------ errors and the daemon's clock

/** Calls that went wrong, by what was called and what came back; and the daemon's error lines. */
const errors = new Map<string, number>();
const daemonErrors: string[] = [];
let daemonErrorCount = 0;
/** The daemon's last warnings, printed before its first error: what came before says why (a slow commit before a line fell silent). */
const lastWarnings: string[] = [];
let warningsBeforeError: string[] | undefined;

function error(what: string, status: number): void {
  const key = `${what} -> ${status === 0 ? 'no answer' : status}`;
  errors.set(key, (errors.get(key) ?? 0) + 1);
}

const errorCount = () => [...errors.values()].reduce((a, b) => a + b, 0) + daemonErrorCount;

/** The daemon's wall clock as last read from a record it stamped, and this process's monotonic time then. */
let clock = { daemonMs: Date.now(), at: performance.now() };
/** The first such reading: how fast the daemon's clock ran is told from it at the end. */
let firstClock: typeof clock | undefined;
const daemonNow = () => clock.daemonMs + (performance.now() - clock.at) * SPEED;

// ------------------------------------------------------------------ the work: requests and people

interface Tracked {
  type: string;
  /** When the request ended, by the daemon's clock (its updated_at then). */
  endedAt?: number;
}

interface Job {
  id: string;
  type: string;
  status: string;
  balcony_id: number | null;
  details: { waiting_for?: string };
}

const OPEN_REQUESTS = 'status__in=CREATED&status__in=ACCEPTED&status__in=EXECUTING';
const OPEN_JOBS = 'status__in=CREATED&status__in=ACCEPTED&status__in=EXECUTING&status__in=CANCELLING&status__in=ERROR';
const ENDED = new Set(['SUCCEEDED', 'CANCELLED', 'ABORTED']);

/**
 * The requests of `ids` as the list shows them (by id, 50 a call): a missing id has no entry;
 * null for the ids of a batch that failed.
 */
async function lookup(d: Daemon, pool: Undici.Pool, ids: readonly string[]): Promise<Map<string, { status: string; updated_at_utc: string } | null>> {
  const out = new Map<string, { status: string; updated_at_utc: string } | null>();
  for (let i = 0; i < ids.length; i += 50) {
    const batch = ids.slice(i, i + 50);
    const a = await send(pool, d, 'GET', `/api/v2/requests?${batch.map((id) => `id__in=${id}`).join('&')}&size=50`);
    if (a.status !== 200) {
      error('GET /requests (by id)', a.status);
      for (const id of batch) out.set(id, null);
      continue;
    }
    for (const r of a.json.items as { id: string; status: string; updated_at_utc: string }[]) out.set(r.id, r);
  }
  return out;
}

/** What the daemon says of a request it does not list: the 404 of its job graph (which names a pruned one as such). */
async function whyMissing(d: Daemon, pool: Undici.Pool, id: string): Promise<string> {
  const a = await send(pool, d, 'GET', `/api/v2/requests/${id}/job-graph`);
  return a.status === 404 ? String(a.json?.detail ?? JSON.stringify(a.json)) : `listed by no id filter, yet its job graph answers ${a.status}`;
}

/** Every request the work posted and got a 201 for. */
const tracked = new Map<string, Tracked>();
const lost: string[] = [];
const work = { posted: 0, refused: 0, ended: 0, triggered: 0, triggerConflicts: 0, retried: 0 };

/** Keeps the balconies supplied and plays their people until `stop()`; returns the loop's promise. */
async function runWork(d: Daemon, pool: Undici.Pool, balconies: number, running: () => boolean, stockedSkus: () => string[]): Promise<void> {
  const random = seededRandom(SEED + 1);
  const working = new Map<number, { id: string; since: number }>();
  const seen = new Map<string, number>();
  let round = 0;
  let nextType = 0;
  while (running()) {
    round++;
    const started = performance.now();
    const open = await send(pool, d, 'GET', `/api/v2/requests?${OPEN_REQUESTS}&type__in=FULFILLMENT&type__in=REPLENISHMENT&size=1000`);
    if (open.status !== 200) error('GET /requests (open)', open.status);
    else {
      const openIds = new Set((open.json.items as { id: string }[]).map((r) => r.id));
      // No longer open: it ended, and is still held (the retention is days of the daemon's clock away).
      const gone = [...tracked].filter(([id, r]) => r.endedAt === undefined && !openIds.has(id)).map(([id]) => id);
      const found = await lookup(d, pool, gone);
      for (const id of gone) {
        const r = found.get(id);
        if (r === null) continue;
        if (r && ENDED.has(r.status)) {
          tracked.get(id)!.endedAt = Date.parse(r.updated_at_utc);
          work.ended++;
        } else if (!r) {
          lost.push(`${id}: gone while open (${await whyMissing(d, pool, id)})`);
          tracked.delete(id);
        }
      }
      const skus = stockedSkus();
      for (let n = openIds.size; n < OPEN_PER_BALCONY * balconies && skus.length > 0; n++) {
        const type = nextType++ % 2 === 0 ? 'FULFILLMENT' : 'REPLENISHMENT';
        const sku = skus[Math.floor(random() * skus.length)]!;
        const a = await send(pool, d, 'POST', '/api/v2/requests', { type, entities: [{ sku_id: sku, quantity: 1 }] });
        if (a.status === 201) {
          tracked.set(a.json.id, { type });
          work.posted++;
          clock = { daemonMs: Date.parse(a.json.created_at_utc), at: performance.now() };
          firstClock ??= clock;
        } else if (a.status === 409) work.refused++;
        else error('POST /requests', a.status);
      }
    }
    // The people: a job waiting at a balcony is confirmed after its person's time.
    const executing = await send(pool, d, 'GET', '/api/v2/jobs?status__eq=EXECUTING&size=1000');
    const failed = round % 8 === 0 ? await send(pool, d, 'GET', '/api/v2/jobs?status__eq=ERROR&size=1000') : { status: 200, json: { items: [] } };
    if (executing.status !== 200) error('GET /jobs (executing)', executing.status);
    if (failed.status !== 200) error('GET /jobs (error)', failed.status);
    if (executing.status === 200 && failed.status === 200) {
      const now = performance.now();
      const waiting = new Map<number, Job[]>();
      const jobs = [...(executing.json.items as Job[]).filter((j) => j.details.waiting_for === 'trigger'), ...(failed.json.items as Job[])];
      for (const j of jobs) {
        if (!seen.has(j.id)) seen.set(j.id, now);
        const b = j.balcony_id ?? -1;
        waiting.set(b, [...(waiting.get(b) ?? []), j]);
      }
      for (const id of seen.keys()) if (!jobs.some((j) => j.id === id)) seen.delete(id);
      for (const [b, here] of waiting) {
        const w = working.get(b);
        if (w && !here.some((j) => j.id === w.id)) working.delete(b);
        else if (w && now - w.since >= PERSON_MS) {
          const job = here.find((j) => j.id === w.id)!;
          const t = await send(pool, d, 'POST', `/api/v2/trigger/${w.id}`, {});
          if (t.status === 200) {
            if (job.status === 'ERROR') work.retried++;
            else work.triggered++;
          } else if (t.status === 409) work.triggerConflicts++;
          else error('POST /trigger', t.status);
          working.delete(b);
        }
        if (!working.has(b)) {
          const next = here.filter((j) => j.id !== w?.id).sort((x, y) => seen.get(x.id)! - seen.get(y.id)!)[0];
          if (next) working.set(b, { id: next.id, since: now });
        }
      }
      for (const b of [...working.keys()]) if (!waiting.has(b)) working.delete(b);
    }
    await sleep(Math.max(0, 250 - (performance.now() - started)));
  }
}

// ------------------------------------------------------------------ the mix, open loop

const MIX_KINDS = ['view_by_sku', 'view_page', 'sku_search', 'jobs_by_status', 'patch_sku'];

/** Latencies (ms from each call's place in the timetable) of the calls answered since the last sample. */
let mixLatencies: number[] = [];
let mixSent = 0;
let mixOutstanding = 0;

/** Sends the mix's calls at RATE a second until `running()` is false; resolves when the last is answered. */
async function runMix(d: Daemon, pool: Undici.Pool, running: () => boolean): Promise<void> {
  const random = seededRandom(SEED);
  const kinds = mixKinds(random);
  const gap = 1000 / RATE;
  const start = performance.now();
  let k = 0;
  const inFlight = new Set<Promise<void>>();
  while (running()) {
    const now = performance.now();
    for (; start + k * gap <= now; k++) {
      const due = start + k * gap;
      const kind = MIX_KINDS[Math.floor(random() * MIX_KINDS.length)]!;
      const call: Call = kinds[kind]!();
      // A daemon that stopped answering would pile up calls for ever: past a minute of them, the
      // timetable's calls are counted as failed instead of sent.
      if (mixOutstanding >= RATE * 60) {
        error(`mix ${kind} (not sent: a minute of calls unanswered)`, 0);
        continue;
      }
      mixOutstanding++;
      mixSent++;
      const p = send(pool, d, call.method, call.path, call.body, call.headers).then((a) => {
        mixOutstanding--;
        if (!call.ok.includes(a.status)) error(`mix ${kind}`, a.status);
        mixLatencies.push(performance.now() - due);
      });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await sleep(Math.min(gap, 5));
  }
  await Promise.all(inFlight);
}

// ------------------------------------------------------------------ samples

interface Sample {
  /** Wall minutes since the start. */
  minute: number;
  rss: number;
  heap: number | null;
  brainHeap: number | null;
  file: number;
  free: number | null;
  used: number | null;
  openJobs: number | null;
  mixN: number;
  mixP50: number;
  mixP99: number;
  passN: number | null;
  passP99: number | null;
  loopP99: number | null;
  posted: number;
  ended: number;
  pruned: number | null;
  daemonCpu: number;
  clientCpu: number;
  errors: number;
  /** The box's load average over the last minute: other work on the two cores shows here. */
  load: number;
}

const MIB = 1024 * 1024;

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+) kB/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

interface Storage {
  file_bytes: number;
  free_bytes: number;
  used_bytes: number;
  history: { retention_days: number; pruned_requests: number; last_pass_at_utc: string | null };
}

/** GET /system/storage, or null where the route is missing (a build before it). */
async function storage(d: Daemon, pool: Undici.Pool): Promise<Storage | null> {
  const a = await send(pool, d, 'GET', '/api/v2/system/storage');
  if (a.status === 200) return a.json as Storage;
  if (a.status !== 404) error('GET /system/storage', a.status);
  return null;
}

/** The store's data file (lmdb's file in the store's directory): its size on disk when the route is missing. */
function dataFileBytes(stateDir: string): number {
  for (const name of ['db/warehouse.mdb/data.mdb', 'db/warehouse.mdb']) {
    try {
      const s = statSync(path.join(stateDir, name));
      if (s.isFile()) return s.size;
    } catch {
      // The other layout.
    }
  }
  return NaN;
}

const fmt = (n: number | null, digits = 1) => (n === null || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits));
const COLUMNS: [string, number, (s: Sample) => string][] = [
  ['min', 5, (s) => fmt(s.minute, 1)],
  ['RSS MiB', 8, (s) => fmt(s.rss / MIB, 0)],
  ['heap MiB', 9, (s) => fmt(s.heap === null ? null : s.heap / MIB)],
  ['brain heap', 11, (s) => fmt(s.brainHeap === null ? null : s.brainHeap / MIB)],
  ['file MiB', 9, (s) => fmt(s.file / MIB)],
  ['free MiB', 9, (s) => fmt(s.free === null ? null : s.free / MIB)],
  ['used MiB', 9, (s) => fmt(s.used === null ? null : s.used / MIB)],
  ['open jobs', 10, (s) => fmt(s.openJobs, 0)],
  ['mix n', 7, (s) => String(s.mixN)],
  ['mix p50', 8, (s) => fmt(s.mixP50)],
  ['mix p99', 8, (s) => fmt(s.mixP99)],
  ['passes', 7, (s) => fmt(s.passN, 0)],
  ['pass p99', 9, (s) => fmt(s.passP99)],
  ['loop p99', 9, (s) => fmt(s.loopP99)],
  ['posted', 7, (s) => String(s.posted)],
  ['ended', 6, (s) => String(s.ended)],
  ['pruned', 7, (s) => fmt(s.pruned, 0)],
  ['daemon CPU', 11, (s) => `${fmt(s.daemonCpu * 100, 0)} %`],
  ['bench CPU', 10, (s) => `${fmt(s.clientCpu * 100, 0)} %`],
  ['errors', 7, (s) => String(s.errors)],
  ['load', 5, (s) => fmt(s.load)],
];

const header = () => COLUMNS.map(([name, w]) => name.padStart(w)).join(' ');
const row = (s: Sample) => COLUMNS.map(([, w, get]) => get(s).padStart(w)).join(' ');

/** Slope per hour of the least-squares line through (x hours, y), and the standard deviation of y. */
function trend(points: readonly { x: number; y: number }[]): { slope: number; sd: number; rise: number } {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const sd = Math.sqrt(points.reduce((a, p) => a + (p.y - my) ** 2, 0) / Math.max(1, n - 1));
  return { slope, sd, rise: slope * (points[n - 1]!.x - points[0]!.x) };
}

// ------------------------------------------------------------------ run

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (!args['no-build']) {
  const build = spawnSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build (tsc -p tsconfig.build.json) failed');
}
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'wh-bench-soak-'));
// A first start at the real clock makes the certificate and seeds the demo site: a certificate
// made by the fast clock would not be valid yet by this process's.
await stopDaemon(await startDaemon({ stateDir, links: 'on' }));
const probe = installProbe(stateDir, ROOT);
const lib = libfaketime();
if (!lib) throw new Error('libfaketime is not installed (apt-get install faketime)');
const clockFile = path.join(stateDir, 'faketime.rc');
const started = performance.now();
/** Steps the daemon's wall clock to where SPEED times real time puts it (a whole second of offset; written whole, then renamed). */
const stepClock = () => {
  writeFileSync(`${clockFile}.tmp`, `+${Math.round(((SPEED - 1) * (performance.now() - started)) / 1000)}\n`);
  renameSync(`${clockFile}.tmp`, clockFile);
};
stepClock();
const stepper = setInterval(stepClock, 1000);
// The daemon is the only process this one starts from here on, and startDaemon hands it this
// process's environment: the fast wall clock, the probe's file and the site's speed go there.
Object.assign(process.env, probe.env, {
  LD_PRELOAD: lib, FAKETIME_TIMESTAMP_FILE: clockFile, FAKETIME_CACHE_DURATION: '1', DONT_FAKE_MONOTONIC: '1', WAREHOUSE_SIM_SPEED: String(SIM_SPEED),
});
const d = await startDaemon({ stateDir, links: 'on', flags: probe.flags });
const pid = d.child.pid!;
// However this process ends, the daemon does not outlive it.
process.on('exit', () => {
  if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL');
});
// Only the first few error lines are kept: a daemon that fails in a loop would fill the memory.
let rest = '';
d.child.stdout!.on('data', (chunk: Buffer) => {
  rest += chunk.toString();
  let nl: number;
  while ((nl = rest.indexOf('\n')) !== -1) {
    const line = rest.slice(0, nl);
    rest = rest.slice(nl + 1);
    if (!line.startsWith('{')) continue;
    try {
      const rec = JSON.parse(line) as { level?: number | string; msg?: string };
      if (typeof rec.level === 'number' ? rec.level === 40 : rec.level === 'warn') {
        lastWarnings.push(line.slice(0, 400));
        if (lastWarnings.length > 5) lastWarnings.shift();
      }
      if (typeof rec.level === 'number' ? rec.level >= 50 : rec.level === 'error' || rec.level === 'fatal') {
        warningsBeforeError ??= [...lastWarnings];
        daemonErrorCount++;
        if (daemonErrors.length < 10) daemonErrors.push(line.slice(0, 400));
      }
    } catch {
      // Not a log line.
    }
  }
});
// Bounded in time whatever happens: a run that overstays by ten minutes is ended.
const watchdog = setTimeout(() => {
  console.error('bench:soak overstayed its time by ten minutes: stopping the daemon');
  d.child.kill('SIGKILL');
  process.exit(2);
}, RUN_MS + 10 * 60_000);
watchdog.unref();

const api = newPool(d, 4);
const mixPool = newPool(d, 32);
console.log(`daemon pid ${pid} on port ${d.port} after ${((performance.now() - started) / 1000).toFixed(1)} s; state ${stateDir}`);

/** Sets both retentions (a settings write also runs a pass of the pruner). */
async function setRetention(): Promise<void> {
  for (const key of ['history.retentionDays', 'events.retentionDays']) {
    const a = await send(api, d, 'PATCH', `/api/v2/settings/${key}`, { value_json: RETENTION_DAYS });
    if (a.status !== 200) throw new Error(`PATCH /settings/${key}: ${a.status} ${JSON.stringify(a.json)}`);
  }
}
await setRetention();

let skus: string[] = [];
/** The SKUs with stock (the fulfillments' choice; a replenishment of one has room as often as not). */
async function refreshSkus(): Promise<void> {
  const a = await send(api, d, 'GET', '/api/v2/skus?size=1000&total_quantity__gte=1');
  if (a.status === 200) skus = (a.json.items as { id: string }[]).map((s) => s.id);
  else error('GET /skus', a.status);
}
await refreshSkus();
const balconyAnswer = await send(api, d, 'GET', '/api/v2/balconies');
if (balconyAnswer.status !== 200) throw new Error(`GET /balconies: ${balconyAnswer.status}`);
const balconies = (balconyAnswer.json as unknown[]).length;

let running = true;
const workDone = runWork(d, api, balconies, () => running, () => skus);
const mixDone = runMix(d, mixPool, () => running);

const samples: Sample[] = [];
let probeSeq = 0;
await readProbe(pid, probe.file, probeSeq).then((w) => (probeSeq = w?.seq ?? probeSeq));
let lastCpu = cpuMs(pid);
let lastOwn = process.cpuUsage();
let lastAt = performance.now();
let lastPosted = 0;
let lastEnded = 0;
console.log(`\n${header()}`);
for (let next = INTERVAL_MS; next <= RUN_MS + 1; next += INTERVAL_MS) {
  await sleep(Math.max(0, started + next - performance.now()));
  if (args['nudge-pruner']) await setRetention();
  const window: ProbeWindow | null = await readProbe(pid, probe.file, probeSeq);
  if (window) probeSeq = window.seq;
  const st = await storage(d, api);
  const jobs = await send(api, d, 'GET', `/api/v2/jobs?${OPEN_JOBS}&size=1`);
  if (jobs.status !== 200) error('GET /jobs (open)', jobs.status);
  const now = performance.now();
  const cpu = cpuMs(pid);
  const own = process.cpuUsage(lastOwn);
  const latencies = mixLatencies.sort((a, b) => a - b);
  mixLatencies = [];
  const s: Sample = {
    minute: (now - started) / 60_000, rss: rssBytes(pid), heap: window?.heap ?? null, brainHeap: window?.brain?.heap ?? null,
    file: st?.file_bytes ?? dataFileBytes(stateDir), free: st?.free_bytes ?? null, used: st?.used_bytes ?? null,
    openJobs: jobs.status === 200 ? jobs.json.total : null, mixN: latencies.length, mixP50: quantile(latencies, 0.5), mixP99: quantile(latencies, 0.99),
    passN: window?.brain?.pass?.n ?? null, passP99: window?.brain?.pass?.p99 ?? null, loopP99: window?.loop?.p99 ?? null,
    posted: work.posted - lastPosted, ended: work.ended - lastEnded, pruned: st?.history.pruned_requests ?? null,
    daemonCpu: (cpu - lastCpu) / (now - lastAt), clientCpu: (own.user + own.system) / 1000 / (now - lastAt), errors: errorCount(), load: os.loadavg()[0]!,
  };
  lastCpu = cpu;
  lastOwn = process.cpuUsage();
  lastAt = now;
  lastPosted = work.posted;
  lastEnded = work.ended;
  samples.push(s);
  console.log(row(s));
  await refreshSkus();
}
running = false;
await Promise.all([workDone, mixDone]);

// ------------------------------------------------------------------ trends

// After the first retention window, and once the pruner has removed something: history made
// at the start ages out then, and not before the pruner's next pass after that.
const firstPruned = samples.findIndex((s) => s.pruned === null || s.pruned > 0);
const after = samples.filter((s, i) => s.minute * 60_000 >= WINDOW_MS && firstPruned !== -1 && i >= firstPruned);
const FIGURES: [string, (s: Sample) => number | null, string][] = [
  ['RSS', (s) => s.rss / MIB, 'MiB'],
  ['heap (API thread)', (s) => (s.heap === null ? null : s.heap / MIB), 'MiB'],
  ['heap (brain thread)', (s) => (s.brainHeap === null ? null : s.brainHeap / MIB), 'MiB'],
  ['store file', (s) => s.file / MIB, 'MiB'],
  ['store free pages', (s) => (s.free === null ? null : s.free / MIB), 'MiB'],
  ['store used pages', (s) => (s.used === null ? null : s.used / MIB), 'MiB'],
  ['open jobs', (s) => s.openJobs, ''],
  ['mix p50', (s) => s.mixP50, 'ms'],
  ['mix p99', (s) => s.mixP99, 'ms'],
  ['brain pass p99', (s) => s.passP99, 'ms'],
  ['event loop delay p99', (s) => s.loopP99, 'ms'],
];
const trends: Record<string, { slope: number; sd: number; rise: number; flagged: boolean } | null> = {};
console.log(`\ntrends over the ${after.length} samples after the first retention window (${(WINDOW_MS / 60_000).toFixed(1)} min) and the pruner's first removal: least-squares slope per hour, the samples' standard deviation, and the rise over them`);
for (const [name, get, unit] of FIGURES) {
  const points = after.map((s) => ({ x: s.minute / 60, y: get(s) })).filter((p): p is { x: number; y: number } => p.y !== null && Number.isFinite(p.y));
  if (points.length < 3) {
    trends[name] = null;
    console.log(`${name.padEnd(22)} too few samples (${points.length})`);
    continue;
  }
  const t = trend(points);
  // More free pages is room for later writes, not a cost: never flagged.
  const flagged = t.rise > t.sd && name !== 'store free pages';
  trends[name] = { ...t, flagged };
  console.log(`${name.padEnd(22)} slope ${fmt(t.slope, 2).padStart(9)} ${unit}/h   sd ${fmt(t.sd, 2).padStart(8)} ${unit}   rise ${fmt(t.rise, 2).padStart(8)} ${unit}${flagged ? '   RISING (rise > sd)' : ''}`);
}

// ------------------------------------------------------------------ lost work

// The end state: every request the work posted is either there, or was pruned after it ended
// and aged past the retention. A request is judged against the pruner's last pass: one ended
// before that pass less the retention must be gone (less a margin: the pass judged by when it
// began, and stamps when it ended), one that is gone must have ended before it.
if (args['nudge-pruner']) {
  const before = (await storage(d, api))?.history.last_pass_at_utc ?? null;
  await setRetention();
  for (let i = 0; i < 100 && (await storage(d, api))?.history.last_pass_at_utc === before; i++) await sleep(200);
}
const final = await storage(d, api);
const lastPass = final?.history.last_pass_at_utc ? Date.parse(final.history.last_pass_at_utc) : undefined;
// A pass's instant is when it ended; the requests it judged were judged against its start.
const SLACK_MS = 5000 * SPEED;
const ends = { held: 0, pruned: 0, keptPastRetention: 0, open: 0 };
const held = await lookup(d, api, [...tracked.keys()]);
for (const [id, r] of tracked) {
  const now = held.get(id);
  if (now === null) continue;
  if (now) {
    ends.held++;
    if (!ENDED.has(now.status)) ends.open++;
    else r.endedAt ??= Date.parse(now.updated_at_utc);
    if (lastPass !== undefined && r.endedAt !== undefined && r.endedAt < lastPass - RETENTION_DAYS * DAY_MS - SLACK_MS) ends.keptPastRetention++;
    continue;
  }
  const message = await whyMissing(d, api, id);
  // Pruned by a pass no later than the last: it ended a retention before that pass at the latest.
  if (r.endedAt !== undefined && r.endedAt < (lastPass ?? daemonNow()) - RETENTION_DAYS * DAY_MS && /pruned/.test(message)) ends.pruned++;
  else lost.push(`${id}: ${r.endedAt === undefined ? 'never seen ended' : `ended ${new Date(r.endedAt).toISOString()}`}, now: ${message}`);
}

clearInterval(stepper);
await api.close();
await mixPool.close();
const exit = await (async () => {
  const exited = new Promise<number | null>((resolve) => d.child.once('exit', (code) => resolve(code)));
  await stopDaemon(d);
  return exited;
})();
if (exit !== 0) error(`daemon exit on SIGTERM (code ${exit})`, 0);
clearTimeout(watchdog);

console.log(`\nwork: ${work.posted} requests posted (${work.refused} refused with 409), ${work.ended} seen ended, ${work.triggered} jobs confirmed at balconies, `
  + `${work.retried} failed jobs tried again, ${work.triggerConflicts} confirmations answered 409; mix: ${mixSent} calls`);
console.log(`end: ${ends.held} of the posted requests held (${ends.open} open), ${ends.pruned} pruned past the retention, ${ends.keptPastRetention} kept although they ended before the last pass less the retention; `
  + `store pruned ${final?.history.pruned_requests ?? 'n/a'} requests in all, last pass ${final?.history.last_pass_at_utc ?? 'n/a'}`);
if (warningsBeforeError && warningsBeforeError.length > 0) console.log(`the daemon's last warnings before its first error:\n  ${warningsBeforeError.join('\n  ')}`);
console.log(`errors: ${errorCount()}${errors.size > 0 ? ` (${[...errors].map(([k, v]) => `${k}: ${v}`).join('; ')})` : ''}${daemonErrorCount > 0 ? `; ${daemonErrorCount} error lines in the daemon's log, the first: ${daemonErrors.join(' | ')}` : ''}`);
console.log(`lost work: ${lost.length}${lost.length > 0 ? ` (${lost.slice(0, 10).join('; ')})` : ''}`);
if (firstClock && clock !== firstClock) {
  const ran = (clock.daemonMs - firstClock.daemonMs) / (clock.at - firstClock.at);
  console.log(`the daemon's wall clock ran ${fmt(ran, 1)} times as fast as this process's monotonic clock (its first and last request's created_at)`);
}
console.log(`load average at the end ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
console.log(`soak result ${JSON.stringify({ samples: samples.length, errors: errorCount(), errorKinds: [...[...errors].map(([k, v]) => `${k}: ${v}`), ...daemonErrors.slice(0, 3)], lost: lost.length, posted: work.posted, ended: work.ended, ...ends, pruned_in_store: final?.history.pruned_requests ?? null, trends })}`);
if (!args.keep) rmSync(stateDir, { recursive: true, force: true });
else console.log(`state kept in ${stateDir}`);
process.exitCode = errorCount() > 0 || lost.length > 0 ? 1 : 0;
