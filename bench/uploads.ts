// npm run bench:uploads [-- --clients 60 --mib 8 --scenarios control,anonymous,bad-key,key,key-default --no-build]
//
// Resident memory of the daemon (dist/main.js, a child process over TLS on loopback) while
// many clients upload at once to `POST /api/v2/support/create_issue`: each client opens its
// own connection and sends one multipart body (a payload and one file of `--mib` MiB) as fast
// as loopback takes it. Every scenario runs on a freshly started daemon, so that one
// scenario's heap does not hide the next one's growth.
//
//   control      the same clients with a valid key and a 8 KiB file: what connections, TLS
//                and the request path cost without large bodies. The baseline of this run.
//   anonymous    no credentials (401)
//   bad-key      a well-formed key the daemon does not know (401 after the key lookup)
//   key          the bootstrap key (every permission), with the per-caller quota and the
//                global cap raised above the load so that every upload is accepted and stored
//   key-default  the bootstrap key with the default quota: the uploads beyond it are refused
//
// Growth is the highest VmRSS sampled every 10 ms during the load (from /proc) minus VmRSS
// just before it. Goal (issue): below 100 MiB for anonymous and key.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { daemonNodeFlags } from './daemon-flags.js';
import { eachLogLine } from './log-lines.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MiB = 1 << 20;
const GOAL_MIB = 100;
const SCENARIOS = ['control', 'anonymous', 'bad-key', 'key', 'key-default'] as const;
type Scenario = (typeof SCENARIOS)[number];

const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '60' },
    mib: { type: 'string', default: '8' },
    scenarios: { type: 'string', default: SCENARIOS.join(',') },
    'no-build': { type: 'boolean', default: false },
  },
});
const clients = Number(args.clients);
const fileBytes = Math.round(Number(args.mib) * MiB);
const scenarios = args.scenarios.split(',').map((s) => s.trim()) as Scenario[];
for (const s of scenarios) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s} (known: ${SCENARIOS.join(', ')})`);

if (!args['no-build']) {
  const build = spawnSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

interface Daemon {
  child: ChildProcess;
  port: number;
  ca: Buffer;
  key: string;
  stateDir: string;
}

/** Starts dist/main.js on a fresh state directory without radio lines; resolves once it listens. */
async function startDaemon(env: Record<string, string>): Promise<Daemon> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'wh-bench-uploads-'));
  const child = spawn(process.execPath, [...daemonNodeFlags(), path.join(ROOT, 'dist/main.js')], {
    cwd: ROOT,
    env: { ...process.env, WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off', WAREHOUSE_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    eachLogLine(child.stdout!, (line) => {
      if (line.msg === 'HTTPS API listening') resolve(Number(line.port));
    });
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code} before listening`)));
  });
  const key = (JSON.parse(readFileSync(path.join(stateDir, 'bootstrap-admin.json'), 'utf8')) as { api_key: string }).api_key;
  return { child, port, ca: readFileSync(path.join(stateDir, 'tls/self-signed-cert.pem')), key, stateDir };
}

async function stopDaemon(d: Daemon): Promise<void> {
  const exited = new Promise((resolve) => d.child.once('exit', resolve));
  d.child.kill('SIGTERM');
  await exited;
  rmSync(d.stateDir, { recursive: true, force: true });
}

/** VmRSS of a process, bytes. */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+) kB/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

