// Site layout: the demo, the generator at scale and as a property, and every kind of bad
// file reported with its JSON path, all problems at once.
import t from 'tap';
import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSite, loadSite, SiteError, type Site } from '../../../src/domain/site/load.js';
import { generateSite, type GenerateOptions } from '../../../src/domain/site/generate.js';
import { DEMO_OPTIONS } from '../../../src/domain/site/demo.js';
import { HEADINGS, MAX_LANE_DEPTH } from '../../../src/domain/site/layout.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wh-site-'));

function problemsOf(layout: unknown): string[] {
  try {
    buildSite(layout);
  } catch (err) {
    if (err instanceof SiteError) return err.problems;
    throw err;
  }
  return [];
}

function problemsLoading(file: string): string[] {
  try {
    loadSite(file);
  } catch (err) {
    if (err instanceof SiteError) return err.problems;
    throw err;
  }
  return [];
}

const STEP: Record<string, [number, number]> = { N: [0, -1], E: [1, 0], S: [0, 1], W: [-1, 0] };

/** Every storage space sits in its lane at its depth, and the lane opens on a highway cell. */
function lanesAreSound(site: Site): string | undefined {
  for (const level of site.levels) {
    for (const space of level.storage) {
      if (space.depth < 1 || space.depth > MAX_LANE_DEPTH) return `depth ${space.depth} at (${space.x}, ${space.y})`;
      const lane = level.lanes[space.lane];
      if (lane.spaces[space.depth - 1] !== space) return `(${space.x}, ${space.y}) is not at its depth in its lane`;
      if (level.kindAt(lane.access.x, lane.access.y) !== 'highway') return `lane ${lane.index} opens on a ${level.kindAt(lane.access.x, lane.access.y)} cell`;
      const [dx, dy] = STEP[lane.direction];
      // Walk from the highway into the lane: every cell up to this one is storage of the lane.
      for (let d = 1; d <= space.depth; d++) {
        const on = level.spaceAt(lane.access.x + dx * d, lane.access.y + dy * d);
        if (on === undefined || on.lane !== space.lane || on.depth !== d) return `lane ${lane.index} is broken at depth ${d}`;
      }
    }
  }
  return undefined;
}

const boxCount = (site: Site): number => site.layout.carriers.reduce((n, c) => n + (c.boxes?.length ?? 0), 0);

t.test('the demo site loads and has the promised sizes', async (t) => {
  const site = loadSite('demo');
  t.equal(site.levels.length, 2);
  t.equal(site.balconies.length, 4);
  for (const level of site.levels) {
    t.equal(level.chargers.length, 2, `level ${level.id}: chargers`);
    t.equal(level.bots.length, 10, `level ${level.id}: bots`);
    t.equal(level.serial_device, 'sim');
    t.equal(level.rfid_tags.length, level.highway.length, 'RFID tags default to the highway cells');
    t.ok(level.buffers.length > 0, 'buffers');
  }
  const carriers = site.layout.carriers.length;
  t.ok(carriers >= 900 && carriers <= 1100, `about 1,000 carriers (${carriers})`);
  t.ok(boxCount(site) >= 2200 && boxCount(site) <= 2800, `about 2,500 boxes (${boxCount(site)})`);
  t.equal(site.layout.skus.length, 400);
  const depths = new Set(site.levels.flatMap((l) => l.storage.map((s) => s.depth)));
  t.same([...depths].sort(), [1, 2, 3], 'lanes 1 to 3 deep');
  t.equal(lanesAreSound(site), undefined);
  t.comment(`demo: ${site.levels.map((l) => `${l.width}×${l.rows}, ${l.storage.length} spaces`).join('; ')}, ${carriers} carriers, ${boxCount(site)} boxes`);

  const c = site.layout.carriers[0];
  t.equal(site.kindAt(c.level_id, c.x, c.y), 'storage');
  t.equal(site.kindAt(c.level_id, -1, 0), undefined, 'outside the grid');
  t.equal(site.kindAt(99, 0, 0), undefined, 'unknown level');
  const port = site.balconies[0].ports[0];
  t.equal(site.kindAt(site.balconies[0].level_id, port.x, port.y), 'port');
});

