/**
 * Writes a generated site layout file:
 *   node --import tsx scripts/generate-site.ts --spaces 100000 --levels 4 --seed 7 --out site.json
 * Spaces are the total over all levels. The file is validated before it is written, so a
 * file this script writes always loads.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateSite } from '../src/domain/site/generate.js';
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
    out: { type: 'string', short: 'o' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log(`usage: generate-site.ts [--spaces N] [--levels L] [--seed S] [--out file.json]
       [--balconies per level] [--chargers per level] [--bots per level]
       [--fill 0..1] [--boxes avg per carrier] [--skus N] [--name text]
Without --out the layout goes to standard output.`);
  process.exit(0);
}

const levels = Number(values.levels);
const started = performance.now();
try {
  const layout = generateSite({
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
  });
  const site = buildSite(layout);
  const text = `${JSON.stringify(layout, null, 1)}\n`;
  if (values.out === undefined) process.stdout.write(text);
  else writeFileSync(values.out, text);
  const spaces = site.levels.reduce((n, l) => n + l.storage.length, 0);
  const boxes = layout.carriers.reduce((n, c) => n + (c.boxes?.length ?? 0), 0);
  console.error(
    `${layout.levels.length} levels, ${spaces} storage spaces, ${layout.carriers.length} carriers, ${boxes} boxes, ` +
      `${layout.skus.length} SKUs in ${Math.round(performance.now() - started)} ms${values.out ? ` -> ${values.out}` : ''}`,
  );
} catch (err) {
  if (err instanceof SiteError || err instanceof RangeError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}
