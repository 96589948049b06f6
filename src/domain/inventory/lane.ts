/**
 * The lane-blocking rule, for request planning and for dispatch alike. A bot carrying a carrier
 * passes under no carrier, so a carrier in a storage lane is shut in by every carrier on a space
 * nearer the highway: one standing there, and one a running job is setting down there (it is
 * booked to its space only as it is lifted, so the store does not show it there yet). The rule
 * reads a lane through a small view, which the store (here and src/domain/requests/lanes.ts)
 * and a dispatch snapshot (src/brain/worker/policy/places.ts) each fill with their own facts.
 */
import type { Store } from '../../store/store.js';
import type { SiteLevel, StorageSpace } from '../site/load.js';
import { carriers, positionKey, type CarrierRecord } from './records.js';

/**
 * One storage lane as the rule reads it: entries in the reader's order (a space of the lane, or
 * a carrier on its way to one), each at its space's depth (1 borders the highway). An entry's
 * carrier is asked for only once its depth puts it in front, so a reader that looks carriers up
 * looks up no more than the rule needs.
 */
export interface LaneView {
  readonly length: number;
  depth(entry: number): number;
  /** The id of the entry's carrier; undefined for an empty space. */
  carrier(entry: number): string | undefined;
}

/** The carriers of `lane` that shut in carrier `self` at `depth`: those nearer the highway, in the view's order. */
export function inFront(lane: LaneView, depth: number, self: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < lane.length; i++) {
    if (lane.depth(i) >= depth) continue;
    const id = lane.carrier(i);
    if (id !== undefined && id !== self) out.push(id);
  }
  return out;
}

/** The carriers standing between a carrier and the highway in its storage lane, nearest the highway first; empty when it is not on a storage space of `level`. */
export function carriersInFront(store: Store, level: SiteLevel, carrier: CarrierRecord): CarrierRecord[] {
  const space = level.spaceAt(carrier.x, carrier.y);
  if (!space) return [];
  const standing = new StandingInStore(store, level.id, level.lanes[space.lane]!.spaces);
  return inFront(standing, space.depth, carrier.id).map((id) => standing.found.get(id)!);
}

/** A lane's spaces as a view, nearest the highway first: what stands on each is the reader's to say. */
export abstract class LaneSpaces implements LaneView {
  constructor(protected readonly spaces: readonly StorageSpace[]) {}

  get length(): number {
    return this.spaces.length;
  }

  depth(entry: number): number {
    return this.spaces[entry]!.depth;
  }

  abstract carrier(entry: number): string | undefined;
}

/** A lane's spaces as the store shows them; keeps the records it read. */
class StandingInStore extends LaneSpaces {
  readonly found = new Map<string, CarrierRecord>();

  constructor(private readonly store: Store, private readonly levelId: number, spaces: readonly StorageSpace[]) {
    super(spaces);
  }

  carrier(entry: number): string | undefined {
    const space = this.spaces[entry]!;
    const c = this.store.collection(carriers).findOne('position', positionKey(this.levelId, space.x, space.y));
    if (c) this.found.set(c.id, c);
    return c?.id;
  }
}
