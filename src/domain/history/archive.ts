/**
 * The history archive: what leaves the store is first written here, as gzip-compressed NDJSON
 * (one record a line, `zcat | jq` reads it), so a site keeps its history for audits while the
 * store stays small. A file is written under a temporary name, fsynced and renamed into place,
 * so a file that exists is whole; `manifest.json` lists each with its record count, time range
 * and SHA-256, and `SHA256SUMS` says the same for `sha256sum -c`. The archive is bounded by a
 * quota: past it, the oldest files go first, and the caller hears which.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, type WriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGzip, type Gzip } from 'node:zlib';
import { DIR_MODE, FILE_MODE, replaceFile, syncDir } from '../support/durable.js';

/** One archive file as the manifest lists it. */
export interface ArchiveEntry {
  file: string;
  kind: string;
  records: number;
  /** The time range of its records (ISO 8601 UTC), as the writer gave it. */
  from: string;
  to: string;
  bytes: number;
  sha256: string;
  created_at: string;
}

const MANIFEST = 'manifest.json';
const SUMS = 'SHA256SUMS';
const TMP_PREFIX = '.tmp-';

/** 2026-05-01T10:00:00.000Z as 20260501T100000Z, for file names that sort by time. */
const stamp = (iso: string) => iso.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');

/** A file being written: records go in with `add`, and `finish` makes it part of the archive. */
export interface ArchiveWriter {
  /** Appends one record (waits when the disk is behind). */
  add(record: unknown): Promise<void>;
  /** Records added so far. */
  readonly records: number;
  /** Closes, syncs and lists the file under its time range; returns its entry and the files the quota dropped. */
  finish(from: number, to: number): Promise<{ entry: ArchiveEntry; dropped: ArchiveEntry[] }>;
  /** Gives the file up (nothing of it stays). */
  abandon(): Promise<void>;
}

export class HistoryArchive {
  private entries: ArchiveEntry[];

  private constructor(
    readonly dir: string,
    private readonly quotaBytes: number,
    entries: ArchiveEntry[],
  ) {
    this.entries = entries;
  }

  /** Opens (or creates) the archive in `dir`, removing what a crash left half-written. */
  static async open(dir: string, quotaBytes: number): Promise<HistoryArchive> {
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
    const names = await readdir(dir);
    for (const name of names) if (name.startsWith(TMP_PREFIX)) await rm(path.join(dir, name), { force: true });
    const entries = await readManifest(dir);
    // A file renamed into place before a crash stopped the manifest's write: listed now.
    const listed = new Set(entries.map((e) => e.file));
    for (const name of names.filter((n) => n.endsWith('.ndjson.gz') && !listed.has(n)).sort()) entries.push(await describe(dir, name));
    const archive = new HistoryArchive(dir, quotaBytes, entries.filter((e) => names.includes(e.file)));
    if (archive.entries.length !== entries.length || listed.size !== archive.entries.length) await archive.saveManifest();
    return archive;
  }

  /** The files held, oldest first. */
  list(): readonly ArchiveEntry[] {
    return this.entries;
  }

  /** Bytes the archive's files take. */
  bytes(): number {
    return this.entries.reduce((n, e) => n + e.bytes, 0);
  }

  /** Starts a file of records of `kind` (requests, events, support). */
  async begin(kind: string): Promise<ArchiveWriter> {
    const tmp = path.join(this.dir, `${TMP_PREFIX}${kind}-${randomBytes(4).toString('hex')}`);
    // Opened here: an archive that cannot take a file says so before anything is read for it.
    const handle = await open(tmp, 'wx', FILE_MODE);
    return new FileWriter(kind, tmp, handle.createWriteStream(), (file) => this.adopt(file));
  }

