// npm run bench:http [-- --duration 5 --rounds 3 --connections 50 --pipelining 1 --warmup 2
//                        --variants bare,framework,fw-memo,fw-static,fw-json --view app]
//
// The HTTP framework against a bare uWS handler, in the same run, over TLS on loopback.
//
//   bare       uWS SSLApp `get(PATH)` answering bytes it precomputed: the ceiling.
//   framework  HttpServer + listRoute() (src/http/list-route.ts, as the app's list endpoints):
//              query parsed, coerced and validated against the list engine's schema, the list
//              engine over 1,000 in-memory rows, a 50-row envelope whose rows carry a timestamp
//              pair, JSON out. Its source does not declare `rowsImmutable`: every item is
//              serialized on every request, as for the app's lists read from LMDB (requests,
//              jobs, SKUs, events).
//   fw-memo    As framework, over a copy of the rows whose source declares `rowsImmutable`, so
//              listRoute keeps each row's serialized item and assembles the envelope from them
//              (src/http/list-route.ts): the path of the app's inventory view, whose rows are
//              replaced, never written (src/domain/inventory/view.ts).
//   fw-static  The same route and query schema, but the handler returns the precomputed bytes
//              (Reply): the framework's own cost (routing, query, validation, exchange).
//   fw-json    As fw-static, but the handler returns the precomputed envelope object, so the
//              framework serializes it: adds JSON.stringify of the answer.
//   fw-noquery (only when asked for) as fw-static without a query schema: the query string is
//              neither parsed nor validated.
//
// --view picks how the framework route builds each row (same bytes every time): `app` as the
// app's views are written (every field listed, the timestamp pair as two fields), `pair` with
// `...stampPair(...)` spread in (how they were written before), `spread` as `{ ...row, ...pair }`.
//
// Every variant answers the same bytes with the same content-type (checked before and after
// the load). The load generator (autocannon) runs in a child process so it does not share the
// servers' event loop; rounds alternate between the variants so that machine noise hits all
// alike. Server CPU per request comes from process.cpuUsage() of this (the server) process
// around each run, so it is not limited by how fast the load generator is.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const PATH = '/api/v2/bench_items';
const QUERY = '?page=1&size=50&level_id__in=3&sort_by=-depth';
const TARGET = 0.85;

/** What the load child sends back for one run. */
interface LoadResult {
  /** CPU time of the load generator over wall time: near 100% means it, not the server, is the limit. */
  clientCpuPct: number;
  rps: number;
  total: number;
  p50: number;
  p90: number;
  p99: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  bytesPerSec: number;
}

interface LoadJob {
  url: string;
  seconds: number;
  connections: number;
  pipelining: number;
  ca: string;
}

if (process.argv[2] === '--load') {
  await loadChild();
} else {
  await main();
}

/** Child process: runs autocannon once per job it is sent, answers with the figures. */
async function loadChild(): Promise<void> {
  type Autocannon = (opts: Record<string, unknown>) => Promise<any>;
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  process.on('message', (job: LoadJob) => {
    void (async () => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await autocannon({
        url: job.url,
        duration: job.seconds,
        connections: job.connections,
        pipelining: job.pipelining,
        // autocannon never verifies the server certificate; the CA is given for form.
        tlsOptions: { ca: job.ca },
      });
      const c = process.cpuUsage(c0);
      const report: LoadResult = {
        clientCpuPct: ((c.user + c.system) / ((performance.now() - t0) * 1000)) * 100,
        rps: r.requests.average,
        total: r.requests.total,
        p50: r.latency.p50,
        p90: r.latency.p90,
        p99: r.latency.p99,
        ok2xx: r['2xx'],
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts + r.mismatches,
        bytesPerSec: r.throughput.average,
      };
      process.send!(report);
    })();
  });
  process.on('disconnect', () => process.exit(0));
}

