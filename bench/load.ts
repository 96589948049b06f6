// npm run bench:load [-- --client undici|https --skus 10000 --jobs 0 --clients 200 --duration 30 --kind-seconds 3 --long 0
//                        --links on --seed 1 --no-build --kinds-only --mix post_sku,sku_search
//                        --node-flags="--cpu-prof --cpu-prof-dir=/tmp/p"
//                        --node-flags=--trace-gc --daemon-out /tmp/gc.txt --disk-stall 300/2
//                        --jobs 300000 --prune-days 1]
//
// The API under the everyday load: many keep-alive HTTPS clients mixing the everyday calls
// against the demo daemon (dist/main.js, a child process on a fresh state directory), with the
// bare `GET /api/v2/health` of the same daemon in the same run as the baseline.
//
// Phases, in order:
//   seed     the daemon starts once (seeding the demo site), stops; SKUs are added straight into
//            its LMDB store up to --skus (one transaction), and with --jobs N a history of ended
//            requests of three jobs each, up to N jobs, made over the last 30 days (Idempotency-
//            Keys included), as a site that has worked for a while has them; it starts again.
//   cold     --clients new connections open at once and each starts the mix: the worst wait
//            from opening a connection to its first answer (TLS handshake included).
//   health   --clients connections on GET /api/v2/health for --duration seconds: the baseline.
//   mix      the cold connections, warm now, run the mix for --duration seconds: req/s, latency
//            by kind and overall, daemon CPU per request.
//   kinds    each kind alone on 20 connections for --kind-seconds: daemon CPU ms per request of
//            that kind (CPU of every daemon thread, from /proc/<pid>/stat).
//   long     with --long N: N seconds more of the mix (a line of figures a minute), then health,
//            mix and kinds again, printed beside the first figures (how they change as SKUs and
//            jobs grow). --mix narrows the mix to some kinds, to find the one whose cost grows.
//
// With --prune-days D (and a history from --jobs), the mix runs in phases of --duration: twice as
// it is, then from the moment history.retentionDays is set to D, while the history pruner takes
// the seeded history older than D days out of the store (archiving it first) until its pass
// ends, then once more. Pruning must not move the mix's p99: the worst pruning phase's is printed
// over the quiet phases' (the second before, and after).
//
// With --kinds-only, the kinds phase alone runs right after the start, warm connections first:
// the reads then see the store at its seeded size (the mix's POST /sku adds thousands of SKUs),
// so `--skus 1000` against `--skus 10000` is the tenfold comparison.
//
// The load generator is this process, one connection per client, one request at a time: undici's
// Client by default, node:https (an Agent of one socket) with --client https, as the rounds before
// the ninth measured. node:https cost the box about as much CPU a request as the daemon's main
// thread, and capped the health baseline at about 8,000 req/s where undici reaches 22,000 (docs/
// benchmarks.md, "Ninth round"). The client's own CPU share is printed, so a run limited by the
// client shows as such. Randomness (which kind, which SKU) comes from --seed.
//
// The client shares the box's cores with the daemon, so the health and mix phases each print
// what a request cost the whole box (every process and the kernel, from /proc/stat) and how
// many cores were busy. The mix with every core busy at its cost a request, over health's
// rate, is the mix / health the box allows: no change to how the daemon spreads its work over
// threads can pass it, only a request that costs the box less.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as Undici from 'undici';
import { mixKinds, seededRandom, type Call } from './mix-kinds.js';
import { cpuMs, seedSkus, startDaemon as startBenchDaemon, stopDaemon, TICK_MS, type Daemon } from './load-daemon.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    skus: { type: 'string', default: '10000' },
    jobs: { type: 'string', default: '0' },
    clients: { type: 'string', default: '200' },
    duration: { type: 'string', default: '30' },
    'kind-seconds': { type: 'string', default: '3' },
    long: { type: 'string', default: '0' },
    links: { type: 'string', default: 'on' },
    seed: { type: 'string', default: String(Date.now() % 100000) },
    'no-build': { type: 'boolean', default: false },
    'kinds-only': { type: 'boolean', default: false },
    // Only these kinds (comma-separated) in the mix: to see which one's cost grows in --long.
    mix: { type: 'string' },
    // Extra flags for the measured daemon (a CPU profile of its threads, say), not for the seeding start.
    'node-flags': { type: 'string' },
    // The measured daemon's own lines that are not its log's JSON (what --trace-gc prints) go to this file.
    'daemon-out': { type: 'string' },
    // "300/2": another process holds the store's LMDB write lock 300 ms every 2 s, as a disk
    // whose fsyncs stall holds the daemon's commits (a busy or failing disk).
    'disk-stall': { type: 'string' },
    // The load generator's HTTP client: undici (the default, lighter) or node:https (the rounds before the ninth).
    client: { type: 'string', default: 'undici' },
    // Days of history kept from the second mix phase on: the pruner works through the rest meanwhile.
    'prune-days': { type: 'string' },
  },
});
const SKUS = Number(args.skus);
const JOBS = Number(args.jobs);
const CLIENTS = Number(args.clients);
const DURATION = Number(args.duration) * 1000;
const KIND_MS = Number(args['kind-seconds']) * 1000;
const LONG_MS = Number(args.long) * 1000;
const SEED = Number(args.seed);
const [STALL_MS, STALL_EVERY_S] = (args['disk-stall'] ?? '0/0').split('/').map(Number) as [number, number];
console.log(`bench:load seed ${SEED}, ${SKUS} SKUs, ${CLIENTS} clients, ${DURATION / 1000} s per phase, links ${args.links}, ${os.cpus().length} cores, load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}${STALL_MS > 0 ? `; the disk stalls commits ${STALL_MS} ms every ${STALL_EVERY_S} s` : ''}`);