  /** Renames a finished, synced file into place and lists it; returns its entry and what the quota dropped. */
  private async adopt(f: { tmp: string; kind: string; records: number; from: number; to: number }): Promise<{ entry: ArchiveEntry; dropped: ArchiveEntry[] }> {
    const from = new Date(f.from).toISOString();
    const to = new Date(f.to).toISOString();
    const file = `${f.kind}-${stamp(from)}-${stamp(to)}-${randomBytes(3).toString('hex')}.ndjson.gz`;
    await rename(f.tmp, path.join(this.dir, file));
    await syncDir(this.dir);
    const { bytes, sha256 } = await digest(path.join(this.dir, file));
    const entry: ArchiveEntry = { file, kind: f.kind, records: f.records, from, to, bytes, sha256, created_at: new Date().toISOString() };
    this.entries.push(entry);
    const dropped = await this.keepQuota();
    await this.saveManifest();
    return { entry, dropped };
  }

  /** Removes the oldest files while the archive is over its quota (never the newest one); returns them. */
  private async keepQuota(): Promise<ArchiveEntry[]> {
    const dropped: ArchiveEntry[] = [];
    let total = this.bytes();
    while (total > this.quotaBytes && this.entries.length > 1) {
      const oldest = this.entries.shift()!;
      await rm(path.join(this.dir, oldest.file), { force: true });
      total -= oldest.bytes;
      dropped.push(oldest);
    }
    return dropped;
  }

  private async saveManifest(): Promise<void> {
    await replaceFile(path.join(this.dir, MANIFEST), `${JSON.stringify({ version: 1, files: this.entries }, null, 2)}\n`);
    await replaceFile(path.join(this.dir, SUMS), this.entries.map((e) => `${e.sha256}  ${e.file}\n`).join(''));
  }
}

/** One file being written: gzip on libuv's pool, into a temporary file the archive adopts once synced. */
class FileWriter implements ArchiveWriter {
  records = 0;
  private readonly gzip: Gzip = createGzip();
  private readonly written: Promise<void>;
  /** A failure of either stream, shown at the next add or at finish. */
  private failure: Error | undefined;
  private done = false;

  constructor(
    private readonly kind: string,
    private readonly tmp: string,
    private readonly out: WriteStream,
    private readonly adopt: (f: { tmp: string; kind: string; records: number; from: number; to: number }) => Promise<{ entry: ArchiveEntry; dropped: ArchiveEntry[] }>,
  ) {
    this.gzip.pipe(this.out);
    this.written = finished(this.out);
    this.gzip.on('error', (err) => (this.failure ??= err));
    this.written.catch((err: Error) => (this.failure ??= err));
  }

  async add(record: unknown): Promise<void> {
    if (this.failure) throw this.failure;
    this.records++;
    if (!this.gzip.write(`${JSON.stringify(record)}\n`)) await Promise.race([once(this.gzip, 'drain'), this.written]);
    if (this.failure) throw this.failure;
  }

  async finish(from: number, to: number): Promise<{ entry: ArchiveEntry; dropped: ArchiveEntry[] }> {
    this.done = true;
    this.gzip.end();
    await this.written;
    if (this.failure) throw this.failure;
    const handle = await open(this.tmp, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    return this.adopt({ tmp: this.tmp, kind: this.kind, records: this.records, from, to });
  }

  async abandon(): Promise<void> {
    if (!this.done) {
      this.done = true;
      this.gzip.destroy();
      this.out.destroy();
    }
    await rm(this.tmp, { force: true });
  }
}

async function readManifest(dir: string): Promise<ArchiveEntry[]> {
  try {
    const parsed = JSON.parse(await readFile(path.join(dir, MANIFEST), 'utf8')) as { files?: unknown };
    return Array.isArray(parsed.files) ? (parsed.files as ArchiveEntry[]).filter((e) => typeof e?.file === 'string' && !e.file.includes('/')) : [];
  } catch {
    // Missing or unreadable: the files themselves are listed again below.
    return [];
  }
}

/** The entry of a file found without one: its time range from its name. */
async function describe(dir: string, file: string): Promise<ArchiveEntry> {
  const [kind = 'unknown', from = '', to = ''] = file.split('-');
  const iso = (s: string) => s.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6.000Z');
  const { bytes, sha256 } = await digest(path.join(dir, file));
  return { file, kind, records: -1, from: iso(from), to: iso(to), bytes, sha256, created_at: (await stat(path.join(dir, file))).mtime.toISOString() };
}

/** Size and SHA-256 of a file, read as a stream (off the event loop's hands). */
async function digest(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}
