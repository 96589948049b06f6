// The SKU list's in-memory source (src/domain/inventory/sku-table.ts): after random
// commits of this thread and of another one (heard through the commit notices), every list
// query answers as the store itself would, and a search reads no SKU record from LMDB.
import t, { type Test } from 'tap';
import { Random } from '../../../src/sim/random.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { Collection, compareKeys } from '../../../src/store/collection.js';
import { skus, type SkuRecord } from '../../../src/domain/inventory/records.js';
import { SkuTable } from '../../../src/domain/inventory/sku-table.js';
import { collectionSource, executeList, parseListQuery, type SearchMatches } from '../../../src/domain/list/index.js';
import { SKU_FIELDS } from '../../../src/http/routes/inventory.js';

const UNITS = ['PIECE', 'PACK', 'METER', 'KILOGRAM'] as const;
const WORDS = ['bolt', 'nut', 'gloves', 'wire', 'Tape', 'ünïcode', '\u{1F600}x', '\uFF21y'];

function sku(id: string, n: number, unit: string, word: string, deleted: boolean): SkuRecord {
  return {
    id, name: `${word} ${n}`, measurement_unit: unit as SkuRecord['measurement_unit'], on_empty_sku_action: 'UNASSIGN', allowed_box_size_capacities: null,
    balcony_ids: null, image: null, total_quantity: n % 17, max_quantity: 20, total_positive_inventory_bookings: 0, total_negative_inventory_bookings: 0,
    reserved_out: 0, reserved_in: 0, load_count: 0, sections: 0, created_at: n, updated_at: n, deleted_at: deleted ? n : null,
  };
}

