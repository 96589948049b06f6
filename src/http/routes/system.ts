/** Spec 4.2 and 4.3: the storage status, restarting the brain, cancelling everything, charging all bots, removing bots. */
import Type from 'typebox';
import { STORAGE_STATUSES, type SystemService } from '../../domain/system/control.js';
import { route, type AnyRoute } from '../route.js';

const Timeout = Type.Object({ timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, default: 60, description: 'Most seconds to wait' })) });

/** GET /storage_status, POST /restart_brain, POST /requests/cancel_all, POST /system/charge_all_bots, DELETE /bot. */
export function systemRoutes(system: SystemService): AnyRoute[] {
  return [
    route({
      method: 'GET', path: '/api/v2/storage_status', tag: 'System', permission: 'system:view',
      summary: 'The storage status (spec 3.3); docs/requests.md says when each status occurs',
      responses: { 200: Type.Object({ storage_status: Type.Enum([...STORAGE_STATUSES]) }) },
      handler: () => ({ storage_status: system.storageStatus() }),
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
        const { status, details } = await system.restartBrain(query.timeout ?? 60);
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
      handler: ({ query }) => system.cancelAll(query.timeout ?? 60),
    }),
    route({
      method: 'POST', path: '/api/v2/system/charge_all_bots', tag: 'System', permission: 'system:charge_bots',
      summary: 'Create a RECHARGE request for every bot (force: also busy ones once their work ends; default true)',
      body: Type.Object({ force: Type.Optional(Type.Boolean({ default: true })) }, { additionalProperties: false }),
      responses: { 200: Type.Object({ request_ids: Type.Array(Type.String()), bot_ids: Type.Array(Type.Integer()) }) },
      handler: ({ body }) => system.chargeAll(body.force ?? true),
    }),
    route({
      method: 'DELETE', path: '/api/v2/bot', tag: 'Bots', permission: 'system:delete_bots',
      summary: 'DO NOT USE in normal operation: remove bots from the database without offboarding (someone may have to take them off the level by hand)',
      query: Type.Object({ bot_idxs: Type.Array(Type.String({ pattern: '^(\\*|[1-9][0-9]{0,8})$' }), { minItems: 1, description: 'Bot ids, or * for all; repeat the parameter' }) }),
      responses: { 200: Type.Object({ success: Type.Boolean(), message: Type.String() }) },
      handler: ({ query }) => system.deleteBots(query.bot_idxs.includes('*') ? '*' : query.bot_idxs.map(Number)),
    }),
  ];
}
