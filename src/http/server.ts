/**
 * The HTTPS server: one uWS SSLApp whose single catch-all handler runs the route table.
 * Order per request: copy what is needed from the uWS request, match the route, parse and
 * validate path and query, authenticate and authorize, read and validate the body, run the
 * handler, check the answer (in tests), send. Nothing a handler throws can reach uWS. No body
 * byte is kept before the caller is known to be allowed to send it (body-intake.ts); uploads
 * go to spool files, not memory (spool.ts, multipart.ts), within quotas (body-budget.ts).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SSLApp, us_listen_socket_close, us_socket_local_port, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import type { TSchema } from 'typebox';
import type { Logger } from '../log/logger.js';
import { ValidationError } from '../domain/errors.js';
import { errorAnswer, HttpError } from './errors.js';
import { ClientGone, Exchange } from './exchange.js';
import { BodyBudget, emptyStats, type BodyStats } from './body-budget.js';
import { TurnBudget } from './turn-budget.js';
import { BodyIntake } from './body-intake.js';
import { TLS12_CIPHERS } from './hardening.js';
import { boundaryOf, parseSpooledMultipart, planMultipart, type MultipartPlan } from './multipart.js';
import { prepareSpoolDir, Spool } from './spool.js';
import { coerceQuery, parseQuery, unknownFilters } from './query.js';
import { AUTHENTICATED, bodyOptional, isMultipart, JsonReply, Reply, successStatus, type AnyRoute, type Caller, type RequestContext } from './route.js';
import { Router } from './router.js';
import { compile, type Validator } from './validation.js';
import { WebSockets, type UpgradeRequest } from './websocket.js';

/**
 * Decides who is calling; throws an `unauthorized` error for bad credentials. A request without
 * an Authorization header is anonymous without asking (the answer to a body's sender must be
 * known before uWS hands over the body's first bytes).
 */
export type Authenticate = (headers: Readonly<Record<string, string>>) => Caller | Promise<Caller>;

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
  /** Milliseconds of request handling one event-loop turn may run before the rest wait for the next (TurnBudget); default 8. */
  turnBudgetMs?: number;
}

/** Headers copied from every request; anything else is not available to handlers. */
/**
 * The methods of RFC 9110 and PATCH (RFC 5789). Any other (`QUERY`, `FOO`, a lowercase `get`:
 * methods are case-sensitive) is one the server does not implement for any resource: 501. A
 * known method that a path does not take is the router's 405 with `Allow`.
 */
const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const API_METHODS = 'GET, HEAD, POST, PUT, PATCH and DELETE';

const COPIED_HEADERS = ['authorization', 'content-type', 'content-length', 'x-request-id', 'idempotency-key', 'user-agent', 'x-forwarded-for'];
const JSON_TYPE = 'application/json';
/** JSON bodies are held in memory while parsed: all of them together at most this many times bodyLimit. */
const JSON_BODIES_IN_MEMORY = 32;
/** Parts of one multipart body, and the longest header block of one part. */
const MAX_PARTS = 256;
const MAX_PART_HEADER_BYTES = 16 * 1024;
const ANONYMOUS: Caller = { kind: 'anonymous', permissions: new Set(), authorityLevel: 0 };

interface Compiled {
  route: AnyRoute;
  status: number;
  params?: Validator;
  query?: Validator;
  /** The query takes `field__op` filters: an unknown one is refused, not ignored. */
  filters: boolean;
  body?: Validator;
  /** No field of the body is required: an empty body means the defaults. */
  bodyOptional: boolean;
  multipart?: MultipartPlan;
  responses: Map<number, Validator>;
}