t.test('the table answers every list query as the store does, after commits of either thread', async (t) => {
  const seed = Number(process.env['SEED'] ?? Date.now() % 1_000_000);
  t.comment(`seed ${seed}`);
  const rng = new Random(seed);
  const random = () => rng.next();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

  const dir = mkdtempSync(path.join(tmpdir(), 'wh-sku-table-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, [skus as never]);
  // A second Store on the environment stands for the brain's thread: its commits reach the
  // table only as notices (`heard`), as through the commit bridge.
  const other = await Store.open({ dir }, [skus as never]);
  t.teardown(async () => {
    await other.close();
    await store.close();
  });
  await store.write(() => {
    for (let n = 0; n < 50; n++) store.collection(skus).put(sku(`S-${n}`, n, pick(UNITS), pick(WORDS), false));
  });
  const table = new SkuTable(store);
  t.teardown(() => table.close());
  const lmdb = collectionSource(store.collection(skus), { id: null, measurement_unit: 'measurement_unit' });

  const queries = [
    {}, { search: 'name:bolt' }, { search: 'o' }, { search: 'name:gloves OR name:wire', sort_by: '-total_quantity' }, { measurement_unit__in: 'PIECE,PACK' },
    { measurement_unit__in: 'METER', sort_by: 'name', size: '3', page: '2' }, { id__eq: 'S-7' }, { id__ilike: 's-1' }, { sort_by: '-total_quantity,id', size: '7' },
    { search: '\u{1F600}' }, { total_quantity__gte: '5', sort_by: 'updated_at' }, { search: 'stock_fill_ratio:0.1 OR carrier_utilization:0' },
    // Through the substring index (needles of three characters and more): one field, every
    // field (`*`), an AND (the fewest candidates), a needle no name holds, needles across
    // surrogate pairs and accents, with and without a sort, on a later page.
    { search: 'name:olt' }, { search: 'bolt', sort_by: '-total_quantity', size: '4' }, { search: 'name:glo AND name:ves', sort_by: 'name' },
    { search: 'name:zzz' }, { search: 'name:"\u{1F600}x"' }, { search: 'name:ünï', page: '2', size: '2' }, { search: 's-1', sort_by: 'id' },
    { search: 'name:"e 1"', measurement_unit__in: 'PIECE' }, { search: 'name:tape AND id:s-', size: '3' },
    // Read in the order of a stock count (`ordered`), alone, after a search and with filters,
    // ties and further sort keys.
    { sort_by: '-total_quantity', size: '5', page: '3' }, { search: 'name:bolt', sort_by: '-total_quantity', size: '3', page: '2' },
    { search: 'name:olt', sort_by: 'max_quantity,-id', size: '4' }, { search: 'name:wire', sort_by: 'load_count', measurement_unit__in: 'PACK,METER' },
    { total_quantity__gte: '3', sort_by: 'total_quantity', size: '6', page: '2' }, { search: 'nut', sort_by: '-total_quantity', deleted_at__gte: '1970-01-01T00:00:00Z' },
    // Unsorted pages read up to the page: of every SKU, of one unit, of two.
    { page: '3', size: '4' }, { measurement_unit__in: 'PIECE', page: '2', size: '5' }, { measurement_unit__in: 'METER,PACK', page: '2', size: '3' },
  ];
  const options = { maxPageSize: 1000, timeZone: 'UTC' };
  let n = 50;
  for (let round = 0; round < 40; round++) {
    const writer = random() < 0.5 ? store : other;
    const notice = await new Promise<Record<string, (string | number)[]>>((resolve) => {
      void writer.write(() => {
        const c = writer.collection(skus);
        for (let i = 0; i < 1 + Math.floor(random() * 4); i++) {
          const r = random();
          const id = r < 0.4 ? `S-${n++}${pick(['', 'é', '\u{1F600}', '\uFF21'])}` : `S-${Math.floor(random() * n)}`;
          const before = c.get(id);
          if (r > 0.9 && before) c.remove(id);
          else c.put(sku(id, n, pick(UNITS), pick(WORDS), random() < 0.2));
        }
      }).then(() => resolve({}));
      if (writer === other) {
        const stop = other.onCommit((heard) => {
          stop();
          resolve(heard);
        });
      }
    });
    if (writer === other) store.heard(notice);
    for (const q of queries) {
      const query = parseListQuery(SKU_FIELDS, q, options);
      const want = executeList(SKU_FIELDS, lmdb, query);
      // Each way of sorting on its own (read in order, or sort the matches), and the engine's choice.
      for (const plan of ['auto', 'walk', 'sort'] as const) {
        const got = executeList(SKU_FIELDS, table, query, plan);
        if (JSON.stringify(got) !== JSON.stringify(want)) {
          t.fail(`round ${round} (seed ${seed}) ${JSON.stringify(q)} ${plan}: table ${JSON.stringify(got.items.map((s) => s.id))} total ${got.total}, store ${JSON.stringify(want.items.map((s) => s.id))} total ${want.total}`);
          return;
        }
      }
    }
  }
  t.equal(table.size, store.collection(skus).count(), 'as many SKUs as the store');
  const inStore = [...store.collection(skus).scan()].map((s) => s.id);
  t.same([...table.scan()].map((s) => s.id), inStore, 'in the store order, read one by one');
  t.same(table.scan().toArray().map((s) => s.id), inStore, 'and as one array');
});

/** A table over a new store of `count` live PIECE SKUs named after WORDS in turn, closed with the test. */
async function seededTable(t: Test, count: number): Promise<{ store: Store; table: SkuTable }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-sku-table-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, [skus as never]);
  t.teardown(() => store.close());
  await store.write(() => {
    for (let n = 0; n < count; n++) store.collection(skus).put(sku(`S-${n}`, n, 'PIECE', WORDS[n % 4]!, false));
  });
  const table = new SkuTable(store);
  t.teardown(() => table.close());
  return { store, table };
}

/** Replaces the table's answers to searches with what `wrap` makes of them (to count what a page reads). */
function wrapMatches(table: SkuTable, wrap: (matches: SearchMatches<SkuRecord>) => SearchMatches<SkuRecord>): void {
  const searchCandidates = table.searchCandidates.bind(table);
  table.searchCandidates = (text, needle, compute) => {
    const matches = searchCandidates(text, needle, compute);
    return matches && wrap(matches);
  };
}

t.test('a search reads no SKU record from the store', async (t) => {
  const { table } = await seededTable(t, 200);
  let reads = 0;
  const proto = Collection.prototype as unknown as Record<'get' | 'scan' | 'range', (...a: unknown[]) => unknown>;
  const originals = { get: proto.get, scan: proto.scan, range: proto.range };
  for (const name of ['get', 'scan', 'range'] as const) {
    proto[name] = function (this: unknown, ...a: unknown[]) {
      reads++;
      return originals[name].apply(this, a);
    };
  }
  t.teardown(() => Object.assign(proto, originals));
  const query = parseListQuery(SKU_FIELDS, { search: 'name:bolt', sort_by: '-total_quantity', size: '5' }, { maxPageSize: 1000, timeZone: 'UTC' });
  executeList(SKU_FIELDS, table, query); // builds the substring index of names
  let tested = 0;
  const fieldText = table.fieldText.bind(table);
  table.fieldText = (row, field, compute) => (tested++, fieldText(row, field, compute));
  const page = executeList(SKU_FIELDS, table, query);
  t.equal(page.total, 50, 'the search finds every match');
  t.equal(reads, 0, 'and reads nothing from LMDB');
  t.equal(tested, 0, 'its substring index answers with the names that hold the needle: none of the 200 is tested again');
});

