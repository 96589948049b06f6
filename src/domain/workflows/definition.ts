/**
 * The scanner workflow definition (version 1): a graph of nodes a scanner app executes, one
 * node at a time, from `start` to an `end` node. The TypeBox schema checks each node's shape
 * (and is what the OpenAPI document shows); `checkDefinition` checks what a schema cannot:
 * ids unique, references resolve, every node reachable and able to finish, variables assigned
 * on every path before use, API calls limited to WORKFLOW_ACTIONS. docs/workflows.md is the
 * reference for app writers.
 *
 * A node carries its kind as the name of its one step property (`{"id": "n1", "scan": {...}}`)
 * rather than a `kind` tag: a union of tagged objects would make the validator report a
 * mistyped field as "kind should be ...", whereas plain optional properties give precise
 * errors (an unknown kind is an extra property at its exact place).
 */
import Type, { type Static } from 'typebox';
import type { ValidationIssue } from '../errors.js';
import { WORKFLOW_ACTION_KEYS, WORKFLOW_ACTIONS, type FieldType, type WorkflowAction, type WorkflowActionKey } from './actions.js';

/** The definition version this controller understands. */
export const WORKFLOW_DEFINITION_VERSION = 1;
/** Most nodes in one workflow: a scanner screen flow, not a program. */
export const MAX_NODES = 200;

const VARIABLE_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

const NodeId = Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$', description: 'Node id: a letter, then up to 63 letters, digits, _ or -' });
const VariableName = Type.String({ pattern: VARIABLE_PATTERN.source, description: 'Variable name: a lowercase letter, then up to 63 lowercase letters, digits or _' });
const Label = Type.String({ minLength: 1, maxLength: 500, description: 'Text shown to the operator; may hold {variable} placeholders' });
const ValueType = Type.Union([Type.Literal('string'), Type.Literal('integer'), Type.Literal('number')], { description: 'Type of the value a variable holds' });
const TemplateValue = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()], {
  description: 'A literal, or a string with {variable} placeholders; a string that is exactly one placeholder passes the variable with its type',
});
const Templates = Type.Record(Type.String(), TemplateValue);

const ScanStep = Type.Object({
  label: Label,
  variable: VariableName,
  value_type: Type.Union([Type.Literal('string'), Type.Literal('integer')], { description: 'integer: the scanned text must be a whole number' }),
  pattern: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Regular expression (JavaScript, u flag) the whole scanned text must match' })),
  next: NodeId,
}, { additionalProperties: false, description: 'Read a barcode into a variable' });

const PromptStep = Type.Object({
  label: Label,
  variable: VariableName,
  value_type: ValueType,
  minimum: Type.Optional(Type.Number({ description: 'Smallest accepted value (numeric prompts)' })),
  maximum: Type.Optional(Type.Number({ description: 'Largest accepted value (numeric prompts)' })),
  next: NodeId,
}, { additionalProperties: false, description: 'Ask the operator to type a value into a variable' });

const ConfirmStep = Type.Object({
  label: Label,
  yes: NodeId,
  no: NodeId,
}, { additionalProperties: false, description: 'Ask a yes/no question' });

const Comparison = Type.Union(['eq', 'ne', 'lt', 'le', 'gt', 'ge'].map((op) => Type.Literal(op)), { description: 'lt, le, gt, ge compare numbers only' });
const BranchCase = Type.Object({
  op: Comparison,
  value: Type.Union([Type.String({ maxLength: 500 }), Type.Number()], { description: 'A literal of the variable\'s type, or exactly one {variable} of a comparable type' }),
  next: NodeId,
}, { additionalProperties: false });
const BranchStep = Type.Object({
  variable: VariableName,
  cases: Type.Array(BranchCase, { minItems: 1, maxItems: 50, description: 'Tried in order; the first that holds decides' }),
  otherwise: NodeId,
}, { additionalProperties: false, description: 'Go on according to a variable\'s value' });

const SaveField = Type.Object({
  variable: VariableName,
  pointer: Type.String({ pattern: '^(/([^~/]|~[01])*)*$', maxLength: 200, description: 'JSON pointer into the JSON answer, e.g. /items/0/id' }),
  value_type: ValueType,
}, { additionalProperties: false });
const CallStep = Type.Object({
  action: Type.Union(WORKFLOW_ACTION_KEYS.map((k) => Type.Literal(k)), { description: 'One of the documented API actions (docs/workflows.md)' }),
  params: Type.Optional(Templates),
  query: Type.Optional(Templates),
  body: Type.Optional(Templates),
  save: Type.Optional(Type.Array(SaveField, { maxItems: 20, description: 'Values taken from a 2xx answer into variables' })),
  next: NodeId,
  on_error: Type.Optional(NodeId),
}, { additionalProperties: false, description: 'Call an action of this API; a failure (non-2xx, or a saved value missing or of the wrong type) goes to on_error, or ends the run as failed' });

