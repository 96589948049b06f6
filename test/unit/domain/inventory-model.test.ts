// Random sequences of SKU, box, load, swap and carrier-move operations against the real store:
// after each step the SKU totals equal the sum of their loads, no two boxes on a carrier share
// a section, every box is on a carrier and carries its level, the `empty` index holds exactly
// the empty boxes, the inventory view has exactly one row per box and per
// empty space, every row's eta and every eta-sorted list equal a brute-force computation, and a
// refused operation changed nothing.
import t from 'tap';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { DomainError } from '../../../src/domain/errors.js';
import { Inventory } from '../../../src/domain/inventory/inventory.js';
import { InventoryView, type InventoryRow } from '../../../src/domain/inventory/view.js';
import { LevelEta, laneEta } from '../../../src/domain/inventory/eta.js';
import { executeList, parseListQuery } from '../../../src/domain/list/index.js';
import { inventoryFields } from '../../../src/http/routes/inventory.js';
import { boxes, carriers, emptyBoxesOf, INVENTORY_COLLECTIONS, skus, type BoxRecord } from '../../../src/domain/inventory/records.js';
import { boxSizeKey, overlaps, sectionCount } from '../../../src/domain/inventory/section-code.js';
import { buildSite, type Site, type SiteLevel } from '../../../src/domain/site/load.js';
import { MEASUREMENT_UNITS, type SiteLayout } from '../../../src/domain/site/layout.js';
import { smallSite } from '../../fixtures/small-site.js';

interface World {
  store: Store;
  site: Site;
  inventory: Inventory;
  view: InventoryView;
  dir: string;
}

/** The small site with a buffer at (5, 0), where carriers in front of others are set aside. */
function siteWithBuffer(): SiteLayout {
  const layout = smallSite();
  layout.levels[0]!.rows[0] = '#PP##B##';
  return layout;
}

async function world(layout: SiteLayout = siteWithBuffer()): Promise<World> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-inv-'));
  const store = await Store.open({ dir }, [...INVENTORY_COLLECTIONS]);
  const site = buildSite(layout);
  const view = new InventoryView(site, store);
  let clock = 1_700_000_000_000;
  const inventory = new Inventory({ store, site, view, now: () => (clock += 1000) });
  await inventory.seedFromLayout();
  view.build();
  return { store, site, inventory, view, dir };
}

async function dispose(w: World): Promise<void> {
  await w.store.close();
  rmSync(w.dir, { recursive: true, force: true });
}

/** Everything the store holds about inventory, for "changed nothing" checks. */
function snapshot(w: World): string {
  return JSON.stringify([skus, carriers, boxes].map((def) => [...w.store.collection(def as never).scan()]).concat([[w.store.sequence('box')]]));
}

