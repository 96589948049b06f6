/** Carriers on their way into a storage lane, which the store does not show there yet. */
import type { Store } from '../../store/store.js';
import { compareKeys } from '../../store/collection.js';
import { inFront, type LaneView } from '../inventory/lane.js';
import { carriers, positionKey, type CarrierRecord } from '../inventory/records.js';
import type { SiteLevel } from '../site/load.js';
import { comingTo, jobs, type JobRecord } from './records.js';

/**
 * Carriers that running jobs are setting down on spaces in front of `carrier` in its lane (the
 * lane-blocking rule, src/domain/inventory/lane.ts). Reads the jobs by the lane's cells (the
 * `coming_to` index), not every open job of the level; they come in job id order, the order of
 * the level's open jobs this once read.
 */
export function carriersComingInFront(store: Store, level: SiteLevel, carrier: CarrierRecord): CarrierRecord[] {
  const space = level.spaceAt(carrier.x, carrier.y);
  if (!space) return [];
  const running: { job: JobRecord; depth: number }[] = [];
  for (const s of level.lanes[space.lane]!.spaces) {
    for (const j of store.collection(jobs).findBy('coming_to', positionKey(level.id, s.x, s.y))) if (comingTo(j)) running.push({ job: j, depth: s.depth });
  }
  running.sort((a, b) => compareKeys(a.job.id, b.job.id));
  const lane: LaneView = { length: running.length, depth: (i) => running[i]!.depth, carrier: (i) => running[i]!.job.carrier_id! };
  const out: CarrierRecord[] = [];
  for (const id of inFront(lane, space.depth, carrier.id)) {
    const coming = store.collection(carriers).get(id);
    if (coming) out.push(coming);
  }
  return out;
}