t.test('the demo is the same every time', async (t) => {
  // Compared as JSON text: tap's deep comparison of thousands of objects is slow.
  const demo = JSON.stringify(generateSite(DEMO_OPTIONS));
  t.ok(demo === JSON.stringify(generateSite(DEMO_OPTIONS)), 'same options, same document');
  t.ok(demo !== JSON.stringify(generateSite({ ...DEMO_OPTIONS, seed: 1 })), 'another seed, another site');
});

t.test('a generated site of 100,000 spaces validates', async (t) => {
  const started = performance.now();
  const layout = generateSite({
    levels: 4, spacesPerLevel: 25000, balconiesPerLevel: 4, chargersPerLevel: 4, botsPerLevel: 40,
    carrierFill: 0.8, boxesPerCarrier: 2.5, skus: 5000, seed: 42,
  });
  const generated = performance.now();
  const site = buildSite(layout);
  const spaces = site.levels.reduce((n, l) => n + l.storage.length, 0);
  t.ok(spaces >= 100000, `${spaces} spaces`);
  t.comment(`100k spaces: generated in ${Math.round(generated - started)} ms, validated in ${Math.round(performance.now() - generated)} ms`);
});

t.test('every generated site validates and its lanes are sound (property)', async (t) => {
  const options = fc.record<GenerateOptions>({
    levels: fc.integer({ min: 1, max: 2 }),
    spacesPerLevel: fc.integer({ min: 1, max: 400 }),
    balconiesPerLevel: fc.integer({ min: 0, max: 3 }),
    chargersPerLevel: fc.integer({ min: 0, max: 4 }),
    botsPerLevel: fc.integer({ min: 0, max: 6 }),
    carrierFill: fc.double({ min: 0, max: 1, noNaN: true }),
    boxesPerCarrier: fc.double({ min: 0, max: 8, noNaN: true }),
    skus: fc.integer({ min: 0, max: 30 }),
    seed: fc.integer({ min: 0, max: 2 ** 31 }),
  });
  fc.assert(
    fc.property(options, (o) => {
      const site = buildSite(generateSite(o));
      const broken = lanesAreSound(site);
      if (broken !== undefined) throw new Error(broken);
      return site.levels.every((l) => l.storage.length >= o.spacesPerLevel && l.bots.length === o.botsPerLevel);
    }),
    { numRuns: 60, seed: 20260101 },
  );
  t.pass('60 generated sites');
});

// ---------------------------------------------------------------------------- bad files

/** A small valid site to break one way at a time. */
function base(): any {
  return {
    version: 1,
    name: 'Test site',
    levels: [
      {
        id: 1,
        height: 0,
        grid: { width: 7, height: 5 },
        rows: [
          '#BPPB##', // 0
          '.......', // 1
          '.SSS#S.', // 2
          '.......', // 3
          'C######', // 4
        ],
        serial_device: 'sim',
        bots: [{ id: 1, start: { x: 0, y: 1 }, heading: 'E' }],
      },
    ],
    balconies: [{ id: 0, level_id: 1, ports: [{ x: 2, y: 0 }, { x: 3, y: 0 }] }],
    carriers: [
      {
        id: 'C1', level_id: 1, x: 1, y: 2,
        boxes: [
          { id: 1, section_code: '11110000', load: { sku_id: 'A', item_count: 3, item_count_max: 10 } },
          { id: 2, section_code: '00001111' },
        ],
      },
      { id: 'C2', level_id: 1, x: 1, y: 0 },
    ],
    skus: [{ id: 'A', name: 'Stainless hex bolt M8×40', measurement_unit: 'PIECE', balcony_ids: [0] }],
  };
}

