/**
 * One request/response exchange over uWS. It owns the pitfalls of the raw API in one place:
 * `onAborted` is registered before anything else, every write after an await is corked and
 * guarded by the aborted flag, the body's flow control is a no-op once the response is gone,
 * large answers go through tryEnd/onWritable, and every answer carries the security headers.
 */
import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from './uws.js';
import type { AnyRoute } from './route.js';
import { FRAMEWORK_HEADERS, HSTS } from './hardening.js';

const STATUS_LINES = new Map<number, string>();
for (const [code, text] of Object.entries(STATUS_CODES)) STATUS_LINES.set(Number(code), `${code} ${text ?? ''}`);

/** The media type of JSON: of the bodies the API takes, and of the answers it builds. */
export const JSON_TYPE = 'application/json';

/** Bodies above this size are streamed with backpressure instead of one `end()`. */
const LARGE_BODY = 256 * 1024;

/** An answer sent instead of the one asked for. */
export interface HeldAnswer {
  status: number;
  contentType: string;
  body: string;
  headers: Record<string, string>;
}

/** See Exchange's `hold`. */
export type AnswerHold = (requestId: string) => Promise<HeldAnswer | undefined> | undefined;

export class Exchange {
  aborted = false;
  finished = false;
  /**
   * True while the uWS request callback runs: uWS corks the socket around it, so a send then
   * writes at once; any later send (after an await) must cork itself.
   */
  inCallback = false;
  /** The request has a body that has not been read to its end: its answer closes the connection. */
  bodyPending = false;
  /** Answers of routes that need credentials must not be kept by any cache. */
  noStore = false;
  /** The route the request matched, once it did (what /metrics counts it under). */
  route: AnyRoute | undefined = undefined;
  private controller: AbortController | undefined;
  /** The socket was paused (pause()) and not resumed since. */
  private paused = false;
  private abortListeners: (() => void)[] | undefined;

  constructor(
    private readonly res: HttpResponse,
    /**
     * Holds answers until what they could have read is durable (a replicated pair: until the log
     * has it): undefined to send at once, or a promise of nothing (send as asked) or of the
     * answer to send instead (the box can no longer vouch for what it read).
     */
    private readonly hold?: AnswerHold,
  ) {
    res.onAborted(() => {
      this.aborted = true;
      this.controller?.abort();
      for (const listener of this.abortListeners ?? []) listener();
    });
  }

  /** An AbortSignal that fires when the client goes away (created on first use). */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.aborted) this.controller.abort();
    return this.controller.signal;
  }

  /** Calls `listener` when the client disconnects before the answer is sent. */
  onAbort(listener: () => void): void {
    (this.abortListeners ??= []).push(listener);
  }

  /** Receives the body's chunks; uWS delivers them only to a handler set during the request callback. */
  onBody(handler: (chunk: ArrayBuffer, last: boolean) => void): void {
    this.bodyPending = true;
    this.res.onData((chunk, last) => {
      if (last) this.bodyPending = false;
      handler(chunk, last);
    });
  }

  /** Stops reading the body from the socket (uWS still delivers what it has read already). */
  pause(): void {
    if (this.aborted || this.finished) return;
    this.res.pause();
    this.paused = true;
  }

  /** Reads the body from the socket again. */
  resume(): void {
    if (this.aborted || this.finished) return;
    this.res.resume();
    this.paused = false;
  }

  /**
   * Sends the answer. `corked` must be true when called after an await (outside the uWS
   * callback). `close` asks uWS to close the connection after it (e.g. a refused upload).
   */
  send(status: number, contentType: string, body: string | Buffer, headers: Record<string, string>, requestId: string, close = false): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    const held = this.hold?.(requestId);
    if (held) {
      void held.then((instead) => {
        if (this.aborted) return;
        if (instead) this.res.cork(() => this.write(instead.status, instead.contentType, instead.body, instead.headers, requestId, close));
        else this.res.cork(() => this.write(status, contentType, body, headers, requestId, close));
      });
      return;
    }
    // Within the request callback the socket is corked already: no closure for cork().
    if (this.inCallback) this.write(status, contentType, body, headers, requestId, close);
    else this.res.cork(() => this.write(status, contentType, body, headers, requestId, close));
  }

  /** The client's address as text; '' once the response is gone (uWS frees it then). */
  remoteAddress(): string {
    if (this.aborted || this.finished) return '';
    return Buffer.from(this.res.getRemoteAddressAsText()).toString();
  }

  private write(status: number, contentType: string, body: string | Buffer, headers: Record<string, string>, requestId: string, close: boolean): void {
    const res = this.res;
    // A body refused after all of it had arrived leaves the socket paused, while the connection
    // is kept for the client's next request: it must read again (after end() res is not ours).
    if (this.paused && !close) {
      res.resume();
      this.paused = false;
    }
    res.writeStatus(STATUS_LINES.get(status) ?? String(status));
    res.writeHeader('content-type', contentType);
    res.writeHeader('x-request-id', requestId);
    res.writeHeader('strict-transport-security', HSTS);
    res.writeHeader('x-content-type-options', 'nosniff');
    // no-store wins over a handler's own caching: answers behind credentials must not outlive them in a cache.
    if (this.noStore) res.writeHeader('cache-control', 'no-store');
    for (const name in headers) {
      if (FRAMEWORK_HEADERS.has(name) && (name !== 'cache-control' || this.noStore)) continue;
      res.writeHeader(name, headers[name]!);
    }
    // A UTF-16 unit is at most 3 UTF-8 bytes: most answers are small enough on their length
    // alone, which spares counting the bytes of every answer (~1 µs per 10 KB).
    const small = typeof body === 'string' ? body.length * 3 <= LARGE_BODY || Buffer.byteLength(body) <= LARGE_BODY : body.length <= LARGE_BODY;
    if (small) res.end(body, close);
    else this.stream(typeof body === 'string' ? Buffer.from(body) : body);
  }

  private stream(body: Buffer): void {
    const total = body.length;
    const start = this.res.getWriteOffset();
    const [ok, done] = this.res.tryEnd(body, total);
    if (ok || done) return;
    // uWS took part of the body; continue from its offset each time the socket drains.
    this.res.onWritable((offset) => {
      if (this.aborted) return true;
      const [sent, finished] = this.res.tryEnd(body.subarray(offset - start), total);
      return sent || finished;
    });
  }
}

/** The client disconnected before the request was read in full; nothing is answered. */
export class ClientGone extends Error {
  constructor() {
    super('client disconnected');
  }
}
