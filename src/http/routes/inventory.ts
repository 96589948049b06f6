/** Spec 4.2 (levels, balconies), 4.4 boxes, 4.5 loads, 4.6 inventory view, 4.12 SKUs. */
import Type from 'typebox';
import { NotFoundError } from '../../domain/errors.js';
import { ErrorBody } from '../errors.js';
import type { Inventory } from '../../domain/inventory/inventory.js';
import type { SkuImages } from '../../domain/inventory/images.js';
import type { BoxRecord, LoadRecord, SkuRecord } from '../../domain/inventory/records.js';
import { boxSize, codeDigits, legacyCode, SECTIONS } from '../../domain/inventory/section-code.js';
import type { InventoryRow, InventoryView } from '../../domain/inventory/view.js';
import type { FieldTable } from '../../domain/list/index.js';
import type { SkuTable } from '../../domain/inventory/sku-table.js';
import type { Site } from '../../domain/site/load.js';
import { legacyStamp, stampPair, utcStamp } from '../../domain/time.js';
import { listRoute } from '../list-route.js';
import { Binary } from '../multipart.js';
import { Reply, route, type AnyRoute, type UploadedFile } from '../route.js';
import {
  Balcony, BoxCodeBody, BoxResponse, InventoryRowResponse, Level, LoadBody, LoadPatchBody, LoadResponse, MeasurementUnit, OnEmptySkuAction, SkuCreateBody, SkuPatchBody, SkuResponse,
  SwapRegionBody,
} from '../schemas/inventory.js';

export interface InventoryRouteDeps {
  site: Site;
  inventory: Inventory;
  view: InventoryView;
  /** Every SKU in memory: the SKU list's source (a search reads them all). */
  skus: SkuTable;
  images: SkuImages;
  timeZone: string;
  maxPageSize: number;
}

const BoxIdParam = Type.Object({ box_id: Type.Integer({ minimum: 1 }) });
const SkuIdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });

/** Derived SKU figures (docs/inventory.md). */
const fulfillable = (s: SkuRecord) => Math.max(0, s.total_quantity - s.reserved_out);
const replenishable = (s: SkuRecord) => Math.max(0, s.max_quantity - s.total_quantity - s.reserved_in);
const carrierUtilization = (s: SkuRecord) => s.sections / SECTIONS;
const stockFillRatio = (s: SkuRecord) => (s.max_quantity > 0 ? s.total_quantity / s.max_quantity : null);

/** The SKU list's fields (spec 4.12). */
export const SKU_FIELDS: FieldTable<SkuRecord> = {
  id: { type: 'string', filters: ['eq', 'ilike'], search: true },
  name: { type: 'string', filters: ['ilike'], search: true },
  measurement_unit: { type: 'string', filters: ['in'], values: MeasurementUnit },
  on_empty_sku_action: { type: 'string', filters: ['in'], values: OnEmptySkuAction },
  total_quantity: { type: 'integer', filters: ['eq', 'gte', 'lte', 'ilike'] },
  max_quantity: { type: 'integer', filters: ['eq', 'gte', 'lte', 'ilike'] },
  load_count: { type: 'integer', filters: ['eq', 'ilike'] },
  fulfillable: { type: 'integer', filters: ['ilike'], get: fulfillable },
  replenishable: { type: 'integer', filters: ['ilike'], get: replenishable },
  carrier_utilization: { type: 'number', filters: ['ilike'], search: true, get: carrierUtilization },
  stock_fill_ratio: { type: 'number', search: true, get: stockFillRatio },
  total_positive_inventory_bookings: { type: 'integer' },
  total_negative_inventory_bookings: { type: 'integer' },
  created_at: { type: 'datetime', filters: ['gte', 'lte'] },
  updated_at: { type: 'datetime', filters: ['gte', 'lte'] },
  deleted_at: { type: 'datetime', filters: ['gte', 'lte'] },
};

/**
 * The inventory view's fields; derived ones read the row and the SKU facts. Fields a search
 * reads from every row take what the view keeps in the row (text forms of the code, the SKU
 * slot) rather than computing it.
 */
