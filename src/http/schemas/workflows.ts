/** Spec 2.21: scanner workflow bodies. Workflows carry only `_utc` timestamps. */
import Type from 'typebox';
import { WorkflowDefinition } from '../../domain/workflows/definition.js';
import { Description, Title, WorkflowCreateBody } from '../../domain/workflows/inputs.js';

export { WorkflowCreateBody };

const utc = Type.String({ format: 'date-time', description: 'ISO 8601 with explicit offset' });

/** Path parameter of the single-workflow endpoints; a malformed uuid is a 422. */
export const WorkflowIdParam = Type.Object({ workflow_id: Type.String({ format: 'uuid', description: 'Workflow id (uuid)' }) });

/** WorkflowListItem (spec 2.21). */
export const WorkflowListItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  title: Title,
  description: Type.Optional(Description),
  created_at_utc: utc,
  updated_at_utc: utc,
}, { $id: 'WorkflowListItem', additionalProperties: false });

/** GET /api/v2/workflows: every workflow, no pagination (spec 4.13). */
export const WorkflowList = Type.Object({
  items: Type.Array(WorkflowListItem),
  total: Type.Integer({ minimum: 0 }),
});

/** WorkflowDetail (spec 2.21): all fields but description required, nothing else allowed. */
export const WorkflowDetail = Type.Object({
  id: Type.String({ format: 'uuid' }),
  title: Title,
  description: Type.Optional(Description),
  created_at_utc: utc,
  updated_at_utc: utc,
  workflowDefinition: WorkflowDefinition,
}, { $id: 'WorkflowDetail', additionalProperties: false });

/** DELETE answer: the spec shows no success body; this names what was deleted (docs/workflows.md). */
export const WorkflowDeleted = Type.Object({
  message: Type.String(),
  id: Type.String({ format: 'uuid' }),
});
