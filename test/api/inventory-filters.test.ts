// The list parameters of spec 4.6 (inventory_view) and 4.12 (skus), pinned against what the
// routes declare in the served OpenAPI document, so a dropped filter fails here; and every
// filter exercised over HTTP on the small site with a result that would differ if the filter
// were ignored (each is compared with the same filter applied to the full list by hand).
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Client } from '../helpers/client.js';
import { bufferedSmallSite, writeSite } from '../fixtures/small-site.js';
import { inventoryFields, SKU_FIELDS } from '../../src/http/routes/inventory.js';

/** Spec 4.6, every query parameter of GET /api/v2/inventory_view. */
const SPEC_INVENTORY_VIEW = [
  'box_height_string_max__eq', 'box_height_string_max__ilike', 'box_id__eq', 'box_id__ilike', 'box_size_string__eq', 'box_size_string__ilike', 'box_size_string__in',
  'carrier_id__eq', 'carrier_id__ilike',
  'content_codes__ilike', 'eta_int__ilike', 'updated_at__gte', 'updated_at__lte',
  'depth__eq', 'depth__gte', 'depth__lte', 'depth__ilike', 'depth__in',
  'item_count__eq', 'item_count__ilike', 'item_count_max__eq', 'item_count_max__ilike', 'system_quantity__eq', 'system_quantity__ilike',
  'level_id__in', 'measurement_unit__in', 'position_x__eq', 'position_x__ilike', 'position_y__eq', 'position_y__ilike',
  'section_code__eq', 'section_code_32__eq',
  'sku_id__eq', 'sku_id__ilike', 'sku_name__ilike',
  'page', 'size', 'sort_by', 'search',
];
const SPEC_INVENTORY_SEARCH = ['carrier_id', 'box_size_string', 'box_height_string_max', 'section_code', 'section_code_32', 'sku_id', 'sku_name'];

/** Spec 4.12, every query parameter of GET /api/v2/skus. */
const SPEC_SKUS = [
  'carrier_utilization__ilike',
  'created_at__gte', 'created_at__lte', 'deleted_at__gte', 'deleted_at__lte', 'updated_at__gte', 'updated_at__lte',
  'fulfillable__ilike', 'replenishable__ilike',
  'id__eq', 'id__ilike', 'name__ilike',
  'load_count__eq', 'load_count__ilike',
  'max_quantity__eq', 'max_quantity__gte', 'max_quantity__lte', 'max_quantity__ilike',
  'total_quantity__eq', 'total_quantity__gte', 'total_quantity__lte', 'total_quantity__ilike',
  'measurement_unit__in', 'on_empty_sku_action__in',
  'page', 'size', 'sort_by', 'search',
];
const SPEC_SKU_SEARCH = ['id', 'name', 'carrier_utilization', 'stock_fill_ratio'];

let a: TestApp;
let c: Client;

t.before(async () => {
  a = await startTestApp({ WAREHOUSE_SITE: writeSite(bufferedSmallSite()) });
  const boot = JSON.parse(readFileSync(path.join(a.stateDir, 'bootstrap-admin.json'), 'utf8'));
  c = new Client(a.app.port, readFileSync(a.app.tls.certFile), boot.api_key);
});
t.teardown(async () => {
  c.close();
  await a.close();
});

type Row = Record<string, any>;
const get = async (p: string) => {
  const r = await c.request(encodeURI(p));
  if (r.status !== 200) throw new Error(`${p}: ${r.status} ${r.text}`);
  return r.json;
};
const send = (method: string, p: string, json?: unknown) => c.request(p, { method, ...(json === undefined ? {} : { json }) });
const sorted = (ids: string[]) => [...ids].sort();

/**
 * Lists `path` with `query` and checks it returns exactly the rows `keep` selects from the full
 * list, and that those are some rows but not all (so the filter was not ignored).
 */
async function selects(t: any, listPath: string, query: string, keep: (row: Row) => boolean): Promise<void> {
  const all: Row[] = (await get(`${listPath}?size=500`)).items;
  const want = all.filter(keep).map((r) => String(r.id));
  const got: Row[] = (await get(`${listPath}?size=500&${query}`)).items;
  t.same(sorted(got.map((r) => String(r.id))), sorted(want), `${listPath}?${query}`);
  t.ok(want.length > 0 && want.length < all.length, `${query} selects ${want.length} of ${all.length}: a filter ignored would differ`);
}

t.test('the routes declare exactly the query parameters of the spec', async (t) => {
  const doc = (await a.client.request('/api/openapi.json')).json;
  const names = (p: string) => doc.paths[p].get.parameters.filter((x: { in: string }) => x.in === 'query').map((x: { name: string }) => x.name).sort();
  t.same(names('/api/v2/inventory_view'), [...SPEC_INVENTORY_VIEW].sort(), 'inventory_view (spec 4.6)');
  t.same(names('/api/v2/skus'), [...SPEC_SKUS].sort(), 'skus (spec 4.12)');
  const searchable = (table: Record<string, { search?: boolean }>) => Object.keys(table).filter((k) => table[k]!.search).sort();
  t.same(searchable(inventoryFields()), [...SPEC_INVENTORY_SEARCH].sort(), 'inventory_view search fields');
  t.same(searchable(SKU_FIELDS), [...SPEC_SKU_SEARCH].sort(), 'skus search fields');
});

