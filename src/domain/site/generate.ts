/**
 * Deterministic generator of site layouts for the demo, tests and benchmarks. The same
 * options and seed always give the same document, so a site can be named by its options.
 *
 * Shape of each level (x to the right, y down), with k = `highwayRows` (default 1):
 *   row 0          balcony ports and buffers (B P P B per balcony; BB P P BB with 4 buffers), walls between
 *   rows 1..k      highway (top of the ring): where the balconies' traffic meets
 *   rows k+1..H-3  blocks of storage 1-3 deep on both sides of vertical aisles, with a
 *                  highway cross aisle every `crossEvery` rows (default 12)
 *   row H-2        highway (bottom of the ring)
 *   row H-1        wall (with `chargerEdge: 'bottom'`, chargers spread along it under the ring's bottom row)
 *   column 0       chargers (C) and walls, next to the ring's left column (x = 1)
 *   column W-1     wall; column W-2 is the ring's right column
 * The defaults are the generator's original layout, which the demo and every existing site
 * are made of; highways.ts picks larger values in proportion to the bots.
 */
import {
  CELL_CHAR, HEADINGS, LAYOUT_VERSION,
  type BalconyLayout, type BotLayout, type BoxLayout, type CarrierLayout, type LevelLayout, type MeasurementUnit, type SiteLayout, type SkuLayout,
} from './layout.js';

export interface GenerateOptions {
  name?: string;
  levels: number;
  /** Storage spaces per level; the grid is rounded up to whole aisle blocks. */
  spacesPerLevel: number;
  balconiesPerLevel: number;
  chargersPerLevel: number;
  botsPerLevel: number;
  /** Share of storage spaces holding a carrier, 0..1. */
  carrierFill: number;
  /** Average boxes per carrier, 1..8 (a carrier has 8 sections). */
  boxesPerCarrier: number;
  skus: number;
  seed: number;
  /** Highway rows between the balconies and the storage (default 1). */
  highwayRows?: number;
  /** Rows from one highway cross aisle to the next (default 12). */
  crossEvery?: number;
  /** Width of the storage area over its height (default 1, near square); wider puts more storage near the balconies on row 0. */
  aspect?: number;
  /** Buffers beside each balcony's ports, 2..4 (default 2): where bots wait with the next carriers. */
  buffersPerBalcony?: number;
  /** Where the chargers are: down the left edge (default) or spread along the bottom edge, nearer bots on a wide level. */
  chargerEdge?: ChargerEdge;
}

export type ChargerEdge = 'left' | 'bottom';

const CROSS_EVERY = 12;
const SECTIONS = 8;
const PORTS_PER_BALCONY = 2;
const LOADED_SHARE = 0.85;

/** A small seeded PRNG (32-bit state, splitmix-style mixing): uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z ^= z >>> 16;
    return (z >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)];

/** Generates a valid site layout from the options; the same seed gives the same site. */
export function generateSite(options: GenerateOptions): SiteLayout {
  checkOptions(options);
  const rng = seededRandom(options.seed);
  const ids = { balcony: 1, bot: 1, carrier: 1, box: 1 };
  const levels: LevelLayout[] = [];
  const balconies: BalconyLayout[] = [];
  const storage: { level_id: number; x: number; y: number }[] = [];
  for (let li = 0; li < options.levels; li++) {
    const id = li + 1;
    const plan = planLevel(options, rng);
    const rows = drawLevel(plan);
    for (let b = 0; b < options.balconiesPerLevel; b++) {
      const x0 = balconyStart(plan, b);
      const ports = Array.from({ length: PORTS_PER_BALCONY }, (_, p) => ({ x: portX(plan, x0, p), y: 0 }));
      balconies.push({ id: ids.balcony++, level_id: id, ports });
    }
    rows.forEach((row, y) => {
      for (let x = 0; x < row.length; x++) if (row[x] === CELL_CHAR.storage) storage.push({ level_id: id, x, y });
    });
    levels.push({
      id,
      height: Math.round((0.3 + li * 1.25) * 100) / 100,
      grid: { width: plan.width, height: plan.height },
      rows,
      serial_device: 'sim',
      bots: placeBots(rows, options.botsPerLevel, rng, ids),
    });
  }
  const skus = makeSkus(options.skus, balconies, rng);
  const carriers = placeCarriers(storage, skus, options, rng, ids);
  return {
    version: LAYOUT_VERSION,
    name: options.name ?? `Generated site (seed ${options.seed})`,
    levels,
    balconies,
    carriers,
    skus: skus.map((s) => s.sku),
  };
}

