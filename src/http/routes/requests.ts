/** Spec 4.8 to 4.10: requests and jobs, their creation, reads, job graphs, triggers and cancellation. */
import Type from 'typebox';
import type { Caller } from '../../domain/auth/caller.js';
import { DomainError, ValidationError } from '../../domain/errors.js';
import type { FieldTable, ListSource } from '../../domain/list/index.js';
import type { InputKind } from '../../domain/requests/inputs.js';
import { inputTypeOf, jobDetails, type JobRecord, type RequestRecord } from '../../domain/requests/records.js';
import type { Requests } from '../../domain/requests/requests.js';
import { stampPair } from '../../domain/time.js';
import { ErrorBody } from '../errors.js';
import { listRoute } from '../list-route.js';
import { AUTHENTICATED, Reply, route, type AnyRoute } from '../route.js';
import {
  AbortBody, JobGraphResponse, JobResponse, JobStatusSchema, JobTypeSchema, RequestStatusSchema, RequestTypeSchema, RequestCreated, RequestInputBody, RequestResponse, TriggerBody } from '../schemas/requests.js';

export interface RequestRouteDeps {
  requests: Requests;
  /** GET /requests and GET /jobs read these (src/domain/requests/list-sources.ts). */
  requestSource: ListSource<RequestRecord>;
  jobSource: ListSource<JobRecord>;
  timeZone: string;
  maxPageSize: number;
}

/** The permission each input kind needs (docs/auth.md). */
const CREATE_PERMISSION: Record<InputKind, string> = {
  FULFILLMENT: 'requests:fulfillment',
  REPLENISHMENT: 'requests:replenishment',
  FETCH: 'requests:fetch',
  PUTAWAY: 'requests:putaway',
  CARRIER_ONBOARDING: 'requests:carrier_onboarding',
  ONBOARD: 'requests:system_control',
  OFFBOARD: 'requests:system_control',
  RFID_WRITE: 'requests:system_control',
  PAUSE: 'requests:system_control',
  RESUME: 'requests:system_control',
  RECHARGE: 'requests:system_control',
  UNCHARGING: 'requests:system_control',
};

export const REQUEST_FIELDS: FieldTable<RequestRecord> = {
  id: { type: 'string', filters: ['eq', 'in'] },
  counter: { type: 'integer', filters: ['eq'] },
  placing_pos: { type: 'integer', filters: ['eq'] },
  priority: { type: 'integer', filters: ['eq'] },
  status: { type: 'string', filters: ['eq', 'in'], values: RequestStatusSchema },
  type: { type: 'string', filters: ['eq', 'in'], values: RequestTypeSchema },
  created_at: { type: 'datetime', filters: ['gte', 'lte'] },
  updated_at: { type: 'datetime', filters: ['gte', 'lte'] },
};

export const JOB_FIELDS: FieldTable<JobRecord> = {
  id: { type: 'string', filters: ['eq'] },
  balcony_id: { type: 'integer', filters: ['eq', 'in'] },
  carrier_id: { type: 'string', filters: ['eq', 'in'] },
  entity_id: { type: 'string', filters: ['eq'] },
  level_id: { type: 'integer', filters: ['eq'] },
  request_id: { type: 'string', filters: ['eq', 'in'] },
  status: { type: 'string', filters: ['eq', 'in'], values: JobStatusSchema },
  type: { type: 'string', filters: ['eq', 'in'], values: JobTypeSchema },
  created_at: { type: 'datetime', filters: ['gte', 'lte'] },
  updated_at: { type: 'datetime', filters: ['gte', 'lte'] },
};

/** The answer shape of a request (spec 2.15). */
export function requestView(r: RequestRecord, zone: string) {
  return {
    id: r.id, type: r.type, input_type: inputTypeOf(r), status: r.status, priority: r.priority, counter: r.counter, level_id: r.level_id, bot_id: r.bot_id, placing_pos: r.placing_pos,
    entities: r.entities, warnings: r.warnings, ...stampPair('created_at', r.created_at, zone), ...stampPair('updated_at', r.updated_at, zone),
  };
}

function nodeView(j: JobRecord, zone: string) {
  return {
    id: j.id, request_id: j.request_id, type: j.type, status: j.status, entity_id: j.entity_id, carrier_id: j.carrier_id, level_id: j.level_id,
    balcony_id: j.balcony_id, sku_id: j.sku_id, quantity: j.quantity, details: jobDetails(j),
    ...stampPair('created_at', j.created_at, zone), ...stampPair('updated_at', j.updated_at, zone),
  };
}

/** The answer shape of a job (spec 2.16). */
export function jobView(j: JobRecord, zone: string) {
  return {
    ...nodeView(j, zone), box_id: j.box_id, bot_id: j.bot_id, balcony_ids: j.balcony_ids, sku_name: j.sku_name, measurement_unit: j.measurement_unit,
    on_empty_sku_action: j.on_empty_sku_action, is_selectable: j.is_selectable,
  };
}

/** An Idempotency-Key is the caller's own: two callers may use the same value. */
function scopedKey(caller: Caller, header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return `${caller.kind}:${caller.id ?? 0}:${header}`;
}

