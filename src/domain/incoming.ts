/**
 * Bytes a client sent, wherever the HTTP layer keeps them (in memory, or a range of an
 * upload's spool file on disk), and how domain code writes them to a file of its own without
 * holding them whole in memory.
 */
import { open } from 'node:fs/promises';

/** The bytes of one received file. */
export interface IncomingBytes {
  size: number;
  /** Its bytes, in pieces. */
  stream(): AsyncIterable<Uint8Array>;
  /** Its first `n` bytes (fewer when it is shorter). */
  head(n: number): Promise<Buffer>;
}

/** IncomingBytes over a buffer (tests, and callers that have the bytes already). */
export function bufferBytes(data: Buffer): IncomingBytes {
  return {
    size: data.length,
    async *stream() {
      yield data;
    },
    head: async (n) => data.subarray(0, n),
  };
}

/**
 * Writes `source` to a new file (which must not exist) with `mode`, fsyncs it, and hands each
 * piece to `seen` on the way (a hash). Removes nothing on failure: the caller owns the name.
 */
export async function writeNewFileFrom(file: string, source: AsyncIterable<Uint8Array>, mode: number, seen?: (piece: Uint8Array) => void): Promise<number> {
  const handle = await open(file, 'wx', mode);
  let bytes = 0;
  try {
    for await (const piece of source) {
      seen?.(piece);
      for (let done = 0; done < piece.length;) done += (await handle.write(piece, done, piece.length - done)).bytesWritten;
      bytes += piece.length;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return bytes;
}
