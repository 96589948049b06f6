// Levels, balconies, SKUs, boxes, loads and the inventory view over the real API, on a small
// site file: every endpoint, its computed fields, and bad input of every kind.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { startApp, type App } from '../../src/app.js';
import { memoryLogger } from '../helpers/server.js';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Client, multipart, type Answer } from '../helpers/client.js';
import { until } from '../helpers/until.js';
import { bufferedSmallSite, smallSite, writeSite } from '../fixtures/small-site.js';

let a: TestApp;
/** The running app: the restart test replaces it. */
let app: App;
let c: Client;

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 3)]);

t.before(async () => {
  a = await startTestApp({ WAREHOUSE_SITE: writeSite(bufferedSmallSite()) });
  app = a.app;
  a.client.close();
  const boot = JSON.parse(readFileSync(path.join(a.stateDir, 'bootstrap-admin.json'), 'utf8'));
  c = new Client(app.port, readFileSync(app.tls.certFile), boot.api_key);
});
t.teardown(async () => {
  c.close();
  await app.close();
  rmSync(a.stateDir, { recursive: true, force: true });
});

const get = (p: string) => c.request(encodeURI(p));
const send = (method: string, p: string, json?: unknown) => c.request(p, { method, ...(json === undefined ? {} : { json }) });
const detailLocs = (r: Answer) => (r.json.detail as { loc: unknown[] }[]).map((d) => d.loc.join('.'));
const rows = async (query: string) => (await get(`/api/v2/inventory_view?size=500&${query}`)).json;
const sku = async (id: string) => (await get(`/api/v2/skus?id__eq=${id}`)).json.items[0];
const upload = (skuId: string, bytes: Buffer, query = '') => {
  const m = multipart([{ name: 'sku_id', value: skuId }, { name: 'picture', value: bytes, filename: 'p.png', type: 'image/png' }]);
  return c.request(`/api/v2/sku/image${query}`, { method: 'POST', body: m.body, headers: { 'content-type': m.contentType } });
};

t.test('levels and balconies come from the site', async (t) => {
  t.same((await get('/api/v2/levels')).json, [{ id: 1, height: 0 }]);
  t.same((await get('/api/v2/balconies')).json, [{ id: 1 }]);
  const empty = await rows('box_id__eq=none&carrier_id__eq=C3');
  t.equal(empty.total, 1, 'an empty carrier shows on its space row');
  t.match(empty.items[0], { id: 'space-1-1-4', depth: 3, box_id: null, sku_id: null, content_codes: '0'.repeat(32) });
});

t.test('the seeded SKUs carry their computed fields', async (t) => {
  const a = await sku('A');
  t.match(a, {
    id: 'A', name: 'Hex bolt M8', measurement_unit: 'PIECE', on_empty_sku_action: 'UNASSIGN', total_quantity: 3, max_quantity: 15,
    load_count: 2, fulfillable: 3, replenishable: 12, total_positive_inventory_bookings: 3, total_negative_inventory_bookings: 0, image_url: null,
  });
  t.equal(a.carrier_utilization, 0.5 + 0.125, 'a 1/2 box and a 1/8 box');
  t.equal(a.stock_fill_ratio, 3 / 15);
  t.match(a.created_at_utc, /^\d{4}-\d\d-\d\dT.*[+-]\d\d:\d\d$/);
  t.equal((await sku('C')).stock_fill_ratio, null, 'no loads: no ratio');
});

