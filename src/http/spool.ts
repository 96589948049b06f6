/**
 * The spool file of one upload: chunks are appended in order as they arrive and written by
 * the libuv pool. `pending` says how many bytes wait for the disk, so the receiver can pause
 * the socket while the disk is slower than the network: what an upload holds in memory is
 * bounded by that, not by its size.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** Mode of the uploads directory and of every spool file: uploads may hold anything. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** Creates the uploads directory and removes what an earlier process left in it (it ended mid-upload). */
export function prepareSpoolDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  for (const name of readdirSync(dir)) if (name.endsWith('.upload')) rmSync(path.join(dir, name), { force: true });
}

export class Spool {
  readonly path: string;
  /** Bytes handed to `write` and not yet on disk. */
  pending = 0;
  /** Bytes on disk. */
  written = 0;
  /** Called each time everything handed over is written. */
  onDrain: (() => void) | undefined;
  private readonly queue: Buffer[] = [];
  private handle: Promise<FileHandle>;
  private writing: Promise<void> | undefined;
  private error: unknown;
  private removed = false;

  constructor(dir: string) {
    this.path = path.join(dir, `${Date.now().toString(36)}-${randomBytes(8).toString('hex')}.upload`);
    this.handle = open(this.path, 'wx', FILE_MODE);
    // Reported by finish(); a rejection nobody awaited yet must not end the process.
    this.handle.catch((err: unknown) => (this.error ??= err));
  }

  /** Appends a chunk (the spool keeps it: pass a copy of a reused buffer). */
  write(chunk: Buffer): void {
    if (this.removed || this.error) return;
    this.queue.push(chunk);
    this.pending += chunk.length;
    this.writing ??= this.drain();
  }

  /** Resolves when every chunk is on disk; rejects with the write error, if any. */
  async finish(): Promise<void> {
    await this.writing;
    if (this.error) throw this.error;
  }

  /** Closes and deletes the file; safe to call at any time, and more than once. */
  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    this.queue.length = 0;
    await this.writing;
    try {
      await (await this.handle).close();
    } catch {
      // never opened, or already closed
    }
    await rm(this.path, { force: true });
  }

  private async drain(): Promise<void> {
    try {
      const handle = await this.handle;
      while (this.queue.length > 0 && !this.removed) {
        const batch = this.queue.splice(0);
        const bytes = batch.reduce((n, b) => n + b.length, 0);
        await writeAll(handle, batch);
        this.pending -= bytes;
        this.written += bytes;
      }
    } catch (err) {
      this.error ??= err;
      this.queue.length = 0;
    } finally {
      this.writing = undefined;
      this.pending = 0;
    }
    this.onDrain?.();
  }
}

/** writev until every byte is written (a write may take fewer bytes than given). */
async function writeAll(handle: FileHandle, buffers: Buffer[]): Promise<void> {
  let rest = buffers;
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest);
    while (rest.length > 0 && bytesWritten >= rest[0]!.length) {
      bytesWritten -= rest[0]!.length;
      rest = rest.slice(1);
    }
    if (rest.length > 0 && bytesWritten > 0) rest = [rest[0]!.subarray(bytesWritten), ...rest.slice(1)];
  }
}