export class HttpServer {
  readonly router = new Router();
  private readonly compiled = new Map<AnyRoute, Compiled>();
  /** The app accepting new connections; one a certificate reload replaced keeps serving its own. */
  private app: TemplatedApp;
  private readonly retired: TemplatedApp[] = [];
  /** Open WebSocket connections of routes with a `websocket` handler. */
  readonly sockets: WebSockets;
  private listenSocket: us_listen_socket | undefined;
  private inFlight = 0;
  private draining = false;
  private drained: (() => void) | undefined;
  private readonly idPrefix = randomBytes(4).toString('hex');
  private idCounter = 0;
  private readonly stats: BodyStats = emptyStats();
  private readonly uploads: BodyBudget;
  private readonly jsonBodies: BodyBudget;
  private readonly uploadDir: string;
  private readonly ownUploadDir: boolean;
  /** Requests whose body is being taken or whose spool file exists. */
  private readonly intakes = new Set<BodyIntake>();
  /**
   * Where the request lines go: the root logger without its secret-field redaction, which costs
   * 14 µs a line against 1 (issue 22). These lines hold only the fields logRequest names.
   */
  private readonly requestLog: Logger;
  /** Requests that check credentials run within it: the cheap routes without (health) never wait. */
  readonly turns: TurnBudget;
  port = 0;

  constructor(private readonly options: ServerOptions) {
    this.uploads = new BodyBudget({ perCaller: options.uploadQuota ?? 4 * options.uploadLimit, total: options.uploadTotal ?? 16 * options.uploadLimit }, 'uploads');
    const inMemory = JSON_BODIES_IN_MEMORY * options.bodyLimit;
    this.jsonBodies = new BodyBudget({ perCaller: Infinity, total: inMemory }, 'request bodies');
    this.ownUploadDir = options.uploadDir === undefined;
    this.uploadDir = options.uploadDir ?? mkdtempSync(path.join(tmpdir(), 'wh-uploads-'));
    prepareSpoolDir(this.uploadDir);
    this.requestLog = options.logger.child({}, { redact: { paths: [] } });
    this.turns = new TurnBudget(options.turnBudgetMs ?? 8);
    this.sockets = new WebSockets({
      prepare: (route, request, exchange) => this.prepareUpgrade(route, request, exchange),
      fail: (exchange, err, requestId, method, url) => this.fail(exchange, err, requestId, method, url),
      logger: options.logger,
    }, COPIED_HEADERS);
    this.app = this.createApp(options.certFile, options.keyFile);
  }

  private createApp(certFile: string, keyFile: string): TemplatedApp {
    const app = SSLApp({ cert_file_name: certFile, key_file_name: keyFile, ssl_ciphers: TLS12_CIPHERS });
    this.sockets.wire(app);
    app.any('/*', (res, req) => this.dispatch(res, req));
    return app;
  }

  /**
   * Serves new connections with another certificate (SIGHUP after a renewal). Open connections
   * keep the old one to their end. The new app joins the port before the old one leaves it
   * (SO_REUSEPORT), so no connection attempt finds the port closed. The caller has checked the files.
   */
  useCertificate(certFile: string, keyFile: string): void {
    if (!this.listenSocket) throw new Error('the server is not listening');
    const next = this.createApp(certFile, keyFile);
    const socket = this.bind(next, this.port);
    if (!socket) throw new Error(`cannot listen on ${this.options.host}:${this.port} with the new certificate; the old one is kept`);
    us_listen_socket_close(this.listenSocket);
    this.retired.push(this.app);
    this.app = next;
    this.listenSocket = socket;
  }

  /** Binds an app to the port; uWS answers synchronously. */
  private bind(app: TemplatedApp, port: number): us_listen_socket | false {
    let bound: us_listen_socket | false = false;
    app.listen(this.options.host, port, (socket) => {
      bound = socket;
    });
    return bound;
  }