t.test('SKU create, patch, list filters, delete rules', async (t) => {
  let r = await send('POST', '/api/v2/sku', { id: 'D', name: 'Washer M8', measurement_unit: 'PACK', allowed_box_size_capacities: { '1/4': 50 }, balcony_ids: [1] });
  t.equal(r.status, 201);
  t.match(r.json, { id: 'D', measurement_unit: 'PACK', allowed_box_size_capacities: { '1/4': 50 }, balcony_ids: [1], total_quantity: 0, deleted_at: null });
  t.equal((await send('POST', '/api/v2/sku', { id: 'D' })).status, 409, 'an existing id');
  r = await send('PATCH', '/api/v2/sku/D', { name: 'Washer M8 zinc', on_empty_sku_action: 'DO_NOTHING' });
  t.match(r.json, { name: 'Washer M8 zinc', on_empty_sku_action: 'DO_NOTHING', measurement_unit: 'PACK' });
  t.equal((await send('PATCH', '/api/v2/sku/NOPE', { name: 'x' })).status, 404);

  t.same((await get('/api/v2/skus?measurement_unit__in=PACK&measurement_unit__in=METER&sort_by=id')).json.items.map((s: { id: string }) => s.id), ['B', 'C', 'D']);
  t.same((await get('/api/v2/skus?total_quantity__gte=1&sort_by=-total_quantity')).json.items.map((s: { id: string }) => s.id), ['B', 'A']);
  t.same((await get('/api/v2/skus?search=name:bolt OR name:tie&sort_by=id')).json.items.map((s: { id: string }) => s.id), ['A', 'B']);
  t.same((await get('/api/v2/skus?load_count__eq=2')).json.items.map((s: { id: string }) => s.id), ['A']);
  t.equal((await get('/api/v2/skus?total_quantity__gte=lots')).status, 422);
  t.equal((await get('/api/v2/skus?sort_by=-colour')).status, 422);

  r = await send('DELETE', '/api/v2/sku/A');
  t.equal(r.status, 409, 'loads hold it');
  t.match(r.json.detail, /2 load/);
  r = await send('DELETE', '/api/v2/sku/D');
  t.equal(r.status, 200);
  t.type(r.json.deleted_at_utc, 'string');
  t.equal((await send('DELETE', '/api/v2/sku/D')).status, 404, 'already deleted');
  t.match((await get('/api/v2/events?hex_value__eq=0x4001')).json.items[0], { component: 'inventory', description: 'SKU D "Washer M8 zinc" deleted' });
  t.type((await get('/api/v2/skus?id__eq=D')).json.items[0].deleted_at, 'string', 'deleted SKUs stay listed');
  t.equal((await send('POST', '/api/v2/load/2', { sku_id: 'D', item_count: 1, item_count_max: 2 })).status, 422, 'no new load of a deleted SKU');
  r = await send('POST', '/api/v2/sku', { id: 'D', name: 'Washer M8 again' });
  t.equal(r.status, 201, 'a deleted id can be created again');
  t.equal(r.json.deleted_at, null);
});

t.test('SKU bodies: bad input changes nothing', async (t) => {
  const before = await sku('B');
  for (const [body, loc] of [
    [{ id: 'E', allowed_box_size_capacities: { '1/4': 0 } }, 'body.allowed_box_size_capacities'],
    [{ id: 'E', allowed_box_size_capacities: { '1/4': -3 } }, 'body.allowed_box_size_capacities'],
    [{ id: 'E', balcony_ids: [-1] }, 'body.balcony_ids'],
    [{ id: 'E', balcony_ids: [9] }, 'body.balcony_ids.0'],
    [{ id: 'E', measurement_unit: 'BUCKET' }, 'body.measurement_unit'],
    [{ id: '' }, 'body.id'],
    [{ id: 'x'.repeat(129) }, 'body.id'],
    [{ name: 'no id' }, 'body.id'],
    [{ id: 5 }, 'body.id'],
  ] as const) {
    const r = await send('POST', '/api/v2/sku', body);
    t.equal(r.status, 422, JSON.stringify(body));
    t.ok(detailLocs(r).some((l) => l.startsWith(loc)), `${JSON.stringify(body)} names ${loc}: ${detailLocs(r)}`);
  }
  t.equal((await get('/api/v2/skus?id__eq=E')).json.total, 0);
  t.equal((await send('PATCH', '/api/v2/sku/B', { allowed_box_size_capacities: { '1': 3 } })).status, 422, 'below what a load already holds');
  t.same(await sku('B'), before);
});

