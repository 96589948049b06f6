/**
 * Every record of a stopped daemon's store, byte for byte: each named LMDB database with its
 * keys and values as stored (hex), and the schema version from meta. For tests that must tell
 * whether a start changed anything, and what.
 */
import { open, type Database } from 'lmdb';
import path from 'node:path';

export interface StoreRecords {
  schemaVersion: number;
  /** Database name -> key (hex) -> value (hex). */
  dbs: Map<string, Map<string, string>>;
}

/** Reads the store of `stateDir` read-only; no daemon may have it open for writing. */
export async function storeRecords(stateDir: string): Promise<StoreRecords> {
  const root = open({ path: path.join(stateDir, 'db', 'warehouse.mdb'), readOnly: true, maxDbs: 128, compression: false });
  try {
    const dbs = new Map<string, Map<string, string>>();
    for (const name of [...root.getKeys()].map(String).sort()) {
      const db = root.openDB({ name, encoding: 'binary', keyEncoding: 'binary' }) as unknown as Database<Buffer, Buffer>;
      const records = new Map<string, string>();
      for (const { key, value } of db.getRange()) records.set(Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex'));
      dbs.set(name, records);
    }
    const schemaVersion = (root.openDB<unknown, string>({ name: 'meta' }).get('schema_version') as number | undefined) ?? 0;
    return { schemaVersion, dbs };
  } finally {
    await root.close();
  }
}

export interface RecordChange {
  db: string;
  /** The key as text where it is printable, else hex. */
  key: string;
  change: 'added' | 'removed' | 'changed';
}

const printable = (hex: string): string => {
  const text = Buffer.from(hex, 'hex').toString('latin1');
  return /^[\x20-\x7e]+$/.test(text) ? text : hex;
};

/** What differs from `before` to `after`, database by database. */
export function recordChanges(before: StoreRecords, after: StoreRecords): RecordChange[] {
  const out: RecordChange[] = [];
  for (const name of new Set([...before.dbs.keys(), ...after.dbs.keys()])) {
    const a = before.dbs.get(name) ?? new Map<string, string>();
    const b = after.dbs.get(name) ?? new Map<string, string>();
    for (const [key, value] of a) {
      if (!b.has(key)) out.push({ db: name, key: printable(key), change: 'removed' });
      else if (b.get(key) !== value) out.push({ db: name, key: printable(key), change: 'changed' });
    }
    for (const key of b.keys()) if (!a.has(key)) out.push({ db: name, key: printable(key), change: 'added' });
  }
  return out;
}

/** Changes counted by database and kind, for a message: `events added 2, meta changed 1`. */
export function summarize(changes: readonly RecordChange[]): string {
  const counts = new Map<string, number>();
  for (const c of changes) counts.set(`${c.db} ${c.change}`, (counts.get(`${c.db} ${c.change}`) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
}