// ------------------------------------------------------------------ the mix

const random = seededRandom(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

/** The everyday mix's kinds, each as often as the others. */
const KINDS = mixKinds(random);
const KIND_NAMES = args.mix ? args.mix.split(',') : Object.keys(KINDS);
for (const kind of KIND_NAMES) if (!KINDS[kind]) throw new Error(`--mix: no kind ${kind} (kinds: ${Object.keys(KINDS).join(', ')})`);

// ------------------------------------------------------------------ the daemon

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'wh-bench-load-'));

/** Starts the daemon on the bench's state directory (with `flags` for node; their own lines go to --daemon-out). */
function startDaemon(flags: string[] = []): Promise<Daemon> {
  return startBenchDaemon({ stateDir, links: args.links!, flags, onOtherLine: flags.length > 0 ? toDaemonOut : undefined });
}

/**
 * Adds a history of ended FULFILLMENT requests straight into the stopped daemon's store: each
 * with an Idempotency-Key and three SUCCEEDED jobs (retrieve, pick, store) of a demo SKU and
 * one of the site's carriers, made at instants spread over the last 30 days (time-ordered ids of those instants),
 * until the store holds `total` jobs. The flat cost of a request as jobs grow tenfold (issue
 * 22) is measured against it: `--jobs 10000` against `--jobs 100000`.
 */
