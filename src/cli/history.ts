/**
 * `history-export --from T --to T --out DIR` writes any time range of requests (with their
 * jobs) and events to an archive directory, as the pruner does before it removes them, beside
 * the running daemon. `compact` gives a technician the space of the store file back: LMDB
 * reuses freed pages but never shrinks its file, so a compacting copy (as a backup makes) takes
 * the file's place while the daemon is stopped.
 */
import { existsSync, linkSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { HistoryArchive, type ArchiveEntry } from '../domain/history/archive.js';
import { EXPORT_KINDS, exportRange, type ExportKind } from '../domain/history/export.js';
import { parseTimeBound } from '../domain/time.js';
import { syncDir } from '../domain/support/durable.js';
import { CliError, existingStateDir, EXIT, openStoreReadOnly, withoutDaemon } from './context.js';

/** A bound of --from / --to: an instant with an offset, or a wall time in the configured zone. */
function bound(name: string, text: string | undefined, zone: string): number {
  if (text === undefined) throw new CliError(`history-export needs --${name} (a date or date-time, e.g. 2026-05-01 or 2026-05-01T08:00:00+02:00)`, EXIT.usage);
  try {
    return parseTimeBound(text, zone);
  } catch (err) {
    throw new CliError(`--${name}: ${(err as Error).message}`, EXIT.usage);
  }
}

/** Exports a time range into `out` (created if missing); returns the files written. */
export async function historyExport(config: Config, o: { from?: string; to?: string; out?: string; kinds?: string }): Promise<ArchiveEntry[]> {
  const from = bound('from', o.from, config.timezone);
  const to = bound('to', o.to, config.timezone);
  if (to < from) throw new CliError('--to is before --from', EXIT.usage);
  if (!o.out) throw new CliError('history-export needs --out DIR', EXIT.usage);
  const kinds = (o.kinds ?? EXPORT_KINDS.join(',')).split(',').map((k) => k.trim());
  const unknown = kinds.filter((k) => !(EXPORT_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0) throw new CliError(`--kinds takes ${EXPORT_KINDS.join(', ')} (got ${unknown.join(', ')})`, EXIT.usage);
  const stateDir = existingStateDir(config);
  let archive: HistoryArchive;
  try {
    archive = await HistoryArchive.open(path.resolve(o.out), Number.MAX_SAFE_INTEGER);
  } catch (err) {
    throw new CliError(`cannot write to ${o.out}: ${(err as Error).message}`, EXIT.cannotCreate);
  }
  const store = await openStoreReadOnly(stateDir, config);
  try {
    return await exportRange(store, archive, { from, to, kinds: kinds as ExportKind[] });
  } finally {
    await store.close();
  }
}

/** Replaces the store file with a compacting copy (the daemon stopped); returns its size before and after. */
export async function compact(config: Config): Promise<{ before: number; after: number }> {
  const stateDir = existingStateDir(config);
  const lock = withoutDaemon(stateDir, 'compact');
  const dir = path.join(stateDir, 'db');
  const file = path.join(dir, 'warehouse.mdb');
  const copy = path.join(dir, '.compact-warehouse.mdb');
  const aside = path.join(dir, '.before-compact-warehouse.mdb');
  try {
    rmSync(copy, { force: true });
    const before = statSync(file).size;
    const store = await openStoreReadOnly(stateDir, config);
    let counts: Record<string, number>;
    try {
      counts = store.counts();
      await store.backup(copy);
    } catch (err) {
      rmSync(copy, { force: true });
      throw new CliError(`the compacting copy failed, nothing changed: ${(err as Error).message}`, EXIT.cannotCreate);
    } finally {
      await store.close();
    }
    // The copy must read back as the same store before it takes the original's place.
    const copied = await countsOf(copy, config);
    const differ = Object.keys(counts).filter((name) => counts[name] !== copied[name]);
    if (differ.length > 0) {
      rmSync(copy, { force: true });
      throw new CliError(`the compacting copy does not hold the same records (${differ.join(', ')}); nothing changed`, EXIT.software);
    }
    renameSync(file, aside);
    renameSync(copy, file);
    // The lock file of the old environment describes the old file: LMDB makes a new one.
    rmSync(`${file}-lock`, { force: true });
    await syncDir(dir);
    rmSync(aside, { force: true });
    return { before, after: statSync(file).size };
  } finally {
    if (existsSync(copy)) rmSync(copy, { force: true });
    lock.release();
  }
}

/** Record counts of a store file opened on its own, read-only. */
async function countsOf(file: string, config: Config): Promise<Record<string, number>> {
  const probe = path.join(path.dirname(file), '.compact-check');
  rmSync(probe, { recursive: true, force: true });
  // A store directory of its own whose warehouse.mdb is the copy: opened as the daemon opens one.
  mkdirSync(path.join(probe, 'db'), { recursive: true });
  linkSync(file, path.join(probe, 'db', 'warehouse.mdb'));
  try {
    const store = await openStoreReadOnly(probe, config);
    try {
      return store.counts();
    } finally {
      await store.close();
    }
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
