/**
 * The body of one request as uWS delivers it. uWS hands body chunks only to a handler set in
 * the request callback, so `onData` is set there; but nothing is kept until the server has
 * decided that the caller may send this body. Until then the socket is paused from the first
 * chunk that is not the body's last: the only bytes that arrive are those uWS had already read
 * with the headers (one socket read, at most its 512 KiB receive buffer), and they are held,
 * bounded per request and in total. A body that came whole with its headers (nearly every JSON
 * body) pauses nothing: pausing and resuming a socket cost more than a small request's
 * handler (issue 22). Once authorized, the body goes to memory (JSON) or to a spool file
 * (uploads) with the held bytes first; refused, it is dropped unread and the answer closes the
 * connection.
 */
import { HttpError } from './errors.js';
import { ClientGone, type Exchange } from './exchange.js';
import type { BodyStats } from './body-budget.js';
import type { Spool } from './spool.js';

/** Most bytes one request may hold before its caller is known (a socket read is at most 512 KiB). */
export const MAX_HELD_PER_REQUEST = 1 << 20;
/** Most bytes all requests together may hold before their callers are known. */
export const MAX_HELD_TOTAL = 32 << 20;
/** Bytes waiting for the disk at which an upload's socket is paused until they are written. */
const SPOOL_HIGH_WATER = 256 * 1024;

interface Sink {
  /** Takes a chunk the sink may keep (already a copy). */
  take(chunk: Buffer, last: boolean): void;
}

export class BodyIntake {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private complete = false;
  /** Taken by neither a sink nor the hold: dropped (refused, failed, overflowed, disposed). */
  private dropping = false;
  private overflowed = false;
  private sink: Sink | undefined;
  private reject: ((err: unknown) => void) | undefined;
  private holding: boolean;
  private diskBusy = false;
  private paused = false;
  private memoryBytes = 0;
  private spooledBytes = 0;
  private spool: Spool | undefined;
  private disposers: (() => void)[] = [];
  private disposed: Promise<void> | undefined;

  constructor(private readonly exchange: Exchange, private readonly stats: BodyStats, hold: boolean) {
    this.holding = hold;
    exchange.onBody((chunk, last) => this.take(chunk, last));
    exchange.onAbort(() => this.reject?.(new ClientGone()));
  }

  /** Reads the body into memory; 413 past `limit`. */
  toMemory(limit: number): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let length = 0;
      this.attach(reject, {
        take: (chunk, last) => {
          length += chunk.length;
          if (length > limit) return this.fail(tooLarge(limit));
          chunks.push(chunk);
          this.count('memory', chunk.length);
          if (last) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
        },
      });
    });
  }

  /**
   * Writes the body to `spool`; resolves with its size once it is on disk. 413 past `limit`;
   * `reserve(n)` is asked before each chunk is kept and may throw (a quota) to refuse it.
   */
  toFile(spool: Spool, limit: number, reserve: (bytes: number) => void): Promise<number> {
    this.spool = spool;
    return new Promise<number>((resolve, reject) => {
      let length = 0;
      spool.onDrain = () => {
        this.diskBusy = false;
        this.updatePause();
      };
      this.attach(reject, {
        take: (chunk, last) => {
          length += chunk.length;
          if (length > limit) return this.fail(tooLarge(limit));
          try {
            reserve(chunk.length);
          } catch (err) {
            return this.fail(err);
          }
          spool.write(chunk);
          this.count('spooled', chunk.length);
          if (spool.pending > SPOOL_HIGH_WATER && !this.diskBusy) {
            this.diskBusy = true;
            this.updatePause();
          }
          if (last) spool.finish().then(() => resolve(length), (err: unknown) => this.fail(err));
        },
      });
    });
  }

  /** Whether a spool file of this body exists. */
  get spooling(): boolean {
    return this.spool !== undefined && this.disposed === undefined;
  }

  /** Runs `fn` when the request is over (to give back a quota). */
  onDispose(fn: () => void): void {
    this.disposers.push(fn);
  }

  /** Drops whatever is held or kept and removes the spool file; the request is over. Idempotent. */
  dispose(): Promise<void> {
    if (this.disposed) return this.disposed;
    this.dropping = true;
    this.reject = undefined;
    this.dropHeld();
    this.stats.memoryNow -= this.memoryBytes;
    this.stats.spooledNow -= this.spooledBytes;
    this.memoryBytes = this.spooledBytes = 0;
    for (const fn of this.disposers.splice(0)) fn();
    this.disposed = this.spool?.remove() ?? Promise.resolve();
    return this.disposed;
  }

  private take(chunk: ArrayBuffer, last: boolean): void {
    if (this.dropping) return this.updatePause();
    const size = chunk.byteLength;
    if (!this.sink) {
      if (this.heldBytes + size > MAX_HELD_PER_REQUEST || this.stats.heldNow + size > MAX_HELD_TOTAL) {
        // Refused when the decision comes: the bytes needed to finish this body are gone.
        this.overflowed = true;
        this.dropping = true;
        this.dropHeld();
        this.updatePause();
        return;
      }
      // uWS reuses the chunk's memory after this callback: keep a copy.
      this.held.push(Buffer.from(chunk.slice(0)));
      this.heldBytes += size;
      this.stats.heldNow += size;
      this.stats.heldTotal += size;
      if (last) this.complete = true;
      else this.updatePause();
      return;
    }
    this.sink.take(Buffer.from(chunk.slice(0)), last);
  }

  private attach(reject: (err: unknown) => void, sink: Sink): void {
    if (this.exchange.aborted) return reject(new ClientGone());
    if (this.overflowed) {
      return reject(new HttpError('unavailable', 'The controller is receiving too many request bodies at once; retry in a few seconds', { 'retry-after': '5' }));
    }
    this.reject = reject;
    this.sink = sink;
    this.holding = false;
    const held = this.held;
    const complete = this.complete;
    this.dropHeld();
    if (held.length === 0 && complete) sink.take(Buffer.alloc(0), true);
    for (let i = 0; i < held.length && !this.dropping; i++) sink.take(held[i]!, complete && i === held.length - 1);
    this.updatePause();
  }

  private fail(err: unknown): void {
    this.dropping = true;
    const reject = this.reject;
    this.reject = undefined;
    this.updatePause();
    reject?.(err);
  }

  private dropHeld(): void {
    this.stats.heldNow -= this.heldBytes;
    this.held = [];
    this.heldBytes = 0;
  }

  private count(where: 'memory' | 'spooled', bytes: number): void {
    if (where === 'memory') {
      this.memoryBytes += bytes;
      this.stats.memoryNow += bytes;
      this.stats.memoryTotal += bytes;
    } else {
      this.spooledBytes += bytes;
      this.stats.spooledNow += bytes;
      this.stats.spooledTotal += bytes;
    }
  }

  /**
   * The socket reads only while the body is wanted and the disk keeps up. A dropped body stays
   * paused: its answer closes the connection, and reading it would only cost.
   */
  private updatePause(): void {
    const pause = (this.holding && !this.complete) || this.diskBusy || this.dropping;
    if (pause === this.paused) return;
    this.paused = pause;
    if (pause) {
      this.stats.pausesTotal++;
      this.exchange.pause();
    }
    else this.exchange.resume();
  }
}

function tooLarge(limit: number): HttpError {
  return new HttpError('payload_too_large', `Request body is larger than the limit of ${limit} bytes`);
}