const EndStep = Type.Object({
  outcome: Type.Union([Type.Literal('completed'), Type.Literal('cancelled'), Type.Literal('failed')]),
  message: Type.Optional(Label),
}, { additionalProperties: false, description: 'Finish the run' });

/** The step properties a node may have; exactly one is present. */
export const NODE_KINDS = ['scan', 'prompt', 'confirm', 'branch', 'call', 'end'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/** One node: an id and exactly one step property naming its kind. */
export const WorkflowNode = Type.Object({
  id: NodeId,
  scan: Type.Optional(ScanStep),
  prompt: Type.Optional(PromptStep),
  confirm: Type.Optional(ConfirmStep),
  branch: Type.Optional(BranchStep),
  call: Type.Optional(CallStep),
  end: Type.Optional(EndStep),
}, { additionalProperties: false, description: `An id and exactly one of ${NODE_KINDS.join(', ')}` });

/** The workflowDefinition of spec 2.21, version 1. */
export const WorkflowDefinition = Type.Object({
  version: Type.Literal(WORKFLOW_DEFINITION_VERSION, { description: 'Definition format version; this controller understands 1' }),
  start: Type.Optional({ ...NodeId, description: 'The node to begin with (beyond the spec\'s version and nodes); default: the first node' }),
  nodes: Type.Array(WorkflowNode, { minItems: 1, maxItems: MAX_NODES }),
}, { additionalProperties: false, description: 'A scanner workflow: nodes run from start (by default the first node) until an end node (docs/workflows.md)' });

/** The node a workflow begins with: `start`, or the first node when the definition names none. */
export function startNode(def: WorkflowDefinition): string {
  return def.start ?? def.nodes[0]!.id;
}

export type WorkflowNode = Static<typeof WorkflowNode>;
export type WorkflowDefinition = Static<typeof WorkflowDefinition>;
type ValueTypeName = Static<typeof ValueType>;
type Loc = (string | number)[];

/** An edge of the graph: where it is declared, where it goes, what it assigns on the way. */
interface Edge {
  loc: Loc;
  to: string;
  assigns: string[];
}

/** A use of variables: a template, a branch variable or a branch operand. */
interface Use {
  loc: Loc;
  names: string[];
}

/** What the graph checks need of one node, gathered once. */
interface NodeFacts {
  index: number;
  kind: NodeKind;
  edges: Edge[];
  uses: Use[];
}

/**
 * Checks a schema-valid definition; returns the issues (empty when it is sound). `at` is the
 * location of the definition in the request, e.g. ['body', 'workflowDefinition'].
 */
export function checkDefinition(def: WorkflowDefinition, at: Loc): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const issue = (loc: Loc, msg: string, type: string): void => {
    issues.push({ loc, msg, type });
  };
  const nodesAt = [...at, 'nodes'];

  const ids = new Map<string, number>();
  def.nodes.forEach((node, i) => {
    if (ids.has(node.id)) issue([...nodesAt, i, 'id'], `Node id "${node.id}" is already used by node ${ids.get(node.id)}`, 'duplicate_id');
    else ids.set(node.id, i);
  });
  if (def.start !== undefined && !ids.has(def.start)) issue([...at, 'start'], `Unknown node id "${def.start}"`, 'unknown_node');

  const types = variableTypes(def, nodesAt, issue);
  const facts = new Map<string, NodeFacts>();
  def.nodes.forEach((node, i) => {
    const kinds = NODE_KINDS.filter((k) => node[k] !== undefined);
    if (kinds.length !== 1) {
      const found = kinds.length === 0 ? 'none' : kinds.join(', ');
      issue([...nodesAt, i], `A node has exactly one of ${NODE_KINDS.join(', ')}; found ${found}`, 'node_kind');
      return;
    }
    const f = nodeFacts(node, kinds[0]!, i, [...nodesAt, i, kinds[0]!], types, issue);
    for (const e of f.edges) if (!ids.has(e.to)) issue(e.loc, `Unknown node id "${e.to}"`, 'unknown_node');
    if (ids.get(node.id) === i) facts.set(node.id, f);
  });
  // The graph checks read a whole, well-formed graph; on a broken one they only repeat the
  // broken reference as "unreachable" noise.
  if (issues.length > 0) return issues;

  checkGraph(def, facts, nodesAt, issue);
  return issues;
}

