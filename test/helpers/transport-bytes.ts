// What the line transports' tests (test/unit/link/serial.test.ts, tcp.test.ts) write and
// check: numbered chunks that tell a whole write from a torn one, and a collector of what the
// transport hands to onData.
import type { TransportStats } from '../../src/link/transport.js';

/** The size of a numbered chunk: 1 KiB, each filled with its own index. */
export const CHUNK = 1024;

/** Collects every chunk given to onData; until(n) resolves once n bytes are in. */
export function collector(): { data: Buffer; until(n: number): Promise<void>; onData(b: Buffer): void } {
  const waiters: { n: number; resolve: () => void }[] = [];
  const c = {
    data: Buffer.alloc(0),
    onData(b: Buffer) {
      c.data = Buffer.concat([c.data, b]);
      for (const w of waiters.splice(0)) if (c.data.length >= w.n) w.resolve();
      else waiters.push(w);
    },
    until(n: number): Promise<void> {
      return c.data.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
  return c;
}

/**
 * Writes numbered chunks to a far end that does not read until the transport has dropped some
 * (at least 64 written), or `limit` chunks went in without a drop; with `yieldEvery`, lets the
 * event loop run between batches (a socket's kernel buffers fill only then).
 */
export async function fillUntilDropped(
  tr: { write(bytes: Uint8Array): boolean; stats: TransportStats }, limit: number, yieldEvery?: number,
): Promise<{ accepted: number; written: number }> {
  let accepted = 0;
  let written = 0;
  while (tr.stats.droppedFull === 0 || written < 64) {
    const chunk = Buffer.alloc(CHUNK);
    for (let i = 0; i < CHUNK; i += 4) chunk.writeUInt32LE(written, i);
    if (tr.write(chunk)) accepted++;
    written++;
    if (written > limit) break; // and still nothing dropped: the caller's assertion says so
    if (yieldEvery && written % yieldEvery === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return { accepted, written };
}

/** Of numbered chunks as received: how many words were not their chunk's index, and how many chunks came out of order. */
export function tornAndDisorder(received: Buffer): { torn: number; disorder: number } {
  let last = -1;
  let torn = 0;
  let disorder = 0;
  for (let at = 0; at < received.length; at += CHUNK) {
    const idx = received.readUInt32LE(at);
    for (let i = at; i < at + CHUNK; i += 4) if (received.readUInt32LE(i) !== idx) torn++;
    if (idx <= last) disorder++;
    last = idx;
  }
  return { torn, disorder };
}