/** Every invariant of the inventory; returns the broken ones. */
function broken(w: World): string[] {
  const out: string[] = [];
  const allBoxes = [...w.store.collection(boxes).scan()];
  const carrierIds = new Set([...w.store.collection(carriers).scan()].map((c) => c.id));
  const totals = new Map<string, { q: number; m: number; n: number; s: number }>();
  const byCarrier = new Map<string, BoxRecord[]>();
  for (const b of allBoxes) {
    if (!carrierIds.has(b.carrier_id)) out.push(`box ${b.id} on unknown carrier ${b.carrier_id}`);
    for (const other of byCarrier.get(b.carrier_id) ?? []) {
      if (overlaps(other.code32, b.code32)) out.push(`boxes ${other.id} and ${b.id} overlap`);
    }
    byCarrier.set(b.carrier_id, [...(byCarrier.get(b.carrier_id) ?? []), b]);
    if (b.load) {
      if (b.load.item_count < 0 || b.load.item_count > b.load.item_count_max) out.push(`box ${b.id} count out of range`);
      const tt = totals.get(b.load.sku_id) ?? { q: 0, m: 0, n: 0, s: 0 };
      tt.q += b.load.item_count;
      tt.m += b.load.item_count_max;
      tt.n += 1;
      tt.s += sectionCount(b.code32);
      totals.set(b.load.sku_id, tt);
    }
  }
  for (const sku of w.store.collection(skus).scan()) {
    const tt = totals.get(sku.id) ?? { q: 0, m: 0, n: 0, s: 0 };
    if (sku.total_quantity !== tt.q || sku.max_quantity !== tt.m || sku.load_count !== tt.n || sku.sections !== tt.s) {
      out.push(`SKU ${sku.id} totals ${JSON.stringify([sku.total_quantity, sku.max_quantity, sku.load_count, sku.sections])} != ${JSON.stringify([tt.q, tt.m, tt.n, tt.s])}`);
    }
    if (sku.total_positive_inventory_bookings + sku.total_negative_inventory_bookings !== sku.total_quantity) out.push(`SKU ${sku.id} bookings do not add up`);
    if (sku.deleted_at !== null && sku.load_count > 0) out.push(`deleted SKU ${sku.id} holds loads`);
  }

  // The SKU list finds and counts measurement_unit__in through the view: it must match the store.
  for (const unit of MEASUREMENT_UNITS) {
    const ids = [...w.store.collection(skus).scan()].filter((s) => s.measurement_unit === unit).map((s) => s.id);
    if (JSON.stringify(w.view.skuIdsWithUnit(unit)) !== JSON.stringify(ids)) out.push(`view lists SKUs ${w.view.skuIdsWithUnit(unit)} of ${unit}, the store ${ids}`);
  }

  // The view: one row per box, one per empty storage space, and nothing else.
  const rows = [...w.view.scan()];
  const expected = new Set(allBoxes.map((b) => `box-${b.id}`));
  const carrierAt = new Map([...w.store.collection(carriers).scan()].map((c) => [`${c.level_id}:${c.x}:${c.y}`, c.id]));
  for (const level of w.site.levels) {
    for (const s of level.storage) {
      const c = carrierAt.get(`${level.id}:${s.x}:${s.y}`);
      if (c === undefined || !byCarrier.has(c)) expected.add(`space-${level.id}-${s.x}-${s.y}`);
    }
  }
  const ids = rows.map((r) => r.id);
  if (new Set(ids).size !== ids.length) out.push('duplicate view rows');
  const missing = [...expected].filter((id) => !ids.includes(id));
  const extra = ids.filter((id) => !expected.has(id));
  if (missing.length > 0 || extra.length > 0) out.push(`view rows: missing ${missing.join(',')} extra ${extra.join(',')}`);
  for (const b of allBoxes) {
    const row = rows.find((r) => r.id === `box-${b.id}`);
    if (row && (row.code32 !== b.code32 || row.carrier_id !== b.carrier_id || row.sku_id !== (b.load?.sku_id ?? null) || row.item_count !== (b.load?.item_count ?? null))) {
      out.push(`row of box ${b.id} is stale`);
    }
  }
  // Each box carries its carrier's level, and the `empty` index holds exactly the empty boxes.
  const levelOf = new Map([...w.store.collection(carriers).scan()].map((c) => [c.id, c.level_id]));
  for (const b of allBoxes) if (b.level_id !== (levelOf.get(b.carrier_id) ?? null)) out.push(`box ${b.id} says level ${b.level_id}, its carrier ${b.carrier_id} is on ${levelOf.get(b.carrier_id)}`);
  const indexed = [...w.store.collection(boxes).keysWithin('empty', { low: '', high: '\uffff' })].sort((a, b) => Number(a) - Number(b));
  const empty = allBoxes.filter((b) => b.load === null).map((b) => b.id).sort((a, b) => a - b);
  if (JSON.stringify(indexed) !== JSON.stringify(empty)) out.push(`empty index holds ${indexed}, the empty boxes are ${empty}`);
  out.push(...etaProblems(w));
  return out;
}

const etaModels = new WeakMap<SiteLevel, LevelEta>();

/**
 * A row's eta computed from the carriers in the store alone: fetching it from its depth plus
 * setting aside each carrier standing in front of it in its lane (or the off-lane estimate
 * from its own cell); null for a space without a carrier.
 */