t.test('SKU images: type from the bytes, overwrite only when asked, served back', async (t) => {
  let r = await upload('B', PNG);
  t.equal(r.status, 200);
  t.equal(r.json.image_url, '/api/v2/sku/B/image');
  const img = await c.request('/api/v2/sku/B/image');
  t.equal(img.headers['content-type'], 'image/png');
  t.equal(img.text.length, PNG.length);
  t.equal((await new Client(app.port, readFileSync(app.tls.certFile)).request('/api/v2/sku/B/image')).status, 401, 'authenticated callers only');

  r = await upload('B', JPEG);
  t.equal(r.status, 409, 'an image exists');
  r = await upload('B', JPEG, '?overwrite_existing_image=true');
  t.equal(r.status, 200);
  t.equal((await c.request('/api/v2/sku/B/image')).headers['content-type'], 'image/jpeg');
  t.equal(readdirSync(path.join(a.stateDir, 'sku-images')).length, 1, 'the replaced file is gone, no temporary left');

  r = await upload('B', Buffer.from('GIF? no, just text'), '?overwrite_existing_image=true');
  t.equal(r.status, 422);
  t.same(detailLocs(r), ['body.picture']);
  t.equal((await upload('NOPE', PNG)).status, 404);
  t.equal((await c.request('/api/v2/sku/C/image')).status, 404, 'no image yet');
  r = await upload('C', Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]));
  t.equal(r.status, 413);
  t.equal(readdirSync(path.join(a.stateDir, 'sku-images')).length, 1, 'refused uploads leave no file');
  t.notOk(existsSync(path.join(a.stateDir, 'sku-images', 'p.png')), 'client file names are never used');
  // Uploads are spooled under the state directory while they are handled, and removed after.
  await until('no upload spool file left', async () => readdirSync(path.join(a.stateDir, 'uploads')).length === 0);
});

t.test('boxes: create, overlap, patch, swap, swap-region, delete', async (t) => {
  let r = await send('POST', '/api/v2/box/C3', { section_code: '11000000' });
  t.equal(r.status, 201);
  t.same(r.json, { id: 5, section_code: 0b11000000, section_code_32: 0xff000000 });
  r = await send('POST', '/api/v2/box/C3', { section_code: '1'.repeat(16) });
  t.equal(r.status, 409);
  t.match(r.json.detail, /box\(es\) 5/);
  r = await send('POST', '/api/v2/box/C3', { section_code: 0b00110000 });
  t.equal(r.status, 201, 'an integer legacy code');
  t.equal(r.json.id, 6);
  t.equal((await send('POST', '/api/v2/box/NOPE', { section_code: '1' })).status, 404);

  r = await send('PATCH', '/api/v2/box/6', { section_code: '00001100' });
  t.same(r.json, { id: 6, section_code: 0b00001100, section_code_32: 0x0000ff00 });
  t.equal((await send('PATCH', '/api/v2/box/6', { section_code: '10000000' })).status, 409, 'onto box 5');
  t.equal((await send('PATCH', '/api/v2/box/99', { section_code: '1' })).status, 404);
  t.equal((await send('PATCH', '/api/v2/box/abc', { section_code: '1' })).status, 422);

  // Whatever a client read it can send back: the canonical code as section_code_32, the
  // inventory row's binary digits as section_code.
  r = await send('PATCH', '/api/v2/box/6', { section_code_32: 0x00000f00 });
  t.same(r.json, { id: 6, section_code: 0b00000100, section_code_32: 0x00000f00 }, 'the canonical code, beyond 255');
  const row = (await rows('box_id__eq=6')).items[0];
  r = await send('PATCH', '/api/v2/box/6', { section_code: row.section_code });
  t.equal(r.status, 200, `the inventory row's ${row.section_code} is taken back`);
  r = await send('PATCH', '/api/v2/box/6', { section_code_32: row.section_code_32 });
  t.same(r.json, { id: 6, section_code: 0b00000100, section_code_32: 0x00000f00 }, 'and its section_code_32');
  for (const body of [{}, { section_code: '1', section_code_32: 1 }, { section_code_32: 0 }, { section_code_32: 2 ** 32 }]) {
    r = await send('PATCH', '/api/v2/box/6', body);
    t.equal(r.status, 422, `${JSON.stringify(body)} refused`);
  }
  r = await send('PATCH', '/api/v2/box/6', { section_code: '00001100' });
  t.equal(r.status, 200, 'back where it was');

  r = await send('POST', '/api/v2/box/swap/5/3');
  t.equal(r.status, 200);
  t.same(r.json.source_box, { id: 5, section_code: 255, section_code_32: 0xffffffff });
  t.same(r.json.target_box, { id: 3, section_code: 0b11000000, section_code_32: 0xff000000 });
  t.same((await rows('carrier_id__eq=C2')).items.map((x: { box_id: number }) => x.box_id), [5], 'box 5 now stands on C2');
  t.equal((await send('POST', '/api/v2/box/swap/5/5')).status, 422);
  t.equal((await send('POST', '/api/v2/box/swap/5/99')).status, 404);

  // Two boxes on C1 trade places in one call; one at a time would overlap.
  r = await send('POST', '/api/v2/box/swap-region', { updates: [{ box_id: 1, section_code: '00001111' }, { box_id: 2, section_code: '11110000' }] });
  t.equal(r.status, 200);
  t.same(r.json.boxes.map((b: { section_code: number }) => b.section_code), [0b00001111, 0b11110000]);
  const before = await rows('carrier_id__eq=C1');
  r = await send('POST', '/api/v2/box/swap-region', { updates: [{ box_id: 1, section_code: '11110000' }, { box_id: 2, section_code: '1'.repeat(9) }] });
  t.equal(r.status, 422);
  t.same(detailLocs(r), ['body.updates.1.section_code']);
  t.equal((await send('POST', '/api/v2/box/swap-region', { updates: [{ box_id: 1, section_code: '11111000' }, { box_id: 2, section_code: '00001111' }] })).status, 409);
  t.equal((await send('POST', '/api/v2/box/swap-region', { updates: [{ box_id: 1, section_code: '1' }, { box_id: 1, section_code: '10' }] })).status, 422, 'a box twice');
  t.equal((await send('POST', '/api/v2/box/swap-region', { updates: [] })).status, 422);
  t.same(await rows('carrier_id__eq=C1'), before, 'refused region swaps changed nothing');

  t.equal((await send('DELETE', '/api/v2/box/1')).status, 409, 'it holds a load');
  r = await send('DELETE', '/api/v2/box/6');
  t.equal(r.status, 200);
  t.equal(r.json.id, 6);
  t.equal((await send('DELETE', '/api/v2/box/6')).status, 404);
});