async function seedJobs(total: number): Promise<void> {
  const { Store } = await import('../src/store/store.js');
  const { MIGRATIONS } = await import('../src/store/migrations.js');
  const { jobs, newJob, requests } = await import('../src/domain/requests/records.js');
  const { carriers } = await import('../src/domain/inventory/records.js');
  const { v7 } = await import('uuid');
  const store = await Store.open({ dir: path.join(stateDir, 'db') }, [requests as never, jobs as never, carriers as never], MIGRATIONS);
  const random = seededRandom(SEED + 7);
  const demoCarriers = [...store.collection(carriers).scan()];
  const have = store.collection(jobs).count();
  const made = Math.max(0, Math.ceil((total - have) / 3));
  const now = Date.now();
  const span = 30 * 24 * 3600_000;
  for (let done = 0; done < made;) {
    // Commits of 20,000 requests: one transaction of them all held 2 GB of dirty pages.
    await store.write(() => {
      for (const end = Math.min(made, done + 20_000); done < end; done++) {
        const at = now - span + Math.floor((span * done) / made);
        const sku = `SKU-${String(1 + Math.floor(random() * 400)).padStart(5, '0')}`;
        const { id: carrier, level_id: level } = demoCarriers[Math.floor(random() * demoCarriers.length)]!;
        const requestId = v7({ msecs: at });
        store.collection(requests).put({
          id: requestId, type: 'FULFILLMENT', status: 'SUCCEEDED', priority: 0, counter: store.nextId('request'), level_id: level, bot_id: null, placing_pos: null,
          entities: [{ id: `${requestId}:0`, entity_id: sku, entity_type: 'Sku', job_type: 'PICKING', sku_id: sku, balcony_ids: [1], total_quantity: 1, completed_quantity: 1, succeeded_quantity: 1, cancelled_quantity: 0 }],
          warnings: [], cancel_requested: false, idempotency_key: `api_key:1:${randomKey(random)}`, abort_feedback: null, placements: null, created_at: at, updated_at: at + 60_000,
        });
        const job = (type: 'RETRIEVING' | 'PICKING' | 'STORING', k: number, parents: string[]) => newJob(
          { id: v7({ msecs: at }), request_id: requestId, type, entity_id: type === 'PICKING' ? sku : carrier, entity_index: type === 'PICKING' ? 0 : -1, seq: store.nextId('job'), now: at },
          { status: 'SUCCEEDED', carrier_id: carrier, level_id: level, balcony_id: 1, balcony_ids: [1], parent_job_ids: parents, updated_at: at + 20_000 * k, ...(type === 'PICKING' ? { sku_id: sku, quantity: 1, measurement_unit: 'PIECE' as const, is_selectable: true } : {}) },
        );
        const retrieve = job('RETRIEVING', 1, []);
        const pick = job('PICKING', 2, [retrieve.id]);
        for (const j of [retrieve, pick, job('STORING', 3, [pick.id])]) store.collection(jobs).put(j);
      }
    });
  }
  console.log(`seeded ${made} ended requests of 3 jobs (${store.collection(jobs).count()} jobs in all)`);
  await store.close();
}

/** An Idempotency-Key as integrations send them: a random UUID's text, from the seeded generator. */
function randomKey(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * CPU milliseconds the whole box has been busy (every core, every process, the kernel's
 * interrupts included), from /proc/stat: with the client on the same box, what the two phases
 * share, so a phase that keeps the box busy is bound by what its requests cost the box.
 */
function boxBusyMs(): number {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) * TICK_MS;
}

/** Resident memory of mapped files (LMDB's store) and shared memory, in MiB. */
function mappedMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return kb('RssFile') + kb('RssShmem');
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+) kB/.exec(line ?? '')?.[1] ?? NaN) / 1024;
}

function count(d: Daemon, collection: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: d.port, path: `/api/v2/${collection}?size=1`, ca: d.ca, headers: { authorization: `Bearer ${d.key}` } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve((JSON.parse(text) as { total: number }).total));
    });
    req.on('error', reject);
    req.end();
  });
}

// ------------------------------------------------------------------ the clients

interface Sample {
  kind: string;
  ms: number;
  status: number;
  ok: boolean;
  /** Sent on a connection opened for it (the first, or after the server closed an idle one): its wait includes the TLS handshake. */
  fresh: boolean;
}

/** One keep-alive client: one socket, one request at a time. */
interface Client {
  /** Time from opening the connection to the end of its first answer, once known. */
  readonly firstWait: number | undefined;
  send(kind: string, call: Call): Promise<Sample>;
  close(): void;
}

function newClient(d: Daemon): Client {
  return args.client === 'https' ? new HttpsClient(d) : new UndiciClient(d);
}

/** node:https with an Agent of one socket: about as much CPU a request as the daemon's main thread spends on it. */
class HttpsClient implements Client {
  private readonly agent: https.Agent;
  /** Time from opening the connection to the end of its first answer, once known. */
  firstWait: number | undefined;
  private readonly opened = performance.now();