t.test('the hand-made base site is valid', async (t) => {
  t.same(problemsOf(base()), []);
  const site = buildSite(base());
  const level = site.levels[0];
  t.same(level.storage.map((s) => [s.x, s.y, s.depth]), [[1, 2, 1], [2, 2, 1], [3, 2, 1], [5, 2, 1]]);
  t.same(level.chargers, [{ x: 0, y: 4 }]);
  t.same(level.buffers, [{ x: 1, y: 0 }, { x: 4, y: 0 }]);
  t.same(site.balconies, [{ id: 0, level_id: 1, ports: [{ x: 2, y: 0 }, { x: 3, y: 0 }] }]);
  t.same(HEADINGS.includes(level.lanes[0].direction), true);
});

const cases: [string, (s: any) => void, string][] = [
  ['missing name', (s) => delete s.name, 'name: required'],
  ['wrong version', (s) => (s.version = 2), 'version:'],
  ['unknown field', (s) => (s.levels[0].colour = 'red'), 'levels[0].colour: unknown field'],
  ['level id 0', (s) => (s.levels[0].id = 0), 'levels[0].id:'],
  ['bad serial device', (s) => (s.levels[0].serial_device = 'COM3'), 'levels[0].serial_device:'],
  ['bad heading', (s) => (s.levels[0].bots[0].heading = 'NE'), 'levels[0].bots[0].heading:'],
  ['section code of 9 digits', (s) => (s.carriers[0].boxes[0].section_code = '111100000'), 'carriers[0].boxes[0].section_code:'],
  ['section code not binary', (s) => (s.carriers[0].boxes[0].section_code = '1112'), 'carriers[0].boxes[0].section_code:'],
  ['bad measurement unit', (s) => (s.skus[0].measurement_unit = 'BUCKET'), 'skus[0].measurement_unit:'],
  ['row too long', (s) => (s.levels[0].rows[2] += '.'), 'levels[0].rows[2]: length 8, expected 7'],
  ['row too short', (s) => (s.levels[0].rows[3] = '......'), 'levels[0].rows[3]: length 6, expected 7'],
  ['row missing', (s) => s.levels[0].rows.pop(), 'levels[0].rows: 4 rows, expected 5'],
  ['unknown character', (s) => (s.levels[0].rows[2] = '.SxS#S.'), 'levels[0].rows[2][2]: unknown cell character "x"'],
  ['storage more than 3 deep', (s) => {
    s.levels[0].grid.width = 10;
    s.levels[0].rows = ['#BPPB#####', '..........', '.#########', '.SSSSSSSS#', 'C#########'];
  }, 'levels[0].rows[3][4]: storage cell reaches no highway'],
  ['storage walled in', (s) => s.levels[0].rows.splice(1, 3, '.....##', '.SSS#S#', '.....##'), 'levels[0].rows[2][5]: storage cell reaches no highway'],
  ['buffer without highway', (s) => s.levels[0].rows.splice(1, 3, '.....##', '.SSS#B#', '.....##'), 'levels[0].rows[2][5]: buffer cell has no highway cell next to it'],
  ['highway split', (s) => {
    s.levels[0].rows[1] = '....#..';
    s.levels[0].rows[3] = '....#..';
    s.levels[0].rows[2] = '.SSS#S.';
  }, 'levels[0].rows[1][5]: highway cell not connected'],
  ['no highway at all', (s) => {
    s.levels[0].rows = ['#BPPB##', '#######', '#######', '#######', 'C######'];
    s.levels[0].bots = [];
    s.carriers = [{ id: 'C2', level_id: 1, x: 1, y: 0 }];
  }, "levels[0].rows: no highway cell ('.')"],
  ['duplicate level id', (s) => s.levels.push({ ...structuredClone(s.levels[0]), bots: [] }), 'levels[1].id: duplicate level id 1'],
  ['bot on storage', (s) => (s.levels[0].bots[0].start = { x: 1, y: 2 }), 'levels[0].bots[0].start: (1, 2) is a storage cell'],
  ['bot outside the grid', (s) => (s.levels[0].bots[0].start = { x: 7, y: 0 }), 'levels[0].bots[0].start: (7, 0) is outside'],
  ['two bots on one cell', (s) => s.levels[0].bots.push({ id: 2, start: { x: 0, y: 1 }, heading: 'N' }), 'levels[0].bots[1].start: another bot'],
  ['duplicate bot id', (s) => s.levels[0].bots.push({ id: 1, start: { x: 1, y: 1 }, heading: 'N' }), 'levels[0].bots[1].id: duplicate bot id 1'],
  ['rfid tag on a wall', (s) => (s.levels[0].rfid_tags = [{ x: 0, y: 1 }, { x: 4, y: 2 }]), 'levels[0].rfid_tags[1]: (4, 2) is a wall cell'],
  ['duplicate rfid tag', (s) => (s.levels[0].rfid_tags = [{ x: 0, y: 1 }, { x: 0, y: 1 }]), 'levels[0].rfid_tags[1]: duplicate tag'],
  ['port not on a port cell', (s) => (s.balconies[0].ports[1] = { x: 4, y: 0 }), 'balconies[0].ports[1]: (4, 0) on level 1 is a buffer cell'],
  ['port outside the grid', (s) => (s.balconies[0].ports[1] = { x: 3, y: 9 }), 'balconies[0].ports[1]: (3, 9) is outside'],
  ['balcony on an unknown level', (s) => (s.balconies[0].level_id = 2), 'balconies[0].level_id: no level 2'],
  ['port cell of no balcony', (s) => (s.balconies[0].ports = [{ x: 2, y: 0 }]), 'levels[0].rows[0][3]: port cell belongs to no balcony'],
  ['port shared by two balconies', (s) => s.balconies.push({ id: 1, level_id: 1, ports: [{ x: 3, y: 0 }] }), 'balconies[1].ports[0]: (3, 0) is already a port of balcony 0'],
  ['duplicate balcony id', (s) => s.balconies.push({ id: 0, level_id: 1, ports: [{ x: 2, y: 0 }] }), 'balconies[1].id: duplicate balcony id 0'],
  ['carrier on the highway', (s) => (s.carriers[1].y = 1), 'carriers[1]: (1, 1) on level 1 is a highway cell'],
  ['carrier on an unknown level', (s) => (s.carriers[1].level_id = 3), 'carriers[1].level_id: no level 3'],
  ['two carriers on one cell', (s) => s.carriers.push({ id: 'C3', level_id: 1, x: 1, y: 2 }), 'carriers[2]: carrier "C1" already stands at (1, 2)'],
  ['duplicate carrier id', (s) => s.carriers.push({ id: 'C1', level_id: 1, x: 2, y: 2 }), 'carriers[2].id: duplicate carrier id "C1"'],
  ['duplicate box id', (s) => (s.carriers[1].boxes = [{ id: 2, section_code: '1' }]), 'carriers[1].boxes[0].id: duplicate box id 2'],
  ['overlapping boxes', (s) => (s.carriers[0].boxes[1].section_code = '00011111'), 'carriers[0].boxes[1].section_code: overlaps'],
  // Overlap is judged on the canonical code, across widths: 8-digit '11110000' takes canonical sections 0-15.
  ['8 and 32 digits overlapping', (s) => (s.carriers[0].boxes[1].section_code = `1${'0'.repeat(31)}`), 'carriers[0].boxes[1].section_code: overlaps boxes[0]'],
  ['8 and 16 digits overlapping', (s) => (s.carriers[0].boxes[1].section_code = `0000000${'1'.repeat(9)}`), 'carriers[0].boxes[1].section_code: overlaps boxes[0]'],
  ['short legacy code and 32 digits', (s) => (s.carriers[0].boxes = [{ id: 1, section_code: '10000000' }, { id: 2, section_code: `1${'0'.repeat(31)}` }]), 'carriers[0].boxes[1].section_code: overlaps boxes[0]'],
  ['box in no section', (s) => (s.carriers[0].boxes[1].section_code = '0'.repeat(16)), 'carriers[0].boxes[1].section_code: takes no section'],
  ['load of an unknown SKU', (s) => (s.carriers[0].boxes[0].load.sku_id = 'B'), 'carriers[0].boxes[0].load.sku_id: unknown SKU "B"'],
  ['more items than fit', (s) => (s.carriers[0].boxes[0].load.item_count = 11), 'carriers[0].boxes[0].load.item_count: 11 is more than item_count_max 10'],
  ['duplicate SKU id', (s) => s.skus.push({ id: 'A', name: 'Again' }), 'skus[1].id: duplicate SKU id "A"'],
  ['SKU for an unknown balcony', (s) => (s.skus[0].balcony_ids = [0, 5]), 'skus[0].balcony_ids[1]: no balcony 5'],
];

