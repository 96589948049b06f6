/**
 * What the store keeps about inventory: SKUs with their running totals, carriers with their
 * positions, and boxes with the one load each may hold. Instants are epoch milliseconds.
 * The SKU totals are derived data kept in the same transaction as the loads that move them
 * (see docs/inventory.md); nothing recomputes them by scanning.
 */
import type { CollectionDef } from '../../store/collection.js';
import { boxSizeKey } from './section-code.js';
import type { MeasurementUnit, OnEmptySkuAction } from '../site/layout.js';

export interface SkuImage {
  /** File name under `<state dir>/sku-images/`. */
  file: string;
  type: string;
  bytes: number;
}

export interface SkuRecord {
  id: string;
  name: string | null;
  measurement_unit: MeasurementUnit;
  on_empty_sku_action: OnEmptySkuAction;
  /** Box-size key (see section-code.ts boxSizeKey) -> most items of this SKU such a box holds. */
  allowed_box_size_capacities: Record<string, number> | null;
  balcony_ids: number[] | null;
  image: SkuImage | null;
  /** Sum of item_count over the SKU's loads. */
  total_quantity: number;
  /** Sum of item_count_max over the SKU's loads. */
  max_quantity: number;
  /** Sum of every increase of the SKU's quantity since it was created (>= 0). */
  total_positive_inventory_bookings: number;
  /** Sum of every decrease, as a negative number (<= 0). */
  total_negative_inventory_bookings: number;
  /** Items promised to open fulfillment work (kept by the brain; 0 without it). */
  reserved_out: number;
  /** Room promised to open replenishment work (kept by the brain; 0 without it). */
  reserved_in: number;
  load_count: number;
  /** Carrier sections the SKU's boxes take (carrier_utilization = sections / 32). */
  sections: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface CarrierRecord {
  id: string;
  level_id: number;
  x: number;
  y: number;
  updated_at: number;
}

export interface LoadRecord {
  sku_id: string;
  item_count: number;
  item_count_max: number;
}

export interface BoxRecord {
  id: number;
  carrier_id: string;
  /**
   * Its carrier's level, kept with the box (and rewritten when the carrier changes level) so
   * the `empty` index can give a level's empty boxes alone; null for a box whose carrier the
   * store does not have (migration 11 found such).
   */
  level_id: number | null;
  /** Canonical 32-bit section code. */
  code32: number;
  load: LoadRecord | null;
  updated_at: number;
}

export const skus: CollectionDef<SkuRecord> = {
  name: 'skus',
  key: (s) => s.id,
  indexes: [{ name: 'measurement_unit', of: (s) => s.measurement_unit }],
};

export const carriers: CollectionDef<CarrierRecord> = {
  name: 'carriers',
  key: (c) => c.id,
  indexes: [{ name: 'position', of: (c) => positionKey(c.level_id, c.x, c.y), unique: true }],
};

export const boxes: CollectionDef<BoxRecord> = {
  name: 'boxes',
  key: (b) => b.id,
  indexes: [
    { name: 'carrier_id', of: (b) => b.carrier_id },
    { name: 'sku_id', of: (b) => b.load?.sku_id },
    // A replenishment or putaway reads the empty boxes of the sizes its SKU allows, level by
    // level in the order of their open work, oldest first (the plan's order), and only as many
    // as it needs: not every box of the site, nor those of the busier levels first.
    { name: 'empty', of: (b) => (b.load === null && typeof b.level_id === 'number' ? emptyBoxKey(boxSizeKey(b.code32), b.level_id, b.updated_at) : undefined) },
  ],
};

/** The `empty` index's value of an empty box: its size, its level, then when it last changed (ordered as text). */
export function emptyBoxKey(size: string, levelId: number, updatedAt: number): string {
  return `${size} ${levelId} ${String(updatedAt).padStart(16, '0')}`;
}

/** The `empty` index's values of the empty boxes of one size on one level, first and last. */
export function emptyBoxesOf(size: string, levelId: number): { low: string; high: string } {
  return { low: emptyBoxKey(size, levelId, 0), high: emptyBoxKey(size, levelId, Number.MAX_SAFE_INTEGER) };
}

/** The key of a grid cell: where a carrier stands. */
export function positionKey(levelId: number, x: number, y: number): string {
  return `${levelId}:${x}:${y}`;
}

export const INVENTORY_COLLECTIONS = [skus, carriers, boxes] as const;