  /** Adds routes to the table; schemas are compiled here, once. */
  register(...routes: AnyRoute[]): void {
    for (const route of routes) {
      this.router.add(route);
      const responses = new Map<number, Validator>();
      if (this.options.checkResponses) {
        for (const [status, spec] of Object.entries(route.responses)) {
          const schema = 'contentType' in spec ? spec.schema : (spec as TSchema);
          if (schema && !('contentType' in spec)) responses.set(Number(status), compile(schema));
        }
      }
      this.compiled.set(route, {
        route,
        status: successStatus(route),
        params: route.params ? compile(route.params) : undefined,
        query: route.query ? compile(route.query) : undefined,
        bodyOptional: bodyOptional(route.body),
        filters: route.query !== undefined && Object.keys(route.query.properties).some((name) => name.includes('__')),
        body: route.body && !isMultipart(route.body) ? compile(route.body) : undefined,
        multipart: isMultipart(route.body) ? planMultipart(route.body.multipart) : undefined,
        responses,
      });
      if (route.websocket) this.sockets.attach(route);
    }
  }

  /** Starts listening; resolves with the bound port. */
  async listen(): Promise<number> {
    // uWS binds with SO_REUSEPORT, which a certificate reload needs (the new app joins the
    // port before the old one leaves), but which would let a second daemon share the port and
    // take half the connections: whoever holds the port is asked first, without that option.
    // uWS sets SO_REUSEPORT only on a given port: port 0 is resolved here first.
    const port = await freePort(this.options.host, this.options.port);
    const socket = port === undefined ? false : this.bind(this.app, port);
    if (!socket) return Promise.reject(new Error(`cannot listen on ${this.options.host}:${this.options.port} (address in use or not available)`));
    this.listenSocket = socket;
    this.port = us_socket_local_port(socket as unknown as Parameters<typeof us_socket_local_port>[0]);
    return this.port;
  }

  /**
   * Stops accepting connections, answers new requests on open connections with 503, and
   * resolves when in-flight requests are done or `timeoutMs` has passed.
   */
  async close(timeoutMs: number): Promise<{ unfinished: number }> {
    this.draining = true;
    this.sockets.closeAll();
    if (this.listenSocket) us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    // Requests cut off at the timeout keep no spool file behind.
    await Promise.all([...this.intakes].map((intake) => intake.dispose()));
    if (this.ownUploadDir) rmSync(this.uploadDir, { recursive: true, force: true });
    return { unfinished: this.inFlight };
  }

  /** What the server did with request body bytes (tests and benchmarks read it). */
  bodyStats(): BodyStats {
    return { ...this.stats, spoolFiles: [...this.intakes].filter((i) => i.spooling).length };
  }

  private nextRequestId(given: string | undefined): string {
    if (given !== undefined && /^[\w.:-]{1,64}$/.test(given)) return given;
    return `${this.idPrefix}-${(++this.idCounter).toString(36)}`;
  }

  private dispatch(res: HttpResponse, req: HttpRequest): void {
    const exchange = new Exchange(res);
    // HttpRequest dies with this callback: copy everything needed now.
    const method = req.getCaseSensitiveMethod();
    const url = req.getUrl();
    const qs = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    for (let i = 0; i < COPIED_HEADERS.length; i++) {
      const v = req.getHeader(COPIED_HEADERS[i]!);
      if (v !== '') headers[COPIED_HEADERS[i]!] = v;
    }
    const requestId = this.nextRequestId(headers['x-request-id']);
    const started = performance.now();

    this.inFlight++;
    let result: number | Promise<number>;
    exchange.inCallback = true;
    try {
      result = this.serve(exchange, method, url, qs, headers, requestId);
    } catch (err) {
      result = this.fail(exchange, err, requestId, method, url);
    }
    exchange.inCallback = false;
    if (typeof result === 'number') {
      this.finish(method, url, result, requestId, started, exchange.aborted);
      return;
    }
    result.then(
      (status) => this.finish(method, url, status, requestId, started, exchange.aborted),
      (err: unknown) => this.finish(method, url, this.fail(exchange, err, requestId, method, url), requestId, started, exchange.aborted),
    );
  }

  /** Books the end of a request: the log line, and the drain of a closing server. */
  private finish(method: string, url: string, status: number, requestId: string, started: number, aborted: boolean): void {
    this.inFlight--;
    this.logRequest(method, url, status, requestId, performance.now() - started, aborted);
    if (this.inFlight === 0) this.drained?.();
  }