t.test('section codes of every wrong length and digit are refused', async (t) => {
  for (const code of [9, 15, 17, 31, 33].map((n) => '1'.repeat(n)).concat(['12', '1x', '', '00000000', ' 1'])) {
    const r = await send('POST', '/api/v2/box/C3', { section_code: code });
    t.equal(r.status, 422, JSON.stringify(code));
    t.same(detailLocs(r), ['body.section_code']);
  }
  for (const code of [256, -1, 1.5, true, null, [1]]) t.equal((await send('POST', '/api/v2/box/C3', { section_code: code })).status, 422, JSON.stringify(code));
});

t.test('loads: add, patch, remove, with the SKU totals', async (t) => {
  let r = await send('POST', '/api/v2/load/2', { sku_id: 'C', item_count: 4, item_count_max: 9 });
  t.equal(r.status, 201);
  t.same(r.json, { sku_id: 'C', item_count: 4, item_count_max: 9, name: 'Wire 1.5 mm²' });
  t.match(await sku('C'), { total_quantity: 4, max_quantity: 9, load_count: 1, total_positive_inventory_bookings: 4 });
  t.equal((await send('POST', '/api/v2/load/2', { sku_id: 'A', item_count: 1, item_count_max: 2 })).status, 409, 'one load per box');

  r = await send('PATCH', '/api/v2/load/2', { item_count: 1 });
  t.same(r.json, { sku_id: 'C', item_count: 1, item_count_max: 9, name: 'Wire 1.5 mm²' });
  t.match(await sku('C'), { total_quantity: 1, total_positive_inventory_bookings: 4, total_negative_inventory_bookings: -3 });
  r = await send('PATCH', '/api/v2/load/2', { sku_id: 'A' });
  t.equal(r.json.sku_id, 'A');
  t.match(await sku('C'), { total_quantity: 0, load_count: 0 });
  t.match(await sku('A'), { total_quantity: 4, load_count: 3 });

  const before = await sku('A');
  for (const [body, loc] of [
    [{ item_count: -1 }, 'body.item_count'],
    [{ item_count: 10 }, 'body.item_count'],
    [{ item_count_max: 0 }, 'body.item_count_max'],
    [{ item_count: 'many' }, 'body.item_count'],
    [{ sku_id: 'NOPE' }, 'body.sku_id'],
  ] as const) {
    const r = await send('PATCH', '/api/v2/load/2', body);
    t.equal(r.status, 422, JSON.stringify(body));
    t.same(detailLocs(r), [loc], JSON.stringify(body));
  }
  t.same(await sku('A'), before, 'refused patches changed nothing');
  t.equal((await send('POST', '/api/v2/load/99', { sku_id: 'A', item_count: 1, item_count_max: 2 })).status, 404);
  t.equal((await send('POST', '/api/v2/load/2', { sku_id: 'A', item_count: 1 })).status, 422, 'item_count_max missing');

  // Capacities by box size: box 2 is a 1/2 box, box 4 a 1/8 one.
  t.equal((await send('PATCH', '/api/v2/sku/A', { allowed_box_size_capacities: { '1/8': 2 } })).status, 422, 'box 4 already promises 5');
  t.equal((await send('PATCH', '/api/v2/sku/A', { allowed_box_size_capacities: { '1/8': 5 } })).status, 200);
  t.equal((await send('PATCH', '/api/v2/load/4', { item_count_max: 6 })).status, 422, 'above the capacity for a 1/8 box');

  r = await send('DELETE', '/api/v2/load/2');
  t.same(r.json, { sku_id: 'A', item_count: 1, item_count_max: 9, name: 'Hex bolt M8' });
  t.equal((await send('DELETE', '/api/v2/load/2')).status, 404, 'no load any more');
  t.match(await sku('A'), { total_quantity: 3, load_count: 2 });
});

