// npm run bench:pair [-- --clients 16 --duration 20 --seed 1 --no-build]
//
// What a replicated write costs: bench:load's write kinds (post_sku, patch_sku, post_request,
// patch_setting) and two reads (sku_search, jobs_by_status), closed loop on --clients keep-alive
// connections, against one box alone and then against the active box of a pair (its standby
// following, a three-member etcd cluster on this machine), in one run, the same seeded calls.
// Beside them, the floor: a bare etcd transaction of 1 KiB (the round trip and etcd's fsync
// on a quorum), sequential. It prints each kind's p50/p99 for both, their ratio, the added p50
// of the writes, and the standby's lag at the end. Everything runs on this machine's cores, so
// the pair's figures include the standby's and etcd's CPU beside the active box's.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { mixKinds, seededRandom } from './mix-kinds.js';
import { startDaemon, stopDaemon, type Daemon } from './load-daemon.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '16' },
    duration: { type: 'string', default: '20' },
    seed: { type: 'string', default: '1' },
    'no-build': { type: 'boolean', default: false },
  },
});
const CLIENTS = Number(args.clients);
const DURATION_MS = Number(args.duration) * 1000;
const SEED = Number(args.seed);
const KINDS = ['post_sku', 'patch_sku', 'post_request', 'patch_setting', 'sku_search', 'jobs_by_status'];
const WRITES = new Set(['post_sku', 'patch_sku', 'post_request', 'patch_setting']);

console.log(`bench:pair seed ${SEED}, ${CLIENTS} clients, ${DURATION_MS / 1000} s a phase, ${os.cpus().length} cores, load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);
if (!args['no-build']) spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });

const dir = mkdtempSync(path.join(os.tmpdir(), 'wh-bench-pair-'));
const children: ChildProcess[] = [];
const cleanUp = () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanUp);

/** Percentile of sorted values. */
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** The kinds' latencies (ms) against one daemon, closed loop, the same seeded calls each time. */
async function measure(d: Daemon): Promise<Map<string, number[]>> {
  const agent = new https.Agent({ keepAlive: true, ca: d.ca, checkServerIdentity: () => undefined, maxSockets: CLIENTS });
  const random = seededRandom(SEED);
  const kinds = mixKinds(random);
  const times = new Map<string, number[]>(KINDS.map((k) => [k, []]));
  const end = performance.now() + DURATION_MS;
  let n = 0;
  let refused = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < end) {
      const kind = KINDS[n++ % KINDS.length]!;
      const call = kinds[kind]!();
      const began = performance.now();
      const status = await new Promise<number>((resolve) => {
        const req = https.request({ host: '127.0.0.1', port: d.port, method: call.method, path: call.path, agent, headers: { authorization: `Bearer ${d.key}`, 'content-type': 'application/json', ...call.headers } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', () => resolve(0));
        req.end(call.body === undefined ? undefined : JSON.stringify(call.body));
      });
      if (call.ok.includes(status)) times.get(kind)!.push(performance.now() - began);
      else refused++;
    }
  }));
  agent.destroy();
  if (refused > 0) console.log(`  ${refused} calls answered a status their kind does not expect`);
  for (const list of times.values()) list.sort((a, b) => a - b);
  return times;
}

/** Three etcd members on this machine's loopback; resolves to their client URLs. */
async function startEtcd(): Promise<string[]> {
  const names = ['e1', 'e2', 'e3'];
  const port = (i: number, peer: boolean) => 23_790 + i * 10 + (peer ? 1 : 0);
  const cluster = names.map((n, i) => `${n}=http://127.0.0.1:${port(i, true)}`).join(',');
  names.forEach((name, i) => {
    const data = path.join(dir, 'etcd', name);
    mkdirSync(data, { recursive: true });
    children.push(spawn('etcd', [
      '--name', name, '--data-dir', data, '--listen-client-urls', `http://127.0.0.1:${port(i, false)}`, '--advertise-client-urls', `http://127.0.0.1:${port(i, false)}`,
      '--listen-peer-urls', `http://127.0.0.1:${port(i, true)}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${port(i, true)}`,
      '--initial-cluster', cluster, '--initial-cluster-state', 'new', '--heartbeat-interval', '100', '--election-timeout', '1000', '--pre-vote',
    ], { stdio: 'ignore' }));
  });
  const endpoints = names.map((_, i) => `http://127.0.0.1:${port(i, false)}`);
  const client = new Etcd3({ hosts: endpoints });
  for (let tries = 0; ; tries++) {
    try {
      await client.put('/bench/ready').value('1').exec();
      break;
    } catch (err) {
      if (tries > 100) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  client.close();
  return endpoints;
}

/** p50/p99 of a bare etcd transaction of 1 KiB, one at a time: the floor of a replicated write. */
async function etcdFloor(endpoints: string[]): Promise<number[]> {
  const client = new Etcd3({ hosts: endpoints[0]! });
  const value = Buffer.alloc(1024, 7);
  const times: number[] = [];
  for (let i = 0; i < 500; i++) {
    const began = performance.now();
    await client.if('/bench/head', 'Version', '>', -1).then(client.put(`/bench/log/${i}`).value(value), client.put('/bench/head').value(String(i))).commit();
    times.push(performance.now() - began);
  }
  client.close();
  return times.sort((a, b) => a - b);
}

const single = await startDaemon({ stateDir: path.join(dir, 'single'), links: 'off' });
children.push(single.child);
console.log('single box: measuring');
const alone = await measure(single);
await stopDaemon(single);

const endpoints = await startEtcd();
const floor = await etcdFloor(endpoints);
const pairEnv = (name: string, peerPort: number) => ({
  WAREHOUSE_REPLICATION_ENDPOINTS: endpoints.join(','), WAREHOUSE_REPLICATION_NAME: name, WAREHOUSE_REPLICATION_PAIR: 'bench',
  WAREHOUSE_REPLICATION_ADDRESS: '127.0.0.1', WAREHOUSE_REPLICATION_PEER_PORT: String(peerPort),
});
const active = await startDaemon({ stateDir: path.join(dir, 'a'), links: 'off', env: pairEnv('a', 18_444) });
children.push(active.child);
mkdirSync(path.join(dir, 'b'), { recursive: true, mode: 0o700 });
for (const sub of ['secrets', 'tls']) cpSync(path.join(dir, 'a', sub), path.join(dir, 'b', sub), { recursive: true });
const standby = spawn(process.execPath, [path.join(ROOT, 'dist/main.js')], {
  cwd: ROOT, stdio: 'ignore',
  env: { ...process.env, WAREHOUSE_STATE_DIR: path.join(dir, 'b'), WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off', ...pairEnv('b', 18_445) },
});
children.push(standby);
const standbyStatus = () => {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'b', 'status.json'), 'utf8')) as { replication?: { role: string; seq: number; lag_entries: number | null } }).replication;
  } catch {
    return undefined;
  }
};
while (standbyStatus()?.role !== 'standby') await new Promise((resolve) => setTimeout(resolve, 200));
console.log('pair (active box, its standby following): measuring');
const replicated = await measure(active);
await new Promise((resolve) => setTimeout(resolve, 2000));
const lag = standbyStatus();