  /** Runs one request; returns the status sent (synchronously when nothing awaits). */
  private serve(exchange: Exchange, method: string, url: string, qs: string, headers: Record<string, string>, requestId: string): number | Promise<number> {
    if (this.draining) throw new HttpError('unavailable', 'The controller is shutting down', { connection: 'close' });
    if (!HTTP_METHODS.has(method)) throw new HttpError('not_implemented', `${method} is not a method this server knows (methods are case-sensitive); the API takes ${API_METHODS}`);
    const match = this.router.match(method, url);
    if (match.kind === 'not_found') throw new HttpError('not_found', `No endpoint ${method} ${url}`);
    if (match.kind === 'method_not_allowed') {
      throw new HttpError('method_not_allowed', `${method} is not allowed on ${url}; allowed: ${match.allow.join(', ')}`, { allow: match.allow.join(', ') });
    }
    const c = this.compiled.get(match.route)!;

    const ctx = new Context(match.params, headers, requestId, undefined, exchange, this.options.logger);
    const needsAuth = this.options.authenticate !== undefined && c.route.permission !== null;
    exchange.noStore = c.route.permission !== null;
    if (c.route.body === undefined) {
      if (needsAuth) return this.serveAsync(exchange, c, ctx, qs);
      this.validateInputs(c, ctx, qs);
      return this.respond(exchange, c, ctx, c.route.handler(ctx as never));
    }
    // Until its last chunk is read, an answer closes the connection: the rest may still come.
    exchange.bodyPending = headers['content-length'] !== '0';
    // Without credentials the answer is known now, and uWS never hands over a byte of the body.
    if (needsAuth && headers.authorization === undefined) this.authorize(c.route, ANONYMOUS);
    const intake = new BodyIntake(exchange, this.stats, needsAuth);
    this.intakes.add(intake);
    return this.serveBody(exchange, c, ctx, qs, needsAuth, intake);
  }

  /** Credentials first (an anonymous caller learns nothing from validation), then inputs, then the handler. */
  private async serveAsync(exchange: Exchange, c: Compiled, ctx: RequestContext, qs: string): Promise<number> {
    const slot = this.turns.slot();
    if (slot) await slot;
    ctx.caller = await this.options.authenticate!(ctx.headers);
    this.authorize(c.route, ctx.caller);
    this.validateInputs(c, ctx, qs);
    return this.respond(exchange, c, ctx, await c.route.handler(ctx as never));
  }

  /** As serveAsync, with the body taken only once the caller may send it; its bytes are dropped whatever the outcome. */
  private async serveBody(exchange: Exchange, c: Compiled, ctx: RequestContext, qs: string, needsAuth: boolean, intake: BodyIntake): Promise<number> {
    try {
      if (needsAuth) {
        // The body's bytes wait in the intake meanwhile, as they do for the credentials' check.
        const slot = this.turns.slot();
        if (slot) await slot;
        ctx.caller = await this.options.authenticate!(ctx.headers);
        this.authorize(c.route, ctx.caller);
      }
      this.validateInputs(c, ctx, qs);
      ctx.body = await this.readBody(c, ctx, intake);
      return await this.respond(exchange, c, ctx, await c.route.handler(ctx as never));
    } finally {
      this.intakes.delete(intake);
      await intake.dispose().catch((err: unknown) => this.options.logger.error({ err, req_id: ctx.requestId }, 'could not remove an upload spool file'));
    }
  }