async function main(): Promise<void> {
  // Imported here so that the load child does not load the server side.
  const { createLogger } = await import('../src/log/logger.js');
  const { HttpServer } = await import('../src/http/server.js');
  const { ensureCertificate } = await import('../src/http/tls.js');
  const { route, Reply } = await import('../src/http/route.js');
  const { listRoute } = await import('../src/http/list-route.js');
  const { Page, Timestamp } = await import('../src/http/schemas/common.js');
  const { compile } = await import('../src/http/validation.js');
  const { default: Type } = await import('typebox');
  const { SSLApp, us_listen_socket_close, us_socket_local_port } = await import('../src/http/uws.js');
  const { executeList, listQuerySchema, parseListQuery } = await import('../src/domain/list/index.js');
  const { legacyStamp, stampPair, utcStamp } = await import('../src/domain/time.js');
  type FieldTable<T> = import('../src/domain/list/index.js').FieldTable<T>;
  type ListSource<T> = import('../src/domain/list/index.js').ListSource<T>;
  type ListenSocket = import('../src/http/uws.js').us_listen_socket;

  const { values: args } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      pipelining: { type: 'string', default: '1' },
      warmup: { type: 'string', default: '2' },
      variants: { type: 'string', default: 'bare,framework,fw-memo,fw-static,fw-json' },
      view: { type: 'string', default: 'app' },
    },
  });
  const seconds = positive(args.duration!, 'duration');
  const rounds = positive(args.rounds!, 'rounds');
  const connections = positive(args.connections!, 'connections');
  const pipelining = positive(args.pipelining!, 'pipelining');
  const warmup = Number(args.warmup);
  const ALL = ['bare', 'framework', 'fw-memo', 'fw-static', 'fw-json', 'fw-noquery'] as const;
  type Variant = (typeof ALL)[number];
  const variants = [...new Set(args.variants!.split(',').map((v) => v.trim()))] as Variant[];
  for (const v of variants) if (!ALL.includes(v)) throw new Error(`unknown variant ${v}; known: ${ALL.join(', ')}`);

  // An inventory-like row: ids, strings, numbers and an instant shown as a timestamp pair.
  interface Item {
    id: string;
    carrier_id: string;
    box_id: number;
    level_id: number;
    depth: number;
    position_x: number;
    position_y: number;
    sku_id: string;
    item_count: number;
    updated_at: number;
  }
  const ROWS: Item[] = Array.from({ length: 1000 }, (_, i) => ({
    id: `row-${i}`,
    carrier_id: `C${String(i % 400).padStart(5, '0')}`,
    box_id: i,
    // Level 3 holds exactly 50 rows: the indexed __in filter yields one full page.
    level_id: i < 50 ? 3 : 1 + (i % 2),
    depth: 1 + (i % 3),
    position_x: i % 40,
    position_y: Math.floor(i / 40),
    sku_id: `SKU-${i % 97}`,
    item_count: (i * 7) % 50,
    updated_at: Date.UTC(2026, 10, 1) + i * 60_000,
  }));
  const TABLE: FieldTable<Item> = {
    carrier_id: { type: 'string', filters: ['eq', 'ilike'], search: true },
    box_id: { type: 'integer', filters: ['eq'] },
    level_id: { type: 'integer', filters: ['in'] },
    depth: { type: 'integer', filters: ['eq', 'gte', 'lte', 'in'] },
    sku_id: { type: 'string', filters: ['eq', 'ilike'], search: true },
    updated_at: { type: 'datetime', filters: ['gte', 'lte'] },
  };
  const sourceOf = (rows: Item[]): ListSource<Item> => {
    const byLevel = new Map<number, Item[]>();
    for (const r of rows) byLevel.set(r.level_id, [...(byLevel.get(r.level_id) ?? []), r]);
    return {
      lookup: (field, values) => {
        if (field !== 'level_id') return undefined;
        return values.length === 1 ? (byLevel.get(values[0] as number) ?? []) : values.flatMap((v) => byLevel.get(v as number) ?? []);
      },
      scan: () => rows,
    };
  };
  const SOURCE = sourceOf(ROWS);
  // fw-memo's rows are a copy: listRoute freezes the rows it keeps items for, and the framework
  // variant should read unfrozen rows, as the app's sources hand out.
  const MEMO_SOURCE = { ...sourceOf(ROWS.map((r) => ({ ...r }))), rowsImmutable: true };
  const ItemSchema = Type.Object({
    id: Type.String(), carrier_id: Type.String(), box_id: Type.Integer(), level_id: Type.Integer(), depth: Type.Integer(),
    position_x: Type.Integer(), position_y: Type.Integer(), sku_id: Type.String(), item_count: Type.Integer(), ...Timestamp('updated_at'),
  });
  const OPTIONS = { maxPageSize: 1000, timeZone: 'Europe/Berlin' };
  const zone = OPTIONS.timeZone;
  const views = {
    // As the app's routes write theirs (src/http/routes/auth.ts): every field listed, the
    // timestamp pair as two fields, one fixed-shape literal per row.
    app: (r: Item) => ({
      id: r.id, carrier_id: r.carrier_id, box_id: r.box_id, level_id: r.level_id, depth: r.depth, position_x: r.position_x,
      position_y: r.position_y, sku_id: r.sku_id, item_count: r.item_count,
      updated_at: legacyStamp(r.updated_at, zone), updated_at_utc: utcStamp(r.updated_at),
    }),
    // How the app's views were written before: fields listed, the pair spread in.
    pair: (r: Item) => ({
      id: r.id, carrier_id: r.carrier_id, box_id: r.box_id, level_id: r.level_id, depth: r.depth, position_x: r.position_x,
      position_y: r.position_y, sku_id: r.sku_id, item_count: r.item_count, ...stampPair('updated_at', r.updated_at, zone),
    }),
    // The record spread, then more properties: V8's slow path on Node 20 (see docs/benchmarks.md).
    spread: (r: Item) => ({ ...r, ...stampPair('updated_at', r.updated_at, zone) }),
  };
  if (!(args.view! in views)) throw new Error(`unknown --view ${args.view}; known: ${Object.keys(views).join(', ')}`);
  const view = views[args.view as keyof typeof views];
  const sample = JSON.stringify(ROWS.slice(0, 60).map(views.app));
  for (const [name, v] of Object.entries(views)) if (JSON.stringify(ROWS.slice(0, 60).map(v)) !== sample) throw new Error(`view ${name} answers other bytes`);
  const querySchema = listQuerySchema(TABLE, OPTIONS);
  // What listRoute's handler does, for the precomputed answer.
  const listPage = (query: Record<string, unknown>) => {
    const page = executeList(TABLE, SOURCE, parseListQuery(TABLE, query, OPTIONS));
    return { ...page, items: page.items.map(view) };
  };

  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-http-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.on('exit', cleanup);
  const cert = await ensureCertificate(dir);
  const ca = readFileSync(cert.certFile, 'utf8');

  // The answer every variant gives, computed once through the engine.
  const ANSWER = listPage(Object.fromEntries(new URLSearchParams(QUERY)));
  const BODY = JSON.stringify(ANSWER);
  const pageCheck = compile(Page(ItemSchema));
  if (!pageCheck.check(ANSWER)) throw new Error(`the answer does not match its schema: ${JSON.stringify(pageCheck.issues(ANSWER, 'response').slice(0, 3))}`);
  const CONTENT_TYPE = 'application/json';

  const framework = new HttpServer({
    host: '127.0.0.1', port: 0, certFile: cert.certFile, keyFile: cert.keyFile,
    bodyLimit: 1 << 20, uploadLimit: 1 << 20, logger: createLogger('warn'),
  });
  const common = { method: 'GET', tag: 'bench', permission: null, query: querySchema, responses: { 200: { description: 'page', contentType: CONTENT_TYPE } } } as const;
  framework.register(
    // No authenticate hook is installed, so the permission is not checked (nor in the others).
    listRoute({ path: PATH, tag: 'bench', permission: 'bench:view', summary: 'list engine', fields: TABLE, source: SOURCE, item: ItemSchema, view, options: OPTIONS }),
    listRoute({ path: `${PATH}_memo`, tag: 'bench', permission: 'bench:view', summary: 'list engine, immutable rows', fields: TABLE, source: MEMO_SOURCE, item: ItemSchema, view, options: OPTIONS }),
    route({ ...common, path: `${PATH}_static`, summary: 'precomputed bytes', handler: () => new Reply(BODY, CONTENT_TYPE) }),
    route({ ...common, path: `${PATH}_json`, summary: 'precomputed object', handler: () => ANSWER }),
    route({ ...common, query: undefined, path: `${PATH}_noquery`, summary: 'precomputed bytes, no query schema', handler: () => new Reply(BODY, CONTENT_TYPE) }),
  );
  const fwPort = await framework.listen();

  const bareApp = SSLApp({ cert_file_name: cert.certFile, key_file_name: cert.keyFile });
  bareApp.get(PATH, (res) => {
    res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', CONTENT_TYPE).end(BODY));
  });
  const bareSocket = await new Promise<ListenSocket>((resolve, reject) => {
    bareApp.listen('127.0.0.1', 0, (socket) => (socket ? resolve(socket) : reject(new Error('bare server cannot listen'))));
  });
  const barePort = us_socket_local_port(bareSocket as unknown as Parameters<typeof us_socket_local_port>[0]);

  const target: Record<Variant, { port: number; path: string }> = {
    bare: { port: barePort, path: PATH },
    framework: { port: fwPort, path: PATH },
    'fw-memo': { port: fwPort, path: `${PATH}_memo` },
    'fw-static': { port: fwPort, path: `${PATH}_static` },
    'fw-json': { port: fwPort, path: `${PATH}_json` },
    'fw-noquery': { port: fwPort, path: `${PATH}_noquery` },
  };
  const fetchOnce = (port: number, p: string) =>
    new Promise<{ status: number; type: string; body: Buffer }>((resolve, reject) => {
      https.get({ host: '127.0.0.1', port, path: p, ca, checkServerIdentity: () => undefined }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
  const checkAnswers = async (when: string) => {
    for (const v of variants) {
      const { port, path: p } = target[v];
      const got = await fetchOnce(port, p + QUERY);
      if (got.status !== 200 || got.type !== CONTENT_TYPE || !got.body.equals(Buffer.from(BODY))) {
        throw new Error(`${when}: ${v} answers ${got.status} ${got.type}, ${got.body.length} bytes, not the expected ${Buffer.byteLength(BODY)} bytes: ${got.body.toString().slice(0, 200)}`);
      }
    }
  };
  await checkAnswers('before the load');
  // The framework's query validation is live: a bad parameter is refused.
  const refused = await fetchOnce(fwPort, `${PATH}?size=abc`);
  if (refused.status !== 422) throw new Error(`framework accepted size=abc (status ${refused.status})`);

  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--load'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const childExit = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`))));
  childExit.catch(() => undefined);
  interface Run extends LoadResult {
    cpuPct: number;
    cpuUsPerReq: number;
    /** CPU time of every other process on the machine over wall time (Linux), NaN where unknown. */
    otherCpuPct: number;
  }
  // Busy and total jiffies of the whole machine, to see other work running during a run.
  const machineTicks = (): { busy: number; total: number } | undefined => {
    try {
      const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
      const idle = fields[3]! + fields[4]!;
      const total = fields.reduce((a, b) => a + b, 0);
      return { busy: total - idle, total };
    } catch {
      return undefined;
    }
  };
  const load = async (v: Variant, secs: number): Promise<Run> => {
    const { port, path: p } = target[v];
    const job: LoadJob = { url: `https://127.0.0.1:${port}${p}${QUERY}`, seconds: secs, connections, pipelining, ca };
    const cpu0 = process.cpuUsage();
    const ticks0 = machineTicks();
    const t0 = performance.now();
    child.send(job);
    const r = await Promise.race([new Promise<LoadResult>((resolve) => child.once('message', (m) => resolve(m as LoadResult))), childExit]);
    const cpu = process.cpuUsage(cpu0);
    const cpuUs = cpu.user + cpu.system;
    const wallUs = (performance.now() - t0) * 1000;
    const ticks1 = machineTicks();
    const cpuPct = (cpuUs / wallUs) * 100;
    // /proc/stat counts in jiffies of all CPUs: busy share of one core is busy / total × cores.
    const machinePct = ticks0 && ticks1 ? ((ticks1.busy - ticks0.busy) / (ticks1.total - ticks0.total)) * os.cpus().length * 100 : NaN;
    return { ...r, cpuPct, cpuUsPerReq: cpuUs / Math.max(1, r.total), otherCpuPct: Math.max(0, machinePct - cpuPct - r.clientCpuPct) };
  };

  const cpus = os.cpus();
  console.log(`bench:http  ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, node ${process.version}`);
  console.log(`load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`GET ${PATH}{,_memo,_static,_json,_noquery}${QUERY}  →  200, ${CONTENT_TYPE}, ${Buffer.byteLength(BODY)} bytes (identical for every variant)`);
  console.log(`autocannon in a child process, ${connections} connections, pipelining ${pipelining}; ${warmup} s warm-up, then ${rounds} × ${seconds} s per variant, alternating; --view ${args.view}\n`);

  if (warmup > 0) for (const v of variants) await load(v, warmup);
  const runs = Object.fromEntries(variants.map((v) => [v, [] as Run[]])) as Record<Variant, Run[]>;
  for (let round = 1; round <= rounds; round++) {
    const line: string[] = [];
    let other = 0;
    for (const v of variants) {
      const r = await load(v, seconds);
      runs[v].push(r);
      line.push(`${v} ${r.rps.toFixed(0)}`);
      other = Math.max(other, r.otherCpuPct);
    }
    console.log(`round ${round}/${rounds}: ${line.join(', ')} req/s; other processes up to ${other.toFixed(0)}% of a core`);
  }
  await checkAnswers('after the load');
  console.log(`load average at end:   ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);

  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const avg = (v: Variant, k: keyof Run): number => mean(runs[v].map((r) => r[k]));
  const best = (v: Variant): number => Math.max(...runs[v].map((r) => r.rps));
  const failures = (v: Variant): number => runs[v].reduce((a, r) => a + r.non2xx + r.errors, 0);
  const cols: [string, number, (v: Variant) => string][] = [
    ['variant', -10, (v) => v],
    ['req/s', 8, (v) => avg(v, 'rps').toFixed(0)],
    ['best', 8, (v) => best(v).toFixed(0)],
    ['p50 ms', 7, (v) => avg(v, 'p50').toFixed(1)],
    ['p90 ms', 7, (v) => avg(v, 'p90').toFixed(1)],
    ['p99 ms', 7, (v) => avg(v, 'p99').toFixed(1)],
    ['MB/s', 7, (v) => (avg(v, 'bytesPerSec') / 1e6).toFixed(1)],
    ['srv CPU', 8, (v) => `${avg(v, 'cpuPct').toFixed(0)}%`],
    ['gen CPU', 8, (v) => `${avg(v, 'clientCpuPct').toFixed(0)}%`],
    ['other', 6, (v) => `${avg(v, 'otherCpuPct').toFixed(0)}%`],
    ['µs/req', 7, (v) => avg(v, 'cpuUsPerReq').toFixed(1)],
    ['2xx', 9, (v) => String(runs[v].reduce((a, r) => a + r.ok2xx, 0))],
    ['errors', 7, (v) => String(failures(v))],
  ];
  const cell = (text: string, width: number) => (width < 0 ? text.padEnd(-width) : text.padStart(width));
  console.log(cols.map(([h, w]) => cell(h, w)).join(' '));
  for (const v of variants) console.log(cols.map(([, w, f]) => cell(f(v), w)).join(' '));
  console.log('(req/s, latency and MB/s: autocannon, mean over rounds; latency has 1 ms resolution. srv CPU: user+system time of the');
  console.log(' server process over wall time; other: CPU of every other process on the machine (above ~10%, another load shared');
  console.log(' the cores and the run is not worth quoting); µs/req: server CPU time per completed request. errors: non-2xx, socket errors, timeouts.)\n');

  const bad = variants.filter((v) => failures(v) > 0);
  if (bad.length > 0) console.log(`INVALID: ${bad.join(', ')} had failed requests; the figures do not count.`);
  if (variants.includes('bare')) {
    for (const v of variants.filter((x) => x !== 'bare')) {
      const ratio = avg(v, 'rps') / avg('bare', 'rps');
      const bestRatio = best(v) / best('bare');
      const cpuRatio = avg('bare', 'cpuUsPerReq') / avg(v, 'cpuUsPerReq');
      const verdict = v === 'framework' || v === 'fw-memo' ? `  (target >= ${TARGET}) ${ratio >= TARGET ? 'PASS' : 'BELOW TARGET'}` : '';
      console.log(`ratio ${v}/bare: ${ratio.toFixed(2)}  best/best ${bestRatio.toFixed(2)}  server CPU per request ${cpuRatio.toFixed(2)}${verdict}`);
    }
  }
  if ((['bare', 'framework', 'fw-static', 'fw-json'] as const).every((v) => variants.includes(v))) {
    const us = (v: Variant) => avg(v, 'cpuUsPerReq');
    console.log('\nserver CPU per request, step by step:');
    console.log(`  bare uWS, TLS, precomputed bytes          ${us('bare').toFixed(1).padStart(6)} µs`);
    if (variants.includes('fw-noquery')) console.log(`  (framework without query schema: ${(us('fw-noquery') - us('bare')).toFixed(1)} µs over bare)`);
    console.log(`  + framework (route, query, validation)    ${(us('fw-static') - us('bare')).toFixed(1).padStart(6)} µs  → fw-static`);
    console.log(`  + JSON.stringify of the envelope          ${(us('fw-json') - us('fw-static')).toFixed(1).padStart(6)} µs  → fw-json`);
    console.log(`  + list engine and row views (timestamps)  ${(us('framework') - us('fw-json')).toFixed(1).padStart(6)} µs  → framework ${us('framework').toFixed(1)} µs`);
    if (variants.includes('fw-memo')) console.log(`  (fw-memo, kept items: ${(us('fw-memo') - us('fw-static')).toFixed(1)} µs over fw-static → ${us('fw-memo').toFixed(1)} µs)`);
    console.log('(differences of means over rounds; see docs/benchmarks.md for how to read them)');
  }

  child.disconnect();
  us_listen_socket_close(bareSocket);
  await framework.close(1000);
  process.exit(bad.length > 0 ? 1 : 0);
}

function positive(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${JSON.stringify(text)}`);
  return n;
}
