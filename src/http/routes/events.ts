/** Spec 4.7: the event log. */
import Type, { type TSchema } from 'typebox';
import { type EventRecord, type Events } from '../../domain/events/events.js';
import { Subscription } from '../../domain/events/subscription.js';
import type { Caller } from '../../domain/auth/caller.js';
import { executeList, listQuerySchema, parseListQuery, type FieldTable, type ListSource } from '../../domain/list/index.js';
import { stampPair } from '../../domain/time.js';
import type { Logger } from '../../log/logger.js';
import { listRoute } from '../list-route.js';
import { WEBSOCKET_RESPONSES, upgradeRequired } from '../websocket.js';
import { route, type AnyRoute, type StreamSocket } from '../route.js';
import { Nullable, Timestamp } from '../schemas/common.js';

export const EVENT_FIELDS: FieldTable<EventRecord> = {
  id: { type: 'integer', filters: ['gte', 'lte'], description: 'Durable, increasing id (beyond the spec: what the live stream resumes from)' },
  bot_id: { type: 'string', filters: ['eq'] },
  component: { type: 'string', filters: ['eq', 'ilike', 'in'], search: true },
  created_at: { type: 'datetime', filters: ['gte', 'lte'] },
  description: { type: 'string', search: true },
  hex_value: { type: 'string', filters: ['eq', 'ilike'] },
  level_id: { type: 'integer', filters: ['eq'] },
  request_id: { type: 'string', filters: ['eq', 'ilike'] },
  severity: { type: 'integer', filters: ['eq', 'gte', 'lte', 'in'] },
};

export const EventResponse = Type.Object({
  id: Type.Integer({ description: 'Durable, increasing id (beyond the spec)' }),
  bot_id: Nullable(Type.String()),
  component: Type.String(),
  ...Timestamp('created_at'),
  description: Type.String(),
  hex_value: Type.String(),
  level_id: Nullable(Type.Integer()),
  request_id: Nullable(Type.String()),
  severity: Type.Integer({ description: '10 debug, 20 info, 30 notice, 40 warning, 50 error, 60 critical' }),
}, { $id: 'Event', description: 'Event (spec 2.14)' });

/** The view of one event, shared by the list and the live stream. */
export function eventView(e: EventRecord, zone: string) {
  return {
    id: e.id, bot_id: e.bot_id, component: e.component, ...stampPair('created_at', e.created_at, zone),
    description: e.description, hex_value: e.hex_value, level_id: e.level_id, request_id: e.request_id, severity: e.severity,
  };
}

/** GET /api/v2/events. */
export function eventRoutes(source: ListSource<EventRecord>, options: { timeZone: string; maxPageSize: number }): AnyRoute[] {
  return [
    listRoute({
      path: '/api/v2/events', tag: 'Events', permission: 'events:view',
      summary: 'The event log, newest first unless sort_by says otherwise',
      description: 'Severity: 10 debug, 20 info, 30 notice, 40 warning, 50 error, 60 critical. Kinds and codes: docs/events.md.',
      fields: EVENT_FIELDS, source, item: EventResponse,
      view: (e) => eventView(e, options.timeZone), options: { maxPageSize: options.maxPageSize, timeZone: options.timeZone },
    }),
  ];
}

/** The permission a stream's caller must keep holding while the stream is open. */
const STREAM_PERMISSION = 'events:view';
/** Close code of a stream whose credential stopped authenticating (deleted key, revoked or expired token). */
export const CLOSE_CREDENTIAL_INVALID = 4401;
/** Close code of a stream whose credential no longer holds events:view. */
export const CLOSE_PERMISSION_REVOKED = 4403;
/** How often an open stream's credential is checked even when auth_version stays: expiry moves no version. */
export const STREAM_RECHECK_MS = 30_000;

/** How an open stream checks its caller again. */
export interface StreamAuth {
  /** Resolves request headers to a caller, as for any request (anonymous when they no longer hold). */
  authenticate(headers: Record<string, string>): Promise<Caller>;
  /** `auth_version` of client_state: moves with every change that may revoke a credential. */
  version(): string;
}