function bruteEta(w: World, row: InventoryRow): number | null {
  if (row.carrier_id === null) return null;
  const carrier = w.store.collection(carriers).get(row.carrier_id)!;
  const level = w.site.level(carrier.level_id)!;
  let model = etaModels.get(level);
  if (!model) etaModels.set(level, (model = new LevelEta(level)));
  const space = level.spaceAt(carrier.x, carrier.y);
  if (!space) return model.offLane(carrier.x, carrier.y) ?? null;
  const lane = level.lanes[space.lane]!;
  const occupied = new Set([...w.store.collection(carriers).scan()].filter((c) => c.level_id === level.id).map((c) => `${c.x}:${c.y}`));
  let aside: number | undefined = 0;
  for (const s of lane.spaces.filter((s) => s.depth < space.depth && occupied.has(`${s.x}:${s.y}`))) {
    const cost = model.setAside(lane, s.depth);
    aside = aside === undefined || cost === undefined ? undefined : aside + cost;
  }
  return laneEta(model.fetch(lane, space.depth), aside);
}

const FIELDS = inventoryFields();

/** Lists sorted by eta, with the rows each must hold (checked by brute force). */
const ETA_LISTS: { params: Record<string, unknown>; keep: (r: InventoryRow) => boolean }[] = [
  { params: { sort_by: 'eta' }, keep: () => true },
  { params: { sort_by: '-eta' }, keep: () => true },
  { params: { level_id__in: [1], sort_by: '-eta' }, keep: (r) => r.level_id === 1 },
  { params: { sku_id__eq: 'A', sort_by: 'eta' }, keep: (r) => r.sku_id === 'A' },
  { params: { sku_id__eq: 'none', sort_by: '-eta_int' }, keep: (r) => r.box_id !== null && r.sku_id === null },
  { params: { depth__gte: 2, sort_by: '-eta,box_id' }, keep: (r) => r.depth !== null && r.depth >= 2 },
  { params: { search: 'sku_name:bolt', sort_by: 'eta,-item_count' }, keep: (r) => (r.sku?.facts?.name ?? '').toLowerCase().includes('bolt') },
];

/** Rows whose eta is not the brute-force one, and eta-sorted lists not in brute-force order. */
function etaProblems(w: World): string[] {
  const out: string[] = [];
  const rows = [...w.view.scan()];
  for (const row of rows) {
    const eta = bruteEta(w, row);
    if (row.eta !== eta) out.push(`row ${row.id} eta ${row.eta}, expected ${eta}`);
  }
  for (const { params, keep } of ETA_LISTS) {
    const keys = String(params.sort_by).split(',').map((k) => ({ f: k.replace(/^[+-]/, ''), s: k.startsWith('-') ? -1 : 1 }));
    const value = (r: InventoryRow, f: string): unknown => (f === 'eta_int' ? (r.eta === null ? null : Math.round(r.eta)) : (r as unknown as Record<string, unknown>)[f]);
    // Missing values last ascending, first descending; ties in scan order (the store's order).
    const expected = rows.map((r, i) => ({ r, i })).filter(({ r }) => keep(r)).sort((a, b) => {
      for (const { f, s } of keys) {
        const x = value(a.r, f) as number | null;
        const y = value(b.r, f) as number | null;
        if (x === y) continue;
        if (x === null) return s;
        if (y === null) return -s;
        return x < y ? -s : s;
      }
      return a.i - b.i;
    }).map(({ r }) => r.id);
    for (const plan of ['walk', 'sort', 'auto'] as const) {
      for (const [page, size] of [[1, 1000], [2, 3]] as const) {
        const query = parseListQuery(FIELDS, { ...params, page, size }, { maxPageSize: 1000, timeZone: 'Europe/Berlin' });
        const got = executeList(FIELDS, w.view, query, plan);
        const want = expected.slice((page - 1) * size, page * size);
        if (got.total !== expected.length || JSON.stringify(got.items.map((r) => r.id)) !== JSON.stringify(want)) {
          out.push(`${JSON.stringify(params)} page ${page} (${plan}): ${got.items.map((r) => r.id).join(',')} of ${got.total}, expected ${want.join(',')} of ${expected.length}`);
        }
      }
    }
  }
  return out;
}

