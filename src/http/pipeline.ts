/**
 * The request pipeline: what happens to each request between uWS and its answer. In order: copy
 * what is needed from the uWS request, match the route, authenticate and authorize, parse and
 * validate path and query, read and validate the body, run the handler, check the answer (in
 * tests), send, log. Nothing a handler throws can reach uWS. No body byte is kept before the
 * caller is known to be allowed to send it (body-intake.ts). A WebSocket upgrade goes through
 * the same checks (prepareUpgrade). The pipeline counts the requests in flight, so that a
 * closing server can wait for them.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../log/logger.js';
import { ValidationError } from '../domain/errors.js';
import { checkAnswer, checkJsonReply } from './answer-check.js';
import type { BodyIntake, BodyReader } from './body-intake.js';
import { compileRoute, type CompiledRoute } from './compiled-route.js';
import { ERROR_STATUS } from './error-codes.js';
import { errorAnswer, HttpError } from './errors.js';
import { ClientGone, Exchange, JSON_TYPE, type AnswerHold } from './exchange.js';
import { coerceQuery, explainCommas, parseQuery, repeatedScalars, unknownFilters } from './query.js';
import { ANONYMOUS, Context } from './request-context.js';
import type { RequestLog } from './request-log.js';
import type { RequestMeter } from './request-meter.js';
import { AUTHENTICATED, JsonReply, Reply, type AnyRoute, type Caller, type RequestContext } from './route.js';
import type { Router } from './router.js';
import type { TurnBudget } from './turn-budget.js';
import type { HttpRequest, HttpResponse } from './uws.js';
import type { UpgradeRequest } from './websocket.js';

/**
 * Decides who is calling; throws an `unauthorized` error for bad credentials. A request without
 * an Authorization header is anonymous without asking (the answer to a body's sender must be
 * known before uWS hands over the body's first bytes).
 */
export type Authenticate = (headers: Readonly<Record<string, string>>) => Caller | Promise<Caller>;

/** Headers copied from every request; anything else is not available to handlers. */
export const COPIED_HEADERS = ['authorization', 'content-type', 'content-length', 'x-request-id', 'idempotency-key', 'user-agent', 'x-forwarded-for', 'host'];

/**
 * The methods of RFC 9110 and PATCH (RFC 5789). Any other (`QUERY`, `FOO`, a lowercase `get`:
 * methods are case-sensitive) is one the server does not implement for any resource: 501. A
 * known method that a path does not take is the router's 405 with `Allow`.
 */
const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const API_METHODS = 'GET, HEAD, POST, PUT, PATCH and DELETE';

export interface PipelineParts {
  router: Router;
  bodies: BodyReader;
  /** Requests that check credentials run within it: the cheap routes without (health) never wait. */
  turns: TurnBudget;
  requestLog: RequestLog;
  logger: Logger;
  /** Credentials check; without one every caller is anonymous and unchecked. */
  authenticate: Authenticate | undefined;
  /** Check every answer against the route's response schema. */
  checkResponses: boolean;
  /** Hears every answered request (/metrics). */
  meter?: RequestMeter;
  /** Answers wait until this settles (undefined: at once); a refusal is answered instead (a replicated pair's active box). */
  answersWait?: () => Promise<void> | undefined;
}

export class Pipeline {
  private readonly compiled = new Map<AnyRoute, CompiledRoute>();
  private readonly router: Router;
  private readonly bodies: BodyReader;
  private readonly turns: TurnBudget;
  private readonly requestLog: RequestLog;
  private readonly logger: Logger;
  private readonly authenticate: Authenticate | undefined;
  private readonly checkResponses: boolean;
  private readonly meter: RequestMeter | undefined;
  private readonly hold: AnswerHold | undefined;
  private readonly idPrefix = randomBytes(4).toString('hex');
  private idCounter = 0;
  /** Requests taken and not yet answered. */
  inFlight = 0;
  private draining = false;
  private drained: (() => void) | undefined;

