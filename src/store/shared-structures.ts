/**
 * Where the records of each collection keep their shared msgpackr structures: in the meta
 * database under `structures:<collection>`, not among the records, which scans, counts and
 * indexes read. Decoding a record with shared structures costs a sixth of decoding one that
 * carries its field names (docs/decisions.md, "Store"). A structure is stored in the
 * transaction of the first record that uses it, so any reader that sees the record sees it too.
 *
 * A transaction that stored one may not commit (a throw undoes the write, the disk refuses the
 * commit): then every collection reads the structures again from the store before it encodes
 * another record, rather than encode with one that was never kept.
 */
import type { Database } from 'lmdb';
import type { Collection, SharedStructures } from './collection.js';

/** The meta database's key of the shared msgpackr structures of collection `name`'s records. */
export const structuresKey = (name: string): string => `structures:${name}`;

/** The structures of every collection of one environment on this thread. */
export class StructureKeeper {
  /** A structure was stored in the batch being written. */
  private savedInBatch = false;
  /** A batch stored a structure and may not have committed: the next reads them from the store again. */
  private inDoubt = false;

  constructor(
    private readonly meta: Database<unknown, string>,
    private readonly collections: ReadonlyMap<string, Collection<unknown>>,
    /** Whether a write runs now: structures are stored only inside one. */
    private readonly inWrite: () => boolean,
  ) {}

  /** msgpackr's hooks for the records of collection `name`. */
  of(name: string): SharedStructures {
    const key = structuresKey(name);
    return {
      getStructures: () => this.meta.get(key),
      saveStructures: (structures, isCompatible) => {
        if (!this.inWrite()) throw new Error(`${name}: records are encoded only inside Store.write()`);
        if (!isCompatible(this.meta.get(key))) return false;
        this.meta.putSync(key, structures);
        this.savedInBatch = true;
        return true;
      },
    };
  }

  /** A batch's writes are about to run: after one that may not have committed a structure, read them again. */
  batchBegins(): void {
    if (this.inDoubt) this.forget();
    this.savedInBatch = false;
  }

  /** A batch's writes have run; returns whether they stored a structure (in doubt until the batch commits). */
  batchWritten(): boolean {
    this.inDoubt ||= this.savedInBatch;
    return this.savedInBatch;
  }

  /** Makes every collection read its shared structures again from the store. */
  forget(): void {
    this.inDoubt = false;
    for (const c of this.collections.values()) c.forgetStructures();
  }
}
