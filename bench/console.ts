// npm run bench:console [-- --frames 600 --bots 60]
//
// The console's map drawing (browser/console/draw.ts) in Debian's Chromium, headless, on this
// machine: the cost of one frame with `bots` bots sliding on a level, against the floor cost
// measured in the same run (copying the level's pre-drawn grid alone, what every frame does
// anyway), and the one-off cost of drawing the grid. Two levels: the demo's level 1 (the
// 1,404-space demo has 2 levels) and a generated 100,000-space level. A frame budget at 60 Hz
// is 16.7 ms; the figures are CPU time in a software-rendered headless browser, so a laptop
// with a GPU does better.
import { existsSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { loadSite, buildSite } from '../src/domain/site/load.js';
import { generateSite } from '../src/domain/site/generate.js';

const { values } = parseArgs({ options: { frames: { type: 'string', default: '600' }, bots: { type: 'string', default: '60' } } });
const frames = Number(values.frames);
const botCount = Number(values.bots);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium`);

// draw.ts as a script for the page, exposing its two functions.
const bundle = await build({
  stdin: { contents: "import { drawGrid, drawFrame } from './browser/console/draw'; Object.assign(globalThis, { drawGrid, drawFrame });", resolveDir: process.cwd(), loader: 'ts' },
  bundle: true, format: 'iife', write: false, logLevel: 'warning',
});
const script = bundle.outputFiles[0]!.text;

const mapOf = (site: ReturnType<typeof loadSite>, id: number) => {
  const level = site.level(id)!;
  return {
    id, width: level.width, depth: level.rows, rows: site.layout.levels.find((l) => l.id === id)!.rows,
    balconies: level.balconies.map((b) => ({ id: b.id, ports: b.ports })),
    highway: level.highway,
  };
};
const large = buildSite(generateSite({
  levels: 1, spacesPerLevel: 100_000, balconiesPerLevel: 4, chargersPerLevel: 8, botsPerLevel: 10, carrierFill: 0.1, boxesPerCarrier: 1, skus: 10, seed: 7,
}));
const levels = [{ name: 'demo level 1', map: mapOf(loadSite('demo'), 1) }, { name: '100,000-space level', map: mapOf(large, 1) }];

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const page = await browser.newPage();
await page.setContent('<!doctype html><body></body>');
// tsx names functions with a helper the page does not have; the evaluated code below uses it.
await page.addScriptTag({ content: `globalThis.__name = (f) => f;\n${script}` });

console.log(`console map drawing, ${frames} frames, ${botCount} bots; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${os.cpus().length} CPUs`);
for (const { name, map } of levels) {
  const result = await page.evaluate(({ map, frames, botCount }) => {
    const g = globalThis as any;
    // The cell size the page would pick for a 1,000 x 700 px map area, at least 3 px.
    const cell = Math.max(3, Math.min(40, Math.floor(Math.min(1000 / map.width, 700 / map.depth))));
    const t0 = performance.now();
    const grid = g.drawGrid(map, cell);
    const gridMs = performance.now() - t0;
    const doc = g.document;
    const canvas = doc.createElement('canvas');
    canvas.width = grid.width;
    canvas.height = grid.height;
    doc.body.appendChild(canvas);
    const ctx = canvas.getContext('2d');
    const cells = map.highway as { x: number; y: number }[];
    const bots = Array.from({ length: botCount }, (_, i) => {
      const at = cells[(i * 7919) % cells.length]!;
      const to = cells[(i * 7919 + 1) % cells.length]!;
      return { id: i + 1, fromX: at.x, fromY: at.y, x: to.x, y: to.y, since: 0, heading: 'E', carrier: i % 3 === 0, state: ['working', 'waiting', 'charging', 'idle'][i % 4] };
    });
    // Every frame mid-slide: the most work a frame does. getImageData forces the drawing to finish.
    const run = (draw: (now: number) => void) => {
      const start = performance.now();
      for (let f = 0; f < frames; f++) {
        draw(100);
        if (f % 60 === 59) ctx.getImageData(0, 0, 1, 1);
      }
      ctx.getImageData(0, 0, 1, 1);
      return (performance.now() - start) / frames;
    };
    run((now) => g.drawFrame(ctx, grid, bots, cell, now, 1)); // warm-up
    const floor = run(() => ctx.drawImage(grid, 0, 0));
    const full = run((now) => g.drawFrame(ctx, grid, bots, cell, now, 1));
    return { cell, size: `${grid.width}x${grid.height}`, gridMs, floor, full };
  }, { map, frames, botCount });
  console.log(`${name}: ${map.width}x${map.depth} cells at ${result.cell} px (${result.size} px)`);
  console.log(`  grid drawn once:               ${result.gridMs.toFixed(1)} ms`);
  console.log(`  frame, grid copy only (floor): ${result.floor.toFixed(3)} ms`);
  console.log(`  frame, grid + ${botCount} bots:        ${result.full.toFixed(3)} ms  (${(result.full / result.floor).toFixed(2)}x the floor; ${(100 * result.full / 16.7).toFixed(1)} % of a 60 Hz frame)`);
}
await browser.close();
