/**
 * Crash-safe file writes for the support outbox. A reader (or the daemon after a power cut)
 * sees either the old content or the new one, never a torn file: write a temporary file,
 * fsync it, rename it over the target, fsync the directory so the rename itself is on disk.
 * Async (libuv pool) so that a 10 MiB attachment does not stall the event loop.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** Mode of every file the outbox writes: the issue may hold personal data. */
export const FILE_MODE = 0o600;
/** Mode of every directory the outbox creates. */
export const DIR_MODE = 0o700;

/** Writes bytes to a new file and fsyncs it (the file must not exist yet). */
export async function writeNewFile(file: string, data: Buffer | string): Promise<void> {
  const handle = await open(file, 'wx', FILE_MODE);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Fsyncs a directory, making the creations and renames inside it durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Replaces a file atomically and durably: temp file, fsync, rename, fsync of the directory. */
export async function replaceFile(file: string, data: Buffer | string): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeNewFile(tmp, data);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dir);
}
