/** Request and response shapes of spec 2.8 and 2.10-2.13: levels, balconies, boxes, loads, SKUs, inventory rows. */
import Type from 'typebox';
import { MEASUREMENT_UNITS, ON_EMPTY_SKU_ACTIONS } from '../../domain/site/layout.js';
import { Nullable, Timestamp } from './common.js';

export const Level = Type.Object({ id: Type.Integer(), height: Type.Number() }, { description: 'Level (spec 2.8)' });
export const Balcony = Type.Object({ id: Type.Integer() }, { description: 'Balcony (spec 2.8)' });

export const SectionCode = Type.Union([
  // At least one section: the lookahead wants a 1 (docs/inventory.md; the domain checks it too).
  Type.String({ pattern: '^(?=[01]*1)(?:[01]{1,8}|[01]{16}|[01]{32})$', description: 'Binary digits, at least one 1: at most 8 (legacy), exactly 16 or exactly 32; section 0 first' }),
  Type.Integer({ minimum: 1, maximum: 255, description: 'Legacy 8-bit code, 1 to 255 (0 would take no section)' }),
], { description: 'Sections of the carrier the box takes (docs/inventory.md)' });

export const BoxResponse = Type.Object({
  id: Type.Integer(),
  section_code: Type.Integer({ description: 'Legacy code: 8 sections as the bits of an integer (0..255), derived' }),
  section_code_32: Type.Integer({ description: 'Canonical code: 32 sections as the bits of an integer; source of truth for overlap and placement' }),
}, { description: 'Box (spec 2.10)' });

export const BoxCodeBody = Type.Object({ section_code: SectionCode });

export const SwapRegionBody = Type.Object({
  updates: Type.Array(Type.Object({ box_id: Type.Integer({ minimum: 1 }), section_code: SectionCode }), { minItems: 1, maxItems: 1000 }),
});

const Count = Type.Integer({ minimum: 0, maximum: 2_000_000_000 });
const CountMax = Type.Integer({ minimum: 1, maximum: 2_000_000_000 });
const SkuId = Type.String({ minLength: 1, maxLength: 128 });

export const LoadResponse = Type.Object({
  sku_id: Type.String(),
  item_count: Type.Integer(),
  item_count_max: Type.Integer(),
  name: Nullable(Type.String({ description: 'Name of the SKU' })),
}, { description: 'Load (spec 2.11)' });

export const LoadBody = Type.Object({ sku_id: SkuId, item_count: Count, item_count_max: CountMax });
export const LoadPatchBody = Type.Partial(LoadBody);

const MeasurementUnit = Type.Enum([...MEASUREMENT_UNITS], { default: 'PIECE' });
const OnEmptySkuAction = Type.Enum([...ON_EMPTY_SKU_ACTIONS], { default: 'UNASSIGN' });
const Capacities = Type.Record(Type.String({ pattern: '^[0-9]+(/[0-9]+)?$', maxLength: 8 }), Type.Integer({ exclusiveMinimum: 0, maximum: 2_000_000_000 }), {
  description: 'Box-size key ("1/4", "1/2", "1", "3/32": the fraction of a carrier the box takes) -> most items of this SKU such a box holds',
  additionalProperties: false,
});
const BalconyIds = Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 1000 });
const SkuName = Type.String({ maxLength: 255 });

const skuFields = {
  name: Type.Optional(Nullable(SkuName)),
  measurement_unit: Type.Optional(MeasurementUnit),
  on_empty_sku_action: Type.Optional(OnEmptySkuAction),
  allowed_box_size_capacities: Type.Optional(Nullable(Capacities)),
  balcony_ids: Type.Optional(Nullable(BalconyIds)),
};

export const SkuCreateBody = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, pattern: '^\\S(.*\\S)?$' }), ...skuFields });
export const SkuPatchBody = Type.Object(skuFields);

export const SkuResponse = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  measurement_unit: Type.String(),
  on_empty_sku_action: Type.String(),
  allowed_box_size_capacities: Nullable(Type.Record(Type.String(), Type.Integer())),
  balcony_ids: Nullable(Type.Array(Type.Integer())),
  image_url: Nullable(Type.String()),
  total_quantity: Type.Integer(),
  max_quantity: Type.Integer(),
  total_positive_inventory_bookings: Type.Integer(),
  total_negative_inventory_bookings: Type.Integer(),
  fulfillable: Type.Integer(),
  replenishable: Type.Integer(),
  load_count: Type.Integer(),
  carrier_utilization: Type.Number(),
  stock_fill_ratio: Nullable(Type.Number()),
  ...Timestamp('created_at'),
  ...Timestamp('updated_at'),
  ...Timestamp('deleted_at', true),
}, { description: 'SKU (spec 2.13); computed fields are defined in docs/inventory.md' });

export const InventoryRowResponse = Type.Object({
  id: Type.String(),
  carrier_id: Nullable(Type.String()),
  box_id: Nullable(Type.Integer()),
  box_size: Nullable(Type.Number()),
  box_size_string: Nullable(Type.String()),
  box_height_string_max: Type.Number(),
  section_code: Nullable(Type.String()),
  section_code_32: Nullable(Type.Integer()),
  content_codes: Nullable(Type.String()),
  depth: Nullable(Type.Integer()),
  level_id: Type.Integer(),
  position_x: Type.Integer(),
  position_y: Type.Integer(),
  eta: Nullable(Type.Number()),
  eta_int: Nullable(Type.Integer()),
  sku_id: Nullable(Type.String()),
  sku_name: Nullable(Type.String()),
  item_count: Nullable(Type.Integer()),
  item_count_max: Nullable(Type.Integer()),
  system_quantity: Nullable(Type.Integer()),
  measurement_unit: Nullable(Type.String()),
  on_empty_sku_action: Nullable(Type.String()),
  ...Timestamp('updated_at', true),
}, { description: 'Inventory view row (spec 2.12): a box on a carrier, or an empty storage space; fields in docs/inventory.md' });
