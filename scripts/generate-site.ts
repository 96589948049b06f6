/**
 * Writes a generated site layout file:
 *   node --import tsx scripts/generate-site.ts --spaces 100000 --levels 4 --seed 7 --out site.json
 * Spaces are the total over all levels. The file is validated before it is written, so a
 * file this script writes always loads. Highways are scaled to the bots and balconies
 * (src/domain/site/highways.ts) unless `--highways single` asks for the original single row
 * under the balconies; `--highway-rows`, `--cross-every`, `--aspect`, `--buffers` and
 * `--charger-edge` override either.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateSite, type GenerateOptions } from '../src/domain/site/generate.js';
import { scaledHighways } from '../src/domain/site/highways.js';
import { buildSite, SiteError } from '../src/domain/site/load.js';

const { values } = parseArgs({
  options: {
    spaces: { type: 'string', default: '1000' },
    levels: { type: 'string', default: '2' },
    seed: { type: 'string', default: '1' },
    balconies: { type: 'string', default: '2', short: 'b' },
    chargers: { type: 'string', default: '2' },
    bots: { type: 'string', default: '10' },
    fill: { type: 'string', default: '0.8' },
    boxes: { type: 'string', default: '2.5' },
    skus: { type: 'string', default: '400' },
    name: { type: 'string' },
    highways: { type: 'string', default: 'scaled' },
    'highway-rows': { type: 'string' },
    'cross-every': { type: 'string' },
    aspect: { type: 'string' },
    buffers: { type: 'string' },
    'charger-edge': { type: 'string' },
    out: { type: 'string', short: 'o' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log(`usage: generate-site.ts [--spaces N] [--levels L] [--seed S] [--out file.json]
       [--balconies per level] [--chargers per level] [--bots per level]
       [--fill 0..1] [--boxes avg per carrier] [--skus N] [--name text]
       [--highways scaled|single] [--highway-rows N] [--cross-every N] [--aspect W/H]
       [--buffers 2..4 per balcony] [--charger-edge left|bottom]
--highways scaled (default) gives highway rows, cross aisles, level shape, buffers and the
chargers' edge in proportion to the bots and balconies; single is the original layout (one
highway row under the balconies, a cross aisle every 12 rows, near-square levels, B P P B,
chargers down the left edge). The other options override either. Without --out the layout
goes to standard output.`);
  process.exit(0);
}

const levels = Number(values.levels);
const started = performance.now();
try {
  const options: GenerateOptions = {
    name: values.name,
    levels,
    spacesPerLevel: Math.max(1, Math.ceil(Number(values.spaces) / levels)),
    balconiesPerLevel: Number(values.balconies),
    chargersPerLevel: Number(values.chargers),
    botsPerLevel: Number(values.bots),
    carrierFill: Number(values.fill),
    boxesPerCarrier: Number(values.boxes),
    skus: Number(values.skus),
    seed: Number(values.seed),
  };
  if (values.highways === 'scaled') Object.assign(options, scaledHighways(options));
  else if (values.highways !== 'single') throw new RangeError(`--highways must be scaled or single, got ${String(values.highways)}`);
  if (values['highway-rows'] !== undefined) options.highwayRows = Number(values['highway-rows']);
  if (values['cross-every'] !== undefined) options.crossEvery = Number(values['cross-every']);
  if (values.aspect !== undefined) options.aspect = Number(values.aspect);
  if (values.buffers !== undefined) options.buffersPerBalcony = Number(values.buffers);
  if (values['charger-edge'] !== undefined) options.chargerEdge = values['charger-edge'] as GenerateOptions['chargerEdge'];
  const layout = generateSite(options);
  const site = buildSite(layout);
  const text = `${JSON.stringify(layout, null, 1)}\n`;
  if (values.out === undefined) process.stdout.write(text);
  else writeFileSync(values.out, text);
  const spaces = site.levels.reduce((n, l) => n + l.storage.length, 0);
  const boxes = layout.carriers.reduce((n, c) => n + (c.boxes?.length ?? 0), 0);
  console.error(
    `${layout.levels.length} levels, ${spaces} storage spaces, ${layout.carriers.length} carriers, ${boxes} boxes, ` +
      `${layout.skus.length} SKUs, level 1 ${layout.levels[0]!.grid.width}×${layout.levels[0]!.grid.height} ` +
      `(${options.highwayRows ?? 1} highway rows under the balconies, cross aisles every ${options.crossEvery ?? 12} rows) in ${Math.round(performance.now() - started)} ms${values.out ? ` -> ${values.out}` : ''}`,
  );
} catch (err) {
  if (err instanceof SiteError || err instanceof RangeError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}
