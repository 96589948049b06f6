/**
 * WebSocket endpoints. A route with a `websocket` handler is also registered with uWS's
 * `ws()`: the upgrade request goes through the same authentication, permission and query
 * validation as any request (and fails with the same error bodies), then the handler gets a
 * socket it can only send text on and close. A client that cannot keep up is the handler's
 * to drop: `send` returns false once the socket's buffer passes the limit, and the daemon
 * never waits for a client.
 */
import type { Logger } from '../log/logger.js';
import { ErrorBody, HttpError } from './errors.js';
import { Exchange } from './exchange.js';
import type { AnyRoute, RequestContext, StreamSession, StreamSocket } from './route.js';
import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t, WebSocket } from './uws.js';

/** Bytes a client may have unread before `send` reports it as too slow. */
export const SOCKET_BUFFER_LIMIT = 1 << 20;

interface SocketData {
  ctx: RequestContext;
  session?: StreamSession;
  open: boolean;
}

export interface UpgradeHooks {
  /** Authenticates, authorizes and validates the upgrade request; throws the usual errors. */
  prepare(route: AnyRoute, request: UpgradeRequest, exchange: Exchange): Promise<RequestContext>;
  /** Answers a refused upgrade with the error body; returns the status. */
  fail(exchange: Exchange, err: unknown, requestId: string, method: string, url: string): number;
  logger: Logger;
}

/** What is copied from the uWS request before it dies. */
export interface UpgradeRequest {
  url: string;
  qs: string;
  headers: Record<string, string>;
  remoteAddress: string;
}

/** The answers a WebSocket route documents: the upgrade, and 426 for a request without one. */
export const WEBSOCKET_RESPONSES = { 101: { description: 'Switching to the WebSocket protocol', contentType: 'application/json' }, 426: ErrorBody };

/** The handler of a WebSocket route for a plain request: uWS hands only upgrades to `ws()`. */
export function upgradeRequired(): never {
  throw new HttpError('upgrade_required', 'This endpoint is a WebSocket: open it with an upgrade request (wss://)');
}

const UPGRADE_HEADERS = ['sec-websocket-key', 'sec-websocket-protocol', 'sec-websocket-extensions'];

export class WebSockets {
  private readonly sockets = new Set<WebSocket<SocketData>>();
  private readonly routes: AnyRoute[] = [];
  /** The apps serving the routes: the listening one, and those a certificate reload retired. */
  private readonly apps: TemplatedApp[] = [];

  constructor(
    private readonly hooks: UpgradeHooks,
    private readonly copiedHeaders: readonly string[],
  ) {}

  /** Serves `route.websocket` at the route's path, on every app. */
  attach(route: AnyRoute): void {
    this.routes.push(route);
    for (const app of this.apps) this.serve(app, route);
  }

  /** Serves every attached route on a new app (a reloaded certificate's). */
  wire(app: TemplatedApp): void {
    this.apps.push(app);
    for (const route of this.routes) this.serve(app, route);
  }

  private serve(app: TemplatedApp, route: AnyRoute): void {
    const pattern = route.path.replace(/\{(\w+)\}/g, ':$1');
    app.ws<SocketData>(pattern, {
      maxPayloadLength: 4096, // clients have nothing to say beyond a ping
      idleTimeout: 120,
      sendPingsAutomatically: true,
      maxBackpressure: SOCKET_BUFFER_LIMIT * 2,
      upgrade: (res, req, context) => this.upgrade(route, res, req, context),
      open: (ws) => this.open(route, ws),
      close: (ws) => {
        const data = ws.getUserData();
        data.open = false;
        this.sockets.delete(ws);
        data.session?.close();
      },
    });
  }

  /** Number of open sockets. */
  get size(): number {
    return this.sockets.size;
  }

  /** Closes every socket (shutdown): clients are told to come back later. */
  closeAll(): void {
    for (const ws of [...this.sockets]) ws.end(1001, 'controller stopping');
  }

  private upgrade(route: AnyRoute, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const exchange = new Exchange(res);
    const headers: Record<string, string> = {};
    for (const name of [...this.copiedHeaders, ...UPGRADE_HEADERS]) {
      const v = req.getHeader(name);
      if (v !== '') headers[name] = v;
    }
    const request: UpgradeRequest = { url: req.getUrl(), qs: req.getQuery() ?? '', headers, remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString() };
    this.hooks.prepare(route, request, exchange).then(
      (ctx) => {
        if (exchange.aborted) return;
        res.cork(() => {
          res.upgrade<SocketData>({ ctx, open: true }, headers['sec-websocket-key'] ?? '', headers['sec-websocket-protocol'] ?? '', headers['sec-websocket-extensions'] ?? '', context);
        });
      },
      (err: unknown) => {
        this.hooks.fail(exchange, err, headers['x-request-id'] ?? '', 'GET', request.url);
      },
    );
  }

  private open(route: AnyRoute, ws: WebSocket<SocketData>): void {
    const data = ws.getUserData();
    this.sockets.add(ws);
    const socket: StreamSocket = {
      send: (text) => {
        if (!data.open) return false;
        const sent = ws.send(text, false);
        return sent !== 2 && ws.getBufferedAmount() <= SOCKET_BUFFER_LIMIT;
      },
      close: (code, reason) => {
        if (data.open) ws.end(code, reason);
      },
    };
    try {
      data.session = route.websocket!(data.ctx as never, socket);
    } catch (err) {
      this.hooks.logger.error({ err, req_id: data.ctx.requestId }, 'websocket handler failed');
      ws.end(1011, 'internal error');
    }
  }
}
