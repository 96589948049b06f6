/**
 * A write the disk refused, told apart from a bug: no space left (the filesystem or LMDB's map
 * is full) or an I/O error. LMDB reports a full disk during a synchronous commit as EIO, not
 * ENOSPC, so an I/O error is called a full disk when the filesystem has next to no space left.
 */
import { statfsSync } from 'node:fs';
import { Listeners } from './listeners.js';

/**
 * Below this many free bytes the disk counts as full: an I/O error on commit is taken for a
 * full disk, and a full disk stays so even while small writes still fit in LMDB's free pages.
 */
const NEARLY_FULL_BYTES = 4 << 20;
const ENOSPC = 28;
const EIO = 5;
/** LMDB's MDB_MAP_FULL. */
const MDB_MAP_FULL = -30792;

/** The store's disk refused a write; `full` when for lack of space. Nothing of the write is kept. */
export class StorageFaultError extends Error {
  constructor(readonly full: boolean, readonly dir: string, cause: unknown) {
    super(full
      ? `no space left for the store in ${dir}: the write was not made`
      : `the disk under ${dir} failed the write (I/O error): the write was not made`, { cause });
    this.name = 'StorageFaultError';
  }
}

/** Free bytes for an unprivileged writer on the filesystem holding `dir` (undefined if unknown). */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** Whether a full disk has room again (free space above the nearly-full mark). */
export function hasRoom(dir: string): boolean {
  return (freeBytes(dir) ?? Infinity) >= NEARLY_FULL_BYTES;
}

/** The fault a failed commit stands for, or undefined when it is not the disk's doing. */
export function storageFault(err: unknown, dir: string): StorageFaultError | undefined {
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : '';
  if (code === ENOSPC || code === MDB_MAP_FULL || /No space left|MDB_MAP_FULL/.test(message)) return new StorageFaultError(true, dir, err);
  if (code === EIO || /Input\/output error/.test(message)) return new StorageFaultError((freeBytes(dir) ?? Infinity) < NEARLY_FULL_BYTES, dir, err);
  return undefined;
}

/**
 * The store's disk fault: the one that refused the last commit, until a commit stands again
 * (a full disk only once it has room again, though small writes may still fit in LMDB's free
 * pages). Its listeners hear when it starts, changes kind and ends, not every refused commit.
 */
export class FaultState {
  private fault: StorageFaultError | undefined;
  private readonly listeners = new Listeners<StorageFaultError | undefined>('storage fault listener');

  constructor(private readonly dir: string) {}

  /** The fault now, if any. */
  current(): StorageFaultError | undefined {
    return this.fault;
  }

  /** Hears a fault start or change kind (the fault) and end (undefined); returns the function that stops it. */
  onChange(listener: (fault: StorageFaultError | undefined) => void): () => void {
    return this.listeners.add(listener);
  }

  /** A commit was refused for `cause`: what its writes are refused with, the disk's fault (now the store's) or the cause itself. */
  refused(cause: unknown): unknown {
    const fault = storageFault(cause, this.dir);
    if (fault) this.set(fault);
    return fault ?? cause;
  }

  /** A commit stood: a fault of the disk is over, a full disk's once it has room again. */
  stood(): void {
    if (this.fault && (!this.fault.full || hasRoom(this.dir))) this.set(undefined);
  }

  private set(fault: StorageFaultError | undefined): void {
    const changed = (fault === undefined) !== (this.fault === undefined) || (fault && this.fault && fault.full !== this.fault.full);
    this.fault = fault;
    if (changed) this.listeners.tell(fault);
  }
}
