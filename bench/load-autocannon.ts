// npm run bench:load-autocannon [-- --skus 10000 --clients 200 --duration 10 --rounds 2 --seed 1 --links on --no-build]
//
// The everyday mix (bench:load) / health ratio with a load tool others use, autocannon, beside the
// undici client of `bench:load`: the same daemon (bench/load-daemon.ts), the same seeded store
// and the same calls (bench/mix-kinds.ts). A short mix warms the connections first; then each
// round runs health and the mix, --clients keep-alive connections for --duration seconds each.
//
// autocannon runs in this process (one core, like bench:load's client), one request at a time
// a connection. Each round prints both phases' req/s, latency and daemon CPU a request (every
// daemon thread, /proc/<pid>/stat), the client's share of one core, and the mix / health ratio.
// A round whose health phase holds the client near 100 % measures the client, not the daemon.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mixKinds, seededRandom, type Call } from './mix-kinds.js';
import { cpuMs, seedSkus, startDaemon, stopDaemon, type Daemon } from './load-daemon.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    skus: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '200' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    links: { type: 'string', default: 'on' },
    seed: { type: 'string', default: String(Date.now() % 100000) },
    'no-build': { type: 'boolean', default: false },
  },
});
const SEED = Number(args.seed);

type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
interface AutocannonResult {
  duration: number;
  requests: { total: number };
  latency: { p50: number; p99: number; max: number };
  errors: number;
  timeouts: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** What autocannon keeps for one connection between a request's setup and its answer. */
interface Context {
  ok?: readonly number[];
}

interface Phase {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  daemonMsPerReq: number;
  clientPct: number;
  unexpected: number;
}

/** `seconds` of `next()` calls on `clients` connections. */
async function phase(d: Daemon, seconds: number, next: () => Call): Promise<Phase> {
  let unexpected = 0;
  const cpu0 = cpuMs(d.child.pid!);
  const own0 = process.cpuUsage();
  const r = await autocannon({
    url: `https://127.0.0.1:${d.port}`, connections: Number(args.clients), duration: seconds, pipelining: 1,
    // autocannon never verifies the server certificate; the CA is given for form.
    tlsOptions: { ca: d.ca },
    headers: { authorization: `Bearer ${d.key}` },
    requests: [{
      setupRequest: (req: { headers: Record<string, string> }, context: Context) => {
        const call = next();
        context.ok = call.ok;
        const body = call.body === undefined ? undefined : JSON.stringify(call.body);
        return { ...req, method: call.method, path: call.path, body, headers: { ...req.headers, ...(body ? { 'content-type': 'application/json' } : {}), ...call.headers } };
      },
      onResponse: (status: number, _body: string, context: Context) => {
        if (!context.ok?.includes(status)) unexpected++;
      },
    }],
  });
  const own = process.cpuUsage(own0);
  const n = r.requests.total;
  return {
    rps: n / r.duration, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max,
    daemonMsPerReq: (cpuMs(d.child.pid!) - cpu0) / n, clientPct: ((own.user + own.system) / 1000 / (r.duration * 1000)) * 100,
    unexpected: unexpected + r.errors + r.timeouts,
  };
}

const fmt = (p: Phase) =>
  `${p.rps.toFixed(0).padStart(6)} req/s, p50 / p99 / max ${p.p50} / ${p.p99} / ${p.max} ms, daemon ${p.daemonMsPerReq.toFixed(3)} ms/req, client ${p.clientPct.toFixed(0)} %, unexpected ${p.unexpected}`;

if (!args['no-build']) {
  const build = spawnSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}
console.log(`bench:load-autocannon seed ${SEED}, ${args.skus} SKUs, ${args.clients} clients, ${args.duration} s per phase, ${os.cpus().length} cores, load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'wh-bench-autocannon-'));
let daemon = await startDaemon({ stateDir, links: args.links! });
await stopDaemon(daemon);
await seedSkus(stateDir, Number(args.skus));
daemon = await startDaemon({ stateDir, links: args.links! });
try {
  const random = seededRandom(SEED);
  const kinds = mixKinds(random);
  const names = Object.keys(kinds);
  const mix = () => kinds[names[Math.floor(random() * names.length)]!]!();
  const health = (): Call => ({ method: 'GET', path: '/api/v2/health', ok: [200] });
  const warm = await phase(daemon, 5, mix);
  console.log(`warm-up mix ${fmt(warm)}`);
  const seconds = Number(args.duration);
  for (let round = 1; round <= Number(args.rounds); round++) {
    const h = await phase(daemon, seconds, health);
    const m = await phase(daemon, seconds, mix);
    console.log(`round ${round}\n  health ${fmt(h)}\n  mix    ${fmt(m)}\n  mix / health ${(m.rps / h.rps).toFixed(3)}`);
  }
  console.log(`load average at the end ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
} finally {
  await stopDaemon(daemon);
  rmSync(stateDir, { recursive: true, force: true });
}
