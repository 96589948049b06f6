// Site generator highways: the demo and every site generated without the new
// options stay byte for byte what they were; scaled highways (and buffers) grow with the bots,
// and every level they give passes the layout checks with each storage space reachable from a
// balcony.
import t from 'tap';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { generateSite, type ChargerEdge, type GenerateOptions } from '../../../src/domain/site/generate.js';
import { DEMO_OPTIONS } from '../../../src/domain/site/demo.js';
import { scaledHighways, MAX_TOP_ROWS, CROSS_EVERY_MIN, CROSS_EVERY_MAX, MAX_ASPECT } from '../../../src/domain/site/highways.js';
import { buildSite, type SiteLevel } from '../../../src/domain/site/load.js';

const sha256 = (o: GenerateOptions): string => createHash('sha256').update(JSON.stringify(generateSite(o))).digest('hex');

const BASE: GenerateOptions = {
  levels: 1, spacesPerLevel: 1000, balconiesPerLevel: 2, chargersPerLevel: 2, botsPerLevel: 10,
  carrierFill: 0.7, boxesPerCarrier: 3, skus: 50, seed: 5,
};

t.test('sites generated without the new options are the ones generated before them', async (t) => {
  // Digests of the generator's output at the commit before highwayRows, crossEvery and aspect.
  const before: [string, GenerateOptions, string][] = [
    ['demo', DEMO_OPTIONS, '2e2e5946c4ebeffd1bef5f6828a183f66836b1b14d6ac5ef20cce95de027f0e1'],
    ['bench:site large', {
      name: 'bench:site large', levels: 1, spacesPerLevel: 4000, balconiesPerLevel: 6, chargersPerLevel: 6, botsPerLevel: 40,
      carrierFill: 0.7, boxesPerCarrier: 3, skus: 300, seed: 5,
    }, '93a37fb97d83cab89ed8fdac5696f56bb581496e339a361ad78ba5847a75c86e'],
    ['one tiny level', {
      levels: 1, spacesPerLevel: 5, balconiesPerLevel: 1, chargersPerLevel: 1, botsPerLevel: 1, carrierFill: 0.5, boxesPerCarrier: 2, skus: 3, seed: 9,
    }, '68ab94be86fa44a69aecc4e3088aa23625778f924d9a94f96f33d0adfc9f6b39'],
  ];
  for (const [name, options, digest] of before) t.equal(sha256(options), digest, name);
  const demo = JSON.stringify(generateSite(DEMO_OPTIONS));
  t.ok(demo === JSON.stringify(generateSite({ ...DEMO_OPTIONS, highwayRows: 1, crossEvery: 12, aspect: 1, buffersPerBalcony: 2 })), 'the defaults spelt out give the demo');
});

t.test('scaled highways follow the bots and the balconies', async (t) => {
  const table: { bots: number; balconies: number; spaces: number; rows: number; crossEvery: number; aspect: number; buffers: number; chargers: ChargerEdge }[] = [
    { bots: 10, balconies: 2, spaces: 620, rows: 2, crossEvery: 12, aspect: 1, buffers: 2, chargers: 'left' },
    { bots: 4, balconies: 2, spaces: 1000, rows: 1, crossEvery: 12, aspect: 1, buffers: 2, chargers: 'left' },
    { bots: 12, balconies: 2, spaces: 1000, rows: 2, crossEvery: 12, aspect: 1, buffers: 4, chargers: 'left' },
    { bots: 40, balconies: 6, spaces: 4000, rows: 2, crossEvery: 8, aspect: 3, buffers: 4, chargers: 'bottom' },
    { bots: 60, balconies: 6, spaces: 10000, rows: 3, crossEvery: 8, aspect: 3, buffers: 4, chargers: 'bottom' },
    { bots: 120, balconies: 6, spaces: 10000, rows: 4, crossEvery: 4, aspect: 3, buffers: 4, chargers: 'bottom' },
    { bots: 200, balconies: 4, spaces: 25000, rows: MAX_TOP_ROWS, crossEvery: 5, aspect: 2, buffers: 4, chargers: 'bottom' },
    { bots: 50, balconies: 0, spaces: 10000, rows: MAX_TOP_ROWS, crossEvery: 12, aspect: 1, buffers: 4, chargers: 'left' },
    { bots: 60, balconies: 20, spaces: 10000, rows: 1, crossEvery: 7, aspect: MAX_ASPECT, buffers: 2, chargers: 'bottom' },
  ];
  for (const row of table) {
    const got = scaledHighways({ spacesPerLevel: row.spaces, botsPerLevel: row.bots, balconiesPerLevel: row.balconies });
    t.same(got, { highwayRows: row.rows, crossEvery: row.crossEvery, aspect: row.aspect, buffersPerBalcony: row.buffers, chargerEdge: row.chargers }, `${row.bots} bots, ${row.balconies} balconies, ${row.spaces} spaces`);
  }
  // More bots on the same level never give fewer highways.
  let last = scaledHighways({ spacesPerLevel: 10000, botsPerLevel: 1, balconiesPerLevel: 6 });
  for (let bots = 2; bots <= 300; bots++) {
    const now = scaledHighways({ spacesPerLevel: 10000, botsPerLevel: bots, balconiesPerLevel: 6 });
    if (now.highwayRows < last.highwayRows || now.crossEvery > last.crossEvery) t.fail(`${bots} bots: ${JSON.stringify(now)} after ${JSON.stringify(last)}`);
    t.ok(now.crossEvery >= CROSS_EVERY_MIN && now.crossEvery <= CROSS_EVERY_MAX);
    last = now;
  }
});