export function inventoryFields(): FieldTable<InventoryRow> {
  const sku = (r: InventoryRow) => r.sku?.facts;
  return {
    id: { type: 'string' },
    carrier_id: { type: 'string', filters: ['eq', 'ilike'], search: true },
    box_id: { type: 'integer', filters: ['eq', 'ilike'], none: true },
    box_size: { type: 'number', get: (r) => (r.code32 === null ? null : boxSize(r.code32)) },
    box_size_string: { type: 'string', filters: ['eq', 'ilike', 'in'], search: true, get: (r) => r.box_size_string },
    box_height_string_max: { type: 'number', filters: ['eq', 'ilike'], search: true, get: (r) => r.box_height_max },
    section_code: { type: 'string', filters: ['eq'], search: true, get: (r) => r.section_code },
    section_code_32: { type: 'integer', filters: ['eq'], search: true, get: (r) => r.code32 },
    content_codes: { type: 'string', filters: ['ilike'], get: (r) => (r.carrier_id === null ? null : codeDigits(r.occupancy, 32)) },
    depth: { type: 'integer', filters: ['eq', 'gte', 'lte', 'ilike', 'in'] },
    level_id: { type: 'integer', filters: ['in'] },
    position_x: { type: 'integer', filters: ['eq', 'ilike'] },
    position_y: { type: 'integer', filters: ['eq', 'ilike'] },
    eta: { type: 'number' },
    eta_int: { type: 'integer', filters: ['ilike'], get: (r) => (r.eta === null ? null : Math.round(r.eta)) },
    sku_id: { type: 'string', filters: ['eq', 'ilike'], none: true, isNone: (r) => r.box_id !== null && r.sku_id === null, search: true },
    sku_name: { type: 'string', filters: ['ilike'], search: true, get: (r) => sku(r)?.name ?? null },
    item_count: { type: 'integer', filters: ['eq', 'ilike'] },
    item_count_max: { type: 'integer', filters: ['eq', 'ilike'] },
    system_quantity: { type: 'integer', filters: ['eq', 'ilike'], get: (r) => r.item_count },
    measurement_unit: { type: 'string', filters: ['in'], values: MeasurementUnit, get: (r) => sku(r)?.measurement_unit ?? null },
    on_empty_sku_action: { type: 'string', get: (r) => sku(r)?.on_empty_sku_action ?? null },
    updated_at: { type: 'datetime', filters: ['gte', 'lte'] },
  };
}