  /** The checks of a WebSocket upgrade: those of any request, without a body. */
  private async prepareUpgrade(route: AnyRoute, request: UpgradeRequest, exchange: Exchange): Promise<RequestContext> {
    if (this.draining) throw new HttpError('unavailable', 'The controller is shutting down', { connection: 'close' });
    const c = this.compiled.get(route)!;
    const match = this.router.match('GET', request.url);
    const params = match.kind === 'found' ? match.params : {};
    const requestId = this.nextRequestId(request.headers['x-request-id']);
    // Browsers cannot set headers on a WebSocket: they may pass the bearer token in the query.
    if (request.headers.authorization === undefined) {
      const token = new URLSearchParams(request.qs).get('access_token');
      if (token) request.headers.authorization = `Bearer ${token}`;
    }
    const ctx = new Context(params, request.headers, requestId, request.remoteAddress, exchange, this.options.logger);
    if (this.options.authenticate && route.permission !== null) {
      ctx.caller = await this.options.authenticate(request.headers);
      this.authorize(route, ctx.caller);
    }
    this.validateInputs(c, ctx, request.qs);
    this.options.logger.info({ req_id: requestId, url: request.url, caller: ctx.caller.kind, id: ctx.caller.id }, 'websocket opened');
    return ctx;
  }

  /** Converts and checks path and query parameters in place. */
  private validateInputs(c: Compiled, ctx: RequestContext, qs: string): void {
    if (c.params) {
      ctx.params = coerceQuery(ctx.params as Record<string, string>, c.route.params!);
      if (!c.params.check(ctx.params)) throw new ValidationError(c.params.issues(ctx.params, 'path'));
    }
    if (!c.route.query) {
      ctx.query = {};
      return;
    }
    const raw = parseQuery(qs);
    ctx.query = coerceQuery(raw, c.route.query);
    const unknown = c.filters ? unknownFilters(raw, c.route.query) : [];
    const valid = c.query!.check(ctx.query);
    if (!valid || unknown.length > 0) throw new ValidationError([...unknown, ...(valid ? [] : c.query!.issues(ctx.query, 'query'))]);
  }

  private authorize(route: AnyRoute, caller: Caller): void {
    if (caller.kind === 'anonymous') throw new HttpError('unauthorized', 'Missing or invalid credentials', { 'www-authenticate': 'Bearer' });
    if (route.permission === AUTHENTICATED || caller.permissions.has(route.permission!)) return;
    if (route.alsoPermitted?.some((p) => caller.permissions.has(p))) return;
    throw new HttpError('forbidden', `Missing permission ${route.permission}`);
  }

  private async readBody(c: Compiled, ctx: RequestContext, intake: BodyIntake): Promise<unknown> {
    const contentType = ctx.headers['content-type'] ?? '';
    const length = ctx.headers['content-length'];
    const declared = length !== undefined ? Number(length) : undefined;
    if (declared !== undefined && !Number.isSafeInteger(declared)) throw new HttpError('bad_request', 'Invalid Content-Length header');
    if (c.multipart) return this.readUpload(c.multipart, ctx, intake, contentType, declared);
    const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
    if (mediaType !== '' && mediaType !== JSON_TYPE && !mediaType.endsWith('+json')) {
      throw new HttpError('unsupported_media_type', `This endpoint takes ${JSON_TYPE}, not ${mediaType}`);
    }
    const limit = this.options.bodyLimit;
    if (declared !== undefined && declared > limit) throw tooLarge(limit);
    // Held in memory while parsed: one global budget, so a flood of bodies cannot grow the heap without bound.
    const reserved = declared ?? limit;
    this.jsonBodies.reserve('*', reserved);
    let body: unknown;
    try {
      const raw = await intake.toMemory(limit);
      body = raw.length === 0 ? undefined : parseJson(raw);
    } finally {
      this.jsonBodies.release('*', reserved);
    }
    if (body === undefined) {
      if (!c.bodyOptional) throw ValidationError.of(['body'], 'Field required', 'missing');
      body = {};
    }
    if (!c.body!.check(body)) throw new ValidationError(c.body!.issues(body, 'body'));
    return body;
  }

  /** A multipart body: spooled to disk within the caller's quota, then parsed from there. */
  private async readUpload(plan: MultipartPlan, ctx: RequestContext, intake: BodyIntake, contentType: string, declared: number | undefined): Promise<unknown> {
    if (!contentType.toLowerCase().startsWith('multipart/form-data')) throw new HttpError('unsupported_media_type', 'This endpoint takes multipart/form-data');
    const limit = this.options.uploadLimit;
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
    return parseSpooledMultipart(spool.path, size, boundary, plan, { maxTextBytes: this.options.bodyLimit, maxParts: MAX_PARTS, maxHeaderBytes: MAX_PART_HEADER_BYTES });
  }

