/**
 * How many retrievals start before a balcony position frees, worked out from a snapshot:
 * their bots fetch the carrier and wait with it beside a balcony, so the next carrier is near
 * when the person is done (a position reserved for the whole trip leaves people waiting).
 *
 * A queued retrieval may go to any of its balconies, and takes a place in the queue of one of
 * them. Counting it against every balcony it may go to starved the retrievals of one balcony
 * (an SKU kept to one balcony, docs/requests.md): the retrievals free to go anywhere on the
 * level filled that balcony's count, and its own never started while the level was busy. So
 * the queued retrievals are seated at balconies as a matching: a new one may start when a
 * seat is free at one of its balconies, moving others that may go elsewhere if need be.
 */
import type { JobRecord } from '../../../domain/requests/records.js';
import type { SiteBalcony, SiteLevel } from '../../../domain/site/load.js';
import { perSnapshot, type LevelSnapshot } from '../level/snapshot.js';
import { dist, STAGE_REACH, waitsForPort } from './places.js';

/**
 * Retrievals a balcony may have on their way beyond its free positions, at least. Two left the
 * large bench site's far balconies waiting for carriers on their way (213 against 234 carriers
 * per balcony-hour with four; the demo 251 against 271); eight filled its one highway row with
 * loaded bots (196): docs/benchmarks-site.md, "the brain keeps up".
 */
export const QUEUE_PER_BALCONY = 4;
/** Queued retrievals a balcony may have beyond one waiting at each of its buffers: those on their way. */
const ON_THEIR_WAY = 2;

/** Retrievals started without a balcony position (on their way to the carrier, or holding it). */
const queued = perSnapshot((s) => s.jobs.filter((j) => j.type === 'RETRIEVING' && j.status === 'EXECUTING' && j.target === null));

/** Whether a retrieval that may go to one of the job's balconies holds its carrier and waits for a position. */
export function queuedFor(s: LevelSnapshot, job: JobRecord): boolean {
  return queued(s).some((j) => waitsForPort(j) && j.balcony_ids.some((b) => job.balcony_ids.includes(b)));
}

const queueLimits = new WeakMap<SiteLevel, Map<number, number>>();

/**
 * Retrievals a balcony may have queued: one waiting at each buffer beside it and two on their
 * way, at least QUEUE_PER_BALCONY. A balcony with the usual two buffers keeps four; one with
 * four buffers (generated for many bots, src/domain/site/highways.ts) keeps six, so its
 * waiting places stay filled while carriers come from far.
 */
export function queueLimit(level: SiteLevel, balcony: SiteBalcony): number {
  let limits = queueLimits.get(level);
  if (!limits) queueLimits.set(level, (limits = new Map()));
  let n = limits.get(balcony.id);
  if (n === undefined) {
    const waitingPlaces = level.buffers.filter((c) => balcony.ports.some((p) => dist(p, c) <= STAGE_REACH)).length;
    limits.set(balcony.id, (n = Math.max(QUEUE_PER_BALCONY, waitingPlaces + ON_THEIR_WAY)));
  }
  return n;
}

/** The queued retrievals seated at the level's balconies: each balcony's seats, and who sits in them. */
interface Seats {
  limit: Map<number, number>;
  by: Map<number, JobRecord[]>;
}

const levelBalconies = perSnapshot(() => new Map<JobRecord, number[]>());

/** A job's balconies on the level. */
function balconiesOf(s: LevelSnapshot, job: JobRecord): number[] {
  const memo = levelBalconies(s);
  let ids = memo.get(job);
  if (!ids) memo.set(job, (ids = s.level.balconies.filter((b) => job.balcony_ids.includes(b.id)).map((b) => b.id)));
  return ids;
}

/**
 * A free seat at one of `from`'s balconies, if need be by moving seated jobs along a chain of
 * balconies each may also go to (a breadth-first augmenting path): the free seat's balcony,
 * and for each balcony on the chain, the job to move into it and the balcony it leaves.
 */
function freeSeat(s: LevelSnapshot, seats: Seats, from: readonly number[]): { to: number; moves: Map<number, { job: JobRecord; from: number }> } | undefined {
  const moves = new Map<number, { job: JobRecord; from: number }>();
  const seen = new Set<number>(from);
  const next = [...from];
  for (let i = 0; i < next.length; i++) {
    const b = next[i]!;
    const sitting = seats.by.get(b) ?? [];
    if (sitting.length < (seats.limit.get(b) ?? 0)) return { to: b, moves };
    for (const job of sitting) {
      for (const other of balconiesOf(s, job)) {
        if (seen.has(other)) continue;
        seen.add(other);
        moves.set(other, { job, from: b });
        next.push(other);
      }
    }
  }
  return undefined;
}

/** Seats a job, moving others along the chain freeSeat() found; false when every seat it could reach is taken. */
function seat(s: LevelSnapshot, seats: Seats, job: JobRecord): boolean {
  const found = freeSeat(s, seats, balconiesOf(s, job));
  if (!found) return false;
  let b = found.to;
  for (let move = found.moves.get(b); move; move = found.moves.get(b)) {
    const left = seats.by.get(move.from)!;
    left.splice(left.indexOf(move.job), 1);
    seats.by.get(b)!.push(move.job);
    b = move.from;
  }
  seats.by.get(b)!.push(job);
  return true;
}

/**
 * The queue's seats as one pass of the level sees them: the snapshot's queued retrievals seated
 * (those with the fewest balconies first), then those the pass starts, so one pass does not
 * start more than the seats free.
 */
export class QueueSeats {
  private seats: Seats | undefined;
  /** Retrievals queued on the level, the pass's own included. */
  private count = 0;
  /** Queued retrievals the level's bots allow: a bot per balcony stays free for the carriers going home. */
  private allowed = 0;
  /** Answers by set of balconies: most retrievals of a pass share theirs (all of the level, or an SKU's one). */
  private readonly answers = new Map<string, boolean>();

  constructor(private readonly s: LevelSnapshot) {}

  /**
   * Whether a retrieval may start without a position: a seat is free at one of its balconies
   * of this level (queueLimit() each), moving queued retrievals that may go elsewhere, and
   * queues leave a bot per balcony of the level for the carriers going home (a bot holding a
   * carrier cannot store another).
   */
  mayQueue(job: JobRecord): boolean {
    const seats = this.seated();
    if (this.count >= this.allowed) return false;
    const from = balconiesOf(this.s, job);
    const set = from.join(',');
    let answer = this.answers.get(set);
    if (answer === undefined) this.answers.set(set, (answer = freeSeat(this.s, seats, from) !== undefined));
    return answer;
  }

  /** Seats a retrieval this pass starts without a position. */
  take(job: JobRecord): void {
    seat(this.s, this.seated(), job);
    this.count++;
    this.answers.clear();
  }

  private seated(): Seats {
    if (this.seats) return this.seats;
    const seats: Seats = { limit: new Map(), by: new Map() };
    for (const b of this.s.level.balconies) {
      seats.limit.set(b.id, queueLimit(this.s.level, b));
      seats.by.set(b.id, []);
    }
    const jobs = queued(this.s).map((job) => ({ job, n: balconiesOf(this.s, job).length })).sort((a, b) => a.n - b.n);
    for (const { job } of jobs) seat(this.s, seats, job);
    this.count = jobs.length;
    this.allowed = (this.s.bots ?? []).filter((b) => b.online && !b.faulted).length - this.s.level.balconies.length;
    return (this.seats = seats);
  }
}