/** The routes of spec 4.2 (levels, balconies), 4.4, 4.5, 4.6 and 4.12. */
export function inventoryRoutes(deps: InventoryRouteDeps): AnyRoute[] {
  const { inventory, view, images, site, timeZone: zone } = deps;
  const listOptions = { maxPageSize: deps.maxPageSize, timeZone: zone };

  const boxView = (b: BoxRecord) => ({ id: b.id, section_code: legacyCode(b.code32), section_code_32: b.code32 });
  const loadView = (l: LoadRecord) => ({ sku_id: l.sku_id, item_count: l.item_count, item_count_max: l.item_count_max, name: deps.skus.get(l.sku_id)?.name ?? null });
  const skuView = (s: SkuRecord) => ({
    id: s.id, name: s.name, measurement_unit: s.measurement_unit, on_empty_sku_action: s.on_empty_sku_action,
    allowed_box_size_capacities: s.allowed_box_size_capacities, balcony_ids: s.balcony_ids,
    image_url: s.image ? `/api/v2/sku/${encodeURIComponent(s.id)}/image` : null,
    total_quantity: s.total_quantity, max_quantity: s.max_quantity,
    total_positive_inventory_bookings: s.total_positive_inventory_bookings, total_negative_inventory_bookings: s.total_negative_inventory_bookings,
    fulfillable: fulfillable(s), replenishable: replenishable(s), load_count: s.load_count,
    carrier_utilization: carrierUtilization(s), stock_fill_ratio: stockFillRatio(s),
    ...stampPair('created_at', s.created_at, zone),
    ...stampPair('updated_at', s.updated_at, zone),
    ...stampPair('deleted_at', s.deleted_at, zone),
  });
  const rowFields = inventoryFields();
  const rowView = (r: InventoryRow) => {
    const sku = r.sku?.facts;
    return {
      id: r.id, carrier_id: r.carrier_id, box_id: r.box_id,
      box_size: r.code32 === null ? null : boxSize(r.code32),
      box_size_string: r.box_size_string,
      box_height_string_max: r.box_height_max,
      section_code: r.section_code,
      section_code_32: r.code32,
      content_codes: r.carrier_id === null ? null : codeDigits(r.occupancy, 32),
      depth: r.depth, level_id: r.level_id, position_x: r.position_x, position_y: r.position_y,
      eta: r.eta, eta_int: r.eta === null ? null : Math.round(r.eta),
      sku_id: r.sku_id, sku_name: sku?.name ?? null,
      item_count: r.item_count, item_count_max: r.item_count_max, system_quantity: r.item_count,
      measurement_unit: sku?.measurement_unit ?? null, on_empty_sku_action: sku?.on_empty_sku_action ?? null,
      updated_at: legacyStamp(r.updated_at, zone), updated_at_utc: utcStamp(r.updated_at),
    };
  };

  return [
    route({
      method: 'GET', path: '/api/v2/levels', tag: 'System', permission: 'system:view', summary: 'Levels of the site',
      responses: { 200: Type.Array(Level) },
      handler: () => site.levels.map((l) => ({ id: l.id, height: l.height })),
    }),
    route({
      method: 'GET', path: '/api/v2/balconies', tag: 'System', permission: 'system:view', summary: 'Balconies of the site',
      responses: { 200: Type.Array(Balcony) },
      handler: () => site.balconies.map((b) => ({ id: b.id })),
    }),

    // ---------------------------------------------------------------- SKUs
    listRoute({
      path: '/api/v2/skus', tag: 'SKUs', permission: 'skus:view', summary: 'List SKUs, deleted ones included (deleted_at set)',
      fields: SKU_FIELDS, source: deps.skus,
      item: SkuResponse, view: skuView, options: listOptions,
    }),
    route({
      method: 'POST', path: '/api/v2/sku', tag: 'SKUs', permission: 'skus:create', summary: 'Create an SKU (or bring back a deleted one with the same id)',
      body: SkuCreateBody, responses: { 201: SkuResponse, 409: ErrorBody },
      handler: async ({ body }) => {
        const { id, ...input } = body;
        return skuView(await inventory.createSku(id, input));
      },
    }),
    route({
      method: 'PATCH', path: '/api/v2/sku/{id}', tag: 'SKUs', permission: 'skus:update', summary: 'Change an SKU',
      params: SkuIdParam, body: SkuPatchBody, responses: { 200: SkuResponse, 404: ErrorBody, 409: ErrorBody },
      handler: async ({ params, body }) => skuView(await inventory.patchSku(params.id, body)),
    }),
    route({
      method: 'DELETE', path: '/api/v2/sku/{id}', tag: 'SKUs', permission: 'skus:delete',
      summary: 'Delete an SKU (soft: deleted_at is set); refused with 409 while loads or open work hold it',
      params: SkuIdParam, responses: { 200: SkuResponse, 404: ErrorBody, 409: ErrorBody },
      handler: async ({ params }) => skuView(await inventory.deleteSku(params.id)),
    }),
    route({
      method: 'POST', path: '/api/v2/sku/image', tag: 'SKUs', permission: 'skus:update',
      summary: 'Store an SKU image (PNG, JPEG, GIF or WebP, checked from its bytes; at most 5 MiB)',
      query: Type.Object({ overwrite_existing_image: Type.Optional(Type.Boolean({ default: false, description: 'Replace an existing image' })) }),
      body: { multipart: Type.Object({ sku_id: Type.String({ minLength: 1, maxLength: 128 }), picture: Binary('The image file') }) },
      responses: { 200: SkuResponse, 404: ErrorBody, 409: ErrorBody },
      handler: async ({ query, body }) => {
        const picture = body.picture as UploadedFile;
        const image = await images.write(picture);
        try {
          const { sku, replaced } = await inventory.setSkuImage(body.sku_id as string, image, query.overwrite_existing_image ?? false);
          images.discard(replaced);
          return skuView(sku);
        } catch (err) {
          images.discard(image);
          throw err;
        }
      },
    }),
    route({
      method: 'GET', path: '/api/v2/sku/{id}/image', tag: 'SKUs', permission: 'skus:view', summary: 'The image of an SKU (its image_url)',
      params: SkuIdParam,
      responses: { 200: { description: 'The image', contentType: 'image/*' }, 404: ErrorBody },
      handler: ({ params }) => {
        const sku = inventory.sku(params.id);
        if (!sku.image) throw new NotFoundError(`SKU ${params.id} has no image`);
        return new Reply(images.read(sku.image), sku.image.type, 200, { 'cache-control': 'private, max-age=60' });
      },
    }),

    // ---------------------------------------------------------------- boxes
    route({
      method: 'POST', path: '/api/v2/box/swap-region', tag: 'Boxes', permission: 'inventory:boxes',
      summary: 'Apply several section-code changes atomically; the end state must have no overlapping boxes',
      body: SwapRegionBody, responses: { 200: Type.Object({ boxes: Type.Array(BoxResponse) }), 404: ErrorBody, 409: ErrorBody },
      handler: async ({ body }) => ({ boxes: (await inventory.swapRegion(body.updates)).map(boxView) }),
    }),
    route({
      method: 'POST', path: '/api/v2/box/swap/{source_box_id}/{target_box_id}', tag: 'Boxes', permission: 'inventory:boxes',
      summary: 'Swap the placement (carrier and sections) of two boxes atomically',
      params: Type.Object({ source_box_id: Type.Integer({ minimum: 1 }), target_box_id: Type.Integer({ minimum: 1 }) }),
      responses: { 200: Type.Object({ source_box: BoxResponse, target_box: BoxResponse }), 404: ErrorBody },
      handler: async ({ params }) => {
        const [source, target] = await inventory.swapBoxes(params.source_box_id, params.target_box_id);
        return { source_box: boxView(source), target_box: boxView(target) };
      },
    }),
    route({
      method: 'DELETE', path: '/api/v2/box/{box_id}', tag: 'Boxes', permission: 'inventory:boxes', summary: 'Delete an empty box',
      params: BoxIdParam, responses: { 200: BoxResponse, 404: ErrorBody, 409: ErrorBody },
      handler: async ({ params }) => boxView(await inventory.deleteBox(params.box_id)),
    }),
    route({
      method: 'PATCH', path: '/api/v2/box/{box_id}', tag: 'Boxes', permission: 'inventory:boxes', summary: 'Move a box to other sections of its carrier',
      params: Type.Object({ box_id: Type.String({ pattern: '^[1-9][0-9]{0,14}$', description: 'Box id (digits)' }) }),
      body: BoxCodeBody, responses: { 200: BoxResponse, 404: ErrorBody, 409: ErrorBody },
      handler: async ({ params, body }) => boxView(await inventory.patchBox(Number(params.box_id), body)),
    }),
    route({
      method: 'POST', path: '/api/v2/box/{carrier_id}', tag: 'Boxes', permission: 'inventory:boxes', summary: 'Create a box on a carrier',
      params: Type.Object({ carrier_id: Type.String({ minLength: 1, maxLength: 64, description: 'The carrier that gets the new box' }) }),
      body: BoxCodeBody, responses: { 201: BoxResponse, 404: ErrorBody, 409: ErrorBody },
      handler: async ({ params, body }) => boxView(await inventory.createBox(params.carrier_id, body)),
    }),

    // ---------------------------------------------------------------- loads
    route({
      method: 'POST', path: '/api/v2/load/{box_id}', tag: 'Loads', permission: 'inventory:loads', summary: 'Put a load of an SKU into an empty box',
      params: BoxIdParam, body: LoadBody, responses: { 201: LoadResponse, 404: ErrorBody, 409: ErrorBody },
      handler: async ({ params, body }) => loadView(await inventory.addLoad(params.box_id, body)),
    }),
    route({
      method: 'PATCH', path: '/api/v2/load/{box_id}', tag: 'Loads', permission: 'inventory:loads', summary: 'Change the load of a box',
      params: BoxIdParam, body: LoadPatchBody, responses: { 200: LoadResponse, 404: ErrorBody },
      handler: async ({ params, body }) => loadView(await inventory.patchLoad(params.box_id, body)),
    }),
    route({
      method: 'DELETE', path: '/api/v2/load/{box_id}', tag: 'Loads', permission: 'inventory:loads', summary: 'Remove the load of a box',
      params: BoxIdParam, responses: { 200: LoadResponse, 404: ErrorBody },
      handler: async ({ params }) => loadView(await inventory.removeLoad(params.box_id)),
    }),

    // ---------------------------------------------------------------- inventory view
    listRoute({
      path: '/api/v2/inventory_view', tag: 'Inventory', permission: 'inventory:view',
      summary: 'One row per box on a carrier and one per empty storage space',
      description: 'box_id__eq=none lists empty storage spaces; sku_id__eq=none lists boxes without a load. Fields: docs/inventory.md.',
      fields: rowFields, source: view, item: InventoryRowResponse, view: rowView, options: listOptions,
    }),
  ];
}