/**
 * Moves a carrier to a free storage space or highway cell, as the brain's commits do, and
 * refreshes the view as the app does after them.
 */
async function moveCarrier(w: World, id: string, pick: number): Promise<void> {
  const c = w.store.collection(carriers).get(id);
  if (!c) return;
  const level = w.site.level(c.level_id)!;
  const taken = new Set([...w.store.collection(carriers).scan()].map((x) => `${x.x}:${x.y}`));
  const free = [...level.storage, ...level.highway].filter((p) => !taken.has(`${p.x}:${p.y}`));
  const to = free[pick % free.length]!;
  await w.store.write(() => w.store.collection(carriers).put({ ...c, x: to.x, y: to.y, updated_at: c.updated_at + 1 }));
  w.view.refreshCarriers([id]);
}

const skuId = fc.constantFrom('A', 'B', 'C', 'D');
const carrierId = fc.constantFrom('C1', 'C2', 'C3', 'C4', 'NOPE');
const boxId = fc.integer({ min: 1, max: 7 });
const code = fc.oneof(
  fc.constantFrom('11110000', '00001111', '1', '10', '11000000', '00110000', '1'.repeat(32), '1'.repeat(16), '0'.repeat(16), '101', '1'.repeat(9), '2'),
  fc.integer({ min: -1, max: 256 }),
  fc.integer({ min: 1, max: 0xffffffff }).map((n) => n.toString(2).padStart(32, '0')),
);
const count = fc.integer({ min: -1, max: 12 });

type Op = { name: string; run(inv: Inventory, w: World): Promise<unknown> };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.tuple(fc.constantFrom('C1', 'C2', 'C3', 'C4'), fc.nat()).map(([c, pick]) => ({
    name: `move ${c} ${pick}`, run: (_inv: Inventory, w: World) => moveCarrier(w, c, pick),
  })),
  fc.tuple(skuId, fc.option(fc.dictionary(fc.constantFrom('1', '1/2', '1/4', '1/8', '3/32'), fc.integer({ min: 1, max: 12 })), { nil: undefined })).map(([id, caps]) => ({
    name: `createSku ${id}`, run: (inv: Inventory) => inv.createSku(id, { name: `SKU ${id}`, measurement_unit: caps ? 'PACK' : 'PIECE', allowed_box_size_capacities: caps ?? null }),
  })),
  fc.tuple(skuId, fc.dictionary(fc.constantFrom('1', '1/2', '1/4', '1/8', '3/32'), fc.integer({ min: 1, max: 12 }))).map(([id, caps]) => ({
    name: `patchSku ${id} ${JSON.stringify(caps)}`, run: (inv: Inventory) => inv.patchSku(id, { allowed_box_size_capacities: caps, name: 'renamed', measurement_unit: Object.keys(caps).length % 2 ? 'METER' : 'PAIR' }),
  })),
  skuId.map((id) => ({ name: `deleteSku ${id}`, run: (inv: Inventory) => inv.deleteSku(id) })),
  fc.tuple(carrierId, code).map(([c, k]) => ({ name: `createBox ${c} ${k}`, run: (inv: Inventory) => inv.createBox(c, { section_code: k }) })),
  fc.tuple(boxId, code).map(([b, k]) => ({ name: `patchBox ${b} ${k}`, run: (inv: Inventory) => inv.patchBox(b, { section_code: k }) })),
  boxId.map((b) => ({ name: `deleteBox ${b}`, run: (inv: Inventory) => inv.deleteBox(b) })),
  fc.tuple(boxId, boxId).map(([a, b]) => ({ name: `swap ${a} ${b}`, run: (inv: Inventory) => inv.swapBoxes(a, b) })),
  fc.array(fc.record({ box_id: boxId, section_code: code }), { minLength: 1, maxLength: 3 }).map((u) => ({
    name: `swapRegion ${JSON.stringify(u)}`, run: (inv: Inventory) => inv.swapRegion(u),
  })),
  fc.tuple(boxId, skuId, count, count).map(([b, s, n, m]) => ({
    name: `addLoad ${b} ${s} ${n}/${m}`, run: (inv: Inventory) => inv.addLoad(b, { sku_id: s, item_count: n, item_count_max: m }),
  })),
  fc.tuple(boxId, fc.option(skuId, { nil: undefined }), fc.option(count, { nil: undefined }), fc.option(count, { nil: undefined })).map(([b, s, n, m]) => ({
    name: `patchLoad ${b} ${s} ${n}/${m}`,
    run: (inv: Inventory) => inv.patchLoad(b, { ...(s === undefined ? {} : { sku_id: s }), ...(n === undefined ? {} : { item_count: n }), ...(m === undefined ? {} : { item_count_max: m }) }),
  })),
  boxId.map((b) => ({ name: `removeLoad ${b}`, run: (inv: Inventory) => inv.removeLoad(b) })),
);