  constructor(private readonly d: Daemon) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: d.ca });
  }

  send(kind: string, call: Call): Promise<Sample> {
    return new Promise((resolve) => {
      const body = call.body === undefined ? undefined : JSON.stringify(call.body);
      const t0 = performance.now();
      let done = false;
      const finish = (status: number, ok: boolean) => {
        if (done) return;
        done = true;
        const t1 = performance.now();
        if (ok) this.firstWait ??= t1 - this.opened;
        resolve({ kind, ms: t1 - t0, status, ok, fresh: !req.reusedSocket });
      };
      const req = https.request({
        host: '127.0.0.1', port: this.d.port, method: call.method, path: call.path, agent: this.agent,
        headers: { authorization: `Bearer ${this.d.key}`, ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}), ...call.headers },
      }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => finish(res.statusCode ?? 0, call.ok.includes(res.statusCode ?? 0)));
        res.on('aborted', () => finish(0, false));
        res.on('error', () => finish(0, false));
      });
      // A request never answered must not hold its phase for ever: counted as failed after 60 s.
      req.setTimeout(60_000, () => req.destroy(new Error('no answer in 60 s')));
      req.on('error', () => finish(0, false));
      req.on('close', () => finish(0, false));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** undici's Client (one connection, no pipelining): less of the box's two cores goes to the load itself. */
class UndiciClient implements Client {
  private readonly client: Undici.Client;
  firstWait: number | undefined;
  private readonly opened = performance.now();
  private connects = 0;

  constructor(private readonly d: Daemon) {
    this.client = new Undici.Client(`https://127.0.0.1:${d.port}`, {
      connect: { ca: d.ca }, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000,
      // uWS closes a connection idle for 10 s; undici must not reuse one the server is closing.
      keepAliveTimeout: 5_000, keepAliveMaxTimeout: 5_000,
    });
    this.client.on('connect', () => this.connects++);
  }