/** `GET /api/v2/events/stream`: the live feed over a WebSocket (beyond the spec; docs/events.md). */
export function eventStreamRoute(events: Events, options: { timeZone: string; maxPageSize: number; auth: StreamAuth; recheckMs?: number }): AnyRoute {
  const listOptions = { maxPageSize: options.maxPageSize, timeZone: options.timeZone };
  const base = listQuerySchema(EVENT_FIELDS, listOptions);
  const props = { ...base.properties } as Record<string, TSchema>;
  for (const unused of ['page', 'size', 'sort_by']) delete props[unused];
  const query = Type.Object({
    ...props,
    after: Type.Optional(Type.Integer({ minimum: 0, description: 'Resume after this event id: every retained event after it comes first, then the live feed' })),
    access_token: Type.Optional(Type.String({ description: 'For browsers, which cannot set headers on a WebSocket: the bearer credential' })),
  });
  return route({
    method: 'GET', path: '/api/v2/events/stream', tag: 'Events', permission: STREAM_PERMISSION,
    summary: 'Live event stream (WebSocket)',
    description: 'Open with a WebSocket upgrade (wss://). Authenticated like every endpoint (Authorization header, or access_token in the query for browsers); '
      + 'filters and search as GET /api/v2/events. The first message is {"type":"ready","after","last_id","oldest_retained_id"}; then each matching event as '
      + '{"type":"event","event":{...}} in id order as it commits. With ?after=<id> every retained event after that id comes first, with no gap and no duplicate; '
      + 'when events after that id were pruned, a {"type":"pruned","after","oldest_retained_id","message"} message says so first. '
      + 'A client that falls more than 1 MiB behind is closed with code 4008 and should reconnect with ?after=<last id seen>. '
      + `The credential is checked again whenever auth_version moves and every ${(options.recheckMs ?? STREAM_RECHECK_MS) / 1000} s: `
      + `once it no longer authenticates (deleted key, expired or revoked token) the stream closes with code ${CLOSE_CREDENTIAL_INVALID}, `
      + `once it lacks ${STREAM_PERMISSION} with code ${CLOSE_PERMISSION_REVOKED}; nothing committed after the change is sent. Without an upgrade the answer is 426.`,
    query,
    responses: WEBSOCKET_RESPONSES,
    handler: upgradeRequired,
    websocket: (ctx, socket) => {
      const q = ctx.query as Record<string, unknown>;
      const parsed = parseListQuery(EVENT_FIELDS, q, listOptions);
      const one: EventRecord[] = [];
      const single: ListSource<EventRecord> = { lookup: () => undefined, scan: () => one };
      const matches = (event: EventRecord) => {
        one[0] = event;
        return executeList(EVENT_FIELDS, single, parsed).total === 1;
      };
      const subscription = new Subscription(events, matches, (e) => eventView(e, options.timeZone), socket, q.after as number | undefined);
      // Guarded first: its listener must hold the subscription before an auth change's own events go out.
      const unguard = guardStream({ events, auth: options.auth, headers: ctx.headers, subscription, socket, everyMs: options.recheckMs ?? STREAM_RECHECK_MS, log: ctx.log });
      subscription.start();
      return {
        close: () => {
          unguard();
          subscription.stop();
        },
      };
    },
  });
}

interface StreamGuard {
  events: Events;
  auth: StreamAuth;
  headers: Record<string, string>;
  subscription: Subscription;
  socket: StreamSocket;
  everyMs: number;
  log: Logger;
}

/**
 * Checks the stream's credential again when auth_version moves and every `everyMs`, holding
 * the feed while the check runs; closes the stream when the credential no longer holds.
 * Returns the function that stops guarding.
 */
function guardStream(g: StreamGuard): () => void {
  let version = g.auth.version();
  let checking = false;
  let again = false;
  let stopped = false;
  const end = (code: number, reason: string) => {
    stop();
    g.subscription.stop();
    g.log.info({ code }, `event stream closed: ${reason}`);
    g.socket.close(code, reason);
  };
  const check = () => {
    if (stopped) return;
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    g.subscription.hold();
    g.auth.authenticate(g.headers).then((caller) => {
      checking = false;
      if (stopped) return;
      if (caller.kind === 'anonymous') return end(CLOSE_CREDENTIAL_INVALID, 'credentials no longer valid: authenticate again');
      if (!caller.permissions.has(STREAM_PERMISSION)) return end(CLOSE_PERMISSION_REVOKED, `permission ${STREAM_PERMISSION} revoked`);
      if (again) {
        again = false;
        return check();
      }
      g.subscription.release();
    }, (err: unknown) => {
      g.log.error({ err }, 'event stream credential check failed');
      end(1011, 'internal error');
    });
  };
  const stopListening = g.events.subscribe(() => {
    const now = g.auth.version();
    if (now === version) return;
    version = now;
    check();
  });
  const timer = setInterval(check, g.everyMs);
  timer.unref();
  const stop = () => {
    stopped = true;
    stopListening();
    clearInterval(timer);
  };
  return stop;
}