t.test('the inventory view: one row per box and per empty space, filters, search, sort', async (t) => {
  const all = await rows('');
  const boxRows = all.items.filter((r: { box_id: number | null }) => r.box_id !== null);
  t.equal(boxRows.length, 5, 'boxes 1-5');
  const spaces = smallSite().levels[0]!.rows.join('').split('').filter((ch) => ch === 'S').length;
  const occupied = new Set(boxRows.map((r: { position_x: number; position_y: number }) => `${r.position_x}:${r.position_y}`)).size;
  t.equal(all.total, 5 + spaces - occupied, 'every empty space has its row');

  const empty = await rows('box_id__eq=none');
  t.equal(empty.total, spaces - occupied);

  const box1 = (await rows('box_id__eq=1')).items[0];
  t.match(box1, {
    id: 'box-1', carrier_id: 'C1', box_size: 0.5, box_size_string: '1/2', box_height_string_max: 350, section_code: '00001111', section_code_32: 0x0000ffff,
    depth: 1, level_id: 1, position_x: 1, position_y: 2, sku_id: 'A', sku_name: 'Hex bolt M8', item_count: 3, item_count_max: 10, system_quantity: 3, measurement_unit: 'PIECE',
  });
  t.equal(box1.content_codes, '1'.repeat(32), 'boxes 1 and 2 fill C1');
  // docs/inventory.md works these out: turn in, a cell in, lift, about-turn, a cell out, a cell to the port, set down.
  t.equal(box1.eta, 5.6);
  t.equal(box1.eta_int, 6);

  // C2 stands behind C1 in the same lane (depth 2): one carrier to move first.
  const box5 = (await rows('box_id__eq=5')).items[0];
  t.equal(box5.depth, 2);
  t.equal(box5.eta, 17.2, 'fetching from depth 2 (6.4 s) after setting C1 aside on the buffer (10.8 s)');

  t.same((await rows('sku_id__eq=A&sort_by=-box_id')).items.map((r: { box_id: number }) => r.box_id), [4, 1]);
  const unloaded = await rows('sku_id__eq=none');
  t.ok(unloaded.total > 0 && unloaded.items.every((r: { sku_id: null; box_id: number | null }) => r.sku_id === null && r.box_id !== null), 'boxes without a load, no empty spaces');
  t.equal((await rows('level_id__in=1&level_id__in=2')).total, all.total);
  t.same((await rows('depth__in=2&depth__in=3&box_id__ilike=5')).items.map((r: { box_id: number }) => r.box_id), [5]);
  t.same((await rows('search=sku_name:bolt AND carrier_id:C4')).items.map((r: { box_id: number }) => r.box_id), [4]);
  t.same((await rows('search=*:cable')).items.map((r: { box_id: number }) => r.box_id), [3], 'SKU B is in box 3 only');
  t.same((await rows('item_count__eq=3')).items.map((r: { box_id: number }) => r.box_id), [1]);
  t.same((await rows('box_size_string__in=1/4&box_size_string__in=1/8&sort_by=box_id')).items.map((r: { box_id: number }) => r.box_id), [3, 4]);
  t.ok((await rows('sort_by=-eta,box_id')).items.length > 0);

  // Full-text search keeps each row's text until the row or its SKU changes.
  t.same((await rows('search=*:hex&sort_by=box_id')).items.map((r: { box_id: number }) => r.box_id), [1, 4]);
  await send('PATCH', '/api/v2/sku/A', { name: 'Zinc washer' });
  t.same((await rows('search=*:hex')).items, [], 'the old name is gone');
  t.same((await rows('search=*:zinc&sort_by=box_id')).items.map((r: { box_id: number }) => r.box_id), [1, 4], 'the new name is found');
  // Rows are replaced, never written: an item served before (and kept serialized) shows the change.
  t.equal(app.view.rowsImmutable, true);
  t.equal((await rows('box_id__eq=1')).items[0].sku_name, 'Zinc washer', 'a kept item follows the SKU');
  await send('PATCH', '/api/v2/sku/A', { name: 'Hex bolt M8' });
  await send('PATCH', '/api/v2/box/4', { section_code: '0000000000000001' });
  t.same((await rows('search=*:1/16')).items.map((r: { box_id: number }) => r.box_id), [4], 'a moved box is found by its new size');

  for (const q of ['depth__eq=abc', 'sort_by=colour', 'search=(a:b', 'page=0', 'size=0', 'level_id__in=x', 'position_x__eq=1.5']) {
    const r = await get(`/api/v2/inventory_view?${q}`);
    t.equal(r.status, 422, q);
  }
});