  private respond(exchange: Exchange, c: Compiled, ctx: RequestContext, result: unknown): number | Promise<number> {
    if (result instanceof Promise) return result.then((r) => this.respond(exchange, c, ctx, r));
    if (result instanceof Reply) {
      exchange.send(result.status, result.contentType, result.body, result.headers as Record<string, string>, ctx.requestId);
      return result.status;
    }
    const check = c.responses.get(c.status);
    if (result instanceof JsonReply) {
      if (check) this.checkJsonReply(c, check, result);
      exchange.send(c.status, JSON_TYPE, result.json, {}, ctx.requestId);
      return c.status;
    }
    if (check && !check.check(result)) {
      const issues = check.issues(result, 'response');
      throw new Error(`response of ${c.route.method} ${c.route.path} does not match its schema: ${JSON.stringify(issues.slice(0, 5))}`);
    }
    exchange.send(c.status, JSON_TYPE, JSON.stringify(result ?? null), {}, ctx.requestId);
    return c.status;
  }

  /** The response check of an answer serialized by its handler: the same bytes as from its value, and the schema. */
  private checkJsonReply(c: Compiled, check: Validator, reply: JsonReply): void {
    const where = `${c.route.method} ${c.route.path}`;
    if (reply.fresh) {
      const expected = JSON.stringify(reply.fresh() ?? null);
      if (reply.json !== expected) {
        let at = 0;
        while (reply.json.charCodeAt(at) === expected.charCodeAt(at)) at++;
        throw new Error(`response of ${where} differs from JSON.stringify of its value from character ${at}: ${reply.json.slice(Math.max(0, at - 40), at + 40)} | expected ${expected.slice(Math.max(0, at - 40), at + 40)}`);
      }
    }
    const value: unknown = JSON.parse(reply.json);
    if (!check.check(value)) {
      throw new Error(`response of ${where} does not match its schema: ${JSON.stringify(check.issues(value, 'response').slice(0, 5))}`);
    }
  }

  /** Answers an error; returns the status sent. */
  private fail(exchange: Exchange, err: unknown, requestId: string, method: string, url: string): number {
    if (err instanceof ClientGone || exchange.aborted) return 499;
    const answer = errorAnswer(err, requestId);
    if (answer.status === 500) {
      this.options.logger.error({ err, req_id: requestId, method, url }, 'request failed');
    }
    // A refused body may still be streaming in: close the connection after answering.
    const close = exchange.bodyPending || answer.status === 400 || answer.status === 413 || answer.status === 415;
    exchange.send(answer.status, JSON_TYPE, JSON.stringify(answer.body), answer.headers, requestId, close);
    return answer.status;
  }

  private logRequest(method: string, url: string, status: number, requestId: string, ms: number, aborted: boolean): void {
    const log = this.requestLog;
    // A 500 is a bug; a 503 or 507 (shutting down, the disk) is an operational state the
    // events and the storage fault log already report; a 501 is a client's unknown method.
    const level = status >= 500 && status !== 501 && status !== 503 && status !== 507 ? 'error' : status === 507 ? 'warn' : status >= 400 || method !== 'GET' ? 'info' : 'debug';
    if (!log.isLevelEnabled(level)) return;
    log[level]({ req_id: requestId, method, url, status, ms: Math.round(ms * 10) / 10, ...(aborted ? { aborted } : {}) }, 'request');
  }
}

/**
 * What a handler gets. A class rather than an object literal with getters: V8 builds such
 * literals property by property, with two fresh closures, on every request.
 */
class Context implements RequestContext {
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

/** The port (a free one for 0) if a socket without SO_REUSEPORT can bind it: nobody listens there. */
function freePort(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(undefined));
    probe.listen({ host, port, exclusive: true }, () => {
      const bound = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(bound));
    });
  });
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