t.test('keys sort as LMDB sorts them (UTF-8 bytes)', async (t) => {
  const keys = ['a', '\uFF21', '\u{1F600}', 'é', 'ab', '', 'Z', '\uE000', '\uD7FF'];
  const bytes = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  t.same([...keys].sort(compareKeys), bytes);
});

t.test('a word searched again, sorted by a stock count, lists none of its matches: its cost does not grow with them', async (t) => {
  const { store, table } = await seededTable(t, 2000);
  // Counts the matches listed (in key order): what made a search cost a pass over all of them.
  let listed = 0;
  // Without `ordered`: the page walks the SKUs in order and tests each against the matches.
  wrapMatches(table, (matches) => ({ size: matches.size, has: (row) => matches.has(row), rows: () => (listed += matches.size, matches.rows()) }));
  const query = parseListQuery(SKU_FIELDS, { search: 'name:bolt', sort_by: '-total_quantity', size: '20' }, { maxPageSize: 1000, timeZone: 'UTC' });
  const page = executeList(SKU_FIELDS, table, query);
  t.equal(page.total, 500, 'every match counted');
  t.same(page, executeList(SKU_FIELDS, table, query, 'sort'), 'the same page as sorting the matches');
  t.equal(listed, 500, '(which lists them)');
  listed = 0;
  executeList(SKU_FIELDS, table, query);
  await store.write(() => store.collection(skus).put(sku('S-bolt-new', 5000, 'PIECE', 'bolt', false)));
  const after = executeList(SKU_FIELDS, table, query);
  t.equal(after.total, 501, 'a new SKU holding the word is counted');
  t.equal(listed, 0, 'read in order of the count, the page tests membership: no match listed');
});

t.test('a word searched again, sorted by a stock count, reads its page from its own matches in that order: no SKU is tested against them', async (t) => {
  const { store, table } = await seededTable(t, 2000);
  // Counts membership tests: walking every SKU in order tested ten for a hit of a word held by a tenth.
  let tested = 0;
  wrapMatches(table, (matches) => ({ ...matches, has: (row) => (tested++, matches.has(row)) }));
  const query = parseListQuery(SKU_FIELDS, { search: 'name:bolt', sort_by: '-total_quantity', size: '20' }, { maxPageSize: 1000, timeZone: 'UTC' });
  const page = executeList(SKU_FIELDS, table, query);
  t.equal(page.total, 500, 'every match counted');
  t.same(page, executeList(SKU_FIELDS, table, query, 'sort'), 'the same page as sorting the matches');
  t.equal(tested, 0, 'no SKU tested for membership');
  await store.write(() => {
    store.collection(skus).put({ ...sku('S-bolt-new', 5000, 'PIECE', 'bolt', false), total_quantity: 99 });
    store.collection(skus).put({ ...store.collection(skus).get('S-7')!, name: 'renamed bolt' });
  });
  const after = executeList(SKU_FIELDS, table, query);
  t.equal(after.total, 502, 'a new SKU and a renamed one holding the word are counted');
  t.equal(after.items[0]!.id, 'S-bolt-new', 'the new SKU, with the most stock, comes first');
  t.same(after, executeList(SKU_FIELDS, table, query, 'sort'), 'the same page as sorting the matches after the commit');
  t.equal(tested, 0, 'still none tested');
});

t.test('an unsorted page after a write reads its page of SKUs, not all of them (of every unit, or of one)', async (t) => {
  const { store, table } = await seededTable(t, 2_000);
  await store.write(() => store.collection(skus).put(sku('S-new', 1, 'PIECE', 'bolt', false)));
  // Counted where the table turns ids into SKUs: its own map.
  const byId = (table as unknown as { byId: Map<string, SkuRecord> }).byId;
  const get = byId.get.bind(byId);
  let reads = 0;
  byId.get = (id: string) => {
    reads++;
    return get(id);
  };
  const options = { maxPageSize: 1000, timeZone: 'UTC' };
  for (const q of [{ page: '2', size: '10' }, { measurement_unit__in: 'PIECE', page: '2', size: '10' }]) {
    reads = 0;
    const page = executeList(SKU_FIELDS, table, parseListQuery(SKU_FIELDS, q, options));
    t.equal(page.total, 2_001, `${JSON.stringify(q)}: the total`);
    t.equal(page.items.length, 10);
    t.ok(reads <= 20, `${JSON.stringify(q)}: ${reads} SKUs read for the second page of 10`);
  }
});