/** What the API shows of the inventory: a refused request must leave it as it was. */
const inventoryState = async () => JSON.stringify([(await rows('sort_by=id')).items, (await get('/api/v2/skus?size=500&sort_by=id')).json.items]);
const errorKeys = (r: Answer) => Object.keys(r.json).sort();

t.test('bad input on every box, load, SKU and image endpoint: the documented error, nothing changed', async (t) => {
  const before = await inventoryState();
  const wrongCodes = [9, 15, 17, 31, 33].map((n) => '1'.repeat(n)).concat(['12', '1x', '2'.repeat(16), '0'.repeat(32)]);
  for (const code of wrongCodes) {
    let r = await send('PATCH', '/api/v2/box/2', { section_code: code });
    t.equal(r.status, 422, `PATCH /box ${code}`);
    t.same(detailLocs(r), ['body.section_code'], `PATCH /box ${code}`);
    r = await send('POST', '/api/v2/box/swap-region', { updates: [{ box_id: 2, section_code: '11110000' }, { box_id: 1, section_code: code }] });
    t.equal(r.status, 422, `swap-region ${code}`);
    t.same(detailLocs(r), ['body.updates.1.section_code'], `swap-region ${code}`);
  }

  // Box 2 is an empty 1/2 box.
  for (const [body, loc] of [
    [{ sku_id: 'A', item_count: -1, item_count_max: 5 }, 'body.item_count'],
    [{ sku_id: 'A', item_count: 1, item_count_max: -5 }, 'body.item_count_max'],
    [{ sku_id: 'A', item_count: 6, item_count_max: 5 }, 'body.item_count'],
    [{ sku_id: 'A', item_count: 3_000_000_000, item_count_max: 3_000_000_000 }, 'body.item_count'],
    [{ sku_id: 'NOPE', item_count: 1, item_count_max: 5 }, 'body.sku_id'],
  ] as const) {
    const r = await send('POST', '/api/v2/load/2', body);
    t.equal(r.status, 422, JSON.stringify(body));
    t.ok(detailLocs(r).includes(loc), `${JSON.stringify(body)} names ${loc}: ${detailLocs(r)}`);
  }

  for (const caps of [{ '1/2': 0 }, { '1/2': -1 }, { '1/2': 1.5 }, { half: 3 }]) {
    const r = await send('PATCH', '/api/v2/sku/A', { allowed_box_size_capacities: caps });
    t.equal(r.status, 422, JSON.stringify(caps));
    t.ok(detailLocs(r).every((l) => l.startsWith('body.allowed_box_size_capacities')), `${JSON.stringify(caps)}: ${detailLocs(r)}`);
  }

  for (const [method, p, json] of [
    ['DELETE', '/api/v2/sku/NOPE', undefined],
    ['PATCH', '/api/v2/sku/NOPE', { name: 'x' }],
    ['DELETE', '/api/v2/load/99', undefined],
    ['PATCH', '/api/v2/load/99', { item_count: 1 }],
    ['DELETE', '/api/v2/box/99', undefined],
    ['POST', '/api/v2/box/swap-region', { updates: [{ box_id: 2, section_code: '11110000' }, { box_id: 99, section_code: '00001111' }] }],
    ['POST', '/api/v2/box/swap/2/99', undefined],
  ] as const) {
    const r = await send(method, p, json);
    t.equal(r.status, 404, `${method} ${p}`);
    t.same(errorKeys(r), ['code', 'detail', 'request_id'], `${method} ${p}: the error body`);
    t.match(r.json.detail, /does not exist|holds no load/, `${method} ${p}: ${r.json.detail}`);
  }
  t.equal((await send('DELETE', '/api/v2/load/abc')).status, 422, 'a box id that is no integer');

  const form = (fields: { name: string; value: string | Buffer; filename?: string; type?: string }[]) => {
    const m = multipart(fields);
    return c.request('/api/v2/sku/image', { method: 'POST', body: m.body, headers: { 'content-type': m.contentType } });
  };
  let r = await form([{ name: 'picture', value: PNG, filename: 'p.png', type: 'image/png' }]);
  t.equal(r.status, 422, 'no sku_id');
  t.same(detailLocs(r), ['body.sku_id']);
  r = await form([{ name: 'sku_id', value: 'C' }]);
  t.equal(r.status, 422, 'no picture');
  t.same(detailLocs(r), ['body.picture']);
  t.equal((await sku('C')).image_url, null);

  t.equal(await inventoryState(), before, 'refused requests changed nothing');
});

