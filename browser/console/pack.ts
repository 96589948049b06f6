/**
 * What a person packs for a request: the SKUs its picks booked, summed per SKU. A PACKING job
 * names no SKU or quantity of its own (it follows every pick of the request), so the screen
 * reads them from the picks; a short pick packs what was booked, a cancelled pick nothing.
 */

/** A pick as GET /jobs answers it, with only the fields packing reads. */
export interface PickForPacking {
  status: string;
  sku_id: string | null;
  sku_name: string | null;
  quantity: number | null;
  measurement_unit: string | null;
  details: { booked_quantity?: unknown };
}

/** One line of what to pack. */
export interface PackLine {
  sku_id: string;
  sku_name: string | null;
  quantity: number;
  measurement_unit: string | null;
}

/** The request's succeeded picks summed per SKU, in the order the SKUs were first picked; nothing booked, no line. */
export function packLines(picks: readonly PickForPacking[]): PackLine[] {
  const lines = new Map<string, PackLine>();
  for (const p of picks) {
    if (p.status !== 'SUCCEEDED' || p.sku_id === null) continue;
    const booked = typeof p.details.booked_quantity === 'number' ? p.details.booked_quantity : (p.quantity ?? 0);
    if (booked <= 0) continue;
    const line = lines.get(p.sku_id);
    if (line) line.quantity += booked;
    else lines.set(p.sku_id, { sku_id: p.sku_id, sku_name: p.sku_name, quantity: booked, measurement_unit: p.measurement_unit });
  }
  return [...lines.values()];
}