/** Rows of the level whose every cell between the ring's columns is highway. */
function fullHighwayRows(level: SiteLevel): number[] {
  const out: number[] = [];
  for (let y = 0; y < level.rows; y++) {
    let all = true;
    for (let x = 1; x <= level.width - 2 && all; x++) all = level.kindAt(x, y) === 'highway';
    if (all) out.push(y);
  }
  return out;
}

/** The storage spaces whose lane opens on a highway cell no balcony port reaches along the highway. */
function unreachable(level: SiteLevel): number {
  const seen = new Set<string>();
  const stack = level.ports.flatMap((p) => [{ x: p.x, y: p.y + 1 }, { x: p.x, y: p.y - 1 }, { x: p.x - 1, y: p.y }, { x: p.x + 1, y: p.y }])
    .filter((c) => level.kindAt(c.x, c.y) === 'highway');
  for (const c of stack) seen.add(`${c.x}:${c.y}`);
  while (stack.length > 0) {
    const c = stack.pop()!;
    for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1]] as const) {
      const n = { x: c.x + dx, y: c.y + dy };
      if (level.kindAt(n.x, n.y) !== 'highway' || seen.has(`${n.x}:${n.y}`)) continue;
      seen.add(`${n.x}:${n.y}`);
      stack.push(n);
    }
  }
  return level.storage.filter((s) => !seen.has(`${level.lanes[s.lane]!.access.x}:${level.lanes[s.lane]!.access.y}`)).length;
}

