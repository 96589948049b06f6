/**
 * The support outbox: issues written by `POST /api/v2/support/create_issue`, kept on the box's
 * disk under `<state dir>/support/<key>/`. It is also the forwarder's queue: an issue whose
 * status.json says `pending` is still to be sent, so nothing is lost across restarts.
 *
 *   support/SUP-20260501-K7Q2MX/
 *     issue.json    the payload, who sent it, the file list (names, sizes, sha256); never changes
 *     status.json   forwarding state; replaced atomically after each attempt
 *     files/<name>  the attachments, under sanitized names
 *
 * An issue is assembled in `.tmp-<key>/` and renamed into place once every file in it is
 * synced, so a key that exists is always complete; leftovers of a crash are removed at open.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import { bufferBytes, writeNewFileFrom, type IncomingBytes } from '../incoming.js';
import { DIR_MODE, FILE_MODE, replaceFile, syncDir, writeNewFile } from './durable.js';
import { isFileName, isKey, newKey, uniqueFileNames } from './names.js';
import type { IssuePayload, Severity } from './payload.js';

export type { IssuePayload, Severity } from './payload.js';

/** A file as received: its bytes in memory, or where the HTTP layer keeps them (an upload's spool file). */
export type IncomingFile = { filename: string; type: string } & ({ data: Buffer } | IncomingBytes);

/** A file as stored: `name` is the safe name on disk, `original_name` what the client sent. */
export interface StoredFile {
  name: string;
  original_name: string;
  type: string;
  bytes: number;
  sha256: string;
}

/** Contents of issue.json. */
export interface IssueRecord {
  key: string;
  /** ISO 8601 UTC. */
  created_at: string;
  created_by: { kind: string; id?: number } | null;
  payload: IssuePayload & { severity: Severity };
  files: StoredFile[];
}

/** Who may read an issue besides support managers: its creator, as `{kind, id}` of the caller. */
export function isCreator(issue: IssueRecord, caller: { kind: string; id?: number }): boolean {
  const by = issue.created_by;
  return by !== null && caller.kind !== 'anonymous' && by.kind === caller.kind && by.id === caller.id;
}

/** Contents of status.json; instants are ISO 8601 UTC or null. */
export interface ForwardingStatus {
  status: 'pending' | 'forwarded';
  attempts: number;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  forwarded_at: string | null;
  /** What the support endpoint answered with, when its 2xx body had `key` / `url` strings. */
  remote_key: string | null;
  remote_url: string | null;
}

export interface SupportLimits {
  maxFiles: number;
  maxFileBytes: number;
  /** Sum of all files; keep it at or below the server's `upload_limit_bytes`. */
  maxTotalBytes: number;
}

/** 10 files, 10 MiB each, 16 MiB together (the default `upload_limit_bytes`). */
export const DEFAULT_SUPPORT_LIMITS: SupportLimits = { maxFiles: 10, maxFileBytes: 10 << 20, maxTotalBytes: 16 << 20 };

export interface OutboxOptions {
  limits?: Partial<SupportLimits>;
  now?: () => number;
}

const INITIAL_STATUS: ForwardingStatus = {
  status: 'pending', attempts: 0, last_error: null, last_attempt_at: null, next_attempt_at: null, forwarded_at: null, remote_key: null, remote_url: null,
};

/** A MIME type safe to echo into a header later; anything else becomes octet-stream. */
const MIME_RE = /^[A-Za-z0-9][\w.+-]*\/[A-Za-z0-9][\w.+-]*$/;

export class SupportOutbox {
  readonly limits: SupportLimits;
  private readonly now: () => number;
  private readonly listeners = new Set<(key: string) => void>();
  /** Keys being assembled, so two concurrent creations never pick the same one. */
  private readonly reserved = new Set<string>();

  private constructor(readonly dir: string, options: OutboxOptions) {
    this.limits = { ...DEFAULT_SUPPORT_LIMITS, ...options.limits };
    this.now = options.now ?? Date.now;
  }

