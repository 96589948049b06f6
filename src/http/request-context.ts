/**
 * What a handler gets of its request (RequestContext). A class rather than an object literal
 * with getters: V8 builds such literals property by property, with two fresh closures, on every
 * request.
 */
import type { Logger } from '../log/logger.js';
import type { Exchange } from './exchange.js';
import type { Caller, RequestContext } from './route.js';

/** The caller of a request without credentials, and of every request until they are checked. */
export const ANONYMOUS: Caller = { kind: 'anonymous', permissions: new Set(), authorityLevel: 0 };

export class Context implements RequestContext {
  query: unknown = undefined;
  body: unknown = undefined;
  caller: Caller = ANONYMOUS;
  private logger: Logger | undefined;

  constructor(
    public params: unknown,
    readonly headers: Readonly<Record<string, string>>,
    readonly requestId: string,
    /** Given for WebSocket upgrades; read from the response on first use otherwise (few routes need it). */
    private address: string | undefined,
    private readonly exchange: Exchange,
    private readonly parentLogger: Logger,
  ) {}

  get remoteAddress(): string {
    return (this.address ??= this.exchange.remoteAddress());
  }

  get signal(): AbortSignal {
    return this.exchange.signal;
  }

  /** Made on first use: most handlers never log, and a child logger per request is not free. */
  get log(): Logger {
    return (this.logger ??= this.parentLogger.child({ req_id: this.requestId }));
  }
}
