/**
 * Commit notices: what each durable commit changed, told to whoever listens on this thread.
 * The store's own commits are heard as `local`; threads that share the environment pass
 * theirs over (`commit-bridge.ts`) and they are heard here as `remote`, so each thread hears
 * every change whoever made it.
 */
import type { RootDatabase } from 'lmdb';
import type { Key } from './collection.js';
import { Listeners } from './listeners.js';

/**
 * What one committed write changed: the keys it put or removed, by collection name. Threads
 * that share the environment pass these to each other (`heard`), so each hears every commit.
 */
export type CommitNotice = Record<string, Key[]>;

/** `local`: committed by this Store; `remote`: by another thread on the same environment, told through `heard`. */
export type CommitListener = (notice: CommitNotice, origin: 'local' | 'remote') => void;

/** The listeners of one environment's commits on this thread. */
export class CommitNotices {
  private readonly listeners = new Listeners<CommitNotice, 'local' | 'remote'>('commit listener');

  constructor(private readonly root: RootDatabase) {}

  /** Adds `listener`; returns the function that removes it. */
  on(listener: CommitListener): () => void {
    return this.listeners.add(listener);
  }

  /**
   * A commit of this thread's stood: one notice of every key its kept writes changed, told
   * only when they changed any. Each write's keys by collection are its own (`changed`); the
   * first write's sets take the others' keys.
   */
  committed(writes: readonly { changed: Map<string, Set<Key>> }[]): void {
    const changed = new Map<string, Set<Key>>();
    for (const write of writes) {
      for (const [name, keys] of write.changed) {
        const all = changed.get(name);
        if (all) for (const key of keys) all.add(key);
        else changed.set(name, keys);
      }
    }
    if (changed.size > 0) this.listeners.tell(Object.fromEntries([...changed].map(([name, keys]) => [name, [...keys]])), 'local');
  }

  /** Another thread committed `notice` on this environment: heard here as `remote`. */
  heard(notice: CommitNotice): void {
    // This thread's read snapshot may predate that commit until the next event turn: listeners
    // read the changed keys now, so they must see it.
    this.root.resetReadTxn();
    this.listeners.tell(notice, 'remote');
  }
}
