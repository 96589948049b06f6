/**
 * Named integer sequences (ids of boxes, events, marks of what was pruned), kept in the meta
 * database under `seq:<name>`. A value is taken inside a store write and undone with it, so a
 * refused write's value is given again; a sequence only rises.
 */
import type { Database } from 'lmdb';
import type { CommitQueue } from './commit-queue.js';

export class Sequences {
  constructor(
    private readonly meta: Database<unknown, string>,
    private readonly queue: CommitQueue,
  ) {}

  /** The next value of sequence `name` (1, 2, ...). Call only inside a write. */
  next(name: string): number {
    if (!this.queue.inWrite()) throw new Error('nextId must run inside Store.write()');
    const key = `seq:${name}`;
    const next = ((this.meta.get(key) as number | undefined) ?? 0) + 1;
    this.queue.putMeta(key, next);
    return next;
  }

  /** Makes the next value of sequence `name` larger than `value` (after importing ids). Call only inside a write. */
  raise(name: string, value: number): void {
    if (!this.queue.inWrite()) throw new Error('raiseSequence must run inside Store.write()');
    if (this.current(name) < value) this.queue.putMeta(`seq:${name}`, value);
  }

  /** The current value of sequence `name` (0 before its first use). */
  current(name: string): number {
    return (this.meta.get(`seq:${name}`) as number | undefined) ?? 0;
  }
}
