/**
 * `GET /api/v2/bots/stream` (beyond the spec): the bots of the site live over a WebSocket, for
 * clients that draw them moving (the browser console, docs/console.md). Polling GET /bots
 * from every open screen would be a request per screen per frame; here one timer per socket
 * reads the radio lines' telemetry (memory, no store scan) and sends only the bots that
 * changed since the last message.
 */
import Type from 'typebox';
import type { SystemService } from '../../domain/system/control.js';
import { WEBSOCKET_RESPONSES, upgradeRequired } from '../websocket.js';
import { route, type AnyRoute } from '../route.js';
import { botView } from './bots.js';
// The same credential checks and close codes as the event stream (docs/events.md).
import { CLOSE_CREDENTIAL_INVALID, CLOSE_PERMISSION_REVOKED, STREAM_RECHECK_MS, type StreamAuth } from './events.js';
import { CLOSE_TOO_SLOW } from '../../domain/events/subscription.js';

const PERMISSION = 'system:view';
/** How often a socket looks for changed bots: smooth enough to watch, light enough for 60 bots a level. */
export const BOT_STREAM_PERIOD_MS = 200;

/** The WebSocket route of live bots. */
export function botStreamRoute(system: SystemService, auth: StreamAuth, periodMs = BOT_STREAM_PERIOD_MS): AnyRoute {
  return route({
    method: 'GET', path: '/api/v2/bots/stream', tag: 'Bots', permission: PERMISSION,
    summary: 'Live bots (WebSocket, beyond the spec)',
    description: 'Open with a WebSocket upgrade (wss://); credentials as every endpoint, or access_token in the query for browsers. '
      + 'The first message is {"type":"bots","bots":[...]} with every bot (of level_id, when given) as GET /api/v2/bots shows it; then, at most every '
      + `${periodMs} ms, {"type":"bots","bots":[...]} with the bots that changed (position, heading, battery, charging, carrier, link, service). `
      + `The credential is checked again when auth_version moves and every ${STREAM_RECHECK_MS / 1000} s: close code ${CLOSE_CREDENTIAL_INVALID} once it no longer authenticates, `
      + `${CLOSE_PERMISSION_REVOKED} once it lacks ${PERMISSION}; a client more than 1 MiB behind is closed with ${CLOSE_TOO_SLOW}. Without an upgrade the answer is 426.`,
    query: Type.Object({
      level_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Only the bots of this level' })),
      access_token: Type.Optional(Type.String({ description: 'For browsers, which cannot set headers on a WebSocket: the bearer credential' })),
    }),
    responses: WEBSOCKET_RESPONSES,
    handler: upgradeRequired,
    websocket: (ctx, socket) => {
      const levelId = (ctx.query as { level_id?: number }).level_id;
      const filter = levelId === undefined ? {} : { level_id: [levelId] };
      const last = new Map<number, string>();
      let version = auth.version();
      let checkedAt = performance.now();
      let checking = false;
      let closed = false;
      let first = true;
      const end = (code: number, reason: string) => {
        closed = true;
        clearInterval(timer);
        socket.close(code, reason);
      };
      const tick = () => {
        if (closed || checking) return;
        const now = performance.now();
        if (auth.version() !== version || now - checkedAt >= STREAM_RECHECK_MS) {
          // Nothing is sent while the credential is checked again.
          checking = true;
          version = auth.version();
          checkedAt = now;
          auth.authenticate(ctx.headers).then((caller) => {
            checking = false;
            if (closed) return;
            if (caller.kind === 'anonymous') end(CLOSE_CREDENTIAL_INVALID, 'credentials no longer valid: authenticate again');
            else if (!caller.permissions.has(PERMISSION)) end(CLOSE_PERMISSION_REVOKED, `permission ${PERMISSION} revoked`);
          }, (err: unknown) => {
            ctx.log.error({ err }, 'bot stream credential check failed');
            end(1011, 'internal error');
          });
          return;
        }
        const changed = [];
        for (const bot of system.bots(filter)) {
          const view = botView(bot);
          const text = JSON.stringify(view);
          if (last.get(bot.id) === text) continue;
          last.set(bot.id, text);
          changed.push(view);
        }
        if (changed.length === 0 && !first) return;
        first = false;
        if (!socket.send(JSON.stringify({ type: 'bots', bots: changed }))) end(CLOSE_TOO_SLOW, 'too far behind: reconnect');
      };
      const timer = setInterval(tick, periodMs);
      timer.unref();
      tick();
      return {
        close: () => {
          closed = true;
          clearInterval(timer);
        },
      };
    },
  });
}