t.test('each kind of bad file names its path', async (t) => {
  for (const [what, breakIt, expected] of cases) {
    const layout = base();
    breakIt(layout);
    const problems = problemsOf(layout);
    t.ok(problems.some((p) => p.startsWith(expected)), what, { expected, problems });
  }
});

t.test('boxes of different code widths that take different sections may share a carrier', async (t) => {
  const layout = base();
  // '11110000' takes canonical sections 0-15; these take 16-23 and 24-31.
  layout.carriers[0].boxes = [
    { id: 1, section_code: '11110000' },
    { id: 2, section_code: `${'0'.repeat(8)}11110000` },
    { id: 3, section_code: `${'0'.repeat(24)}${'1'.repeat(8)}` },
  ];
  t.same(problemsOf(layout), []);
  layout.carriers[0].boxes.push({ id: 4, section_code: '1' });
  t.same(problemsOf(layout).filter((p) => p.includes('overlaps')), ['carriers[0].boxes[3].section_code: overlaps boxes[2] of the carrier (canonical code 00000000000000000000000000001111)']);
});

t.test('SiteError lists every problem, not only the first', async (t) => {
  const semantic = [
    'levels[0].rows[2]: length 8',
    'levels[0].bots[0].start',
    'balconies[0].ports[1]',
    'carriers[1]: (1, 1)',
    'carriers[0].boxes[0].load.sku_id',
    'carriers[0].boxes[0].load.item_count',
    'skus[0].balcony_ids[0]',
  ];
  const layout = base();
  layout.levels[0].rows[2] = '.SSS#S..';
  layout.levels[0].bots[0].start = { x: 1, y: 2 };
  layout.balconies[0].ports[1] = { x: 4, y: 0 };
  layout.carriers[1].y = 1;
  layout.carriers[0].boxes[0].load = { sku_id: 'Z', item_count: 20, item_count_max: 10 };
  layout.skus[0].balcony_ids = [9];
  const problems = problemsOf(layout);
  for (const prefix of semantic) t.ok(problems.some((p) => p.startsWith(prefix)), prefix, { problems });

  const schema = base();
  delete schema.name;
  schema.levels[0].height = -1;
  schema.carriers[0].x = 'one';
  schema.skus[0].extra = true;
  const schemaProblems = problemsOf(schema);
  for (const prefix of ['name: required', 'levels[0].height:', 'carriers[0].x:', 'skus[0].extra: unknown field']) {
    t.ok(schemaProblems.some((p) => p.startsWith(prefix)), prefix, { schemaProblems });
  }

  const err = t.throws(() => buildSite(layout)) as SiteError;
  t.type(err, SiteError);
  t.match(err.message, /invalid site layout:\n {2}- levels\[0\]\.rows\[2\]/);
});

t.test('loadSite reads files and reports unreadable ones', async (t) => {
  const good = path.join(dir, 'good.json');
  writeFileSync(good, JSON.stringify(base()));
  t.equal(loadSite(good).name, 'Test site');

  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, '{"version": 1,');
  t.match(problemsLoading(bad)[0], `${bad}: not valid JSON`);
  const missing = path.join(dir, 'missing.json');
  t.match(problemsLoading(missing)[0], `${missing}: cannot read`);
});