/** One multipart body: the payload and one file of `bytes` bytes. */
function body(bytes: number): { head: Buffer; file: Buffer; tail: Buffer; contentType: string } {
  const boundary = '----bench-uploads-7f3a';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="payload"\r\n\r\n${JSON.stringify({ title: 'bench upload' })}\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  return { head, file: Buffer.alloc(bytes, 0x5a), tail: Buffer.from(`\r\n--${boundary}--\r\n`), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Uploads once on a connection of its own; resolves with the status, or the error's code. */
function upload(d: Daemon, token: string | undefined, parts: ReturnType<typeof body>): Promise<string> {
  return new Promise((resolve) => {
    const length = parts.head.length + parts.file.length + parts.tail.length;
    const headers: Record<string, string | number> = { 'content-type': parts.contentType, 'content-length': length };
    if (token) headers.authorization = `Bearer ${token}`;
    let settled = false;
    const done = (what: string) => {
      if (!settled) resolve(what);
      settled = true;
    };
    const req = https.request({ host: '127.0.0.1', port: d.port, path: '/api/v2/support/create_issue', method: 'POST', headers, ca: d.ca, agent: false, checkServerIdentity: () => undefined }, (res) => {
      res.resume();
      res.on('end', () => done(String(res.statusCode)));
      res.on('error', () => done(String(res.statusCode)));
    });
    // A refused upload is answered and its connection closed while the body is still being sent.
    req.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
    req.write(parts.head);
    req.write(parts.file);
    req.end(parts.tail);
  });
}

interface Result {
  scenario: Scenario;
  before: number;
  peak: number;
  statuses: Record<string, number>;
  seconds: number;
  stored: number;
  leftovers: number;
}

async function run(scenario: Scenario): Promise<Result> {
  // `key` raises the quotas above the load, so that every upload is taken and stored.
  const env: Record<string, string> = scenario === 'key' ? { WAREHOUSE_UPLOAD_QUOTA_BYTES: String(2 * 1024 * MiB), WAREHOUSE_UPLOAD_TOTAL_BYTES: String(2 * 1024 * MiB) } : {};
  const d = await startDaemon(env);
  try {
    const small = body(8 * 1024);
    // Warm-up: one small upload, so that first-use costs (code, TLS contexts) are in `before`.
    await upload(d, d.key, small);
    await new Promise((r) => setTimeout(r, 500));
    const parts = scenario === 'control' ? small : body(fileBytes);
    const token = scenario === 'anonymous' ? undefined : scenario === 'bad-key' ? `whk_${'0'.repeat(40)}` : d.key;
    const pid = d.child.pid!;
    const before = rss(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 10);
    const t0 = performance.now();
    const outcomes = await Promise.all(Array.from({ length: clients }, () => upload(d, token, parts)));
    const seconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 200));
    clearInterval(sampler);
    peak = Math.max(peak, rss(pid));
    const statuses: Record<string, number> = {};
    for (const o of outcomes) statuses[o] = (statuses[o] ?? 0) + 1;
    const supportDir = path.join(d.stateDir, 'support');
    const stored = readdirSync(supportDir).filter((n) => statSync(path.join(supportDir, n)).isDirectory() && n.startsWith('SUP-')).length;
    const uploadsDir = path.join(d.stateDir, 'uploads');
    let leftovers = 0;
    try {
      leftovers = readdirSync(uploadsDir).length;
    } catch {
      leftovers = 0;
    }
    return { scenario, before, peak, statuses, seconds, stored, leftovers };
  } finally {
    await stopDaemon(d);
  }
}

const mib = (b: number) => `${(b / MiB).toFixed(1)} MiB`;
console.log(`bench:uploads  ${clients} clients x ${(fileBytes / MiB).toFixed(1)} MiB to POST /api/v2/support/create_issue; node ${process.version}; ${os.cpus().length} cores; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
const results: Result[] = [];
for (const s of scenarios) {
  const r = await run(s);
  results.push(r);
  console.log(`  ${s.padEnd(12)} before ${mib(r.before).padStart(10)}  peak ${mib(r.peak).padStart(10)}  growth ${mib(r.peak - r.before).padStart(10)}  `
    + `${r.seconds.toFixed(1)} s  answers ${JSON.stringify(r.statuses)}  stored ${r.stored}  temp files left ${r.leftovers}`);
}
const control = results.find((r) => r.scenario === 'control');
console.log('\nscenario      growth      over control   goal');
for (const r of results) {
  const growth = r.peak - r.before;
  const over = control && r !== control ? mib(growth - (control.peak - control.before)) : '';
  const goal = r.scenario === 'anonymous' || r.scenario === 'key' ? (growth < GOAL_MIB * MiB ? `< ${GOAL_MIB} MiB: met` : `< ${GOAL_MIB} MiB: NOT met`) : '';
  console.log(`${r.scenario.padEnd(12)}  ${mib(growth).padStart(10)}  ${over.padStart(12)}   ${goal}`);
}
console.log(`load at the end ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