t.test('scaled layouts pass the layout checks, reach every space and have the highways asked for', async (t) => {
  const table: { name: string; spaces: number; bots: number; balconies: number }[] = [
    { name: 'small, few bots', spaces: 300, bots: 3, balconies: 1 },
    { name: 'demo size', spaces: 620, bots: 10, balconies: 2 },
    { name: 'bench large', spaces: 4000, bots: 40, balconies: 6 },
    { name: 'bench large-10k', spaces: 10000, bots: 60, balconies: 6 },
    { name: 'crowded 10k', spaces: 10000, bots: 150, balconies: 6 },
    { name: 'no balconies', spaces: 2000, bots: 20, balconies: 0 },
  ];
  let previousTop = 0;
  for (const row of table.slice(0, 5)) {
    const options: GenerateOptions = { ...BASE, spacesPerLevel: row.spaces, botsPerLevel: row.bots, balconiesPerLevel: row.balconies };
    const highways = scaledHighways(options);
    const site = buildSite(generateSite({ ...options, ...highways })); // throws SiteError on any failed check
    const level = site.levels[0]!;
    t.ok(level.storage.length >= row.spaces, `${row.name}: ${level.storage.length} spaces`);
    t.equal(level.bots.length, row.bots, `${row.name}: bots`);
    t.equal(unreachable(level), 0, `${row.name}: every space reachable from a balcony`);
    const full = fullHighwayRows(level);
    const top = full.filter((y) => y >= 1 && y <= highways.highwayRows);
    t.same(top, Array.from({ length: highways.highwayRows }, (_, i) => i + 1), `${row.name}: ${highways.highwayRows} highway rows under the balconies`);
    const cross = full.filter((y) => y > highways.highwayRows && y < level.rows - 2);
    // From the top highway to the bottom one, a full highway row at least every crossEvery rows (the last gap may be one more).
    const rungs = [highways.highwayRows, ...cross, level.rows - 2];
    const gaps = rungs.slice(1).map((y, i) => y - rungs[i]!);
    t.ok(gaps.slice(0, -1).every((g) => g === highways.crossEvery) && gaps.at(-1)! <= highways.crossEvery + 1, `${row.name}: cross aisles every ${highways.crossEvery} rows (${gaps.join(', ')})`);
    t.ok(highways.highwayRows >= previousTop, `${row.name}: highway rows do not shrink as bots grow`);
    t.equal(level.chargers.length, BASE.chargersPerLevel, `${row.name}: chargers`);
    const edge = (c: { x: number; y: number }) => (c.x === 0 ? 'left' : c.y === level.rows - 1 ? 'bottom' : 'elsewhere');
    t.same([...new Set(level.chargers.map(edge))], [highways.chargerEdge], `${row.name}: chargers on the ${highways.chargerEdge} edge`);
    // Each balcony's buffers are where its bots wait: at most two cells from one of its ports, next to the highway.
    for (const b of level.balconies) {
      const near = level.buffers.filter((c) => b.ports.some((p) => Math.abs(p.x - c.x) + Math.abs(p.y - c.y) <= 2));
      t.equal(near.length, highways.buffersPerBalcony, `${row.name}: balcony ${b.id} has ${highways.buffersPerBalcony} buffers beside its ports`);
    }
    previousTop = highways.highwayRows;
  }
  const none = table[5]!;
  const site = buildSite(generateSite({ ...BASE, spacesPerLevel: none.spaces, botsPerLevel: none.bots, balconiesPerLevel: 0, ...scaledHighways({ ...BASE, spacesPerLevel: none.spaces, botsPerLevel: none.bots, balconiesPerLevel: 0 }) }));
  t.equal(site.balconies.length, 0, 'a level without balconies still generates');
});

t.test('any highway options give a valid level with every space reachable (property)', async (t) => {
  const options = fc.record<GenerateOptions>({
    levels: fc.constant(1),
    spacesPerLevel: fc.integer({ min: 1, max: 600 }),
    balconiesPerLevel: fc.integer({ min: 0, max: 4 }),
    chargersPerLevel: fc.integer({ min: 0, max: 40 }),
    botsPerLevel: fc.integer({ min: 0, max: 8 }),
    carrierFill: fc.double({ min: 0, max: 1, noNaN: true }),
    boxesPerCarrier: fc.constant(2),
    skus: fc.integer({ min: 0, max: 10 }),
    seed: fc.integer({ min: 0, max: 2 ** 31 }),
    highwayRows: fc.integer({ min: 1, max: 5 }),
    crossEvery: fc.integer({ min: 2, max: 20 }),
    aspect: fc.double({ min: 0.25, max: 16, noNaN: true }),
    buffersPerBalcony: fc.integer({ min: 2, max: 4 }),
    chargerEdge: fc.constantFrom<ChargerEdge>('left', 'bottom'),
  });
  fc.assert(
    fc.property(options, (o) => {
      const level = buildSite(generateSite(o)).levels[0]!;
      return level.storage.length >= o.spacesPerLevel && level.bots.length === o.botsPerLevel && level.chargers.length === o.chargersPerLevel && (o.balconiesPerLevel === 0 || unreachable(level) === 0);
    }),
    { numRuns: 60, seed: 20261126 },
  );
  t.pass('60 generated levels');
});

t.test('options out of range are refused', async (t) => {
  t.throws(() => generateSite({ ...BASE, highwayRows: 0 }), RangeError);
  t.throws(() => generateSite({ ...BASE, crossEvery: 1 }), RangeError);
  t.throws(() => generateSite({ ...BASE, aspect: 0.1 }), RangeError);
  t.throws(() => generateSite({ ...BASE, aspect: Number.NaN }), RangeError);
  t.throws(() => generateSite({ ...BASE, buffersPerBalcony: 1 }), RangeError);
  t.throws(() => generateSite({ ...BASE, buffersPerBalcony: 5 }), RangeError);
  t.throws(() => generateSite({ ...BASE, buffersPerBalcony: 2.5 }), RangeError);
  t.throws(() => generateSite({ ...BASE, chargerEdge: 'top' as ChargerEdge }), RangeError);
});
