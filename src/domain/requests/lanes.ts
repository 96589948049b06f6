/** Carriers on their way into a storage lane, which the store does not show there yet. */
import type { Store } from '../../store/store.js';
import { carriers, type CarrierRecord } from '../inventory/records.js';
import type { SiteLevel } from '../site/load.js';
import type { JobRecord } from './records.js';

/**
 * Carriers that running jobs are setting down on spaces in front of `carrier` in its lane. A
 * carrier is booked to its storage space only as it is lifted: until it is down there, work on
 * the deeper carrier must count it as standing in front (loaded bots pass under no carrier).
 */
export function carriersComingInFront(store: Store, level: SiteLevel, carrier: CarrierRecord, open: Iterable<JobRecord>): CarrierRecord[] {
  const space = level.spaceAt(carrier.x, carrier.y);
  if (!space) return [];
  const out: CarrierRecord[] = [];
  for (const j of open) {
    if (!j.target || !j.carrier_id || j.carrier_id === carrier.id || (j.status !== 'EXECUTING' && j.status !== 'CANCELLING')) continue;
    const there = level.spaceAt(j.target.x, j.target.y);
    const coming = there && there.lane === space.lane && there.depth < space.depth ? store.collection(carriers).get(j.carrier_id) : undefined;
    if (coming) out.push(coming);
  }
  return out;
}
