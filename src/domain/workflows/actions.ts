/**
 * The API actions a scanner workflow may call: a closed list of method + path of this API,
 * each with the path parameters, query parameters and body fields a `call` node may fill.
 * Kept short on purpose: a workflow runs on a hand scanner with the operator's credentials,
 * so only the floor operations a picker or counter performs are listed (docs/workflows.md).
 */

/** Type of an action's parameter or body field; what a template must produce for it. */
export type FieldType = 'string' | 'integer' | 'number' | 'boolean';

/** One callable action. */
export interface WorkflowAction {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI-style path; every `{name}` is a path parameter the call node must give. */
  path: string;
  /** Permission the operator running the workflow needs for this call. */
  permission: string;
  summary: string;
  params: Readonly<Record<string, FieldType>>;
  query: Readonly<Record<string, FieldType>>;
  /** Body fields, or null when the action takes no body. */
  body: Readonly<Record<string, FieldType>> | null;
  /** Body fields the call node must give. */
  requiredBody: readonly string[];
}

const LOAD_BODY = { sku_id: 'string', item_count: 'integer', item_count_max: 'integer' } as const;
const PAGE = { page: 'integer', size: 'integer', sort_by: 'string' } as const;

/** The documented list, keyed by `METHOD path` as a call node names it. */
export const WORKFLOW_ACTIONS = {
  'GET /api/v2/jobs': {
    method: 'GET', path: '/api/v2/jobs', permission: 'jobs:view', summary: 'Find jobs, e.g. the one waiting at a balcony',
    params: {},
    query: {
      balcony_id__eq: 'integer', carrier_id__eq: 'string', entity_id__eq: 'string', id__eq: 'string', level_id__eq: 'integer',
      request_id__eq: 'string', status__eq: 'string', type__eq: 'string', ...PAGE,
    },
    body: null, requiredBody: [],
  },
  'POST /api/v2/trigger/{job_id}': {
    method: 'POST', path: '/api/v2/trigger/{job_id}', permission: 'jobs:trigger', summary: 'Let a waiting job continue (spec 4.9)',
    params: { job_id: 'string' }, query: {},
    body: { TriggerStatus: 'string', selected_entity_id: 'string', selected_quantity: 'integer' }, requiredBody: [],
  },
  'GET /api/v2/inventory_view': {
    method: 'GET', path: '/api/v2/inventory_view', permission: 'inventory:view', summary: 'Read inventory rows, e.g. the load of a box',
    params: {}, query: { box_id__eq: 'integer', carrier_id__eq: 'string', sku_id__eq: 'string', ...PAGE }, body: null, requiredBody: [],
  },
  'GET /api/v2/skus': {
    method: 'GET', path: '/api/v2/skus', permission: 'skus:view', summary: 'Look up SKU master data',
    params: {}, query: { id__eq: 'string', id__ilike: 'string', name__ilike: 'string', ...PAGE }, body: null, requiredBody: [],
  },
  'POST /api/v2/load/{box_id}': {
    method: 'POST', path: '/api/v2/load/{box_id}', permission: 'inventory:loads', summary: 'Add an SKU load to a box',
    params: { box_id: 'integer' }, query: {}, body: LOAD_BODY, requiredBody: ['sku_id', 'item_count', 'item_count_max'],
  },
  'PATCH /api/v2/load/{box_id}': {
    method: 'PATCH', path: '/api/v2/load/{box_id}', permission: 'inventory:loads', summary: 'Correct the load of a box (e.g. after a count)',
    params: { box_id: 'integer' }, query: {}, body: LOAD_BODY, requiredBody: [],
  },
  'DELETE /api/v2/load/{box_id}': {
    method: 'DELETE', path: '/api/v2/load/{box_id}', permission: 'inventory:loads', summary: 'Remove the load of a box',
    params: { box_id: 'integer' }, query: {}, body: null, requiredBody: [],
  },
} as const satisfies Record<string, WorkflowAction>;

export type WorkflowActionKey = keyof typeof WORKFLOW_ACTIONS;

/** The action keys, in documentation order. */
export const WORKFLOW_ACTION_KEYS = Object.keys(WORKFLOW_ACTIONS) as WorkflowActionKey[];
