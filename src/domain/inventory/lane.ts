/** The carriers standing between a carrier and the highway in its storage lane, nearest the highway first. */
import type { Store } from '../../store/store.js';
import type { SiteLevel } from '../site/load.js';
import { carriers, positionKey, type CarrierRecord } from './records.js';

/** Empty when the carrier is not on a storage space of `level`. */
export function carriersInFront(store: Store, level: SiteLevel, carrier: CarrierRecord): CarrierRecord[] {
  const space = level.spaceAt(carrier.x, carrier.y);
  if (!space) return [];
  const out: CarrierRecord[] = [];
  for (const s of level.lanes[space.lane]!.spaces) {
    if (s.depth >= space.depth) break;
    const c = store.collection(carriers).findOne('position', positionKey(level.id, s.x, s.y));
    if (c) out.push(c);
  }
  return out;
}
