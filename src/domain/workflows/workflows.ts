/**
 * Scanner workflows (spec 2.21, 4.13): records in the `workflows` collection, created whole
 * and deleted whole (the spec has no update). A definition is checked before it is stored,
 * so every stored workflow is one a scanner app can run.
 */
import { randomUUID } from 'node:crypto';
import type { CollectionDef } from '../../store/collection.js';
import type { Store } from '../../store/store.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { checkDefinition, type WorkflowDefinition } from './definition.js';
import type { WorkflowInput } from './inputs.js';

/** One stored workflow; instants are epoch milliseconds. */
export interface WorkflowRecord {
  id: string;
  title: string;
  /** Absent when none was given: the spec makes it optional and we do not invent one. */
  description?: string;
  workflowDefinition: WorkflowDefinition;
  created_at: number;
  updated_at: number;
}

export const workflowRecords: CollectionDef<WorkflowRecord> = {
  name: 'workflows',
  key: (w) => w.id,
};

export const WORKFLOW_COLLECTIONS = [workflowRecords] as const;

/** Checks the definition and stores a new workflow; resolves once it is durable. */
export async function createWorkflow(store: Store, input: WorkflowInput, now: number = Date.now()): Promise<WorkflowRecord> {
  const issues = checkDefinition(input.workflowDefinition, ['body', 'workflowDefinition']);
  if (issues.length > 0) throw new ValidationError(issues);
  const record: WorkflowRecord = {
    id: randomUUID(),
    title: input.title,
    ...(input.description !== undefined ? { description: input.description } : {}),
    workflowDefinition: input.workflowDefinition,
    created_at: now,
    updated_at: now,
  };
  await store.write(() => store.collection(workflowRecords).put(record));
  return record;
}

/** Every workflow, oldest first (ids are random, so key order means nothing to a reader). */
export function listWorkflows(store: Store): WorkflowRecord[] {
  return [...store.collection(workflowRecords).scan()].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
}

/** One workflow; NotFoundError when there is none with this id. */
export function getWorkflow(store: Store, id: string): WorkflowRecord {
  const record = store.collection(workflowRecords).get(normalizeId(id));
  if (!record) throw new NotFoundError(`Workflow ${id} not found`);
  return record;
}

/** Deletes a workflow; returns the removed record. NotFoundError when there is none. */
export async function deleteWorkflow(store: Store, id: string): Promise<WorkflowRecord> {
  const key = normalizeId(id);
  const removed = await store.write(() => store.collection(workflowRecords).remove(key));
  if (!removed) throw new NotFoundError(`Workflow ${id} not found`);
  return removed;
}

// UUIDs are case-insensitive (RFC 9562); ours are stored in the lowercase randomUUID gives.
const normalizeId = (id: string) => id.toLowerCase();

/** The scanner workflows of one store: the service the HTTP routes call (they never see the store). */
export class Workflows {
  constructor(private readonly store: Store) {}

  /** Creates a workflow from a definition that has been checked. */
  create(input: WorkflowInput): Promise<WorkflowRecord> {
    return createWorkflow(this.store, input);
  }

  /** Every workflow, oldest first. */
  list(): WorkflowRecord[] {
    return listWorkflows(this.store);
  }

  /** One workflow; NotFoundError when there is none. */
  get(id: string): WorkflowRecord {
    return getWorkflow(this.store, id);
  }

  /** Deletes one workflow and answers it as it was. */
  delete(id: string): Promise<WorkflowRecord> {
    return deleteWorkflow(this.store, id);
  }
}