t.test('inventory_view filters of content, timing, section codes, box height and unit', async (t) => {
  const view = '/api/v2/inventory_view';
  // C4 holds one 1/2 box (16-digit code '1100...'): its carrier has free sections.
  await selects(t, view, 'content_codes__ilike=0000', (r) => r.content_codes !== null && r.content_codes.includes('0000'));
  await selects(t, view, 'eta_int__ilike=17', (r) => r.eta_int !== null && String(r.eta_int).includes('17'));
  await selects(t, view, 'section_code__eq=00001111', (r) => r.section_code === '00001111');
  await selects(t, view, `section_code_32__eq=${0xffff0000}`, (r) => r.section_code_32 === 0xffff0000);
  await selects(t, view, 'measurement_unit__in=PACK&measurement_unit__in=METER', (r) => r.measurement_unit === 'PACK' || r.measurement_unit === 'METER');

  // Every row of this one-level site has the level's 350 mm: another height selects none.
  const all = (await get(`${view}?size=500`)).total;
  t.equal((await get(`${view}?box_height_string_max__eq=350`)).total, all);
  t.equal((await get(`${view}?box_height_string_max__eq=400`)).total, 0, 'a filter ignored would answer every row');

  // One box changed later than the seeded ones: the bounds split the rows by updated_at.
  // Bounds written with Z: a '+' in a query string would read as a space.
  const stamp = (utc: string) => new Date(Date.parse(utc)).toISOString();
  const seededAt = stamp((await get(`${view}?box_id__eq=1`)).items[0].updated_at_utc);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal((await send('PATCH', '/api/v2/load/1', { item_count: 2 })).status, 200);
  const changedAt = stamp((await get(`${view}?box_id__eq=1`)).items[0].updated_at_utc);
  t.ok(Date.parse(changedAt) > Date.parse(seededAt));
  await selects(t, view, `updated_at__gte=${changedAt}`, (r) => r.updated_at_utc !== null && Date.parse(r.updated_at_utc) >= Date.parse(changedAt));
  await selects(t, view, `updated_at__lte=${seededAt}`, (r) => r.updated_at_utc !== null && Date.parse(r.updated_at_utc) <= Date.parse(seededAt));
});

t.test('skus filters of deletion, derived figures and empty action', async (t) => {
  const list = '/api/v2/skus';
  const before = new Date(Date.now() - 1000).toISOString();
  t.equal((await send('POST', '/api/v2/sku', { id: 'GONE', name: 'Discontinued' })).status, 201);
  t.equal((await send('DELETE', '/api/v2/sku/GONE')).status, 200);
  t.equal((await send('POST', '/api/v2/sku', { id: 'KEEP', name: 'Kept', on_empty_sku_action: 'DO_NOTHING' })).status, 201);
  const after = new Date(Date.now() + 60_000).toISOString();
  await selects(t, list, `deleted_at__gte=${before}`, (s) => s.deleted_at_utc !== null);
  await selects(t, list, `deleted_at__lte=${after}`, (s) => s.deleted_at_utc !== null);
  t.equal((await get(`${list}?deleted_at__lte=${before}`)).total, 0, 'deleted after the bound');

  // A: 2 + 0 of 10 + 5 (box 1 was patched above); B: 7 of 7; C, GONE, KEEP: nothing.
  await selects(t, list, 'fulfillable__ilike=7', (s) => String(s.fulfillable).includes('7'));
  await selects(t, list, 'replenishable__ilike=13', (s) => String(s.replenishable).includes('13'));
  await selects(t, list, 'carrier_utilization__ilike=0.6', (s) => String(s.carrier_utilization).includes('0.6'));
  await selects(t, list, 'on_empty_sku_action__in=DO_NOTHING', (s) => s.on_empty_sku_action === 'DO_NOTHING');

  // measurement_unit__in goes through the view's SKU ids per unit: pages and totals follow patches.
  const all: Row[] = (await get(`${list}?size=500`)).items;
  const count = (units: string[]) => all.filter((s) => units.includes(s.measurement_unit)).length;
  for (const units of [['PIECE'], ['PACK', 'METER'], ['LITER']]) {
    const page = await get(`${list}?size=1&${units.map((u) => `measurement_unit__in=${u}`).join('&')}`);
    t.equal(page.total, count(units), `total of ${units}`);
  }
  t.equal((await send('PATCH', '/api/v2/sku/KEEP', { measurement_unit: 'LITER' })).status, 200);
  t.equal((await get(`${list}?size=1&measurement_unit__in=LITER`)).total, 1, 'a patched unit counts under its new unit');
  t.equal((await get(`${list}?size=1&measurement_unit__in=PIECE`)).total, count(['PIECE']) - 1, 'and no longer under the old one');
  t.same((await get(`${list}?measurement_unit__in=LITER&measurement_unit__in=PACK`)).items.map((s: Row) => s.id), ['KEEP', 'B'], 'per unit asked, each in id order');
});
