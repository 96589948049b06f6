/** A snapshot's laneCarriers for carriers on `cells` of `level`, as CarrierPlaces keeps them. */
import type { LaneCarriers } from '../../src/domain/inventory/carrier-places.js';
import type { Cell, SiteLevel } from '../../src/domain/site/load.js';

export function laneCarriersOf(level: SiteLevel, cells: Iterable<Cell>): LaneCarriers {
  const bits = new Uint8Array(level.lanes.length);
  for (const c of cells) {
    const space = level.spaceAt(c.x, c.y);
    if (space && space.lane >= 0) bits[space.lane]! |= 1 << (space.depth - 1);
  }
  return bits;
}
