/**
 * The HTTPS server, put together: the TLS listener (listener.ts) hands every request to the
 * pipeline (pipeline.ts) and every WebSocket upgrade to the sockets (websocket.ts); bodies are
 * read within their budgets (body-intake.ts); each answered request is logged (request-log.ts).
 * Here are its options, its route table, and its start and stop.
 */
import type { Logger } from '../log/logger.js';
import type { BodyStats } from './body-budget.js';
import { BodyReader } from './body-intake.js';
import { Listener } from './listener.js';
import { COPIED_HEADERS, Pipeline, type Authenticate } from './pipeline.js';
import { RequestLog } from './request-log.js';
import type { RequestMeter } from './request-meter.js';
import type { AnyRoute } from './route.js';
import { Router } from './router.js';
import { TurnBudget } from './turn-budget.js';
import { WebSockets } from './websocket.js';

export type { Authenticate } from './pipeline.js';

export interface ServerOptions {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  bodyLimit: number;
  uploadLimit: number;
  logger: Logger;
  /** Check every answer against the route's response schema (tests turn this on). */
  checkResponses?: boolean;
  /** Credentials check; until one is installed every caller is anonymous and unchecked. */
  authenticate?: Authenticate;
  /** Directory of the uploads' spool files (`<state dir>/uploads`); default: a temporary one, removed on close. */
  uploadDir?: string;
  /** Upload bytes one caller may have in flight; default 4 × uploadLimit. */
  uploadQuota?: number;
  /** Upload bytes all callers may have in flight; default 16 × uploadLimit. */
  uploadTotal?: number;
  /** Hears every answered request (/metrics). */
  meter?: RequestMeter;
  /** Answers wait until this settles (a replicated pair: until the log has what they could have read). */
  answersWait?: () => Promise<void> | undefined;
  /** Milliseconds of request handling one event-loop turn may run before the rest wait for the next (TurnBudget); default 8. */
  turnBudgetMs?: number;
}

export class HttpServer {
  readonly router = new Router();
  /** Open WebSocket connections of routes with a `websocket` handler. */
  readonly sockets: WebSockets;
  /** Requests that check credentials run within it: the cheap routes without (health) never wait. */
  readonly turns: TurnBudget;
  private readonly bodies: BodyReader;
  private readonly pipeline: Pipeline;
  private readonly listener: Listener;

  constructor(options: ServerOptions) {
    this.bodies = new BodyReader(options);
    this.turns = new TurnBudget(options.turnBudgetMs ?? 8);
    this.pipeline = new Pipeline({
      router: this.router,
      bodies: this.bodies,
      turns: this.turns,
      requestLog: new RequestLog(options.logger),
      logger: options.logger,
      authenticate: options.authenticate,
      checkResponses: options.checkResponses ?? false,
      meter: options.meter,
      answersWait: options.answersWait,
    });
    this.sockets = new WebSockets({
      prepare: (route, request, exchange) => this.pipeline.prepareUpgrade(route, request, exchange),
      fail: (exchange, err, requestId, method, url) => this.pipeline.fail(exchange, err, requestId, method, url),
      logger: options.logger,
    }, COPIED_HEADERS);
    this.listener = new Listener(options.host, options.port, options.certFile, options.keyFile, (app) => {
      this.sockets.wire(app);
      app.any('/*', (res, req) => this.pipeline.dispatch(res, req));
    });
  }

  /** The bound port, once listening. */
  get port(): number {
    return this.listener.port;
  }

  /** Adds routes to the table; schemas are compiled here, once. */
  register(...routes: AnyRoute[]): void {
    for (const route of routes) {
      this.pipeline.add(route);
      if (route.websocket) this.sockets.attach(route);
    }
  }

  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number> {
    return this.listener.listen();
  }

  /** Serves new connections with another certificate (SIGHUP after a renewal); open ones keep the old one. */
  useCertificate(certFile: string, keyFile: string): void {
    this.listener.useCertificate(certFile, keyFile);
  }

  /**
   * Stops accepting connections, answers new requests on open connections with 503, and
   * resolves when in-flight requests are done or `timeoutMs` has passed.
   */
  async close(timeoutMs: number): Promise<{ unfinished: number }> {
    this.pipeline.stop();
    this.sockets.closeAll();
    this.listener.close();
    await this.pipeline.settled(timeoutMs);
    await this.bodies.close();
    return { unfinished: this.pipeline.inFlight };
  }

  /** What the server did with request body bytes (tests and benchmarks read it). */
  bodyStats(): BodyStats {
    return this.bodies.bodyStats();
  }
}