t.test('the seeded small site satisfies every invariant', async (t) => {
  const w = await world();
  t.teardown(() => dispose(w));
  t.same(broken(w), []);
  t.equal(w.store.collection(skus).get('A')!.total_quantity, 3);
  t.equal(w.store.collection(skus).get('A')!.load_count, 2);
  t.equal(w.store.sequence('box'), 4, 'new boxes get ids after the imported ones');
});

t.test('random operation sequences keep every invariant; refusals change nothing', async (t) => {
  let steps = 0;
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 40 }), async (ops) => {
      const w = await world();
      try {
        for (const o of ops) {
          const before = snapshot(w);
          // Negative counts never pass the HTTP schema; here they must still be refused by the domain.
          try {
            await o.run(w.inventory, w);
          } catch (err) {
            if (!(err instanceof DomainError)) throw new Error(`${o.name}: unexpected ${(err as Error).stack}`);
            refused++;
            if (snapshot(w) !== before) throw new Error(`${o.name} was refused (${err.message}) but changed the store`);
          }
          steps++;
          const problems = broken(w);
          if (problems.length > 0) throw new Error(`after ${o.name}: ${problems.join('; ')}`);
        }
      } finally {
        await dispose(w);
      }
    }),
    { numRuns: 60 },
  );
  t.ok(steps - refused > 200 && refused > 300, `${steps} steps, ${refused} refused`);
});

t.test('a carrier placed on another level takes its boxes\' level along, and a swap gives each box its new carrier\'s', async (t) => {
  const layout = siteWithBuffer();
  layout.levels.push({ ...layout.levels[0]!, id: 2, bots: [{ id: 2, start: { x: 0, y: 1 }, heading: 'E' }] });
  layout.balconies.push({ id: 2, level_id: 2, ports: [{ x: 1, y: 0 }, { x: 2, y: 0 }] });
  const w = await world(layout);
  t.teardown(() => dispose(w));
  const c = w.store.collection(boxes);
  const emptyOn = (level: number) => [...c.keysWithin('empty', emptyBoxesOf(boxSizeKey(c.get(2)!.code32), level))];
  t.same(emptyOn(1), [2], 'C1\'s empty box on level 1');
  // C1 (boxes 1 and 2) set down on level 2, as a technician's hand placement can.
  await w.store.write(() => w.inventory.placeCarrierInWrite('C1', 2, 3, 3));
  t.same([c.get(1)?.level_id, c.get(2)?.level_id], [2, 2]);
  t.same([emptyOn(1), emptyOn(2)], [[], [2]], 'its empty box is found on level 2 now');
  t.equal(c.get(2)?.updated_at, 1_700_000_001_000, 'the box keeps its age');
  // Box 4 (C4, level 1) and box 2 (C1, level 2) change places: each takes its new carrier's level.
  await w.inventory.swapBoxes(4, 2);
  t.same([c.get(4)?.carrier_id, c.get(4)?.level_id, c.get(2)?.carrier_id, c.get(2)?.level_id], ['C1', 2, 'C4', 1]);
  t.same(broken(w), []);
});