  async send(kind: string, call: Call): Promise<Sample> {
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const connects = this.connects;
    const t0 = performance.now();
    let status = 0;
    let ok = false;
    try {
      const res = await this.client.request({
        method: call.method as Undici.Dispatcher.HttpMethod, path: call.path, body,
        headers: { authorization: `Bearer ${this.d.key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...call.headers },
      });
      await res.body.dump({ limit: Infinity });
      status = res.statusCode;
      ok = call.ok.includes(status);
    } catch {
      // Counted as failed, as the https client counts a dropped or timed-out request.
    }
    const t1 = performance.now();
    if (ok) this.firstWait ??= t1 - this.opened;
    return { kind, ms: t1 - t0, status, ok, fresh: this.connects !== connects };
  }

  close(): void {
    void this.client.destroy();
  }
}

/** Runs `clients` loops of `next()` calls until `ms` has passed; returns every sample. */
async function drive(clients: Client[], ms: number, next: () => { kind: string; call: Call }): Promise<Sample[]> {
  const samples: Sample[] = [];
  const end = performance.now() + ms;
  await Promise.all(clients.map(async (c) => {
    while (performance.now() < end) {
      const { kind, call } = next();
      samples.push(await c.send(kind, call));
    }
  }));
  return samples;
}

const mixNext = () => {
  const kind = pick(KIND_NAMES);
  return { kind, call: KINDS[kind]!() };
};

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

interface Figures {
  healthRps: number;
  mixRps: number;
  p50: number;
  p99: number;
  max: number;
  /** Box CPU ms a request and the box's busy cores, in the health phase and in the mix. */
  healthBoxMsPerReq: number;
  healthBoxCores: number;
  healthDaemonMsPerReq: number;
  healthClientCpuPct: number;
  mixBoxMsPerReq: number;
  mixBoxCores: number;
  /** Requests of the mix sent on a new connection, and the longest of their waits. */
  fresh: number;
  freshMax: number;
  bad: number;
  mixCpuMsPerReq: number;
  /** The main thread's share of it: the thread that serves every request. */
  mixMainMsPerReq: number;
  mixMainCores: number;
  byKind: Record<string, { n: number; p50: number; p99: number; max: number; bad: number; cpuMsPerReq: number; mainMsPerReq: number; rpsAlone: number }>;
  /** Daemon CPU over wall time in the mix, in cores: near 2 means the daemon is CPU-bound. */
  mixCores: number;
  clientCpuPct: number;
  skus: number;
  jobs: number;
  rss: number;
}

/** Health, mix and per-kind phases on the warm `mixClients`. */
async function measure(d: Daemon, mixClients: Client[]): Promise<Figures> {
  const pid = d.child.pid!;
  const healthClients = Array.from({ length: CLIENTS }, () => newClient(d));
  const hBox0 = boxBusyMs();
  const hCpu0 = cpuMs(pid);
  const hOwn0 = process.cpuUsage();
  const health = await drive(healthClients, DURATION, () => ({ kind: 'health', call: { method: 'GET', path: '/api/v2/health', ok: [200] } }));
  const hOwn = process.cpuUsage(hOwn0);
  const hCpu = cpuMs(pid) - hCpu0;
  const hBox = boxBusyMs() - hBox0;
  for (const c of healthClients) c.close();
  const healthRps = health.length / (DURATION / 1000);

  const cpu0 = cpuMs(pid);
  const main0 = cpuMs(pid, true);
  const own0 = process.cpuUsage();
  const box0 = boxBusyMs();
  const mix = await drive(mixClients, DURATION, mixNext);
  const box = boxBusyMs() - box0;
  const own = process.cpuUsage(own0);
  const mixCpu = cpuMs(pid) - cpu0;
  const mixMain = cpuMs(pid, true) - main0;
  // Latency on warm connections; a request on a new one (uWS closes a connection idle for
  // 10 s, as the mix's were during the health phase) waits for its handshake too: apart.
  const all = mix.filter((s) => !s.fresh).map((s) => s.ms).sort((a, b) => a - b);
  const fresh = mix.filter((s) => s.fresh).map((s) => s.ms);

  return { healthRps, healthBoxMsPerReq: hBox / health.length, healthBoxCores: hBox / DURATION, healthDaemonMsPerReq: hCpu / health.length,
    healthClientCpuPct: ((hOwn.user + hOwn.system) / 1000 / DURATION) * 100, mixBoxMsPerReq: box / mix.length, mixBoxCores: box / DURATION,
    mixRps: mix.length / (DURATION / 1000), p50: quantile(all, 0.5), p99: quantile(all, 0.99), max: all.at(-1) ?? NaN,
    fresh: fresh.length, freshMax: Math.max(0, ...fresh),
    bad: mix.filter((s) => !s.ok).length, mixCpuMsPerReq: mixCpu / mix.length, mixMainMsPerReq: mixMain / mix.length, mixCores: mixCpu / DURATION, mixMainCores: mixMain / DURATION,
    byKind: await measureKinds(d, mixClients, mix), clientCpuPct: ((own.user + own.system) / 1000 / DURATION) * 100,
    skus: await count(d, 'skus'), jobs: await count(d, 'jobs'), rss: rssMiB(pid),
  };
}

/** A line to --daemon-out, stamped with this process's seconds (the kinds' windows are marked the same way). */
function toDaemonOut(line: string): void {
  if (args['daemon-out']) appendFileSync(args['daemon-out'], `${(performance.now() / 1000).toFixed(1)} ${line}\n`);
}

/** Marks a kind's window in --daemon-out, with the monotonic clock's µs that a --cpu-prof profile's timestamps count in. */
function markKind(kind: string, what: string): void {
  toDaemonOut(`# ${kind} alone: ${what} (monotonic ${process.hrtime.bigint() / 1000n} µs)`);
}

/** Each kind alone on 20 of `clients`: daemon CPU per request; latency in the mix from `mix`. */
async function measureKinds(d: Daemon, clients: Client[], mix: readonly Sample[]): Promise<Figures['byKind']> {
  const pid = d.child.pid!;
  const byKind: Figures['byKind'] = {};
  const few = clients.slice(0, 20);
  for (const kind of KIND_NAMES) {
    const mine = mix.filter((s) => s.kind === kind && !s.fresh).map((s) => s.ms).sort((a, b) => a - b);
    const k0 = cpuMs(pid);
    const m0 = cpuMs(pid, true);
    markKind(kind, 'start');
    const alone = await drive(few, KIND_MS, () => ({ kind, call: KINDS[kind]!() }));
    markKind(kind, `${alone.length} requests`);
    const kCpu = cpuMs(pid) - k0;
    const kMain = cpuMs(pid, true) - m0;
    byKind[kind] = {
      n: mine.length, p50: quantile(mine, 0.5), p99: quantile(mine, 0.99), max: mine.at(-1) ?? NaN,
      bad: mix.filter((s) => s.kind === kind && !s.ok).length + alone.filter((s) => !s.ok).length, cpuMsPerReq: kCpu / alone.length, mainMsPerReq: kMain / alone.length, rpsAlone: alone.length / (KIND_MS / 1000),
    };
  }
  return byKind;
}

function print(columns: { title: string; f: Figures }[]): void {
  const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  const rows: [string, (f: Figures) => string][] = [
    ['SKUs / jobs in store', (f) => `${f.skus} / ${f.jobs}`],
    ['health req/s', (f) => fmt(f.healthRps, 0)],
    ['mix req/s', (f) => fmt(f.mixRps, 0)],
    ['mix / health', (f) => fmt(f.mixRps / f.healthRps, 3)],
    ['health: box CPU ms/req, busy cores', (f) => `${fmt(f.healthBoxMsPerReq, 3)}, ${fmt(f.healthBoxCores, 2)}`],
    ['health: daemon CPU ms/req, client %', (f) => `${fmt(f.healthDaemonMsPerReq, 3)}, ${fmt(f.healthClientCpuPct, 0)}`],
    ['mix: box CPU ms/req, busy cores', (f) => `${fmt(f.mixBoxMsPerReq, 3)}, ${fmt(f.mixBoxCores, 2)}`],
    // The most mix / health can be at these costs: the mix with every core of the box busy at
    // what its requests cost the box, over health as measured (bound by whatever bound it).
    ['mix / health the box allows', (f) => fmt((os.cpus().length * 1000) / f.mixBoxMsPerReq / f.healthRps, 3)],
    ['mix p50 / p99 / max ms (warm)', (f) => `${fmt(f.p50)} / ${fmt(f.p99)} / ${fmt(f.max, 0)}`],
    ['mix on new conn.: n / worst ms', (f) => `${f.fresh} / ${fmt(f.freshMax, 0)}`],
    ['mix daemon CPU ms/req', (f) => fmt(f.mixCpuMsPerReq, 2)],
    ['mix daemon CPU, cores', (f) => fmt(f.mixCores, 2)],
    ['mix main thread CPU ms/req', (f) => fmt(f.mixMainMsPerReq, 3)],
    ['mix main thread CPU, cores', (f) => fmt(f.mixMainCores, 2)],
    ['unexpected answers', (f) => String(f.bad)],
    ['client CPU % (of one core)', (f) => fmt(f.clientCpuPct, 0)],
    ['daemon RSS MiB', (f) => fmt(f.rss, 0)],
  ];
  for (const kind of KIND_NAMES) {
    rows.push([`${kind}: CPU ms/req alone`, (f) => fmt(f.byKind[kind]!.cpuMsPerReq, 2)]);
    rows.push([`${kind}: main thread ms/req alone`, (f) => fmt(f.byKind[kind]!.mainMsPerReq, 2)]);
    rows.push([`${kind}: req/s alone (20 conn.)`, (f) => fmt(f.byKind[kind]!.rpsAlone, 0)]);
    rows.push([`${kind}: p50/p99/max ms, mix, warm`, (f) => `${fmt(f.byKind[kind]!.p50)} / ${fmt(f.byKind[kind]!.p99)} / ${fmt(f.byKind[kind]!.max, 0)}`]);
  }
  const width = Math.max(...rows.map(([name]) => name.length));
  console.log(`\n${''.padEnd(width)}  ${columns.map((c) => c.title.padStart(24)).join('')}`);
  for (const [name, get] of rows) console.log(`${name.padEnd(width)}  ${columns.map((c) => get(c.f).padStart(24)).join('')}`);
}

// ------------------------------------------------------------------ run

if (!args['no-build']) {
  const build = spawnSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}
let daemon = await startDaemon();
await stopDaemon(daemon);
await seedSkus(stateDir, SKUS);
if (JOBS > 0) await seedJobs(JOBS);
const t0 = performance.now();
daemon = await startDaemon(args['node-flags']?.split(/\s+/).filter(Boolean));
console.log(`daemon pid ${daemon.child.pid} listening on ${daemon.port} after ${((performance.now() - t0) / 1000).toFixed(1)} s; RSS ${rssMiB(daemon.child.pid!).toFixed(0)} MiB`);
const stalls = STALL_MS > 0 ? diskStalls(STALL_MS, STALL_EVERY_S) : undefined;
try {
  if (args['kinds-only']) await kindsOnly(daemon);
  else if (args['prune-days'] !== undefined) await pruneRun(daemon, Number(args['prune-days']));
  else await fullRun(daemon);
  console.log(`\nload average at the end ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
} finally {
  stalls?.kill();
  await stopDaemon(daemon);
  rmSync(stateDir, { recursive: true, force: true });
}

/** A process that takes the store's LMDB write lock for `ms` every `everyS` seconds, sleeping meanwhile (no CPU). */
function diskStalls(ms: number, everyS: number): ChildProcess {
  return spawn(process.execPath, ['--input-type=module', '-e', `
    import { open } from 'lmdb';
    const root = open({ path: ${JSON.stringify(path.join(stateDir, 'db', 'warehouse.mdb'))}, maxDbs: 128 });
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    setInterval(() => root.transactionSync(() => {
      root.putSync('bench:load disk stall', Date.now());
      Atomics.wait(sleeper, 0, 0, ${ms});
    }), ${everyS * 1000});
  `], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Cold start, then health, mix and kinds (again after --long). */
async function fullRun(d: Daemon): Promise<void> {
  const rssStart = rssMiB(d.child.pid!);
  // Cold start: every client opens its connection at once and runs the mix for a few seconds.
  const mixClients = Array.from({ length: CLIENTS }, () => newClient(d));
  await drive(mixClients, 5000, mixNext);
  const waits = mixClients.map((c) => c.firstWait ?? Infinity).sort((a, b) => a - b);
  console.log(`cold start of ${CLIENTS} connections: first answer after p50 ${quantile(waits, 0.5).toFixed(0)} ms, worst ${waits.at(-1)!.toFixed(0)} ms; RSS at start ${rssStart.toFixed(0)} MiB`);
  const first = await measure(d, mixClients);
  const columns = [{ title: 'first', f: first }];
  if (LONG_MS > 0) {
    // A line a minute: where in the long phase a cost starts to grow.
    for (let done = 0; done < LONG_MS; done += 60_000) {
      const pid = d.child.pid!;
      const main0 = cpuMs(pid, true);
      const sys0 = cpuMs(pid, true, true);
      const all0 = cpuMs(pid);
      const ms = Math.min(60_000, LONG_MS - done);
      const n = (await drive(mixClients, ms, mixNext)).length;
      console.log(`long +${((done + ms) / 1000).toFixed(0)} s: ${(n / (ms / 1000)).toFixed(0)} req/s, daemon ${((cpuMs(pid) - all0) / n).toFixed(3)} ms/req, main thread ${((cpuMs(pid, true) - main0) / n).toFixed(3)} ms/req (${((cpuMs(pid, true, true) - sys0) / n).toFixed(3)} in the kernel); ${await count(d, 'skus')} SKUs, ${await count(d, 'jobs')} jobs, RSS ${rssMiB(pid).toFixed(0)} MiB (${mappedMiB(pid).toFixed(0)} of mapped files)`);
    }
    columns.push({ title: `after ${LONG_MS / 1000} s more`, f: await measure(d, mixClients) });
  }
  for (const c of mixClients) c.close();
  print(columns);
}

/** The kinds alone on the store as seeded: the reads see --skus SKUs, not what a mix added. */
async function kindsOnly(d: Daemon): Promise<void> {
  const clients = Array.from({ length: 20 }, () => newClient(d));
  await drive(clients, 1000, () => ({ kind: 'health', call: { method: 'GET', path: '/api/v2/health', ok: [200] } }));
  const before = `${await count(d, 'skus')} SKUs / ${await count(d, 'jobs')} jobs`;
  const byKind = await measureKinds(d, clients, []);
  for (const c of clients) c.close();
  console.log(`\nkinds alone on 20 warm connections, from ${before} (the reads first, then the writes)`);
  for (const kind of KIND_NAMES) {
    const k = byKind[kind]!;
    console.log(`${kind.padEnd(16)} CPU ${k.cpuMsPerReq.toFixed(2)} ms/req, main thread ${k.mainMsPerReq.toFixed(2)} ms/req, ${k.rpsAlone.toFixed(0)} req/s${k.bad > 0 ? `, ${k.bad} unexpected` : ''}`);
  }
}

/** A call of the daemon's API as its administrator, answering the parsed body. */
function api(d: Daemon, method: string, apiPath: string, body?: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: d.port, path: apiPath, method, ca: d.ca, headers: { authorization: `Bearer ${d.key}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => (res.statusCode! < 300 ? resolve(JSON.parse(text)) : reject(new Error(`${method} ${apiPath}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The mix before, while and after the pruner takes the history older than `days` out of the store. */
async function pruneRun(d: Daemon, days: number): Promise<void> {
  const clients = Array.from({ length: CLIENTS }, () => newClient(d));
  await drive(clients, 5000, mixNext);
  const phase = async (title: string) => {
    const pruned0 = (await api(d, 'GET', '/api/v2/system/storage')).history;
    const samples = (await drive(clients, DURATION, mixNext)).filter((x) => !x.fresh);
    const storage = await api(d, 'GET', '/api/v2/system/storage');
    const ms = samples.map((x) => x.ms).sort((a, b) => a - b);
    return {
      title, rps: samples.length / (DURATION / 1000), p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), max: ms.at(-1) ?? NaN, bad: samples.filter((x) => !x.ok).length,
      requests: storage.history.pruned_requests - pruned0.pruned_requests, jobs: storage.history.pruned_jobs - pruned0.pruned_jobs, held: await count(d, 'jobs'),
      used: storage.used_bytes / 1024 ** 2, file: storage.file_bytes / 1024 ** 2,
      // Done when nothing older than the retention is held: a pass already running when the
      // setting changed (the one at start) ends first, and the one it booked may still be archiving.
      done: storage.history.oldest_ended_request_at_utc === null || Date.parse(storage.history.oldest_ended_request_at_utc) > Date.now() - days * 24 * 3600_000 - 60_000,
    };
  };
  // Two phases before: the first still warms the daemon up (caches, JIT, the young generation's size).
  const phases = [await phase('before 1'), await phase('before 2')];
  await api(d, 'PATCH', '/api/v2/settings/history.retentionDays', { value_json: days });
  // Pruning until nothing older than the retention is left (at most 60 phases), then a phase with nothing to prune.
  for (let i = 1; i <= 60; i++) {
    const p = await phase(`pruning ${i}`);
    phases.push(p);
    if (p.done) break;
  }
  phases.push(await phase('after'));
  for (const c of clients) c.close();
  console.log(`\nthe mix (${CLIENTS} connections, ${DURATION / 1000} s a phase) while the history pruner takes what is older than ${days} d`);
  console.log('phase              req/s   p50 ms   p99 ms   max ms  unexpected  requests / jobs pruned  jobs held  store used / file MiB');
  for (const f of phases) {
    console.log(`${f.title.padEnd(16)} ${f.rps.toFixed(0).padStart(7)} ${f.p50.toFixed(1).padStart(8)} ${f.p99.toFixed(1).padStart(8)} ${f.max.toFixed(0).padStart(8)} ${String(f.bad).padStart(11)} ${`${f.requests} / ${f.jobs}`.padStart(23)} ${String(f.held).padStart(10)} ${`${f.used.toFixed(0)} / ${f.file.toFixed(0)}`.padStart(22)}`);
  }
  const pruning = phases.filter((f) => f.title.startsWith('pruning') && f.jobs > 0);
  const quiet = [phases[1]!, phases.at(-1)!];
  const base = quiet.reduce((n, f) => n + f.p99, 0) / quiet.length;
  const worst = Math.max(...pruning.map((f) => f.p99));
  console.log(`p99 of the quiet phases (before 2, after): ${quiet.map((f) => f.p99.toFixed(1)).join(', ')} ms; of the phases that pruned: ${pruning.map((f) => f.p99.toFixed(1)).join(', ')} ms`);
  console.log(`worst pruning p99 / quiet p99: ${(worst / base).toFixed(2)}; ${pruning.reduce((n, f) => n + f.requests, 0)} requests pruned at ${(pruning.reduce((n, f) => n + f.requests, 0) / ((pruning.length * DURATION) / 1000)).toFixed(0)} a second under the mix`);
}
