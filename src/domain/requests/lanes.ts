/** Carriers on their way into a storage lane, which the store does not show there yet. */
import type { Store } from '../../store/store.js';
import { compareKeys } from '../../store/collection.js';
import { carriers, positionKey, type CarrierRecord } from '../inventory/records.js';
import type { SiteLevel } from '../site/load.js';
import { comingTo, jobs, type JobRecord } from './records.js';

/**
 * Carriers that running jobs are setting down on spaces in front of `carrier` in its lane. A
 * carrier is booked to its storage space only as it is lifted: until it is down there, work on
 * the deeper carrier must count it as standing in front (loaded bots pass under no carrier).
 * Reads the jobs by the cells in front (the `coming_to` index), not every open job of the
 * level; they come in job id order, the order of the level's open jobs this once read.
 */
export function carriersComingInFront(store: Store, level: SiteLevel, carrier: CarrierRecord): CarrierRecord[] {
  const space = level.spaceAt(carrier.x, carrier.y);
  if (!space) return [];
  const running: JobRecord[] = [];
  for (const s of level.lanes[space.lane]!.spaces) {
    if (s.depth >= space.depth) break;
    for (const j of store.collection(jobs).findBy('coming_to', positionKey(level.id, s.x, s.y))) if (comingTo(j) && j.carrier_id !== carrier.id) running.push(j);
  }
  running.sort((a, b) => compareKeys(a.id, b.id));
  const out: CarrierRecord[] = [];
  for (const j of running) {
    const coming = store.collection(carriers).get(j.carrier_id!);
    if (coming) out.push(coming);
  }
  return out;
}
