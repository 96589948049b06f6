/**
 * A file field of a multipart upload, left where it arrived: a byte range of the request's
 * spool file. Handlers stream it to its destination; nothing holds it whole in memory unless
 * a handler asks for that. Valid until the request is answered (the spool file is removed then).
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { UploadedFile } from './route.js';

export class SpooledFile implements UploadedFile {
  constructor(
    readonly filename: string,
    readonly type: string,
    private readonly file: string,
    private readonly start: number,
    readonly size: number,
  ) {}

  /** The bytes, read from disk in 64 KiB pieces. */
  stream(): Readable {
    if (this.size === 0) return Readable.from([]);
    return createReadStream(this.file, { start: this.start, end: this.start + this.size - 1, highWaterMark: 64 * 1024 });
  }

  /** The first `n` bytes (fewer when the file is shorter). */
  async head(n: number): Promise<Buffer> {
    return this.readRange(Math.min(n, this.size));
  }

  /** All bytes in memory: for files a route has already bounded to a small size. */
  read(): Promise<Buffer> {
    return this.readRange(this.size);
  }

  private async readRange(length: number): Promise<Buffer> {
    const bytes = Buffer.alloc(length);
    if (length === 0) return bytes;
    const handle = await open(this.file, 'r');
    try {
      await handle.read(bytes, 0, length, this.start);
    } finally {
      await handle.close();
    }
    return bytes;
  }
}
