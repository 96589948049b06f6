// The main-thread cost of a /metrics scrape on a large site: the app started on a generated site
// of 400 bots (4 levels of 100, simulated), run for a while so that every family has its series
// (bots, lines, planners, HTTP routes), then `exposition()` timed in-process many times: the
// time the event loop spends writing the text, which is what a scrape costs the API and the
// radio lines on the main thread. Beside it, in the same run, two baselines: the same number
// of series written by hand into one string (what any exposition costs at least), and a
// GET /api/v2/health through the real server (the cheapest request). Target: p95 under 5 ms.
//
// The time includes prom-client's event-loop lag family, which waits for one turn of the loop
// (setImmediate, microseconds when measured alone on this site). BENCH_METRICS_FAMILIES=1 adds
// each family's time (its source read again, without the per-scrape cache).
//
//   npm run bench:metrics [-- --run-s 20 --reps 300]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { generateSite, type GenerateOptions } from '../src/domain/site/generate.js';
import { scaledHighways } from '../src/domain/site/highways.js';
import { createLogger } from '../src/log/logger.js';
import { Client } from '../test/helpers/client.js';

const { values: args } = parseArgs({
  options: { 'run-s': { type: 'string', default: '20' }, reps: { type: 'string', default: '300' } },
});
const RUN_S = Number(args['run-s']);
const REPS = Number(args.reps);

const SITE: GenerateOptions = {
  name: 'bench:metrics 400 bots', levels: 4, spacesPerLevel: 4000, balconiesPerLevel: 6, chargersPerLevel: 12, botsPerLevel: 100,
  carrierFill: 0.7, boxesPerCarrier: 3, skus: 300, seed: 5,
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95) };
};
const fmt = (ms: number) => `${ms.toFixed(3)} ms`;

/** Times `fn` `reps` times after a few unmeasured runs; milliseconds each. */
async function time(reps: number, fn: () => unknown): Promise<number[]> {
  for (let i = 0; i < 10; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

async function main(): Promise<void> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-bench-metrics-'));
  const sitePath = path.join(stateDir, 'site.json');
  writeFileSync(sitePath, JSON.stringify(generateSite({ ...SITE, ...scaledHighways(SITE) })));
  const config = loadConfig({
    WAREHOUSE_STATE_DIR: path.join(stateDir, 'state'), WAREHOUSE_PORT: '0', WAREHOUSE_SITE: sitePath, WAREHOUSE_LINKS: 'on', WAREHOUSE_SIM_SPEED: '4', WAREHOUSE_LOG_LEVEL: 'error',
  });
  // The run's log is not the bench's output: errors only, to stderr.
  const logger = createLogger('error', process.stderr);
  const started = performance.now();
  const app = await startApp(config, logger);
  console.log(`site: ${SITE.levels} levels, ${SITE.levels * SITE.botsPerLevel} bots, started in ${((performance.now() - started) / 1000).toFixed(1)} s; running ${RUN_S} s`);
  const boot = JSON.parse(readFileSync(path.join(config.state_dir, 'bootstrap-admin.json'), 'utf8')) as { api_key: string };
  const client = new Client(app.port, readFileSync(app.tls.certFile), boot.api_key);
  try {
    // Work for the brain and requests on a few routes, so their series exist.
    for (let i = 1; i <= 40; i++) {
      await client.post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: `SKU-${String(i).padStart(5, '0')}`, quantity: 1 }] });
    }
    await client.request('/api/v2/bots');
    await client.request('/api/v2/jobs');
    await new Promise((resolve) => setTimeout(resolve, RUN_S * 1000));

    const text = await app.metrics.exposition();
    const series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    const bots = app.lines?.list().filter((b) => b.online).length ?? 0;
    console.log(`exposition: ${series.length} series, ${(text.length / 1024).toFixed(0)} KiB; ${bots} bots online; ${app.brain.figures()?.planners.length ?? 0} planners reported`);

    if (process.env.BENCH_METRICS_FAMILIES) {
      const reg = (app.metrics as unknown as { registry: { getMetricsAsArray(): { name: string }[]; getMetricsAsString(m: unknown): Promise<string> } }).registry;
      const cost = new Map<string, number>();
      for (let i = 0; i < 50; i++) {
        for (const m of reg.getMetricsAsArray()) {
          const t0 = performance.now();
          await reg.getMetricsAsString(m);
          cost.set(m.name, (cost.get(m.name) ?? 0) + (performance.now() - t0) / 50);
        }
      }
      console.log([...cost].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([n, ms]) => `${n} ${fmt(ms)}`).join('\n'));
    }
    const scrape = summary(await time(REPS, () => app.metrics.exposition()));
    // The floor: the same lines joined into one string, names and values already known.
    const lines = series.map((l) => { const i = l.lastIndexOf(' '); return [l.slice(0, i), Number(l.slice(i + 1))] as const; });
    const byHand = summary(await time(REPS, () => lines.map(([name, value]) => `${name} ${value}`).join('\n')));
    const health = summary(await time(REPS, () => client.request('/api/v2/health')));

    console.log('');
    console.log('                                 p50          p95');
    console.log(`registry.metrics() (in-process) ${fmt(scrape.p50).padStart(10)}  ${fmt(scrape.p95).padStart(10)}`);
    console.log(`same series joined by hand      ${fmt(byHand.p50).padStart(10)}  ${fmt(byHand.p95).padStart(10)}   scrape / by hand: ${(scrape.p50 / byHand.p50).toFixed(1)}x`);
    console.log(`GET /api/v2/health (round trip) ${fmt(health.p50).padStart(10)}  ${fmt(health.p95).padStart(10)}   scrape / health: ${(scrape.p50 / health.p50).toFixed(1)}x`);
    console.log(`target: under 5 ms a scrape -> p50 ${scrape.p50 < 5 ? 'met' : 'NOT met'}, p95 ${scrape.p95 < 5 ? 'met' : 'NOT met'}`);
  } finally {
    client.close();
    await app.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