t.test('an SKU without loads cannot be deleted while open work holds it', async (t) => {
  t.match(await sku('C'), { load_count: 0, deleted_at: null });
  t.equal((await send('PATCH', '/api/v2/sku/C', { allowed_box_size_capacities: { '1/2': 10, '1': 10 } })).status, 200);
  // A putaway of C plans a REFILLING job into an empty box: work that holds the SKU.
  const put = await send('POST', '/api/v2/requests', { type: 'PUTAWAY', entities: [{ sku_id: 'C', quantity: 5 }] });
  t.equal(put.status, 201, JSON.stringify(put.json));
  const r = await send('DELETE', '/api/v2/sku/C');
  t.equal(r.status, 409);
  t.same(errorKeys(r), ['code', 'detail', 'request_id']);
  t.match(r.json.detail, `SKU C cannot be deleted: open request ${put.json.id} (job REFILLING`);
  t.equal((await sku('C')).deleted_at, null, 'still live');
  t.equal((await send('POST', `/api/v2/requests/${put.json.id}/cancel`, {})).status, 200);
  const done = await send('DELETE', '/api/v2/sku/C');
  t.equal(done.status, 200, `once the work is cancelled: ${JSON.stringify(done.json)}`);
});

t.test('the inventory survives a restart and is not seeded twice', async (t) => {
  const before = await sku('A');
  const { config } = app;
  const token = c.token;
  c.close();
  await app.close();
  app = await startApp(config, memoryLogger().logger, { checkResponses: true });
  c = new Client(app.port, readFileSync(app.tls.certFile), token);
  t.same(await sku('A'), before);
  t.equal((await rows('box_id__eq=1')).total, 1);
  t.equal((await rows('')).total, (await rows('')).items.length);
});
