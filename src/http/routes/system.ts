/** Spec 4.2 and 4.3: the storage status, restarting the brain, cancelling everything, charging all bots, removing bots. */
import Type from 'typebox';
import { STORAGE_STATUSES, type SystemService } from '../../domain/system/control.js';
import type { StoreUsage } from '../../domain/history/store-usage.js';
import { stampPair } from '../../domain/time.js';
import { route, type AnyRoute } from '../route.js';

const Timeout = Type.Object({ timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, default: 60, description: 'Most seconds to wait' })) });

const Bytes = (description: string) => Type.Integer({ minimum: 0, description });
const MaybeNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const Stamp = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const StorageAnswer = Type.Object({
  file_bytes: Bytes('Size of the store file; LMDB never shrinks it, it reuses its free pages first'),
  used_bytes: Bytes('Bytes the records and indexes take now'),
  free_bytes: Bytes('Free pages inside the file, taken by later writes before the file grows'),
  page_size: Type.Integer(),
  disk_total_bytes: Type.Union([Type.Integer(), Type.Null()], { description: "Size of the store's filesystem" }),
  disk_free_bytes: Type.Union([Type.Integer(), Type.Null()], { description: 'Space left on it' }),
  budget_bytes: Type.Union([Type.Integer(), Type.Null()], { description: 'Most the store may take: history.maxStoreSharePercent of its filesystem' }),
  budget_used_percent: MaybeNumber('used_bytes as a share of budget_bytes; events warn at 80 and 90, history is pruned whatever its age at 100'),
  growth_bytes_per_day: MaybeNumber('Growth of used_bytes over the last day of samples (null for less than an hour of them)'),
  days_until_budget: MaybeNumber('Days until used_bytes reaches the budget at that growth (null: not growing)'),
  days_until_full: MaybeNumber('Days until the filesystem is full at that growth (null: not growing)'),
  archive: Type.Object({ dir: Type.String(), files: Type.Integer(), bytes: Bytes('Bytes its files take'), quota_bytes: Bytes('Most it keeps; its oldest files go first') }),
  history: Type.Object({
    retention_days: Type.Integer({ description: 'history.retentionDays: ended requests with their jobs, and support issues' }),
    event_retention_days: Type.Integer({ description: 'events.retentionDays' }),
    oldest_ended_request_at: Stamp('When the oldest ended request still held ended (naive local time)'),
    oldest_ended_request_at_utc: Stamp('The same in UTC'),
    last_pass_at: Stamp('When the last pass of the pruner ended (naive local time; null: none since start)'),
    last_pass_at_utc: Stamp('The same in UTC'),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last pass stopped, if it failed' }),
    pruned_requests: Type.Integer({ description: 'Since the daemon started' }),
    pruned_jobs: Type.Integer(),
    pruned_events: Type.Integer(),
    pruned_support_issues: Type.Integer(),
    archive_files_written: Type.Integer(),
  }),
});

/** GET /storage_status, GET /system/storage, POST /restart_brain, POST /requests/cancel_all, POST /system/charge_all_bots, DELETE /bot. */
export function systemRoutes(system: SystemService, usage: StoreUsage, timeZone: string): AnyRoute[] {
  return [
    route({
      method: 'GET', path: '/api/v2/storage_status', tag: 'System', permission: 'system:view',
      summary: 'The storage status (spec 3.3); docs/requests.md says when each status occurs',
      responses: { 200: Type.Object({ storage_status: Type.Enum([...STORAGE_STATUSES]) }) },
      handler: () => ({ storage_status: system.storageStatus() }),
    }),
    route({
      method: 'GET', path: '/api/v2/system/storage', tag: 'System', permission: 'system:view',
      summary: 'The store: its size and free pages, its growth over the last day and the days until the disk is full, the history archive and pruning (beyond the spec; docs/operations.md, "Keeping history")',
      responses: { 200: StorageAnswer },
      handler: () => {
        const r = usage.report();
        const { oldest_ended_request_at, last_pass_at, ...history } = r.history;
        return { ...r, history: { ...history, ...stampPair('oldest_ended_request_at', oldest_ended_request_at, timeZone), ...stampPair('last_pass_at', last_pass_at, timeZone) } };
      },
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
