// npm run bench:allocation [-- --requests 3000 --connections 10 --kinds patch_setting,view_page --rows 4 --seed 1]
//
// Bytes the API's thread allocates a request, by kind of the everyday mix (bench:load), against the bare
// `GET /api/v2/health` measured in the same run. Allocation is what the young generation's
// collections cost: under the ten-minute load they took 9 % of the main thread at the start and
// 13 % at the end, each collection slower as the heap grew (docs/benchmarks.md, "Eleventh
// round"), so garbage a request makes is a cost that grows with the data.
//
// The whole app runs in this process on the demo site (no links); its clients run in a worker
// thread, so that their own garbage is not counted. V8's sampling heap profiler counts every
// sampled allocation, also of objects a collection has freed since. Each kind prints the
// functions that allocated most (self), to find where the bytes come from. Lines named
// `__name` are tsx's: here the sources run through esbuild, which wraps functions to keep
// their names (half a KiB a request); the built daemon has none.
import { Session } from 'node:inspector/promises';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { startApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/log/logger.js';
import { mixKinds, seededRandom, type Call } from './mix-kinds.js';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '3000' },
    connections: { type: 'string', default: '10' },
    kinds: { type: 'string' },
    rows: { type: 'string', default: '4' },
    seed: { type: 'string', default: '1' },
  },
});
const REQUESTS = Number(args.requests);
const ROWS = Number(args.rows);

const KINDS: Record<string, () => Call> = { health: () => ({ method: 'GET', path: '/api/v2/health', ok: [200] }), ...mixKinds(seededRandom(Number(args.seed))) };
const names = args.kinds ? ['health', ...args.kinds.split(',').filter((k) => k !== 'health')] : Object.keys(KINDS);
for (const name of names) if (!KINDS[name]) throw new Error(`--kinds: no kind ${name} (kinds: ${Object.keys(KINDS).join(', ')})`);

// The clients: keep-alive HTTPS connections, each sending its share of the calls one at a time.
const CLIENT = `
const https = require('node:https');
const { parentPort, workerData } = require('node:worker_threads');
const { port, ca, key, connections } = workerData;
const agent = new https.Agent({ ca, keepAlive: true, maxSockets: connections, checkServerIdentity: () => undefined });
function send(call) {
  return new Promise((resolve, reject) => {
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const headers = { authorization: 'Bearer ' + key, ...call.headers, ...(body ? { 'content-type': 'application/json' } : {}) };
    const req = https.request({ host: '127.0.0.1', port, path: call.path, method: call.method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(call.ok.includes(res.statusCode) ? 0 : 1));
    });
    req.on('error', reject);
    req.end(body);
  });
}
parentPort.on('message', async (calls) => {
  let unexpected = 0;
  let next = 0;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (next < calls.length) unexpected += await send(calls[next++]);
  }));
  parentPort.postMessage(unexpected);
});
`;

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'wh-bench-allocation-'));
const config = loadConfig({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_LOG_LEVEL: 'warn', WAREHOUSE_LINKS: 'off' });
const app = await startApp(config, createLogger('warn', new Writable({ write: (_chunk, _encoding, done) => done() })));
const key = (JSON.parse(readFileSync(path.join(stateDir, 'bootstrap-admin.json'), 'utf8')) as { api_key: string }).api_key;
const worker = new Worker(CLIENT, { eval: true, workerData: { port: app.port, ca: readFileSync(app.tls.certFile), key, connections: Number(args.connections) } });

/** Sends `n` calls of a kind and waits for every answer; throws on answers the kind should not give. */
async function run(kind: string, n: number): Promise<void> {
  const calls = Array.from({ length: n }, () => KINDS[kind]!());
  worker.postMessage(calls);
  const unexpected = await new Promise<number>((resolve) => worker.once('message', resolve));
  if (unexpected > 0) throw new Error(`${kind}: ${unexpected} of ${n} answers were not of the kind's normal statuses`);
}

interface ProfileNode { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: ProfileNode[] }
const session = new Session();
session.connect();

console.log(`bench:allocation: ${REQUESTS} requests a kind on ${args.connections} connections, seed ${args.seed}, node ${process.version}`);
let baseline = 0;
for (const kind of names) {
  await run(kind, 300);
  await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  await run(kind, REQUESTS);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: ProfileNode } };
  const self = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode): void => {
    const where = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').slice(-2).join('/')}:${node.callFrame.lineNumber + 1}`;
    self.set(where, (self.get(where) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const perRequest = total / REQUESTS;
  if (kind === 'health') baseline = perRequest;
  console.log(`${kind.padEnd(15)} ${(perRequest / 1024).toFixed(1).padStart(6)} KiB a request, ${(perRequest / baseline).toFixed(1).padStart(5)} x health`);
  for (const [where, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, ROWS)) console.log(`  ${(bytes / REQUESTS / 1024).toFixed(1).padStart(6)} KiB  ${where}`);
}

session.disconnect();
await worker.terminate();
await app.close();
rmSync(stateDir, { recursive: true, force: true });