t.test('a carrier leaving the front of a lane speeds up those behind it, and eta lists follow', async (t) => {
  const w = await world();
  t.teardown(() => dispose(w));
  const row = (id: string) => [...w.view.scan()].find((r) => r.id === id)!;
  const list = (params: Record<string, unknown>) =>
    executeList(FIELDS, w.view, parseListQuery(FIELDS, params, { maxPageSize: 1000, timeZone: 'Europe/Berlin' })).items.map((r) => r.id);
  // C1 (depth 1) stands in front of C2 (box 3, depth 2) and C3 (no boxes, depth 3) in lane x = 1.
  // Figures by hand in docs/inventory.md: fetches of 5.6, 6.4 and 7.2 s from depths 1-3 of this
  // lane, 10.8 s to set C1 aside (depth 1) on the buffer, 11.6 s for C2 (depth 2).
  t.equal(row('box-1').eta, 5.6);
  t.equal(row('box-3').eta, 17.2);
  t.equal(row('space-1-1-4').eta, 29.6);
  t.ok(list({ sort_by: '-eta' }).indexOf('box-3') < list({ sort_by: '-eta' }).indexOf('box-1'), 'blocked box 3 sorts before box 1 (slowest first)');
  await w.store.write(() => w.store.collection(carriers).put({ ...w.store.collection(carriers).get('C1')!, x: 0, y: 1 }));
  w.view.refreshCarriers(['C1']);
  t.equal(row('box-3').eta, 6.4, 'nothing in front of box 3 any more');
  t.equal(row('space-1-1-4').eta, 18.8, 'only C2 in front of C3');
  t.equal(row('box-1').eta, 2.8, 'C1 on the highway, as on a bot: the drive and the set-down');
  t.equal(row('space-1-1-2').eta, null, 'the space C1 left is empty');
  t.same(etaProblems(w), []);
  // Back into the lane, behind the others: now C1 is the one blocked twice.
  await w.store.write(() => w.store.collection(carriers).put({ ...w.store.collection(carriers).get('C1')!, x: 2, y: 4 }));
  await w.store.write(() => w.store.collection(carriers).put({ ...w.store.collection(carriers).get('C2')!, x: 2, y: 2 }));
  await w.store.write(() => w.store.collection(carriers).put({ ...w.store.collection(carriers).get('C3')!, x: 2, y: 3 }));
  w.view.refreshCarriers(['C1', 'C2', 'C3']);
  t.same(etaProblems(w), []);
  t.same(list({ sku_id__eq: 'A', sort_by: '-eta' }), ['box-1', 'box-4'], 'box 1 (SKU A), deepest and behind two carriers, now comes before box 4');
});

t.test('seeding refuses overlapping boxes even when a layout skipped the validator', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-inv-'));
  const store = await Store.open({ dir }, [...INVENTORY_COLLECTIONS]);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const site = buildSite(smallSite());
  const layout = smallSite();
  // Legacy '11110000' is canonical sections 0-15; 32 digits with section 0 set overlap it.
  layout.carriers[0]!.boxes![1]!.section_code = `1${'0'.repeat(31)}`;
  const inventory = new Inventory({ store, site: { ...site, layout }, now: () => 1 });
  await t.rejects(inventory.seedFromLayout(), { name: 'ConflictError', message: /box 2 overlaps box\(es\) 1 on carrier C1/ });
  t.equal(store.collection(boxes).count() + store.collection(carriers).count() + store.collection(skus).count(), 0, 'nothing was written');
});

t.test('without a buffer on the level, carriers behind others have no eta (the brain could not set those aside)', async (t) => {
  const w = await world(smallSite());
  t.teardown(() => dispose(w));
  const row = (id: string) => [...w.view.scan()].find((r) => r.id === id)!;
  t.equal(row('box-1').eta, 5.6, 'C1 is first in its lane');
  t.equal(row('box-3').eta, null, 'C2 stands behind C1');
  t.equal(row('space-1-1-4').eta, null);
  t.same(etaProblems(w), []);
});