const row = (name: string, a: number[], r: number[]) => {
  const f = (n: number) => n.toFixed(2).padStart(8);
  return `${name.padEnd(16)}${f(pct(a, 50))}${f(pct(a, 99))}${f(pct(r, 50))}${f(pct(r, 99))}${(pct(r, 50) / pct(a, 50)).toFixed(2).padStart(8)}${(pct(r, 50) - pct(a, 50)).toFixed(2).padStart(10)}${String(a.length).padStart(8)}${String(r.length).padStart(8)}`;
};
console.log(`\n${'kind'.padEnd(16)}${'1 p50'.padStart(8)}${'1 p99'.padStart(8)}${'2 p50'.padStart(8)}${'2 p99'.padStart(8)}${'ratio'.padStart(8)}${'+p50 ms'.padStart(10)}${'n 1'.padStart(8)}${'n 2'.padStart(8)}`);
for (const kind of KINDS) console.log(row(kind, alone.get(kind)!, replicated.get(kind)!));
const all = (m: Map<string, number[]>, writes: boolean) => [...m].filter(([k]) => WRITES.has(k) === writes).flatMap(([, v]) => v).sort((a, b) => a - b);
console.log(row('writes', all(alone, true), all(replicated, true)));
console.log(row('reads', all(alone, false), all(replicated, false)));
const rate = (m: Map<string, number[]>) => ([...m.values()].reduce((n, v) => n + v.length, 0) / (DURATION_MS / 1000)).toFixed(0);
console.log(`\nrequests/s: single box ${rate(alone)}, pair ${rate(replicated)}`);
console.log(`floor: a bare etcd transaction of 1 KiB on this cluster, one at a time: p50 ${pct(floor, 50).toFixed(2)} ms, p99 ${pct(floor, 99).toFixed(2)} ms`);
console.log(`standby at the end (2 s after the load): entry ${lag?.seq}, ${lag?.lag_entries ?? '?'} entries behind`);
await stopDaemon(active);
process.exit(0);
