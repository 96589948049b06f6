/**
 * Request bodies: taking them from uWS (BodyIntake) and reading them (BodyReader).
 *
 * The body of one request as uWS delivers it. uWS hands body chunks only to a handler set in
 * the request callback, so `onData` is set there; but nothing is kept until the server has
 * decided that the caller may send this body. Until then the socket is paused from the first
 * chunk that is not the body's last: the only bytes that arrive are those uWS had already read
 * with the headers (one socket read, at most its 512 KiB receive buffer), and they are held,
 * bounded per request and in total. A body that came whole with its headers (nearly every JSON
 * body) pauses nothing: pausing and resuming a socket cost more than a small request's
 * handler. Once authorized, the body goes to memory (JSON) or to a spool file (uploads) with
 * the held bytes first; refused, it is dropped unread and the answer closes the connection.
 *
 * Reading a body: a JSON body is held in memory while parsed, within one budget for all of them;
 * a multipart body is spooled to disk within its caller's quota (body-budget.ts), then parsed
 * from there (multipart.ts). Checking the value against the route's schema is the pipeline's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HttpError } from './errors.js';
import { ClientGone, JSON_TYPE, type Exchange } from './exchange.js';
import { BodyBudget, emptyStats, type BodyStats } from './body-budget.js';
import { boundaryOf, parseSpooledMultipart, type MultipartPlan } from './multipart.js';
import type { RequestContext } from './route.js';
import { prepareSpoolDir, Spool } from './spool.js';

/** Most bytes one request may hold before its caller is known (a socket read is at most 512 KiB). */
export const MAX_HELD_PER_REQUEST = 1 << 20;
/** Most bytes all requests together may hold before their callers are known. */
export const MAX_HELD_TOTAL = 32 << 20;
/** Bytes waiting for the disk at which an upload's socket is paused until they are written. */
const SPOOL_HIGH_WATER = 256 * 1024;
/** JSON bodies are held in memory while parsed: all of them together at most this many times bodyLimit. */
const JSON_BODIES_IN_MEMORY = 32;
/** Parts of one multipart body, and the longest header block of one part. */
const MAX_PARTS = 256;
const MAX_PART_HEADER_BYTES = 16 * 1024;

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

export interface BodyLimits {
  /** Bytes of a JSON body, and of a multipart body's text fields together. */
  bodyLimit: number;
  /** Bytes of a multipart body. */
  uploadLimit: number;
  /** Upload bytes one caller may have in flight; default 4 × uploadLimit. */
  uploadQuota?: number;
  /** Upload bytes all callers may have in flight; default 16 × uploadLimit. */
  uploadTotal?: number;
  /** Directory of the uploads' spool files; default: a temporary one, removed on close. */
  uploadDir?: string;
}

/** Reads the bodies of requests, and keeps track of every intake so that none outlives the server. */
export class BodyReader {
  private readonly stats: BodyStats = emptyStats();
  private readonly uploads: BodyBudget;
  private readonly jsonBodies: BodyBudget;
  private readonly uploadDir: string;
  private readonly ownUploadDir: boolean;
  /** Requests whose body is being taken or whose spool file exists. */
  private readonly intakes = new Set<BodyIntake>();

  constructor(private readonly limits: BodyLimits) {
    this.uploads = new BodyBudget({ perCaller: limits.uploadQuota ?? 4 * limits.uploadLimit, total: limits.uploadTotal ?? 16 * limits.uploadLimit }, 'uploads');
    this.jsonBodies = new BodyBudget({ perCaller: Infinity, total: JSON_BODIES_IN_MEMORY * limits.bodyLimit }, 'request bodies');
    this.ownUploadDir = limits.uploadDir === undefined;
    this.uploadDir = limits.uploadDir ?? mkdtempSync(path.join(tmpdir(), 'wh-uploads-'));
    prepareSpoolDir(this.uploadDir);
  }

  /** Takes the body of a request from uWS; `hold` keeps its first bytes until the caller is known. */
  intake(exchange: Exchange, hold: boolean): BodyIntake {
    const intake = new BodyIntake(exchange, this.stats, hold);
    this.intakes.add(intake);
    return intake;
  }

