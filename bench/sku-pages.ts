// npm run bench:sku-pages [-- --small 10000 --large 300000 --pages 2000]
//
// An integration paging through the SKUs while others write them (issue 22: no request path
// scans a whole collection): a new SKU committed, then `GET /skus?page=2&size=20` and
// `GET /skus?measurement_unit__in=PIECE&page=2&size=20` through the list engine on the SKU
// table, over a real store of `--small` and of `--large` SKUs. The baseline, measured in the
// same run, is the table's array of every SKU made again after a write (what the first of
// those pages cost each time before; the second also sorted the unit's ids again).
// Prints µs a page and the large / small ratio, which is about 1 when a page's cost is flat.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Store } from '../src/store/store.js';
import { skus, type SkuRecord } from '../src/domain/inventory/records.js';
import { SkuTable } from '../src/domain/inventory/sku-table.js';
import { executeList, parseListQuery } from '../src/domain/list/index.js';
import { SKU_FIELDS } from '../src/http/routes/inventory.js';

const { values: args } = parseArgs({ options: { small: { type: 'string', default: '10000' }, large: { type: 'string', default: '300000' }, pages: { type: 'string', default: '2000' } } });
const PAGES = Number(args.pages);
const options = { maxPageSize: 1000, timeZone: 'UTC' };
const QUERIES = { all: { page: '2', size: '20' }, unit: { measurement_unit__in: 'PIECE', page: '2', size: '20' } };

function sku(id: string, n: number): SkuRecord {
  return {
    id, name: `Bench bolt part ${n}`, measurement_unit: 'PIECE', on_empty_sku_action: 'UNASSIGN', balcony_ids: [], image: null, weight: null, height: null, width: null, length: null,
    description: null, barcode: null, total_quantity: 0, max_quantity: 0, load_count: 0, created_at: 0, updated_at: 0, deleted_at: null,
  } as unknown as SkuRecord;
}

/** µs a page (a write before each) of each query, and µs a pass over every SKU, on a store of `size` SKUs. */
async function measure(size: number): Promise<Record<keyof typeof QUERIES | 'pass', number>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-bench-sku-pages-'));
  const store = await Store.open({ dir }, [skus as never]);
  for (let from = 0; from < size; from += 10_000) {
    await store.write(() => {
      for (let n = from; n < Math.min(size, from + 10_000); n++) store.collection(skus).put(sku(`S-${String(n).padStart(7, '0')}`, n));
    });
  }
  const table = new SkuTable(store);
  let added = 0;
  const out = { all: 0, unit: 0, pass: 0 };
  for (const name of ['all', 'unit'] as const) {
    const query = parseListQuery(SKU_FIELDS, QUERIES[name], options);
    let spent = 0;
    for (let i = 0; i < PAGES; i++) {
      await store.write(() => store.collection(skus).put(sku(`N-${added++}`, added)));
      const t0 = performance.now();
      executeList(SKU_FIELDS, table, query);
      spent += performance.now() - t0;
    }
    out[name] = (spent * 1000) / PAGES;
  }
  const passes = Math.max(3, Math.round(PAGES / 100));
  let spent = 0;
  for (let i = 0; i < passes; i++) {
    await store.write(() => store.collection(skus).put(sku(`N-${added++}`, added)));
    const t0 = performance.now();
    if (table.scan().toArray().length === 0) throw new Error('no SKU read');
    spent += performance.now() - t0;
  }
  out.pass = (spent * 1000) / passes;
  table.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return out;
}

const small = await measure(Number(args.small));
const large = await measure(Number(args.large));
console.log(`bench:sku-pages: a write, then the second page of 20; ${PAGES} pages a query; µs at ${args.small} and ${args.large} SKUs`);
for (const [name, label] of [['all', 'GET /skus?page=2&size=20'], ['unit', 'the same, measurement_unit__in=PIECE'], ['pass', 'baseline: every SKU read after a write']] as const) {
  console.log(`${label.padEnd(40)} ${small[name].toFixed(1).padStart(10)} ${large[name].toFixed(1).padStart(10)}   large / small ${(large[name] / small[name]).toFixed(2)}`);
}
