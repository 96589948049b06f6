/**
 * The store's file as a whole: a hot copy of it (the backup, and the compacting copy `compact`
 * makes), its statistics, and how its pages are used.
 */
import type { Database, RootDatabase } from 'lmdb';
import { pagesOf, type Collection } from './collection.js';

/** Pages of the store file by use (`Store.pageUse`). */
export interface PageUse {
  pageSize: number;
  lastPage: number;
  usedPages: number;
  freePages: number;
}

/** Environment statistics for diagnostics. */
export interface StoreStats {
  entries: number;
  pageSize: number;
  mapSize: number;
  lastPage: number;
}

/** Writes a consistent copy of the environment to `file`, free pages left out: readers and writers go on meanwhile. */
export async function backup(root: RootDatabase, file: string): Promise<void> {
  await root.backup(file, true);
}

/** The environment's statistics. */
export function statsOf(root: RootDatabase): StoreStats {
  const s = root.getStats() as { entryCount: number; pageSize: number; mapSize: number; lastPageNumber: number };
  return { entries: s.entryCount, pageSize: s.pageSize, mapSize: s.mapSize, lastPage: s.lastPageNumber };
}

/**
 * How the store file's pages are used: `lastPage` is its high-water mark (the file never
 * shrinks), `usedPages` what the trees hold now, `freePages` the rest, which LMDB hands to
 * later writes before it grows the file. Databases of earlier layouts that a migration left
 * are counted as free, as are the free list's own few pages.
 */
export function pageUseOf(root: RootDatabase, meta: Database<unknown, string>, collections: Iterable<Collection<unknown>>): PageUse {
  const s = root.getStats() as { pageSize: number; lastPageNumber: number };
  // The main tree holds the named databases' roots; two meta pages head the file.
  let used = 2 + pagesOf(root) + pagesOf(meta);
  for (const c of collections) used += c.pages();
  const pages = s.lastPageNumber + 1;
  return { pageSize: s.pageSize, lastPage: s.lastPageNumber, usedPages: Math.min(used, pages), freePages: Math.max(0, pages - used) };
}
