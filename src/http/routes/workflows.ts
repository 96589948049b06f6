/** Spec 4.13: scanner workflows. */
import { WORKFLOW_COLLECTIONS, type WorkflowRecord, type Workflows } from '../../domain/workflows/workflows.js';
import { utcTime } from '../../domain/time.js';
import { ErrorBody } from '../errors.js';
import { route, type AnyRoute } from '../route.js';
import { WorkflowCreateBody, WorkflowDeleted, WorkflowDetail, WorkflowIdParam, WorkflowList } from '../schemas/workflows.js';

export { WORKFLOW_COLLECTIONS };

export interface WorkflowRouteDeps {
  workflows: Workflows;
}

const listItem = (w: WorkflowRecord) => ({
  id: w.id, title: w.title, ...(w.description !== undefined ? { description: w.description } : {}),
  created_at_utc: utcTime(w.created_at), updated_at_utc: utcTime(w.updated_at),
});
const detail = (w: WorkflowRecord) => ({ ...listItem(w), workflowDefinition: w.workflowDefinition });

/** The routes of spec 4.13, on the workflows service. */
export function workflowRoutes(deps: WorkflowRouteDeps): AnyRoute[] {
  const { workflows } = deps;
  return [
    route({
      method: 'GET', path: '/api/v2/workflows', tag: 'Workflows', permission: 'workflows:view',
      summary: 'The scanner workflows configured on this site',
      description: 'Every workflow, oldest first, without definitions. Not paginated (spec 4.13).',
      responses: { 200: WorkflowList },
      handler: () => {
        const items = workflows.list().map(listItem);
        return { items, total: items.length };
      },
    }),
    route({
      method: 'POST', path: '/api/v2/workflows', tag: 'Workflows', permission: 'workflows:create',
      summary: 'Create a scanner workflow',
      description: 'The definition is checked as a whole (ids, references, reachability, variables, API actions); every problem is one entry of the 422 body. See docs/workflows.md.',
      body: WorkflowCreateBody,
      responses: { 201: WorkflowDetail },
      handler: async ({ body }) => detail(await workflows.create(body)),
    }),
    route({
      method: 'GET', path: '/api/v2/workflows/{workflow_id}', tag: 'Workflows', permission: 'workflows:view',
      summary: 'One scanner workflow with its definition',
      params: WorkflowIdParam,
      responses: { 200: WorkflowDetail, 404: ErrorBody },
      handler: ({ params }) => detail(workflows.get(params.workflow_id)),
    }),
    route({
      method: 'DELETE', path: '/api/v2/workflows/{workflow_id}', tag: 'Workflows', permission: 'workflows:delete',
      summary: 'Delete a scanner workflow',
      description: 'Answers 200 with the deleted id (the spec shows no success body; see docs/workflows.md).',
      params: WorkflowIdParam,
      responses: { 200: WorkflowDeleted, 404: ErrorBody },
      handler: async ({ params }) => {
        const removed = await workflows.delete(params.workflow_id);
        return { message: `Workflow ${removed.title} deleted`, id: removed.id };
      },
    }),
  ];
}