  /** The request is over: its body's bytes and spool file go. */
  release(intake: BodyIntake): Promise<void> {
    this.intakes.delete(intake);
    return intake.dispose();
  }

  /** The body's value: parsed JSON (undefined for an empty body), or a multipart body with its files on disk. */
  async read(ctx: RequestContext, intake: BodyIntake, multipart: MultipartPlan | undefined): Promise<unknown> {
    const contentType = ctx.headers['content-type'] ?? '';
    const length = ctx.headers['content-length'];
    const declared = length !== undefined ? Number(length) : undefined;
    if (declared !== undefined && !Number.isSafeInteger(declared)) throw new HttpError('bad_request', 'Invalid Content-Length header');
    if (multipart) return this.readUpload(multipart, ctx, intake, contentType, declared);
    const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
    if (mediaType !== '' && mediaType !== JSON_TYPE && !mediaType.endsWith('+json')) {
      throw new HttpError('unsupported_media_type', `This endpoint takes ${JSON_TYPE}, not ${mediaType}`);
    }
    const limit = this.limits.bodyLimit;
    if (declared !== undefined && declared > limit) throw tooLarge(limit);
    // Held in memory while parsed: one global budget, so a flood of bodies cannot grow the heap without bound.
    const reserved = declared ?? limit;
    this.jsonBodies.reserve('*', reserved);
    try {
      const raw = await intake.toMemory(limit);
      return raw.length === 0 ? undefined : parseJson(raw);
    } finally {
      this.jsonBodies.release('*', reserved);
    }
  }

  /** A multipart body: spooled to disk within the caller's quota, then parsed from there. */
  private async readUpload(plan: MultipartPlan, ctx: RequestContext, intake: BodyIntake, contentType: string, declared: number | undefined): Promise<unknown> {
    if (!contentType.toLowerCase().startsWith('multipart/form-data')) throw new HttpError('unsupported_media_type', 'This endpoint takes multipart/form-data');
    const limit = this.limits.uploadLimit;
    if (declared !== undefined && declared > limit) throw tooLarge(limit);
    const boundary = boundaryOf(contentType);
    const who = ctx.caller.kind === 'anonymous' ? `address:${ctx.remoteAddress}` : `${ctx.caller.kind}:${ctx.caller.id ?? 0}`;
    // The declared length is taken at once, so that concurrent uploads cannot all pass the check
    // and then exceed it together; a chunked body takes its bytes as they come.
    let reserved = 0;
    intake.onDispose(() => this.uploads.release(who, reserved));
    if (declared !== undefined) {
      this.uploads.reserve(who, declared);
      reserved = declared;
    }
    const spool = new Spool(this.uploadDir);
    const size = await intake.toFile(spool, limit, (bytes) => {
      if (declared !== undefined) return;
      this.uploads.reserve(who, bytes);
      reserved += bytes;
    });
    return parseSpooledMultipart(spool.path, size, boundary, plan, { maxTextBytes: this.limits.bodyLimit, maxParts: MAX_PARTS, maxHeaderBytes: MAX_PART_HEADER_BYTES });
  }

  /** What was done with request body bytes (tests and benchmarks read it). */
  bodyStats(): BodyStats {
    return { ...this.stats, spoolFiles: [...this.intakes].filter((i) => i.spooling).length };
  }

  /** Drops every body still held or kept (requests cut off by a shutdown keep no spool file behind). */
  async close(): Promise<void> {
    await Promise.all([...this.intakes].map((intake) => intake.dispose()));
    if (this.ownUploadDir) rmSync(this.uploadDir, { recursive: true, force: true });
  }
}

function tooLarge(limit: number): HttpError {
  return new HttpError('payload_too_large', `Request body is larger than the limit of ${limit} bytes`);
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new HttpError('bad_request', 'Body is not valid JSON', {}, [
      { loc: ['body'], msg: `JSON decode error: ${(err as Error).message}`, type: 'json_invalid' },
    ]);
  }
}
