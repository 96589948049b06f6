/**
 * Loads a site layout file (or the embedded demo), checks it completely and derives the
 * facts the daemon needs at run time: cell kinds, lanes and depths of storage spaces,
 * highway cells, buffers, chargers and balcony ports. Every problem found is reported
 * with its JSON path, all of them at once, so a site engineer fixes a file in one pass.
 */
import { readFileSync } from 'node:fs';
import { Compile } from 'typebox/compile';
import {
  CELL_CHAR, HEADINGS, LEGEND, MAX_LANE_DEPTH, SiteLayoutSchema,
  type BalconyLayout, type BotLayout, type CarrierLayout, type CellKind, type Heading, type LevelLayout, type SiteLayout,
} from './layout.js';
import { demoLayout } from './demo.js';
import { codeDigits, overlaps, parseSectionCode } from '../inventory/section-code.js';

/** Raised when a layout cannot be used; `problems` holds every error, each prefixed by its JSON path. */
export class SiteError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid site layout:\n  - ${problems.join('\n  - ')}`);
    this.name = 'SiteError';
  }
}

export interface Cell {
  x: number;
  y: number;
}

/** A storage space; `lane` indexes `SiteLevel.lanes`, depth 1 is next to the highway. */
export interface StorageSpace {
  level_id: number;
  x: number;
  y: number;
  depth: number;
  lane: number;
}

/** A straight run of storage cells opening on one highway cell; `spaces[0]` has depth 1. */
export interface Lane {
  index: number;
  level_id: number;
  access: Cell;
  direction: Heading;
  spaces: StorageSpace[];
}

export interface SiteBalcony {
  id: number;
  level_id: number;
  ports: Cell[];
}

export interface SiteLevel {
  id: number;
  height: number;
  width: number;
  /** Number of grid rows. */
  rows: number;
  serial_device: string;
  bots: BotLayout[];
  highway: Cell[];
  storage: StorageSpace[];
  lanes: Lane[];
  buffers: Cell[];
  chargers: Cell[];
  ports: Cell[];
  rfid_tags: Cell[];
  balconies: SiteBalcony[];
  /** Kind of the cell, or undefined outside the grid. */
  kindAt(x: number, y: number): CellKind | undefined;
  /** The storage space at a cell, if it is one. */
  spaceAt(x: number, y: number): StorageSpace | undefined;
}

/** A validated site with its derived facts; `layout` is the source document. */
export interface Site {
  name: string;
  layout: SiteLayout;
  levels: SiteLevel[];
  balconies: SiteBalcony[];
  level(id: number): SiteLevel | undefined;
  kindAt(levelId: number, x: number, y: number): CellKind | undefined;
}

/** Loads `'demo'` (the embedded demo site) or a layout file path into a validated Site. */
export function loadSite(pathOrDemo: string): Site {
  if (pathOrDemo === 'demo') return buildSite(demoLayout());
  let text: string;
  try {
    text = readFileSync(pathOrDemo, 'utf8');
  } catch (err) {
    throw new SiteError([`${pathOrDemo}: cannot read: ${(err as Error).message}`]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SiteError([`${pathOrDemo}: not valid JSON: ${(err as Error).message}`]);
  }
  return buildSite(value);
}

/** Validates a parsed layout document and derives the Site, or throws SiteError. */
export function buildSite(value: unknown): Site {
  const layout = validateLayout(value);
  const levels = layout.levels.map((level) => deriveLevel(level, layout.balconies));
  const byId = new Map(levels.map((l) => [l.id, l]));
  return {
    name: layout.name,
    layout,
    levels,
    balconies: levels.flatMap((l) => l.balconies),
    level: (id) => byId.get(id),
    kindAt: (levelId, x, y) => byId.get(levelId)?.kindAt(x, y),
  };
}

/** Checks a parsed document against the schema and every semantic rule, or throws SiteError. */
export function validateLayout(value: unknown): SiteLayout {
  const schemaProblems = schemaErrors(value);
  // Semantic rules read fields the schema guarantees, so they run on a well-formed file only.
  if (schemaProblems.length > 0) throw new SiteError(schemaProblems);
  const layout = value as SiteLayout;
  const out = new Problems();
  checkSemantics(layout, out);
  if (out.list.length > 0) throw new SiteError(out.done());
  return layout;
}

// ---------------------------------------------------------------------------- schema

const checkLayout = Compile(SiteLayoutSchema);

/** `/levels/0/rows/3` -> `levels[0].rows[3]`. */
function jsonPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out === '' ? '(root)' : out;
}

function schemaErrors(value: unknown): string[] {
  const out = new Problems();
  for (const e of checkLayout.Errors(value)) {
    const at = jsonPath(e.instancePath);
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required') {
      for (const name of (params.requiredProperties as string[] | undefined) ?? []) out.add(`${join(at, name)}: required`);
    } else if (e.keyword === 'additionalProperties') {
      for (const name of (params.additionalProperties as string[] | undefined) ?? []) out.add(`${join(at, name)}: unknown field`);
    } else if (e.keyword !== 'boolean') {
      out.add(`${at}: ${e.message}`);
    }
  }
  return out.done();
}

const join = (at: string, name: string): string => (at === '(root)' ? name : `${at}.${name}`);

/** Collects problems, capped so a wildly wrong file still gives a readable report. */
class Problems {
  static readonly MAX = 500;
  readonly list: string[] = [];
  private dropped = 0;

  add(problem: string): void {
    if (this.list.length < Problems.MAX) this.list.push(problem);
    else this.dropped++;
  }

  done(): string[] {
    return this.dropped > 0 ? [...this.list, `... and ${this.dropped} more problems`] : this.list;
  }
}

// ---------------------------------------------------------------------------- grids

// Kind codes in a Uint8Array keep a 100,000-cell level cheap to hold and to scan.
const KINDS: CellKind[] = ['wall', 'highway', 'storage', 'buffer', 'port', 'charger'];

/** Cells a carrier can stand on by itself; anywhere else it is on a bot. */
export const CARRIER_PLACES: ReadonlySet<CellKind | undefined> = new Set<CellKind>(['storage', 'buffer', 'port']);
const CODE = Object.fromEntries(KINDS.map((k, i) => [k, i])) as Record<CellKind, number>;
const CHAR_CODE: Record<string, number> = Object.fromEntries(Object.entries(LEGEND).map(([c, k]) => [c, CODE[k]]));
const LEGEND_TEXT = Object.keys(LEGEND).join(' ');

// N, E, S, W as in HEADINGS: N is towards row 0.
const DX = [0, 1, 0, -1];
const DY = [-1, 0, 1, 0];
const opposite = (d: number): number => (d + 2) % 4;

interface Grid {
  width: number;
  height: number;
  kinds: Uint8Array;
}

/** Reads the rows into kind codes; bad characters and missing cells count as walls. */
function readGrid(level: LevelLayout, at: string, out: Problems): Grid {
  const { width, height } = level.grid;
  const kinds = new Uint8Array(width * height);
  if (level.rows.length !== height) out.add(`${at}.rows: ${level.rows.length} rows, expected ${height} (grid.height)`);
  for (let y = 0; y < Math.min(height, level.rows.length); y++) {
    const row = level.rows[y];
    if (row.length !== width) out.add(`${at}.rows[${y}]: length ${row.length}, expected ${width}`);
    for (let x = 0; x < Math.min(width, row.length); x++) {
      const code = CHAR_CODE[row[x]];
      if (code === undefined) out.add(`${at}.rows[${y}][${x}]: unknown cell character ${JSON.stringify(row[x])} (legend: ${LEGEND_TEXT})`);
      else kinds[y * width + x] = code;
    }
  }
  return { width, height, kinds };
}

const inside = (g: Grid, x: number, y: number): boolean => x >= 0 && y >= 0 && x < g.width && y < g.height;
const kindOf = (g: Grid, x: number, y: number): number => (inside(g, x, y) ? g.kinds[y * g.width + x] : CODE.wall);

/** Lane and depth of every storage cell; -1 where a storage cell reaches no highway. */
interface Lanes {
  depth: Int8Array;
  lane: Int32Array;
  lanes: { access: number; dir: number; cells: number[] }[];
}

/**
 * The lane rule: a storage cell next to a highway cell has depth 1 and opens a lane
 * pointing away from that highway cell; a storage cell directly behind a depth-d cell of a
 * lane (in the lane's direction) has depth d+1 in the same lane, up to MAX_LANE_DEPTH.
 * Where two lanes could take a cell, the shallower one wins, then the first neighbour in
 * N, E, S, W order. So depth is the distance along the row or column to the nearest
 * highway cell, and every lane is straight and unbroken.
 */
function deriveLanes(g: Grid): Lanes {
  const depth = new Int8Array(g.kinds.length);
  const lane = new Int32Array(g.kinds.length).fill(-1);
  const lanes: Lanes['lanes'] = [];
  let pending: number[] = [];
  for (let i = 0; i < g.kinds.length; i++) if (g.kinds[i] === CODE.storage) pending.push(i);
  for (let d = 1; d <= MAX_LANE_DEPTH && pending.length > 0; d++) {
    const next: number[] = [];
    for (const i of pending) {
      const x = i % g.width;
      const y = (i - x) / g.width;
      let taken = false;
      for (let dir = 0; dir < 4 && !taken; dir++) {
        const nx = x + DX[dir];
        const ny = y + DY[dir];
        if (!inside(g, nx, ny)) continue;
        const n = ny * g.width + nx;
        // The lane runs from its access towards this cell, i.e. opposite to `dir`.
        if (d === 1 && g.kinds[n] === CODE.highway) {
          lane[i] = lanes.length;
          lanes.push({ access: n, dir: opposite(dir), cells: [i] });
          taken = true;
        } else if (d > 1 && depth[n] === d - 1 && lanes[lane[n]].dir === opposite(dir)) {
          lane[i] = lane[n];
          lanes[lane[n]].cells.push(i);
          taken = true;
        }
      }
      // Depth is written after the pass so a cell taken now cannot extend a lane in the same pass.
      if (taken) depth[i] = -d;
      else next.push(i);
    }
    for (const i of pending) if (depth[i] === -d) depth[i] = d;
    pending = next;
  }
  return { depth, lane, lanes };
}

/** Number of separate highway networks and one cell of each network after the first. */
function highwayIslands(g: Grid): number[] {
  const seen = new Uint8Array(g.kinds.length);
  const islands: number[] = [];
  const stack: number[] = [];
  for (let start = 0; start < g.kinds.length; start++) {
    if (g.kinds[start] !== CODE.highway || seen[start]) continue;
    islands.push(start);
    seen[start] = 1;
    stack.push(start);
    while (stack.length > 0) {
      const i = stack.pop()!;
      const x = i % g.width;
      const y = (i - x) / g.width;
      for (let dir = 0; dir < 4; dir++) {
        const nx = x + DX[dir];
        const ny = y + DY[dir];
        const n = ny * g.width + nx;
        if (inside(g, nx, ny) && g.kinds[n] === CODE.highway && !seen[n]) {
          seen[n] = 1;
          stack.push(n);
        }
      }
    }
  }
  return islands;
}

function nextToHighway(g: Grid, x: number, y: number): boolean {
  for (let dir = 0; dir < 4; dir++) if (kindOf(g, x + DX[dir], y + DY[dir]) === CODE.highway) return true;
  return false;
}

// ---------------------------------------------------------------------------- semantics

function checkSemantics(layout: SiteLayout, out: Problems): void {
  const grids = new Map<number, Grid>();
  const levelIds = new Set<number>();
  const botIds = new Set<number>();
  layout.levels.forEach((level, li) => {
    const at = `levels[${li}]`;
    if (levelIds.has(level.id)) out.add(`${at}.id: duplicate level id ${level.id}`);
    levelIds.add(level.id);
    const grid = readGrid(level, at, out);
    if (!grids.has(level.id)) grids.set(level.id, grid);
    checkLevelCells(grid, at, out);
    checkBots(level, grid, at, botIds, out);
    checkRfidTags(level, grid, at, out);
  });
  const portOwner = checkBalconies(layout.balconies, grids, out);
  reportPortsWithoutBalcony(layout.levels, grids, portOwner, out);
  const skuIds = checkSkus(layout, out);
  checkCarriers(layout.carriers, grids, skuIds, out);
}

function checkLevelCells(g: Grid, at: string, out: Problems): void {
  const islands = highwayIslands(g);
  if (islands.length === 0) out.add(`${at}.rows: no highway cell ('${CELL_CHAR.highway}')`);
  for (const i of islands.slice(1)) {
    const x0 = islands[0] % g.width;
    out.add(`${at}.rows[${Math.floor(i / g.width)}][${i % g.width}]: highway cell not connected to the highway at (${x0}, ${(islands[0] - x0) / g.width})`);
  }
  const { depth } = deriveLanes(g);
  for (let i = 0; i < g.kinds.length; i++) {
    const kind = g.kinds[i];
    const x = i % g.width;
    const y = (i - x) / g.width;
    if (kind === CODE.storage && depth[i] <= 0) {
      out.add(`${at}.rows[${y}][${x}]: storage cell reaches no highway cell within ${MAX_LANE_DEPTH} cells along its row or column`);
    } else if ((kind === CODE.buffer || kind === CODE.port || kind === CODE.charger) && !nextToHighway(g, x, y)) {
      out.add(`${at}.rows[${y}][${x}]: ${KINDS[kind]} cell has no highway cell next to it`);
    }
  }
}

function checkBots(level: LevelLayout, g: Grid, at: string, botIds: Set<number>, out: Problems): void {
  const occupied = new Set<number>();
  level.bots.forEach((bot, bi) => {
    const where = `${at}.bots[${bi}]`;
    if (botIds.has(bot.id)) out.add(`${where}.id: duplicate bot id ${bot.id}`);
    botIds.add(bot.id);
    const { x, y } = bot.start;
    const kind = kindOf(g, x, y);
    if (!inside(g, x, y)) out.add(`${where}.start: (${x}, ${y}) is outside the ${g.width}×${g.height} grid`);
    else if (kind !== CODE.highway && kind !== CODE.charger) out.add(`${where}.start: (${x}, ${y}) is a ${KINDS[kind]} cell, expected highway or charger`);
    const i = y * g.width + x;
    if (inside(g, x, y) && occupied.has(i)) out.add(`${where}.start: another bot already starts at (${x}, ${y})`);
    occupied.add(i);
  });
}

function checkRfidTags(level: LevelLayout, g: Grid, at: string, out: Problems): void {
  const seen = new Set<number>();
  level.rfid_tags?.forEach(({ x, y }, ti) => {
    const where = `${at}.rfid_tags[${ti}]`;
    if (!inside(g, x, y)) out.add(`${where}: (${x}, ${y}) is outside the ${g.width}×${g.height} grid`);
    else if (g.kinds[y * g.width + x] === CODE.wall) out.add(`${where}: (${x}, ${y}) is a wall cell`);
    else if (seen.has(y * g.width + x)) out.add(`${where}: duplicate tag at (${x}, ${y})`);
    seen.add(y * g.width + x);
  });
}

/** Checks balconies; returns which balcony owns each port cell, keyed `level:x:y`. */
function checkBalconies(balconies: BalconyLayout[], grids: Map<number, Grid>, out: Problems): Map<string, number> {
  const ids = new Set<number>();
  const owner = new Map<string, number>();
  balconies.forEach((b, bi) => {
    const at = `balconies[${bi}]`;
    if (ids.has(b.id)) out.add(`${at}.id: duplicate balcony id ${b.id}`);
    ids.add(b.id);
    const g = grids.get(b.level_id);
    if (g === undefined) {
      out.add(`${at}.level_id: no level ${b.level_id}`);
      return;
    }
    b.ports.forEach(({ x, y }, pi) => {
      const where = `${at}.ports[${pi}]`;
      if (!inside(g, x, y)) out.add(`${where}: (${x}, ${y}) is outside the grid of level ${b.level_id}`);
      else if (g.kinds[y * g.width + x] !== CODE.port) out.add(`${where}: (${x}, ${y}) on level ${b.level_id} is a ${KINDS[g.kinds[y * g.width + x]]} cell, expected a port ('${CELL_CHAR.port}')`);
      const key = `${b.level_id}:${x}:${y}`;
      const other = owner.get(key);
      if (other !== undefined) out.add(`${where}: (${x}, ${y}) is already a port of balcony ${other}`);
      else owner.set(key, b.id);
    });
  });
  return owner;
}

// A port cell no balcony claims is almost always a typo in one of the two places.
function reportPortsWithoutBalcony(levels: LevelLayout[], grids: Map<number, Grid>, owner: Map<string, number>, out: Problems): void {
  levels.forEach((level, li) => {
    const g = grids.get(level.id);
    if (g === undefined || levels.findIndex((l) => l.id === level.id) !== li) return;
    for (let i = 0; i < g.kinds.length; i++) {
      if (g.kinds[i] !== CODE.port) continue;
      const x = i % g.width;
      const y = (i - x) / g.width;
      if (!owner.has(`${level.id}:${x}:${y}`)) out.add(`levels[${li}].rows[${y}][${x}]: port cell belongs to no balcony`);
    }
  });
}

function checkSkus(layout: SiteLayout, out: Problems): Set<string> {
  const ids = new Set<string>();
  const balconyIds = new Set(layout.balconies.map((b) => b.id));
  layout.skus.forEach((sku, si) => {
    if (ids.has(sku.id)) out.add(`skus[${si}].id: duplicate SKU id ${JSON.stringify(sku.id)}`);
    ids.add(sku.id);
    sku.balcony_ids?.forEach((id, bi) => {
      if (!balconyIds.has(id)) out.add(`skus[${si}].balcony_ids[${bi}]: no balcony ${id}`);
    });
  });
  return ids;
}

function checkCarriers(carriers: CarrierLayout[], grids: Map<number, Grid>, skuIds: Set<string>, out: Problems): void {
  const ids = new Set<string>();
  const boxIds = new Set<number>();
  const cells = new Map<string, string>();
  carriers.forEach((c, ci) => {
    const at = `carriers[${ci}]`;
    if (ids.has(c.id)) out.add(`${at}.id: duplicate carrier id ${JSON.stringify(c.id)}`);
    ids.add(c.id);
    const g = grids.get(c.level_id);
    if (g === undefined) out.add(`${at}.level_id: no level ${c.level_id}`);
    else if (!inside(g, c.x, c.y)) out.add(`${at}: (${c.x}, ${c.y}) is outside the grid of level ${c.level_id}`);
    else {
      const kind = g.kinds[c.y * g.width + c.x];
      // A port too: a carrier may stand at a balcony when the layout is written (the simulator's
      // layout after a restart holds the carriers where the store says they are).
      if (!CARRIER_PLACES.has(KINDS[kind])) out.add(`${at}: (${c.x}, ${c.y}) on level ${c.level_id} is a ${KINDS[kind]} cell, expected storage, buffer or port`);
      const key = `${c.level_id}:${c.x}:${c.y}`;
      const other = cells.get(key);
      if (other !== undefined) out.add(`${at}: carrier ${JSON.stringify(other)} already stands at (${c.x}, ${c.y}) on level ${c.level_id}`);
      else cells.set(key, c.id);
    }
    checkBoxes(c, at, boxIds, skuIds, out);
  });
}

function checkBoxes(c: CarrierLayout, at: string, boxIds: Set<number>, skuIds: Set<string>, out: Problems): void {
  // Overlap is judged on the canonical 32-bit code, as the inventory judges it: a legacy
  // "10000000" and a 32-digit "1000...0" take the same section and may not share a carrier.
  const owners: { index: number; code32: number }[] = [];
  c.boxes?.forEach((box, bi) => {
    const where = `${at}.boxes[${bi}]`;
    if (boxIds.has(box.id)) out.add(`${where}.id: duplicate box id ${box.id}`);
    boxIds.add(box.id);
    const code32 = canonicalCode(box.section_code);
    if (code32 === 0) out.add(`${where}.section_code: takes no section (no 1 digit)`);
    const clashes = owners.filter((o) => overlaps(o.code32, code32)).map((o) => `boxes[${o.index}]`);
    if (clashes.length > 0) out.add(`${where}.section_code: overlaps ${clashes.join(', ')} of the carrier (canonical code ${codeDigits(code32, 32)})`);
    owners.push({ index: bi, code32 });
    const load = box.load;
    if (load === undefined) return;
    if (!skuIds.has(load.sku_id)) out.add(`${where}.load.sku_id: unknown SKU ${JSON.stringify(load.sku_id)}`);
    if (load.item_count > load.item_count_max) out.add(`${where}.load.item_count: ${load.item_count} is more than item_count_max ${load.item_count_max}`);
  });
}

/** The canonical code of a section code the schema has accepted; 0 when it takes no section. */
function canonicalCode(digits: string): number {
  try {
    return parseSectionCode(digits);
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------- derived site

function deriveLevel(level: LevelLayout, balconies: BalconyLayout[]): SiteLevel {
  const g: Grid = { width: level.grid.width, height: level.grid.height, kinds: new Uint8Array(level.grid.width * level.grid.height) };
  for (let y = 0; y < g.height; y++) for (let x = 0; x < g.width; x++) g.kinds[y * g.width + x] = CHAR_CODE[level.rows[y][x]];
  const derived = deriveLanes(g);
  const cell = (i: number): Cell => ({ x: i % g.width, y: Math.floor(i / g.width) });
  const spaceIndex = new Int32Array(g.kinds.length).fill(-1);
  const storage: StorageSpace[] = [];
  const highway: Cell[] = [];
  const buffers: Cell[] = [];
  const chargers: Cell[] = [];
  const ports: Cell[] = [];
  for (let i = 0; i < g.kinds.length; i++) {
    const kind = g.kinds[i];
    if (kind === CODE.storage) {
      spaceIndex[i] = storage.length;
      storage.push({ level_id: level.id, ...cell(i), depth: derived.depth[i], lane: derived.lane[i] });
    } else if (kind === CODE.highway) highway.push(cell(i));
    else if (kind === CODE.buffer) buffers.push(cell(i));
    else if (kind === CODE.charger) chargers.push(cell(i));
    else if (kind === CODE.port) ports.push(cell(i));
  }
  const lanes: Lane[] = derived.lanes.map((l, index) => ({
    index,
    level_id: level.id,
    access: cell(l.access),
    direction: HEADINGS[l.dir],
    spaces: l.cells.map((i) => storage[spaceIndex[i]]),
  }));
  return {
    id: level.id,
    height: level.height,
    width: g.width,
    rows: g.height,
    serial_device: level.serial_device,
    bots: level.bots,
    highway,
    storage,
    lanes,
    buffers,
    chargers,
    ports,
    rfid_tags: level.rfid_tags ?? highway,
    balconies: balconies
      .filter((b) => b.level_id === level.id)
      .map((b) => ({ id: b.id, level_id: b.level_id, ports: b.ports.map(({ x, y }) => ({ x, y })) })),
    kindAt: (x, y) => (inside(g, x, y) ? KINDS[g.kinds[y * g.width + x]] : undefined),
    spaceAt: (x, y) => (inside(g, x, y) && spaceIndex[y * g.width + x] >= 0 ? storage[spaceIndex[y * g.width + x]] : undefined),
  };
}
