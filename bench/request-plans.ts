// npm run bench:request-plans [-- --spaces 10000,100000 --iterations 40 --seed 7]
//
// What planning one request costs as the site grows (no request path scans a whole
// collection). For each size, a generated site (src/domain/site/generate.ts, 4 levels, 92 % of
// the spaces holding a carrier of 2.9 boxes on average, one SKU per 20 spaces) is seeded into a
// real store by the whole app, started in this process without its radio lines. Then requests
// of one item are created one at a time through the domain service, as `POST /requests` does:
//   FULFILLMENT    the baseline: it reads the SKU's own boxes by index, so it stays flat;
//   REPLENISHMENT  into the SKU's boxes that have room, or empty boxes of a size it allows;
//   PUTAWAY        into empty boxes of a size it allows only.
// The SKUs asked for allow every box size, so empty boxes are candidates. Each site is measured
// twice: as seeded, when every box has the same age, so the boxes come level by level in the
// plan's order of age (the worst case of its search: the levels of less open work last), and
// in operation, with the empty boxes' ages spread at random as days of work leave them.
// Printed: the ms the request's write ran inside its commit (the event loop is held meanwhile),
// median and worst, at each size, and the ratio of the largest site's median to the smallest's;
// the baseline's ratio beside the others' says whether a cost grows with the site.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { startApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { boxes } from '../src/domain/inventory/records.js';
import type { CreateInput } from '../src/domain/requests/inputs.js';
import { generateSite } from '../src/domain/site/generate.js';
import { createLogger } from '../src/log/logger.js';

const { values: args } = parseArgs({ options: { spaces: { type: 'string', default: '10000,100000' }, iterations: { type: 'string', default: '40' }, seed: { type: 'string', default: '7' } } });
const SIZES = args.spaces!.split(',').map(Number);
const ITERATIONS = Number(args.iterations);
const SEED = Number(args.seed);
const KINDS = ['FULFILLMENT', 'REPLENISHMENT', 'PUTAWAY'] as const;
type Kind = (typeof KINDS)[number];
/** Every box size a carrier's eight sections can make: empty boxes of any size take the SKU. */
const EVERY_SIZE = Object.fromEntries(['1/8', '1/4', '3/8', '1/2', '5/8', '3/4', '7/8', '1'].map((size) => [size, 100_000]));

type ByKind = Record<Kind, { p50: number; max: number; created: number }>;
interface Figures { boxes: number; emptyBoxes: number; seeded: ByKind; inOperation: ByKind }

async function measure(spaces: number): Promise<Figures> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wh-bench-plans-'));
  const siteFile = path.join(dir, 'site.json');
  writeFileSync(siteFile, JSON.stringify(generateSite({
    levels: 4, spacesPerLevel: spaces / 4, balconiesPerLevel: 2, chargersPerLevel: 2, botsPerLevel: 4,
    carrierFill: 0.92, boxesPerCarrier: 2.9, skus: spaces / 20, seed: SEED,
  })));
  const config = loadConfig({ WAREHOUSE_STATE_DIR: path.join(dir, 'state'), WAREHOUSE_PORT: '0', WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'off', WAREHOUSE_LOG_LEVEL: 'error' });
  const app: App = await startApp(config, createLogger('error', new Writable({ write: (_c, _e, done) => done() })));
  try {
    let writesMs = 0;
    const stop = app.store.onCommitHeld((timing) => (writesMs += timing.writesMs));
    const all = [...app.store.collection(boxes).scan()];
    const skuIds = [...new Set(all.flatMap((b) => (b.load ? [b.load.sku_id] : [])))].sort();
    // Spread over the SKU list, the same positions at every size: SKUs with stock.
    const asked = Array.from({ length: ITERATIONS }, (_, i) => skuIds[Math.floor((i + 0.5) * (skuIds.length / ITERATIONS))]!);
    for (const id of new Set(asked)) await app.inventory.patchSku(id, { allowed_box_size_capacities: EVERY_SIZE });
    const seeded = await requestKinds(app, asked, () => (writesMs = 0), () => writesMs);
    // Emptied over the last 30 days, in no order of level.
    let state = SEED;
    const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const now = Date.now();
    await app.store.write(() => {
      for (const b of all) if (b.load === null) app.store.collection(boxes).put({ ...b, updated_at: now - Math.floor(random() * 30 * 86_400_000) });
    });
    const inOperation = await requestKinds(app, asked, () => (writesMs = 0), () => writesMs);
    stop();
    return { boxes: all.length, emptyBoxes: all.filter((b) => b.load === null).length, seeded, inOperation };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each kind's requests, one of each SKU asked for: ms their writes ran, median and worst. */
async function requestKinds(app: App, asked: readonly string[], reset: () => void, writesMs: () => number): Promise<ByKind> {
  const byKind = {} as ByKind;
  for (const kind of KINDS) {
    const times: number[] = [];
    let created = 0;
    for (const skuId of asked) {
      const input = { type: kind, entities: [{ sku_id: skuId, quantity: 1 }] } as CreateInput;
      reset();
      try {
        await app.requests.create(input);
        created++;
      } catch {
        // Refused (no stock or no room): planned all the same, and timed.
      }
      times.push(writesMs());
    }
    times.sort((a, b) => a - b);
    byKind[kind] = { p50: times[Math.floor(times.length / 2)]!, max: times.at(-1)!, created };
  }
  return byKind;
}

const results: Figures[] = [];
for (const spaces of SIZES) {
  const started = performance.now();
  results.push(await measure(spaces));
  console.log(`${spaces} spaces: ${results.at(-1)!.boxes} boxes (${results.at(-1)!.emptyBoxes} empty), measured in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
const pad = (s: string, n: number) => s.padStart(n);
for (const phase of ['seeded', 'inOperation'] as const) {
  console.log(`\n${phase === 'seeded' ? 'as seeded (every box of one age)' : 'in operation (empty boxes of every age)'}: ms a request's write ran in its commit (median / worst of ${ITERATIONS}; created of ${ITERATIONS}), seed ${SEED}`);
  console.log(`${'kind'.padEnd(14)}${SIZES.map((s) => pad(`${s} spaces`, 26)).join('')}${pad('median, largest / smallest', 30)}`);
  for (const kind of KINDS) {
    const cells = results.map((r) => pad(`${r[phase][kind].p50.toFixed(2)} / ${r[phase][kind].max.toFixed(2)} (${r[phase][kind].created})`, 26));
    const ratio = results.at(-1)![phase][kind].p50 / results[0]![phase][kind].p50;
    console.log(`${kind.padEnd(14)}${cells.join('')}${pad(ratio.toFixed(2), 30)}`);
  }
}
