/** Request and response shapes of spec 2.8 and 2.10-2.13: levels, balconies, boxes, loads, SKUs, inventory rows. */
import Type from 'typebox';
import {
  BoxCodeBody, LoadBody, LoadPatchBody, MeasurementUnit, OnEmptySkuAction, SectionCode, SkuCreateBody, SkuPatchBody, SwapRegionBody,
} from '../../domain/inventory/inputs.js';
import { Nullable, Timestamp } from './common.js';

export { BoxCodeBody, LoadBody, LoadPatchBody, MeasurementUnit, OnEmptySkuAction, SectionCode, SkuCreateBody, SkuPatchBody, SwapRegionBody };

export const Level = Type.Object({ id: Type.Integer(), height: Type.Number() }, { $id: 'Level', description: 'Level (spec 2.8)' });
export const Balcony = Type.Object({ id: Type.Integer() }, { $id: 'Balcony', description: 'Balcony (spec 2.8)' });

export const BoxResponse = Type.Object({
  id: Type.Integer(),
  section_code: Type.Integer({ description: 'Legacy code: 8 sections as the bits of an integer (0..255), derived' }),
  section_code_32: Type.Integer({ description: 'Canonical code: 32 sections as the bits of an integer; source of truth for overlap and placement' }),
}, { $id: 'Box', description: 'Box (spec 2.10)' });

export const LoadResponse = Type.Object({
  sku_id: Type.String(),
  item_count: Type.Integer(),
  item_count_max: Type.Integer(),
  name: Nullable(Type.String({ description: 'Name of the SKU' })),
}, { $id: 'Load', description: 'Load (spec 2.11)' });

export const SkuResponse = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  measurement_unit: MeasurementUnit,
  on_empty_sku_action: OnEmptySkuAction,
  allowed_box_size_capacities: Nullable(Type.Object({}, { additionalProperties: Type.Integer(), description: 'Box-size key ("1/4") -> most items of this SKU such a box holds' })),
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
}, { $id: 'Sku', description: 'SKU (spec 2.13); computed fields are defined in docs/inventory.md' });

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
  measurement_unit: Nullable(MeasurementUnit),
  on_empty_sku_action: Nullable(OnEmptySkuAction),
  ...Timestamp('updated_at', true),
}, { $id: 'InventoryRow', description: 'Inventory view row (spec 2.12): a box on a carrier, or an empty storage space; fields in docs/inventory.md' });
