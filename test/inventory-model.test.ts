// Random sequences of SKU, box, load and swap operations against the real store: after each
// step the SKU totals equal the sum of their loads, no two boxes on a carrier share a
// section, every box is on a carrier, the inventory view has exactly one row per box and per
// empty space, and a refused operation changed nothing.
import t from 'tap';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../src/store/store.js';
import { DomainError } from '../src/domain/errors.js';
import { Inventory } from '../src/domain/inventory/inventory.js';
import { InventoryView } from '../src/domain/inventory/view.js';
import { boxes, carriers, INVENTORY_COLLECTIONS, skus, type BoxRecord } from '../src/domain/inventory/records.js';
import { overlaps, sectionCount } from '../src/domain/inventory/section-code.js';
import { buildSite, type Site } from '../src/domain/site/load.js';
import { smallSite } from './fixtures/small-site.js';

interface World {
  store: Store;
  site: Site;
  inventory: Inventory;
  view: InventoryView;
  dir: string;
}

async function world(): Promise<World> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-inv-'));
  const store = await Store.open({ dir }, [...INVENTORY_COLLECTIONS]);
  const site = buildSite(smallSite());
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
  return out;
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

type Op = { name: string; run(inv: Inventory): Promise<unknown> };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.tuple(skuId, fc.option(fc.dictionary(fc.constantFrom('1', '1/2', '1/4', '1/8', '3/32'), fc.integer({ min: 1, max: 12 })), { nil: undefined })).map(([id, caps]) => ({
    name: `createSku ${id}`, run: (inv: Inventory) => inv.createSku(id, { name: `SKU ${id}`, allowed_box_size_capacities: caps ?? null }),
  })),
  fc.tuple(skuId, fc.dictionary(fc.constantFrom('1', '1/2', '1/4', '1/8', '3/32'), fc.integer({ min: 1, max: 12 }))).map(([id, caps]) => ({
    name: `patchSku ${id} ${JSON.stringify(caps)}`, run: (inv: Inventory) => inv.patchSku(id, { allowed_box_size_capacities: caps, name: 'renamed' }),
  })),
  skuId.map((id) => ({ name: `deleteSku ${id}`, run: (inv: Inventory) => inv.deleteSku(id) })),
  fc.tuple(carrierId, code).map(([c, k]) => ({ name: `createBox ${c} ${k}`, run: (inv: Inventory) => inv.createBox(c, k) })),
  fc.tuple(boxId, code).map(([b, k]) => ({ name: `patchBox ${b} ${k}`, run: (inv: Inventory) => inv.patchBox(b, k) })),
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
            await o.run(w.inventory);
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