/** POST/GET /requests, GET /jobs, GET /requests/{id}/job-graph, POST /trigger/{job_id}, POST /requests/{id}/cancel. */
export function requestRoutes(deps: RequestRouteDeps): AnyRoute[] {
  const zone = deps.timeZone;
  return [
    route({
      method: 'POST', path: '/api/v2/requests', tag: 'Requests', permission: AUTHENTICATED,
      summary: 'Create a request of one of the 12 input kinds',
      description: [
        'The permission depends on `type` (requests:fulfillment, requests:replenishment, requests:fetch, requests:putaway, requests:carrier_onboarding,',
        'requests:system_control for the rest). Answers 201 with the request: its `type` is the spec\'s type for the kind (PUTAWAY: REPLENISHMENT,',
        'CARRIER_ONBOARDING: ONBOARD, RFID_WRITE: RFID_MAINTENANCE, the others their own), `input_type` the kind posted, `placements` where a PUTAWAY',
        'puts each quantity (empty for every other kind). Each kind\'s schema says the jobs it makes and which wait for a person (`x-jobs`,',
        '`x-person-jobs`): poll GET /api/v2/jobs?request_id__eq={id} and finish each job EXECUTING with `details.waiting_for` = trigger with',
        'POST /api/v2/trigger/{job_id} (a FULFILLMENT\'s PACKING comes after its PICKING and waits for its own trigger) until the request is',
        'SUCCEEDED, CANCELLED or ABORTED. A request the warehouse cannot do',
        'answers 409 with the abort body (spec 7; codes in docs/requests.md) and is kept as ABORTED. An `Idempotency-Key` header (up to 200 characters)',
        'makes a retried post answer the first result again (status 200, header Idempotent-Replayed: true) without creating anything.',
      ].join(' '),
      body: RequestInputBody,
      responses: { 201: RequestCreated, 403: ErrorBody, 409: AbortBody },
      handler: async ({ body: input, caller, headers }) => {
        const permission = CREATE_PERMISSION[input.type];
        if (!caller.permissions.has(permission)) throw new DomainError('forbidden', `creating a ${input.type} request needs the permission ${permission}`);
        const key = headers['idempotency-key'];
        if (key !== undefined && (key.length === 0 || key.length > 200)) throw ValidationError.of(['header', 'idempotency-key'], 'Idempotency-Key must have 1 to 200 characters');
        const priority = 'priority' in input && input.priority !== undefined ? input.priority : 10;
        const { request, created, placements } = await deps.requests.create(input, { idempotencyKey: scopedKey(caller, key) }, priority);
        const answer = { ...requestView(request, zone), placements: placements ?? [] };
        // A replay is the first answer again, as 200 and marked, so a client can tell it apart.
        return created ? answer : new Reply(JSON.stringify(answer), 'application/json', 200, { 'idempotent-replayed': 'true' });
      },
    }),
    listRoute({
      path: '/api/v2/requests', tag: 'Requests', permission: 'requests:view',
      summary: 'Requests, newest first unless sort_by says otherwise',
      fields: REQUEST_FIELDS, source: deps.requestSource, item: RequestResponse,
      view: (r) => requestView(r, zone), options: { maxPageSize: deps.maxPageSize, timeZone: zone, defaultSort: '-created_at' },
    }),
    listRoute({
      path: '/api/v2/jobs', tag: 'Requests', permission: 'jobs:view',
      summary: 'Jobs, newest first unless sort_by says otherwise; CREATED plans only with the setting api.jobs.showCreated',
      fields: JOB_FIELDS, source: deps.jobSource, item: JobResponse,
      view: (j) => jobView(j, zone), options: { maxPageSize: deps.maxPageSize, timeZone: zone, defaultSort: '-created_at' },
    }),
    route({
      method: 'GET', path: '/api/v2/requests/{request_id}/job-graph', tag: 'Requests', permission: 'requests:view',
      summary: 'The persisted job graph of a request: every job with the jobs it waits for',
      params: Type.Object({ request_id: Type.String({ minLength: 1, maxLength: 64 }) }),
      responses: { 200: JobGraphResponse, 404: ErrorBody },
      handler: ({ params }) => {
        deps.requests.request(params.request_id);
        return { request_id: params.request_id, nodes: deps.requests.jobsOf(params.request_id).map((j) => ({ ...nodeView(j, zone), parent_job_ids: j.parent_job_ids })) };
      },
    }),
    route({
      method: 'POST', path: '/api/v2/trigger/{job_id}', tag: 'Requests', permission: 'jobs:trigger',
      summary: 'Let a job that waits for a person continue (a pick, refill, check, packing, on/offboarding done)',
      description: 'The job must be EXECUTING and of a person\'s type; otherwise 409 with the reason. Picks and refills book inventory in the same transaction. Trigger statuses: see the schema and docs/requests.md.',
      params: Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 64 }) }),
      body: TriggerBody,
      responses: { 200: Type.Object({}), 404: ErrorBody, 409: ErrorBody },
      handler: async ({ params, body }) => {
        await deps.requests.trigger(params.job_id, body);
        return {};
      },
    }),
    route({
      method: 'POST', path: '/api/v2/requests/{request_id}/cancel', tag: 'Requests', permission: 'requests:cancel_all',
      summary: 'Cancel one request (beyond the spec): work not started ends, running work goes through CANCELLING, carriers go back to storage',
      params: Type.Object({ request_id: Type.String({ minLength: 1, maxLength: 64 }) }),
      responses: { 200: RequestResponse, 404: ErrorBody, 409: ErrorBody },
      handler: async ({ params }) => requestView(await deps.requests.cancel(params.request_id), zone),
    }),
  ];
}
