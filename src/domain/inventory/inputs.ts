/**
 * The bodies of the inventory's writes (spec 2.10 to 2.13: boxes, loads, SKUs): the schemas the
 * HTTP layer checks, and the types the inventory domain takes, one read of the other.
 */
import Type, { type Static } from 'typebox';
import { Nullable } from '../nullable.js';
import { MEASUREMENT_UNITS, ON_EMPTY_SKU_ACTIONS } from '../site/layout.js';

export const SectionCode = Type.Union([
  // At least one section: the lookahead wants a 1 (docs/inventory.md; the domain checks it too).
  Type.String({ pattern: '^(?=[01]*1)(?:[01]{1,8}|[01]{16}|[01]{32})$', description: 'Binary digits, at least one 1: at most 8 (legacy), exactly 16 or exactly 32; section 0 first' }),
  Type.Integer({ minimum: 1, maximum: 255, description: 'Legacy 8-bit code, 1 to 255 (0 would take no section)' }),
], { $id: 'SectionCode', description: 'Sections of the carrier the box takes (docs/inventory.md)' });

export const SectionCode32 = Type.Integer({
  $id: 'SectionCode32', minimum: 1, maximum: 0xffffffff, description: 'Canonical code, as a box and an inventory row show `section_code_32`: bit 31 - i is section i of 32',
});

const codeFields = {
  section_code: Type.Optional(SectionCode),
  section_code_32: Type.Optional(SectionCode32),
};
const EITHER = 'Exactly one of `section_code` (as a box shows it, an integer, or as an inventory row shows it, binary digits) and `section_code_32` (as both show it)';

export const BoxCodeBody = Type.Object(codeFields, { $id: 'BoxSectionCode', description: EITHER, minProperties: 1 });

export const SwapRegionBody = Type.Object({
  updates: Type.Array(Type.Object({ box_id: Type.Integer({ minimum: 1 }), ...codeFields }, { $id: 'BoxSectionCodeUpdate', description: EITHER }), { minItems: 1, maxItems: 1000 }),
});

const Count = Type.Integer({ minimum: 0, maximum: 2_000_000_000 });
const CountMax = Type.Integer({ minimum: 1, maximum: 2_000_000_000 });
const SkuId = Type.String({ minLength: 1, maxLength: 128 });

export const LoadBody = Type.Object({ sku_id: SkuId, item_count: Count, item_count_max: CountMax });
export const LoadPatchBody = Type.Partial(LoadBody);

export const MeasurementUnit = Type.Enum([...MEASUREMENT_UNITS], { $id: 'MeasurementUnit', default: 'PIECE' });
export const OnEmptySkuAction = Type.Enum([...ON_EMPTY_SKU_ACTIONS], { $id: 'OnEmptySkuAction', default: 'UNASSIGN', description: 'When a box of the SKU runs empty: UNASSIGN removes the load, DO_NOTHING keeps it at zero' });
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

export const SkuCreateBody = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, pattern: '^\\S(.*\\S)?$' }), ...skuFields }, { $id: 'SkuCreate' });
export const SkuPatchBody = Type.Object(skuFields, { $id: 'SkuUpdate' });

export type SkuInput = Static<typeof SkuPatchBody>;
export type LoadInput = Static<typeof LoadBody>;