/** The type of every variable, from the nodes that assign it; reports conflicting assignments. */
function variableTypes(def: WorkflowDefinition, nodesAt: Loc, issue: (loc: Loc, msg: string, type: string) => void): Map<string, ValueTypeName> {
  const types = new Map<string, ValueTypeName>();
  const assign = (name: string, type: ValueTypeName, loc: Loc) => {
    const known = types.get(name);
    if (known === undefined) types.set(name, type);
    else if (known !== type) issue(loc, `Variable "${name}" is assigned as ${known} elsewhere; one variable has one type`, 'variable_type_mismatch');
  };
  def.nodes.forEach((node, i) => {
    if (node.scan) assign(node.scan.variable, node.scan.value_type, [...nodesAt, i, 'scan', 'value_type']);
    if (node.prompt) assign(node.prompt.variable, node.prompt.value_type, [...nodesAt, i, 'prompt', 'value_type']);
    node.call?.save?.forEach((s, j) => assign(s.variable, s.value_type, [...nodesAt, i, 'call', 'save', j, 'value_type']));
  });
  return types;
}

/** Edges and variable uses of one node, with its local checks. */
function nodeFacts(
  node: WorkflowNode, kind: NodeKind, index: number, at: Loc, types: Map<string, ValueTypeName>,
  issue: (loc: Loc, msg: string, type: string) => void,
): NodeFacts {
  const edges: Edge[] = [];
  const uses: Use[] = [];
  const edge = (field: Loc, to: string, assigns: string[] = []) => edges.push({ loc: [...at, ...field], to, assigns });
  const known = (loc: Loc, name: string): ValueTypeName | undefined => {
    const type = types.get(name);
    if (type === undefined) issue(loc, `Variable "${name}" is not assigned by any node`, 'unknown_variable');
    return type;
  };
  const label = (field: Loc, text: string) => {
    const t = parseTemplate(text);
    if (t.error) {
      issue([...at, ...field], t.error, 'malformed_placeholder');
      return;
    }
    for (const name of t.names) known([...at, ...field], name);
    uses.push({ loc: [...at, ...field], names: t.names });
  };

  switch (kind) {
    case 'scan': {
      const s = node.scan!;
      label(['label'], s.label);
      if (s.pattern !== undefined) {
        try {
          new RegExp(s.pattern, 'u');
        } catch (err) {
          issue([...at, 'pattern'], `Not a valid regular expression: ${(err as Error).message}`, 'invalid_pattern');
        }
      }
      edge(['next'], s.next, [s.variable]);
      break;
    }
    case 'prompt': {
      const p = node.prompt!;
      label(['label'], p.label);
      for (const bound of ['minimum', 'maximum'] as const) {
        const v = p[bound];
        if (v === undefined) continue;
        if (p.value_type === 'string') issue([...at, bound], `${bound} applies to numeric prompts only`, 'invalid_range');
        else if (p.value_type === 'integer' && !Number.isInteger(v)) issue([...at, bound], `${bound} of an integer prompt must be a whole number`, 'invalid_range');
      }
      if (p.minimum !== undefined && p.maximum !== undefined && p.minimum > p.maximum) {
        issue([...at, 'maximum'], `maximum ${p.maximum} is below minimum ${p.minimum}`, 'invalid_range');
      }
      edge(['next'], p.next, [p.variable]);
      break;
    }
    case 'confirm': {
      const c = node.confirm!;
      label(['label'], c.label);
      edge(['yes'], c.yes);
      edge(['no'], c.no);
      break;
    }
    case 'branch': {
      const b = node.branch!;
      const subject = known([...at, 'variable'], b.variable);
      uses.push({ loc: [...at, 'variable'], names: [b.variable] });
      const seen = new Set<string>();
      b.cases.forEach((c, j) => {
        const loc = [...at, 'cases', j];
        const key = `${c.op} ${JSON.stringify(c.value)}`;
        if (seen.has(key)) issue(loc, `Case ${c.op} ${JSON.stringify(c.value)} repeats an earlier case and can never be taken`, 'duplicate_case');
        seen.add(key);
        edge(['cases', j, 'next'], c.next);
        const operand = branchOperand(c.value, [...loc, 'value'], known, issue);
        if (operand.name !== undefined) uses.push({ loc: [...loc, 'value'], names: [operand.name] });
        if (subject === undefined || operand.type === undefined) return;
        const numeric = subject !== 'string';
        if (numeric !== (operand.type !== 'string')) {
          issue([...loc, 'value'], `Variable "${b.variable}" is ${subject}; compare it with a ${numeric ? 'number' : 'string'}`, 'variable_type_mismatch');
        } else if (subject === 'integer' && operand.literal && !Number.isInteger(c.value)) {
          issue([...loc, 'value'], `Variable "${b.variable}" is an integer; compare it with a whole number`, 'variable_type_mismatch');
        } else if (!numeric && c.op !== 'eq' && c.op !== 'ne') {
          issue([...loc, 'op'], `${c.op} compares numbers; "${b.variable}" is a string (use eq or ne)`, 'variable_type_mismatch');
        }
      });
      edge(['otherwise'], b.otherwise);
      break;
    }
    case 'call': {
      const c = node.call!;
      const action: WorkflowAction = WORKFLOW_ACTIONS[c.action as WorkflowActionKey];
      const fields = (part: 'params' | 'query' | 'body', allowed: Readonly<Record<string, FieldType>> | null, required: readonly string[]) => {
        const given = c[part] ?? {};
        if (allowed === null) {
          if (c[part] !== undefined) issue([...at, part], `${c.action} takes no ${part}`, 'unknown_parameter');
          return;
        }
        for (const name of required) if (!(name in given)) issue([...at, part, name], `${c.action} needs ${part} field "${name}"`, 'missing');
        for (const [name, value] of Object.entries(given)) {
          const loc = [...at, part, name];
          const want = allowed[name];
          if (want === undefined) {
            const choices = Object.keys(allowed);
            issue(loc, `${c.action} has no ${part} field "${name}"${choices.length > 0 ? `; it takes ${choices.join(', ')}` : ''}`, 'unknown_parameter');
            continue;
          }
          const names = templateFits(value, want, loc, known, issue);
          if (names.length > 0) uses.push({ loc, names });
        }
      };
      const orNull = (r: Readonly<Record<string, FieldType>>) => (Object.keys(r).length > 0 ? r : null);
      fields('params', orNull(action.params), Object.keys(action.params));
      fields('query', orNull(action.query), []);
      fields('body', action.body, action.requiredBody);
      const saved = new Set<string>();
      c.save?.forEach((s, j) => {
        if (saved.has(s.variable)) issue([...at, 'save', j, 'variable'], `Variable "${s.variable}" is saved twice by this call`, 'duplicate_id');
        saved.add(s.variable);
      });
      edge(['next'], c.next, [...saved]);
      if (c.on_error !== undefined) edge(['on_error'], c.on_error);
      break;
    }
    case 'end': {
      const e = node.end!;
      if (e.message !== undefined) label(['message'], e.message);
      break;
    }
  }
  return { index, kind, edges, uses };
}

