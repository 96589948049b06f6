/**
 * How history is written to an archive file, one record a line: a request followed by its jobs
 * (each line tagged `kind: request` or `kind: job`), an event as it is stored. The pruner writes
 * what leaves the store this way, and `warehouse-controller history-export` any time range on
 * demand, beside the running daemon.
 */
import type { Store } from '../../store/store.js';
import { eventRecords } from '../events/events.js';
import { jobs, requests, type JobRecord, type RequestRecord } from '../requests/records.js';
import type { ArchiveEntry, ArchiveWriter, HistoryArchive } from './archive.js';

/** Adds a request and its jobs to an archive file. */
export async function addRequest(file: ArchiveWriter, r: RequestRecord, its: readonly JobRecord[]): Promise<void> {
  await file.add({ kind: 'request', ...r });
  for (const j of its) await file.add({ kind: 'job', ...j });
}

/** The kinds of history an export can take. */
export const EXPORT_KINDS = ['requests', 'events'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

/**
 * Writes the requests (with their jobs) and the events made from `from` to `to` (ms, both
 * included) into `archive`, a file a kind; returns the files written (none for a kind with
 * nothing in the range). Reads one snapshot of the store: the caller opens it read-only.
 */
export async function exportRange(store: Store, archive: HistoryArchive, range: { from: number; to: number; kinds: readonly ExportKind[] }): Promise<ArchiveEntry[]> {
  const written: ArchiveEntry[] = [];
  if (range.kinds.includes('requests')) {
    const file = await archive.begin('requests');
    for (const run of store.collection(requests).runsBy('created_at', false, { low: range.from, high: range.to })) {
      for (const r of run) await addRequest(file, r, [...store.collection(jobs).findBy('request_id', r.id)].sort((a, b) => a.seq - b.seq));
    }
    if (file.records === 0) await file.abandon();
    else written.push((await file.finish(range.from, range.to)).entry);
  }
  if (range.kinds.includes('events')) {
    const file = await archive.begin('events');
    // Ids grow with time: the walk ends at the first event made after the range.
    for (const e of store.collection(eventRecords).range(0)) {
      if (e.created_at > range.to) break;
      if (e.created_at >= range.from) await file.add(e);
    }
    if (file.records === 0) await file.abandon();
    else written.push((await file.finish(range.from, range.to)).entry);
  }
  return written;
}
