/** What POST /api/v2/workflows takes (spec 4.13): the schema the HTTP layer checks and the type the domain receives. */
import Type, { type Static } from 'typebox';
import { WorkflowDefinition } from './definition.js';

export const Title = Type.String({ minLength: 1, maxLength: 255 });
export const Description = Type.String({ maxLength: 2000, description: 'Absent when none was given' });

/** POST /api/v2/workflows body (spec 4.13). */
export const WorkflowCreateBody = Type.Object({
  title: Title,
  description: Type.Optional(Description),
  workflowDefinition: WorkflowDefinition,
}, { additionalProperties: false });

export type WorkflowInput = Static<typeof WorkflowCreateBody>;