/** What a branch case compares with: a literal, or the one variable it names. */
function branchOperand(
  value: string | number, loc: Loc, known: (loc: Loc, name: string) => ValueTypeName | undefined,
  issue: (loc: Loc, msg: string, type: string) => void,
): { type?: ValueTypeName; name?: string; literal: boolean } {
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number', literal: true };
  const t = parseTemplate(value);
  if (t.error) {
    issue(loc, t.error, 'malformed_placeholder');
    return { literal: true };
  }
  if (t.names.length === 0) return { type: 'string', literal: true };
  if (t.exact === null) {
    issue(loc, 'A case value is a literal or exactly one {variable}, not text with placeholders', 'malformed_placeholder');
    return { literal: false };
  }
  return { type: known(loc, t.exact), name: t.exact, literal: false };
}

/**
 * Checks that a template produces a value of the field's type; returns the variables it uses.
 * An exact placeholder passes the variable's typed value, any other string is text.
 */
function templateFits(
  value: string | number | boolean, want: FieldType, loc: Loc, known: (loc: Loc, name: string) => ValueTypeName | undefined,
  issue: (loc: Loc, msg: string, type: string) => void,
): string[] {
  const mismatch = (got: string) => issue(loc, `Expected ${want === 'integer' ? 'an' : 'a'} ${want}, got ${got}`, 'variable_type_mismatch');
  if (typeof value === 'boolean') {
    if (want !== 'boolean') mismatch('a boolean');
    return [];
  }
  if (typeof value === 'number') {
    if (want === 'integer' ? !Number.isInteger(value) : want !== 'number') mismatch(`the number ${value}`);
    return [];
  }
  const t = parseTemplate(value);
  if (t.error) {
    issue(loc, t.error, 'malformed_placeholder');
    return [];
  }
  if (t.exact !== null) {
    const type = known(loc, t.exact);
    // Text fields take any variable as text; numbers need a numeric variable.
    const fits = type === undefined || want === 'string' || (want === 'number' && type !== 'string') || want === type;
    if (!fits) mismatch(`variable "${t.exact}" of type ${type}`);
  } else {
    if (want !== 'string') mismatch('text');
    for (const name of t.names) known(loc, name);
  }
  return t.names;
}