  constructor(parts: PipelineParts) {
    this.router = parts.router;
    this.bodies = parts.bodies;
    this.turns = parts.turns;
    this.requestLog = parts.requestLog;
    this.logger = parts.logger;
    this.authenticate = parts.authenticate;
    this.checkResponses = parts.checkResponses;
    this.meter = parts.meter;
    const wait = parts.answersWait;
    this.hold = wait && ((requestId) => wait()?.then(() => undefined, (err: unknown) => {
      const answer = errorAnswer(err, requestId);
      return { status: answer.status, contentType: JSON_TYPE, body: JSON.stringify(answer.body), headers: answer.headers };
    }));
  }

  /** Adds a route to the table; its schemas are compiled here, once. */
  add(route: AnyRoute): void {
    this.router.add(route);
    this.compiled.set(route, compileRoute(route, this.checkResponses));
  }

  /** From now on every new request is answered 503 (the server is closing). */
  stop(): void {
    this.draining = true;
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  async settled(timeoutMs: number): Promise<void> {
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** The uWS handler of every request. */
  dispatch(res: HttpResponse, req: HttpRequest): void {
    const exchange = new Exchange(res, this.hold);
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
      this.finish(exchange, method, url, result, requestId, started);
      return;
    }
    result.then(
      (status) => this.finish(exchange, method, url, status, requestId, started),
      (err: unknown) => this.finish(exchange, method, url, this.fail(exchange, err, requestId, method, url), requestId, started),
    );
  }

  /** Books the end of a request: the log line, the meter, and the drain of a closing server. */
  private finish(exchange: Exchange, method: string, url: string, status: number, requestId: string, started: number): void {
    this.inFlight--;
    const ms = performance.now() - started;
    this.requestLog.write(method, url, status, requestId, ms, exchange.aborted);
    this.meter?.record(exchange.route, method, status, ms);
    if (this.inFlight === 0) this.drained?.();
  }

  private nextRequestId(given: string | undefined): string {
    if (given !== undefined && /^[\w.:-]{1,64}$/.test(given)) return given;
    return `${this.idPrefix}-${(++this.idCounter).toString(36)}`;
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
    exchange.route = match.route;

    const ctx = new Context(match.params, headers, requestId, undefined, exchange, this.logger);
    const needsAuth = this.authenticate !== undefined && c.route.permission !== null;
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
    return this.serveBody(exchange, c, ctx, qs, needsAuth, this.bodies.intake(exchange, needsAuth));
  }

  /** Credentials first (an anonymous caller learns nothing from validation), then inputs, then the handler. */
  private async serveAsync(exchange: Exchange, c: CompiledRoute, ctx: RequestContext, qs: string): Promise<number> {
    const slot = this.turns.slot();
    if (slot) await slot;
    ctx.caller = await this.authenticate!(ctx.headers);
    this.authorize(c.route, ctx.caller);
    this.validateInputs(c, ctx, qs);
    return this.respond(exchange, c, ctx, await c.route.handler(ctx as never));
  }

  /** As serveAsync, with the body taken only once the caller may send it; its bytes are dropped whatever the outcome. */
  private async serveBody(exchange: Exchange, c: CompiledRoute, ctx: RequestContext, qs: string, needsAuth: boolean, intake: BodyIntake): Promise<number> {
    try {
      if (needsAuth) {
        // The body's bytes wait in the intake meanwhile, as they do for the credentials' check.
        const slot = this.turns.slot();
        if (slot) await slot;
        ctx.caller = await this.authenticate!(ctx.headers);
        this.authorize(c.route, ctx.caller);
      }
      this.validateInputs(c, ctx, qs);
      const body = await this.bodies.read(ctx, intake, c.multipart);
      ctx.body = c.body ? this.validateBody(c, body) : body;
      return await this.respond(exchange, c, ctx, await c.route.handler(ctx as never));
    } finally {
      await this.bodies.release(intake).catch((err: unknown) => this.logger.error({ err, req_id: ctx.requestId }, 'could not remove an upload spool file'));
    }
  }

  /** The checks of a WebSocket upgrade: those of any request, without a body. */
  async prepareUpgrade(route: AnyRoute, request: UpgradeRequest, exchange: Exchange): Promise<RequestContext> {
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
    const ctx = new Context(params, request.headers, requestId, request.remoteAddress, exchange, this.logger);
    if (this.authenticate && route.permission !== null) {
      ctx.caller = await this.authenticate(request.headers);
      this.authorize(route, ctx.caller);
    }
    this.validateInputs(c, ctx, request.qs);
    this.logger.info({ req_id: requestId, url: request.url, caller: ctx.caller.kind, id: ctx.caller.id }, 'websocket opened');
    return ctx;
  }

  /** Converts and checks path and query parameters in place. */
  private validateInputs(c: CompiledRoute, ctx: RequestContext, qs: string): void {
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
    const repeated = repeatedScalars(raw, c.route.query);
    const valid = c.query!.check(ctx.query);
    if (!valid || unknown.length > 0 || repeated.length > 0) {
      throw new ValidationError([...unknown, ...repeated, ...(valid ? [] : explainCommas(c.query!.issues(ctx.query, 'query'), raw))]);
    }
  }

  /** A JSON body's value, checked; an empty body is the defaults when no field is required. */
  private validateBody(c: CompiledRoute, body: unknown): unknown {
    if (body === undefined) {
      if (!c.bodyOptional) throw ValidationError.of(['body'], 'Field required', 'missing');
      body = {};
    }
    if (!c.body!.check(body)) throw new ValidationError(c.body!.issues(body, 'body'));
    return body;
  }

  private authorize(route: AnyRoute, caller: Caller): void {
    if (caller.kind === 'anonymous') throw new HttpError('unauthorized', 'Missing or invalid credentials', { 'www-authenticate': 'Bearer' });
    if (route.permission === AUTHENTICATED || caller.permissions.has(route.permission!)) return;
    if (route.alsoPermitted?.some((p) => caller.permissions.has(p))) return;
    throw new HttpError('forbidden', `Missing permission ${route.permission}`);
  }

  private respond(exchange: Exchange, c: CompiledRoute, ctx: RequestContext, result: unknown): number | Promise<number> {
    if (result instanceof Promise) return result.then((r) => this.respond(exchange, c, ctx, r));
    if (result instanceof Reply) {
      exchange.send(result.status, result.contentType, result.body, result.headers as Record<string, string>, ctx.requestId);
      return result.status;
    }
    const check = c.responses.get(c.status);
    if (result instanceof JsonReply) {
      if (check) checkJsonReply(c.route, check, result);
      exchange.send(c.status, JSON_TYPE, result.json, {}, ctx.requestId);
      return c.status;
    }
    if (check) checkAnswer(c.route, check, result);
    exchange.send(c.status, JSON_TYPE, JSON.stringify(result ?? null), {}, ctx.requestId);
    return c.status;
  }

  /** Answers an error; returns the status sent. */
  fail(exchange: Exchange, err: unknown, requestId: string, method: string, url: string): number {
    if (err instanceof ClientGone || exchange.aborted) return 499;
    const answer = errorAnswer(err, requestId);
    if (answer.status === ERROR_STATUS.internal_error) {
      this.logger.error({ err, req_id: requestId, method, url }, 'request failed');
    }
    // A refused body may still be streaming in: close the connection after answering.
    const close = exchange.bodyPending || answer.status === ERROR_STATUS.bad_request || answer.status === ERROR_STATUS.payload_too_large || answer.status === ERROR_STATUS.unsupported_media_type;
    exchange.send(answer.status, JSON_TYPE, JSON.stringify(answer.body), answer.headers, requestId, close);
    return answer.status;
  }
}