  /** Opens (creating) `<stateDir>/support` and removes what a crash left half-written. */
  static async open(stateDir: string, options: OutboxOptions = {}): Promise<SupportOutbox> {
    const dir = path.join(stateDir, 'support');
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
    // The outbox's own entry must be on disk too before any issue in it is acknowledged.
    await syncDir(stateDir);
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      // Never acknowledged: the client got no key, so removing them loses nothing.
      if (entry.name.startsWith('.tmp-')) await rm(path.join(dir, entry.name), { recursive: true, force: true });
      else if (entry.isDirectory() && isKey(entry.name)) {
        for (const inner of await readdir(path.join(dir, entry.name))) {
          if (inner.startsWith('.') && inner.endsWith('.tmp')) await rm(path.join(dir, entry.name, inner), { force: true });
        }
      }
    }
    return new SupportOutbox(dir, options);
  }

  /** Calls `listener(key)` after each new issue is durable; returns the unsubscribe function. */
  onCreated(listener: (key: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Checks the limits, stores the issue and its files durably and returns its record. */
  async create(input: { payload: IssuePayload; files: readonly IncomingFile[]; createdBy?: IssueRecord['created_by'] }): Promise<IssueRecord> {
    // A browser form with no file chosen still sends an empty, nameless `files` part.
    const files = input.files.map(withBytes).filter((f) => f.filename !== '' || f.bytes.size > 0);
    this.checkLimits(files);

    const names = uniqueFileNames(files.map((f) => f.filename));
    const stored: StoredFile[] = files.map((f, i) => ({
      name: names[i]!,
      original_name: f.filename.slice(0, 255),
      type: MIME_RE.test(f.type) ? f.type.toLowerCase() : 'application/octet-stream',
      bytes: f.bytes.size,
      sha256: '', // computed while the file is written
    }));
    const key = await this.reserveKey();
    const record: IssueRecord = {
      key,
      created_at: new Date(this.now()).toISOString(),
      created_by: input.createdBy ?? null,
      payload: { ...input.payload, severity: input.payload.severity ?? 'normal' },
      files: stored,
    };

    const tmp = path.join(this.dir, `.tmp-${key}`);
    try {
      await mkdir(path.join(tmp, 'files'), { recursive: true, mode: DIR_MODE });
      for (let i = 0; i < files.length; i++) {
        // Copied piece by piece from where the upload is kept, hashed on the way: never whole in memory.
        const hash = createHash('sha256');
        const bytes = await writeNewFileFrom(path.join(tmp, 'files', stored[i]!.name), files[i]!.bytes.stream(), FILE_MODE, (piece) => hash.update(piece));
        if (bytes !== stored[i]!.bytes) throw new Error(`attachment ${stored[i]!.name} changed size while stored (${bytes} of ${stored[i]!.bytes} bytes)`);
        stored[i]!.sha256 = hash.digest('hex');
      }
      await syncDir(path.join(tmp, 'files'));
      await writeNewFile(path.join(tmp, 'issue.json'), `${JSON.stringify(record, null, 2)}\n`);
      await writeNewFile(path.join(tmp, 'status.json'), `${JSON.stringify(INITIAL_STATUS, null, 2)}\n`);
      await syncDir(tmp);
      await rename(tmp, path.join(this.dir, key));
      await syncDir(this.dir);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    } finally {
      this.reserved.delete(key);
    }
    // The issue is durable and answered either way: a listener's failure is its own business.
    for (const listener of this.listeners) {
      try {
        listener(key);
      } catch {
        // listeners are the forwarder's wake-up call, which does not throw
      }
    }
    return record;
  }

  /** The keys of all stored issues, sorted (so by day of creation; random order within a day). */
  async keys(): Promise<string[]> {
    const entries = await readdir(this.dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && isKey(e.name)).map((e) => e.name).sort();
  }

  /** An issue and its forwarding status; NotFoundError for a malformed or unknown key. */
  async get(key: string): Promise<{ issue: IssueRecord; status: ForwardingStatus }> {
    const dir = this.issueDir(key);
    const [issue, status] = await Promise.all([readJson<IssueRecord>(path.join(dir, 'issue.json'), key), readJson<ForwardingStatus>(path.join(dir, 'status.json'), key)]);
    return { issue, status };
  }

  /** The bytes of one attachment; only names listed in issue.json are ever opened. */
  async readFile(key: string, name: string): Promise<{ file: StoredFile; data: Buffer }> {
    if (!isFileName(name)) throw new NotFoundError(`Support issue ${key} has no file ${name}`);
    const { issue } = await this.get(key);
    const file = issue.files.find((f) => f.name === name);
    if (!file) throw new NotFoundError(`Support issue ${key} has no file ${name}`);
    return { file, data: await readFile(path.join(this.issueDir(key), 'files', file.name)) };
  }

  /**
   * Removes an issue and its files (the history pruner, once they are archived). Renamed aside
   * first: a crash half-way leaves a `.tmp-` directory that the next open removes, never an
   * issue with some of its files.
   */
  async remove(key: string): Promise<void> {
    const dir = this.issueDir(key);
    const aside = path.join(this.dir, `.tmp-removed-${key}`);
    await rename(dir, aside);
    await syncDir(this.dir);
    await rm(aside, { recursive: true, force: true });
  }

  /** Replaces an issue's forwarding status durably (the forwarder is its only writer). */
  async setStatus(key: string, status: ForwardingStatus): Promise<void> {
    await replaceFile(path.join(this.issueDir(key), 'status.json'), `${JSON.stringify(status, null, 2)}\n`);
  }

  private checkLimits(files: readonly { filename: string; bytes: IncomingBytes }[]): void {
    const { maxFiles, maxFileBytes, maxTotalBytes } = this.limits;
    if (files.length > maxFiles) {
      throw ValidationError.of(['body', 'files'], `List should have at most ${maxFiles} items`, 'too_long');
    }
    let total = 0;
    for (const f of files) {
      if (f.bytes.size > maxFileBytes) {
        throw new DomainError('payload_too_large', `file ${JSON.stringify(f.filename)} has ${f.bytes.size} bytes; at most ${maxFileBytes} are accepted per file`);
      }
      total += f.bytes.size;
    }
    if (total > maxTotalBytes) throw new DomainError('payload_too_large', `the files have ${total} bytes together; at most ${maxTotalBytes} are accepted`);
  }

  private async reserveKey(): Promise<string> {
    for (;;) {
      const key = newKey(this.now());
      if (this.reserved.has(key)) continue;
      // Reserved before the await, so a concurrent creation cannot pick it meanwhile.
      this.reserved.add(key);
      if (!(await exists(path.join(this.dir, key)))) return key;
      this.reserved.delete(key);
    }
  }

  /** The directory of a key; the key is checked first, so it can never leave the outbox. */
  private issueDir(key: string): string {
    if (!isKey(key)) throw new NotFoundError(`No support issue ${key}`);
    return path.join(this.dir, key);
  }
}

/** An incoming file with its bytes in one shape, wherever they are. */
function withBytes(f: IncomingFile): { filename: string; type: string; bytes: IncomingBytes } {
  return { filename: f.filename, type: f.type, bytes: 'data' in f ? bufferBytes(f.data) : f };
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

async function readJson<T>(file: string, key: string): Promise<T> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`No support issue ${key}`);
    throw err;
  }
  return JSON.parse(text) as T;
}
