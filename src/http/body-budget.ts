/**
 * Request body bytes in flight: how many each caller has, and all callers together. A body
 * reserves its bytes before they are taken (its Content-Length, or chunk by chunk when it has
 * none) and gives them back when its request is answered, whatever the outcome. Over the
 * caller's quota is a 429 (its own other requests must finish first); over the global cap a
 * 503 (the box is busy): both before the bytes are kept, in the documented error shape.
 */
import { TooManyRequestsError } from '../domain/errors.js';
import { HttpError } from './errors.js';

/** Seconds a refused client is told to wait before trying again. */
const RETRY_AFTER_S = 5;

export interface BudgetLimits {
  /** Bytes one caller may have in flight. */
  perCaller: number;
  /** Bytes all callers together may have in flight. */
  total: number;
}

export class BodyBudget {
  private readonly byCaller = new Map<string, number>();
  private used = 0;

  constructor(readonly limits: BudgetLimits, private readonly what: string) {}

  /** Bytes in flight now: all callers, or one. */
  inFlight(caller?: string): number {
    return caller === undefined ? this.used : (this.byCaller.get(caller) ?? 0);
  }

  /** Takes `bytes` more for `caller`, or throws 429/503 and takes nothing. */
  reserve(caller: string, bytes: number): void {
    const mine = this.byCaller.get(caller) ?? 0;
    if (mine + bytes > this.limits.perCaller) {
      throw new TooManyRequestsError(
        `${this.what} of this caller in flight would reach ${mine + bytes} bytes; at most ${this.limits.perCaller} are taken at once: retry when the others are done`,
        RETRY_AFTER_S,
      );
    }
    if (this.used + bytes > this.limits.total) {
      throw new HttpError('unavailable', `The controller is receiving too many ${this.what} at once; retry in a few seconds`, { 'retry-after': String(RETRY_AFTER_S) });
    }
    this.byCaller.set(caller, mine + bytes);
    this.used += bytes;
  }

  /** Gives back what `reserve` took. */
  release(caller: string, bytes: number): void {
    if (bytes === 0) return;
    const left = (this.byCaller.get(caller) ?? 0) - bytes;
    if (left > 0) this.byCaller.set(caller, left);
    else this.byCaller.delete(caller);
    this.used -= bytes;
  }
}

/** What the server has done with body bytes: kept now, and taken in total since it started. */
export interface BodyStats {
  /** Held while the caller was being authenticated (at most what uWS had read with the headers). */
  heldNow: number;
  heldTotal: number;
  /** Kept in memory (JSON bodies). */
  memoryNow: number;
  memoryTotal: number;
  /** Written to spool files (multipart uploads). */
  spooledNow: number;
  spooledTotal: number;
  /** Spool files on disk now. */
  spoolFiles: number;
  /** Times a body's socket was paused (waiting for its caller, the disk, or dropped). */
  pausesTotal: number;
}

/** A fresh, all-zero BodyStats. */
export function emptyStats(): BodyStats {
  return { heldNow: 0, heldTotal: 0, memoryNow: 0, memoryTotal: 0, spooledNow: 0, spooledTotal: 0, spoolFiles: 0, pausesTotal: 0 };
}
