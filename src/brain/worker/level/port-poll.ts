/**
 * How the bots holding carriers for a full balcony look for a free position: together. One
 * timer wakes them all, and they read one snapshot in that turn of the event loop. A timer and
 * a snapshot each, every 50 ms, cost the brain thread a third of its time once a few hundred
 * bots waited at once (docs/benchmarks-site.md).
 *
 * A snapshot is shared for one turn only: the waiters of a turn decide as if at one moment,
 * and each position goes to the one job `nextForPort` names in it. A later turn reads afresh,
 * so commits made meanwhile (a dispatch pass, a cancel) are seen.
 */
import type { LevelSnapshot } from './snapshot.js';

export class PortPoll {
  private tick: Promise<void> | undefined;
  private shared: LevelSnapshot | undefined;

  constructor(private readonly take: () => LevelSnapshot, private readonly everyMs: number) {}

  /** The level as every waiter reads it in this turn. */
  snapshot(): LevelSnapshot {
    if (this.shared === undefined) {
      this.shared = this.take();
      setImmediate(() => (this.shared = undefined));
    }
    return this.shared;
  }

  /** Resolves at the next look, for every waiter at once. */
  next(): Promise<void> {
    this.tick ??= new Promise<void>((resolve) => setTimeout(() => {
      this.tick = undefined;
      resolve();
    }, this.everyMs));
    return this.tick;
  }
}
