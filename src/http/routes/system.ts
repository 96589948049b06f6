/** Spec 4.2 and 4.3: the storage status, restarting the brain, cancelling everything, charging all bots, removing bots. */
import Type from 'typebox';
import { ValidationError } from '../../domain/errors.js';
import { EVENT } from '../../domain/events/catalogue.js';
import type { Events } from '../../domain/events/events.js';
import type { Requests } from '../../domain/requests/requests.js';
import { STORAGE_STATUSES, type SystemControl } from '../../domain/system/control.js';
import { botRecords } from '../../domain/system/records.js';
import type { Store } from '../../store/store.js';
import { route, type AnyRoute } from '../route.js';

export interface SystemRouteDeps {
  store: Store;
  requests: Requests;
  events: Events;
  brain: SystemControl;
}

const Timeout = Type.Object({ timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, default: 60, description: 'Most seconds to wait' })) });

/** Resolves with the promise's outcome, or 'timeout' after `seconds`. */
async function within<T>(promise: Promise<T>, seconds: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), seconds * 1000)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** GET /storage_status, POST /restart_brain, POST /requests/cancel_all, POST /system/charge_all_bots, DELETE /bot. */
export function systemRoutes(deps: SystemRouteDeps): AnyRoute[] {
  return [
    route({
      method: 'GET', path: '/api/v2/storage_status', tag: 'System', permission: 'system:view',
      summary: 'The storage status (spec 3.3); docs/requests.md says when each status occurs',
      responses: { 200: Type.Object({ storage_status: Type.Enum([...STORAGE_STATUSES]) }) },
      handler: () => ({ storage_status: deps.brain.storageStatus() }),
    }),
    route({
      method: 'POST', path: '/api/v2/restart_brain', tag: 'System', permission: 'system:restart_brain',
      summary: 'Restart the orchestration brain from the stored state; the API keeps running',
      query: Timeout,
      responses: {
        200: Type.Object({
          status: Type.String({ description: 'restarted or timeout' }), details: Type.String(),
          brain_status: Type.Optional(Type.String({ deprecated: true, description: 'Deprecated: use status' })),
          testing_script: Type.Optional(Type.String({ deprecated: true, description: 'Deprecated: use status' })),
        }),
      },
      handler: async ({ query }) => {
        const outcome = await within(deps.brain.restart(), query.timeout ?? 60);
        const status = outcome === 'timeout' ? 'timeout' : 'restarted';
        const details = outcome === 'timeout' ? `the brain did not finish restarting within ${query.timeout ?? 60} s; it goes on in the background` : `storage status ${deps.brain.storageStatus()}`;
        return { status, details, brain_status: status, testing_script: 'not_used' };
      },
    }),
    route({
      method: 'POST', path: '/api/v2/requests/cancel_all', tag: 'Requests', permission: 'requests:cancel_all',
      summary: 'Cancel every open logistic request (fulfillment, replenishment, fetch), then restart the brain',
      query: Timeout,
      responses: {
        200: Type.Object({
          status: Type.Enum(['success', 'restart_failed']), cancelled_count: Type.Integer(), brain_restart: Type.Enum(['restarted', 'not_required', 'failed']),
          manual_restart_required: Type.Boolean(), message: Type.String(),
        }),
      },
      handler: async ({ query }) => {
        const cancelled = await deps.requests.cancelAll();
        if (cancelled === 0) return { status: 'success', cancelled_count: 0, brain_restart: 'not_required', manual_restart_required: false, message: 'no open logistic request' };
        const outcome = await within(deps.brain.restart().then(() => 'ok' as const, () => 'failed' as const), query.timeout ?? 60);
        const ok = outcome === 'ok';
        return {
          status: ok ? 'success' : 'restart_failed', cancelled_count: cancelled, brain_restart: ok ? 'restarted' : 'failed', manual_restart_required: !ok,
          message: ok ? `${cancelled} request(s) cancelled; carriers on their way go back to storage` : `${cancelled} request(s) cancelled, but the brain did not restart in time: POST /api/v2/restart_brain`,
        };
      },
    }),
    route({
      method: 'POST', path: '/api/v2/system/charge_all_bots', tag: 'System', permission: 'system:charge_bots',
      summary: 'Create a RECHARGE request for every bot (force: also busy ones once their work ends; default true)',
      body: Type.Object({ force: Type.Optional(Type.Boolean({ default: true })) }, { additionalProperties: false }),
      responses: { 200: Type.Object({ request_ids: Type.Array(Type.String()), bot_ids: Type.Array(Type.Integer()) }) },
      handler: async ({ body }) => {
        const bots = await deps.brain.chargeAllCandidates(body.force ?? true);
        const ids: string[] = [];
        const charged: number[] = [];
        for (const bot of bots) {
          try {
            ids.push((await deps.requests.create({ type: 'RECHARGE', bot_id: bot })).request.id);
            charged.push(bot);
          } catch {
            // A bot that cannot charge now (busy, no charger) is left out; the abort is in the event log.
          }
        }
        return { request_ids: ids, bot_ids: charged };
      },
    }),
    route({
      method: 'DELETE', path: '/api/v2/bot', tag: 'Bots', permission: 'system:delete_bots',
      summary: 'DO NOT USE in normal operation: remove bots from the database without offboarding (someone may have to take them off the level by hand)',
      query: Type.Object({ bot_idxs: Type.Array(Type.String({ pattern: '^(\\*|[0-9]{1,9})$' }), { minItems: 1, description: 'Bot ids, or * for all; repeat the parameter' }) }),
      responses: { 200: Type.Object({ success: Type.Boolean(), message: Type.String() }) },
      handler: async ({ query }) => {
        const all = query.bot_idxs.includes('*');
        const ids = all ? [...deps.store.collection(botRecords).scan()].map((b) => b.id) : query.bot_idxs.map(Number);
        const busy = ids.filter((id) => deps.requests.openRequests().some((r) => r.bot_id === id) || deps.store.collection(botRecords).get(id) === undefined);
        if (!all && busy.length > 0) {
          throw ValidationError.of(['query', 'bot_idxs'], `bot(s) ${busy.join(', ')} are unknown or have open requests; finish or cancel them first`);
        }
        const removed = await deps.store.write(() => {
          let n = 0;
          for (const id of ids) if (deps.store.collection(botRecords).remove(id)) n++;
          if (n > 0) deps.events.record(EVENT.botsDeleted, `${n} bot(s) removed from the database: ${ids.join(', ')}`);
          return n;
        });
        return { success: true, message: `${removed} bot(s) removed from the database; they get no work until onboarded again` };
      },
    }),
  ];
}