/** Reachability from start, a way to an end from every node, and variables assigned before use. */
function checkGraph(def: WorkflowDefinition, facts: Map<string, NodeFacts>, nodesAt: Loc, issue: (loc: Loc, msg: string, type: string) => void): void {
  const start = startNode(def);
  const reached = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const e of facts.get(queue.shift()!)!.edges) {
      if (!reached.has(e.to)) {
        reached.add(e.to);
        queue.push(e.to);
      }
    }
  }
  for (const [id, f] of facts) {
    if (!reached.has(id)) issue([...nodesAt, f.index], `Node "${id}" cannot be reached from the start node "${start}"`, 'unreachable_node');
  }

  // Backwards from the end nodes: a node that reaches none would keep the operator in a loop.
  const finishes = new Set([...facts].filter(([, f]) => f.kind === 'end').map(([id]) => id));
  for (let grew = true; grew;) {
    grew = false;
    for (const [id, f] of facts) {
      if (!finishes.has(id) && f.edges.some((e) => finishes.has(e.to))) {
        finishes.add(id);
        grew = true;
      }
    }
  }
  for (const [id, f] of facts) {
    if (reached.has(id) && !finishes.has(id)) issue([...nodesAt, f.index], `No path leads from node "${id}" to an end node`, 'dead_end');
  }

  const assigned = definitelyAssigned(start, facts, reached);
  for (const [id, f] of facts) {
    const ready = assigned.get(id);
    if (ready === undefined) continue;
    for (const use of f.uses) {
      for (const name of use.names) {
        if (!ready.has(name)) issue(use.loc, `Variable "${name}" is not assigned on every path to node "${id}"`, 'unassigned_variable');
      }
    }
  }
}

/**
 * The variables assigned on every path from start to each reachable node (a must-analysis:
 * the intersection over incoming edges, iterated to the fixpoint, so loops are handled).
 */
function definitelyAssigned(start: string, facts: Map<string, NodeFacts>, reached: Set<string>): Map<string, Set<string>> {
  const incoming = new Map<string, { from: string; assigns: string[] }[]>();
  for (const id of reached) {
    for (const e of facts.get(id)!.edges) {
      let list = incoming.get(e.to);
      if (!list) incoming.set(e.to, (list = []));
      list.push({ from: id, assigns: e.assigns });
    }
  }
  // null stands for "everything" (not yet reached by the iteration).
  const before = new Map<string, Set<string> | null>([...reached].map((id) => [id, id === start ? new Set<string>() : null]));
  for (let changed = true; changed;) {
    changed = false;
    for (const id of reached) {
      if (id === start) continue;
      let meet = null as Set<string> | null;
      for (const { from, assigns } of incoming.get(id) ?? []) {
        const prior = before.get(from)!;
        if (prior === null) continue;
        const out = new Set([...prior, ...assigns]);
        meet = meet === null ? out : new Set([...meet].filter((n) => out.has(n)));
      }
      const old = before.get(id)!;
      if (meet !== null && (old === null || old.size !== meet.size)) {
        before.set(id, meet);
        changed = true;
      }
    }
  }
  const out = new Map<string, Set<string>>();
  for (const [id, set] of before) out.set(id, set ?? new Set());
  return out;
}

/** A template's placeholders: their names, the name when the text is exactly one, or why it is malformed. */
export function parseTemplate(text: string): { names: string[]; exact: string | null; error?: string } {
  const names: string[] = [];
  const rest = text.replace(/\{([^{}]*)\}/g, (_, name: string) => {
    names.push(name);
    return '';
  });
  if (rest.includes('{') || rest.includes('}')) return { names: [], exact: null, error: 'Unbalanced { or }: placeholders are {variable}; braces have no other use' };
  const bad = names.find((n) => !VARIABLE_PATTERN.test(n));
  if (bad !== undefined) return { names: [], exact: null, error: `"{${bad}}" is not a placeholder: variable names are lowercase letters, digits and _` };
  const exact = names.length === 1 && text === `{${names[0]}}` ? names[0]! : null;
  return { names: [...new Set(names)], exact };
}