function checkOptions(o: GenerateOptions): void {
  const whole = (name: keyof GenerateOptions, min: number): void => {
    const v = o[name];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${String(v)}`);
  };
  whole('levels', 1);
  whole('spacesPerLevel', 1);
  whole('balconiesPerLevel', 0);
  whole('chargersPerLevel', 0);
  whole('botsPerLevel', 0);
  whole('skus', 0);
  whole('seed', 0);
  if (!(o.carrierFill >= 0 && o.carrierFill <= 1)) throw new RangeError(`carrierFill must be within 0..1, got ${o.carrierFill}`);
  if (!(o.boxesPerCarrier >= 0 && o.boxesPerCarrier <= SECTIONS)) throw new RangeError(`boxesPerCarrier must be within 0..${SECTIONS}, got ${o.boxesPerCarrier}`);
  if (o.highwayRows !== undefined) whole('highwayRows', 1);
  // Cross aisles 1 row apart would leave no storage row between them.
  if (o.crossEvery !== undefined) whole('crossEvery', 2);
  if (o.aspect !== undefined && !(o.aspect >= 0.25 && o.aspect <= 16)) throw new RangeError(`aspect must be within 0.25..16, got ${o.aspect}`);
  // More than two a side would be three cells from the nearest port: too far to wait at (src/brain/worker/policy/places.ts).
  if (o.buffersPerBalcony !== undefined && !(Number.isInteger(o.buffersPerBalcony) && o.buffersPerBalcony >= 2 && o.buffersPerBalcony <= 4)) {
    throw new RangeError(`buffersPerBalcony must be an integer within 2..4, got ${String(o.buffersPerBalcony)}`);
  }
  if (o.chargerEdge !== undefined && o.chargerEdge !== 'left' && o.chargerEdge !== 'bottom') throw new RangeError(`chargerEdge must be left or bottom, got ${String(o.chargerEdge)}`);
}

// ---------------------------------------------------------------------------- grid

interface LevelPlan {
  width: number;
  height: number;
  /** Highway rows under the balconies: rows 1..highwayRows. */
  highwayRows: number;
  crossEvery: number;
  /** Buffers left and right of each balcony's ports. */
  buffersLeft: number;
  buffersRight: number;
  /** Lane depth on each side of each aisle block, left to right. */
  blocks: number[];
  balconies: number;
  chargers: number;
  chargerEdge: ChargerEdge;
}

/** Whether row y is a highway cross aisle: every `crossEvery` rows below the top highway, never next to the bottom one. */
function isCrossRow(y: number, plan: Pick<LevelPlan, 'height' | 'highwayRows' | 'crossEvery'>): boolean {
  const top = plan.highwayRows;
  return y > top && y < plan.height - 3 && (y - top) % plan.crossEvery === 0;
}

function planLevel(o: GenerateOptions, rng: Rng): LevelPlan {
  // About 0.76 of the interior ends up as storage; with aspect 1 the level is near square.
  const aspect = o.aspect ?? 1;
  const chargerEdge = o.chargerEdge ?? 'left';
  const interior = Math.max(3, chargerEdge === 'left' ? o.chargersPerLevel : 0, Math.round(Math.sqrt(o.spacesPerLevel / 0.76 / aspect)));
  const highwayRows = o.highwayRows ?? 1;
  const crossEvery = o.crossEvery ?? CROSS_EVERY;
  const height = interior + 3 + highwayRows;
  const rows = { height, highwayRows, crossEvery };
  let storageRows = 0;
  for (let y = highwayRows + 1; y <= height - 3; y++) if (!isCrossRow(y, rows)) storageRows++;
  const blocks: number[] = [];
  let spaces = 0;
  let width = 3; // charger column, ring column on the left, wall column on the right
  const buffers = o.buffersPerBalcony ?? 2;
  const buffersLeft = Math.ceil(buffers / 2);
  const buffersRight = buffers - buffersLeft;
  const topNeeded = o.balconiesPerLevel * (PORTS_PER_BALCONY + buffers + 1);
  const bottomNeeded = chargerEdge === 'bottom' ? o.chargersPerLevel : 0;
  while (spaces < o.spacesPerLevel || width - 4 < topNeeded || width - 2 < bottomNeeded) {
    const r = rng();
    const depth = r < 0.1 ? 1 : r < 0.4 ? 2 : 3;
    blocks.push(depth);
    spaces += 2 * depth * storageRows;
    width += 2 * depth + 1; // the block's storage and the aisle on its right
  }
  return { width, height, highwayRows, crossEvery, buffersLeft, buffersRight, blocks, balconies: o.balconiesPerLevel, chargers: o.chargersPerLevel, chargerEdge };
}

/** First x of balcony b's group of buffers and ports ("B P P B") on row 0. */
function balconyStart(plan: LevelPlan, b: number): number {
  const span = Math.floor((plan.width - 4) / plan.balconies);
  return 2 + b * span + Math.floor((span - (PORTS_PER_BALCONY + plan.buffersLeft + plan.buffersRight)) / 2);
}

/** x of port p (0-based) of the balcony whose group starts at x0. */
const portX = (plan: LevelPlan, x0: number, p: number): number => x0 + plan.buffersLeft + p;

function drawLevel(plan: LevelPlan): string[] {
  const { width, height } = plan;
  const grid = Array.from({ length: height }, () => new Array<string>(width).fill(CELL_CHAR.wall));
  const aisle = new Array<boolean>(width).fill(false);
  aisle[1] = true;
  let x = 2;
  const storageCol = new Array<boolean>(width).fill(false);
  for (const depth of plan.blocks) {
    for (let i = 0; i < 2 * depth; i++) storageCol[x++] = true;
    aisle[x++] = true;
  }
  for (let y = 1; y <= height - 2; y++) {
    const ring = y <= plan.highwayRows || y === height - 2 || isCrossRow(y, plan);
    for (let cx = 1; cx <= width - 2; cx++) {
      grid[y][cx] = ring || aisle[cx] ? CELL_CHAR.highway : storageCol[cx] ? CELL_CHAR.storage : CELL_CHAR.wall;
    }
  }
  for (let b = 0; b < plan.balconies; b++) {
    const x0 = balconyStart(plan, b);
    grid[0][x0] = CELL_CHAR.buffer;
    for (let i = 0; i < plan.buffersLeft; i++) grid[0][x0 + i] = CELL_CHAR.buffer;
    for (let p = 0; p < PORTS_PER_BALCONY; p++) grid[0][portX(plan, x0, p)] = CELL_CHAR.port;
    for (let i = 0; i < plan.buffersRight; i++) grid[0][portX(plan, x0, PORTS_PER_BALCONY) + i] = CELL_CHAR.buffer;
  }
  // Chargers spread down the left edge, each next to the ring's left column, or along the
  // bottom edge, each under the ring's bottom row.
  for (let c = 0; c < plan.chargers; c++) {
    if (plan.chargerEdge === 'bottom') grid[height - 1][1 + Math.floor(((c + 0.5) * (width - 2)) / plan.chargers)] = CELL_CHAR.charger;
    else grid[1 + Math.floor(((c + 0.5) * (height - 2)) / plan.chargers)][0] = CELL_CHAR.charger;
  }
  return grid.map((row) => row.join(''));
}

function placeBots(rows: string[], count: number, rng: Rng, ids: { bot: number }): BotLayout[] {
  const highway: { x: number; y: number }[] = [];
  rows.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) if (row[x] === CELL_CHAR.highway) highway.push({ x, y });
  });
  if (count > highway.length) throw new RangeError(`botsPerLevel ${count} exceeds the ${highway.length} highway cells of a level`);
  const step = highway.length / Math.max(1, count);
  return Array.from({ length: count }, (_, i) => ({
    id: ids.bot++,
    start: highway[Math.floor(i * step)],
    heading: pick(rng, HEADINGS),
  }));
}

// ---------------------------------------------------------------------------- inventory

interface SkuPlan {
  sku: SkuLayout;
  /** Items that fit one carrier section. */
  perSection: number;
}

function placeCarriers(
  spaces: { level_id: number; x: number; y: number }[],
  skus: SkuPlan[],
  o: GenerateOptions,
  rng: Rng,
  ids: { carrier: number; box: number },
): CarrierLayout[] {
  const carriers: CarrierLayout[] = [];
  for (const space of spaces) {
    if (rng() >= o.carrierFill) continue;
    carriers.push({ id: String(100000 + ids.carrier++), ...space, boxes: makeBoxes(o.boxesPerCarrier, skus, rng, ids) });
  }
  return carriers;
}

function boxCount(avg: number, rng: Rng): number {
  let n = Math.floor(avg) + (rng() < avg - Math.floor(avg) ? 1 : 0);
  // A symmetric +-1 keeps the mean while giving carriers some variety.
  const r = rng();
  if (r < 0.15 && n > 1 && n < SECTIONS) n--;
  else if (r > 0.85 && n > 1 && n < SECTIONS) n++;
  return n;
}

function makeBoxes(avg: number, skus: SkuPlan[], rng: Rng, ids: { box: number }): BoxLayout[] {
  const n = boxCount(avg, rng);
  const sizes = Array.from({ length: n }, (_, i) => Math.floor(SECTIONS / n) + (i < SECTIONS % n ? 1 : 0));
  for (let i = sizes.length - 1; i > 0; i--) {
    const j = int(rng, 0, i);
    [sizes[i], sizes[j]] = [sizes[j], sizes[i]];
  }
  const boxes: BoxLayout[] = [];
  let start = 0;
  for (const size of sizes) {
    const box: BoxLayout = { id: ids.box++, section_code: '0'.repeat(start) + '1'.repeat(size) + '0'.repeat(SECTIONS - start - size) };
    start += size;
    if (skus.length > 0 && rng() < LOADED_SHARE) {
      const plan = pick(rng, skus);
      const max = plan.perSection * size;
      box.load = { sku_id: plan.sku.id, item_count: int(rng, 0, max), item_count_max: max };
    }
    boxes.push(box);
  }
  return boxes;
}

// ---------------------------------------------------------------------------- SKUs

type NameMaker = (rng: Rng) => string;

interface Family {
  unit: MeasurementUnit;
  /** Range of items per carrier section. */
  perSection: [number, number];
  name: NameMaker;
}

const METALS = ['Stainless', 'Galvanised', 'Zinc-plated', 'Black oxide'];
const COLOURS = ['black', 'white', 'red', 'blue', 'yellow', 'green', 'grey'];
const THREADS = [3, 4, 5, 6, 8, 10, 12, 16];
const SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL'];

const FAMILIES: Family[] = [
  { unit: 'PIECE', perSection: [40, 200], name: (r) => `${pick(r, METALS)} hex bolt M${pick(r, THREADS)}×${pick(r, [12, 16, 20, 25, 30, 40, 50, 60, 80])}` },
  { unit: 'PIECE', perSection: [80, 400], name: (r) => `${pick(r, METALS)} hex nut M${pick(r, THREADS)}` },
  { unit: 'KILOGRAM', perSection: [2, 10], name: (r) => `Washer DIN 125 M${pick(r, THREADS)} ${pick(r, METALS).toLowerCase()}` },
  { unit: 'PACK', perSection: [5, 30], name: (r) => `Wood screw ${pick(r, [3, 3.5, 4, 4.5, 5, 6])}×${pick(r, [16, 20, 30, 40, 50, 60, 70])} Torx, box of ${pick(r, [100, 200, 500])}` },
  { unit: 'PACK', perSection: [3, 12], name: (r) => `Nitrile gloves size ${pick(r, SIZES)}, ${pick(r, ['blue', 'black', 'white'])}, box of 100` },
  { unit: 'PAIR', perSection: [4, 16], name: (r) => `${pick(r, ['Leather', 'Cut-resistant', 'Winter', 'Cotton'])} work gloves size ${pick(r, ['7', '8', '9', '10', '11'])}` },
  { unit: 'PACK', perSection: [5, 25], name: (r) => `Cable ties ${pick(r, [100, 140, 200, 300, 380])} mm ${pick(r, COLOURS)}, pack of 100` },
  { unit: 'METER', perSection: [50, 200], name: (r) => `Copper wire H07V-K ${pick(r, [0.75, 1, 1.5, 2.5, 4, 6])} mm² ${pick(r, COLOURS)}` },
  { unit: 'METER', perSection: [20, 100], name: (r) => `Heat shrink tube ${pick(r, [1.6, 2.4, 3.2, 4.8, 6.4, 9.5, 12.7])} mm ${pick(r, COLOURS)}` },
  { unit: 'PIECE', perSection: [50, 250], name: (r) => `Cable lug ${pick(r, [1.5, 2.5, 6, 10, 16, 25])} mm² M${pick(r, THREADS)}` },
  { unit: 'PIECE', perSection: [4, 20], name: (r) => `Duct tape ${pick(r, [38, 48, 50, 75])} mm × 50 m ${pick(r, COLOURS)}` },
  { unit: 'PIECE', perSection: [6, 24], name: (r) => `Safety glasses, ${pick(r, ['clear', 'tinted', 'yellow', 'anti-fog'])} lens` },
  { unit: 'PIECE', perSection: [10, 60], name: (r) => `Drill bit HSS-${pick(r, ['G', 'Co', 'TiN'])} ${pick(r, [2, 2.5, 3, 3.5, 4, 5, 6, 8, 10, 12])} mm` },
  { unit: 'PIECE', perSection: [20, 80], name: (r) => `Sanding disc ${pick(r, [115, 125, 150])} mm P${pick(r, [40, 60, 80, 120, 180, 240])}` },
  { unit: 'PIECE', perSection: [10, 40], name: (r) => `LED bulb ${pick(r, ['E27', 'E14', 'GU10'])} ${pick(r, [4, 6, 8, 10])} W ${pick(r, [2700, 3000, 4000])} K` },
  { unit: 'PACK', perSection: [6, 30], name: (r) => `${pick(r, ['AA', 'AAA', 'C', 'D', '9V'])} alkaline batteries, pack of ${pick(r, [4, 8, 10])}` },
  { unit: 'PIECE', perSection: [50, 300], name: (r) => `Fuse ${pick(r, [5, 6.3, 10, 16, 20, 32])} A ${pick(r, ['5×20 mm fast', '5×20 mm slow', 'blade'])}` },
  { unit: 'LITER', perSection: [2, 10], name: (r) => `${pick(r, ['Isopropyl alcohol 99%', 'Degreaser', 'Glass cleaner', 'Coolant concentrate'])}, ${pick(r, [1, 5])} l canister` },
  { unit: 'PIECE', perSection: [8, 30], name: (r) => `Grease cartridge ${pick(r, ['lithium', 'PTFE', 'copper', 'silicone'])} ${pick(r, [400, 500])} g` },
  { unit: 'PACK', perSection: [5, 20], name: (r) => `Blind rivets ${pick(r, [3.2, 4, 4.8])}×${pick(r, [6, 8, 10, 12, 16])} ${pick(r, ['aluminium', 'steel', 'stainless'])}, pack of 250` },
];

function makeSkus(count: number, balconies: BalconyLayout[], rng: Rng): SkuPlan[] {
  const names = new Set<string>();
  const plans: SkuPlan[] = [];
  for (let n = 1; n <= count; n++) {
    const family = pick(rng, FAMILIES);
    let name = family.name(rng);
    for (let attempt = 0; names.has(name) && attempt < 5; attempt++) name = family.name(rng);
    // Past a few thousand SKUs the word lists run out; a variant number keeps names apart.
    if (names.has(name)) name = `${name} (variant ${n})`;
    names.add(name);
    const sku: SkuLayout = { id: `SKU-${String(n).padStart(5, '0')}`, name, measurement_unit: family.unit };
    if (rng() < 0.1) sku.on_empty_sku_action = 'DO_NOTHING';
    if (balconies.length > 0 && rng() < 0.1) sku.balcony_ids = [pick(rng, balconies).id];
    plans.push({ sku, perSection: int(rng, family.perSection[0], family.perSection[1]) });
  }
  return plans;
}
