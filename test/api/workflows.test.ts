// Scanner workflows (spec 4.13) over real TLS on a real store: the documented examples, every
// kind of bad definition with its exact loc, list, delete, and the permission of each route.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../src/store/store.js';
import { workflowRoutes, WORKFLOW_COLLECTIONS } from '../../src/http/routes/workflows.js';
import type { Caller } from '../../src/http/route.js';
import { HttpError } from '../../src/http/errors.js';
import { createWorkflow, getWorkflow, listWorkflows, Workflows } from '../../src/domain/workflows/workflows.js';
import { Client } from '../helpers/client.js';
import { startServer, testCertificate } from '../helpers/server.js';

const DEF = ['body', 'workflowDefinition'];

/** The worked examples of docs/workflows.md, so the documentation cannot drift from the code. */
function docExample(name: string): any {
  const doc = readFileSync(new URL('../../docs/workflows.md', import.meta.url), 'utf8');
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  if (!m) throw new Error(`docs/workflows.md has no example ${name}`);
  return JSON.parse(m[1]!);
}

// Bearer tokens name the permissions held: enough to test each route's permission key.
const CALLERS: Record<string, string[]> = {
  admin: ['workflows:view', 'workflows:create', 'workflows:delete'],
  viewer: ['workflows:view'],
};
const authenticate = (headers: Readonly<Record<string, string>>): Caller => {
  const token = headers.authorization?.replace(/^Bearer /, '');
  if (token === undefined) return { kind: 'anonymous', permissions: new Set(), authorityLevel: 0 };
  const held = CALLERS[token];
  if (!held) throw new HttpError('unauthorized', 'Unknown token');
  return { kind: 'api_key', id: 1, permissions: new Set(held), authorityLevel: 0 };
};

t.test('scanner workflows', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-workflows-'));
  const store = await Store.open({ dir }, [...WORKFLOW_COLLECTIONS]);
  const s = await startServer(workflowRoutes({ workflows: new Workflows(store) }), { authenticate });
  const ca = readFileSync((await testCertificate()).certFile);
  const c = new Client(s.server.port, ca, 'admin');
  const viewer = new Client(s.server.port, ca, 'viewer');
  t.teardown(async () => {
    c.close();
    viewer.close();
    await s.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const pick = docExample('pick-to-box');
  const count = docExample('cycle-count');
  const create = (body: unknown) => c.post('/api/v2/workflows', body);
  /** A copy of the pick example with its definition changed by `edit`. */
  const variant = (edit: (def: any) => void, top: Record<string, unknown> = {}) => {
    const body = structuredClone(pick);
    edit(body.workflowDefinition);
    return { ...body, ...top };
  };
  const node = (def: any, id: string) => def.nodes.find((n: any) => n.id === id);
  const index = (id: string) => pick.workflowDefinition.nodes.findIndex((n: any) => n.id === id);
  /** Posts a body that must be refused; returns its issues. */
  const refused = async (t: Test, body: unknown, status = 422) => {
    const r = await create(body);
    t.equal(r.status, status, r.text);
    return r.json.detail as { loc: (string | number)[]; msg: string; type: string }[];
  };

  const created: string[] = [];
  await t.test('both documented examples are created and read back identical', async (t) => {
    for (const example of [pick, count]) {
      const r = await create(example);
      t.equal(r.status, 201, r.text);
      t.match(r.json.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      t.equal(r.json.title, example.title);
      t.equal(r.json.description, example.description);
      t.same(r.json.workflowDefinition, example.workflowDefinition);
      t.match(r.json.created_at_utc, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
      t.equal(r.json.updated_at_utc, r.json.created_at_utc);
      t.notOk('created_at' in r.json, 'no legacy timestamp');
      const back = await c.get(`/api/v2/workflows/${r.json.id}`);
      t.equal(back.status, 200);
      t.strictSame(back.json, r.json);
      t.equal(JSON.stringify(back.json.workflowDefinition), JSON.stringify(example.workflowDefinition), 'same keys in the same order');
      created.push(r.json.id);
    }
  });

  await t.test('titles of 1 and 255 characters pass; 0 and 256 do not', async (t) => {
    for (const title of ['x', 'é'.repeat(255)]) {
      const r = await create({ ...pick, title, description: undefined });
      t.equal(r.status, 201, r.text);
      t.notOk('description' in r.json, 'no description given, none answered');
      created.push(r.json.id);
    }
    t.same(await refused(t, { ...pick, title: '' }), [{ loc: ['body', 'title'], msg: 'String should have at least 1 characters', type: 'string_too_short' }]);
    t.same((await refused(t, { ...pick, title: 'x'.repeat(256) })).map((d) => [d.loc, d.type]), [[['body', 'title'], 'string_too_long']]);
  });

  await t.test('a definition of the spec\'s version and nodes alone starts at its first node', async (t) => {
    const body = variant((d) => {
      const first = d.nodes.findIndex((n: any) => n.id === d.start);
      d.nodes.unshift(...d.nodes.splice(first, 1));
      delete d.start;
    });
    const r = await create(body);
    t.equal(r.status, 201, r.text);
    t.notOk('start' in r.json.workflowDefinition, 'stored as given');
    t.equal((await c.request(`/api/v2/workflows/${r.json.id}`, { method: 'DELETE' })).status, 200, 'removed again: the later tests count theirs');
    const elsewhere = await refused(t, variant((d) => {
      d.nodes.push(...d.nodes.splice(d.nodes.findIndex((n: any) => n.id === d.start), 1));
      delete d.start;
    }));
    t.ok(elsewhere.some((d) => d.type === 'unreachable_node'), 'without start, the first node is the start: the old start is unreachable');
  });

  await t.test('the list has every workflow and its total, oldest first, without definitions', async (t) => {
    const r = await c.get('/api/v2/workflows');
    t.equal(r.status, 200);
    t.equal(r.json.total, created.length);
    t.same(r.json.items.map((w: any) => w.id), created);
    t.same(Object.keys(r.json.items[0]).sort(), ['created_at_utc', 'description', 'id', 'title', 'updated_at_utc']);
  });

  await t.test('extra properties are refused at the top, in the definition, in a node and in a step', async (t) => {
    const cases: [unknown, (string | number)[]][] = [
      [{ ...pick, owner: 'me' }, ['body', 'owner']],
      [variant((d) => { d.author = 'me'; }), [...DEF, 'author']],
      [variant((d) => { node(d, 'scan_box').colour = 'red'; }), [...DEF, 'nodes', index('scan_box'), 'colour']],
      [variant((d) => { node(d, 'scan_box').scan.colour = 'red'; }), [...DEF, 'nodes', index('scan_box'), 'scan', 'colour']],
    ];
    for (const [body, loc] of cases) t.same(await refused(t, body), [{ loc, msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
  });

  await t.test('an unknown node kind is an extra property; no kind or two kinds is node_kind', async (t) => {
    const i = index('done');
    const unknown = await refused(t, variant((d) => { node(d, 'done').teleport = { to: 'x' }; delete node(d, 'done').end; }));
    t.same(unknown.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', i, 'teleport'], 'extra_forbidden']]);
    const none = await refused(t, variant((d) => { delete node(d, 'done').end; }));
    t.same(none.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', i], 'node_kind']]);
    t.match(none[0]!.msg, /exactly one of scan, prompt, confirm, branch, call, end; found none/);
    const two = await refused(t, variant((d) => { node(d, 'done').confirm = { label: 'x', yes: 'done', no: 'done' }; }));
    t.same(two.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', i], 'node_kind']]);
  });

  await t.test('broken references name the exact field', async (t) => {
    const issues = await refused(t, variant((d) => {
      d.start = 'nowhere';
      node(d, 'scan_box').scan.next = 'chek_box';
      node(d, 'check_box').branch.cases[0].next = 'gone';
      node(d, 'find_job').call.on_error = 'missing';
    }));
    t.same(issues.map((d) => [d.loc, d.type]), [
      [[...DEF, 'start'], 'unknown_node'],
      [[...DEF, 'nodes', index('find_job'), 'call', 'on_error'], 'unknown_node'],
      [[...DEF, 'nodes', index('scan_box'), 'scan', 'next'], 'unknown_node'],
      [[...DEF, 'nodes', index('check_box'), 'branch', 'cases', 0, 'next'], 'unknown_node'],
    ]);
    t.equal(issues[2]!.msg, 'Unknown node id "chek_box"');
  });

  await t.test('duplicate ids are refused at the second one', async (t) => {
    const issues = await refused(t, variant((d) => { d.nodes.push({ id: 'done', end: { outcome: 'completed' } }); }));
    t.same(issues.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', pick.workflowDefinition.nodes.length, 'id'], 'duplicate_id']]);
  });

  await t.test('unreachable nodes and nodes that cannot finish are refused', async (t) => {
    const n = pick.workflowDefinition.nodes.length;
    const orphan = await refused(t, variant((d) => { d.nodes.push({ id: 'orphan', end: { outcome: 'completed' } }); }));
    t.same(orphan.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', n], 'unreachable_node']]);
    t.match(orphan[0]!.msg, /"orphan" cannot be reached from the start node "scan_balcony"/);
    // A loop with no way out: the operator could never finish.
    const stuck = await refused(t, variant((d) => { node(d, 'wrong_box').confirm.no = 'scan_box'; node(d, 'confirm_quantity').confirm.yes = 'scan_box'; node(d, 'confirm_quantity').confirm.no = 'wrong_box'; }));
    t.same(stuck.map((d) => d.type), ['unreachable_node', 'unreachable_node', 'unreachable_node', 'unreachable_node', 'dead_end', 'dead_end', 'dead_end', 'dead_end']);
  });

  await t.test('variables must be assigned on every path before use', async (t) => {
    // no_job is reached only on find_job's error way, where its saves did not happen.
    const onError = await refused(t, variant((d) => { node(d, 'no_job').end.message = 'No job {job_id}'; }));
    t.same(onError.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', index('no_job'), 'end', 'message'], 'unassigned_variable']]);
    // A scan's label is shown before its own variable is read.
    const ownLabel = await refused(t, variant((d) => { node(d, 'scan_balcony').scan.label = 'Balcony {balcony_id}'; }));
    t.same(ownLabel.map((d) => d.type), ['unassigned_variable']);
    const unknown = await refused(t, variant((d) => { node(d, 'trigger').call.params.job_id = '{jobid}'; }));
    t.same(unknown.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', index('trigger'), 'call', 'params', 'job_id'], 'unknown_variable']]);
    const braces = await refused(t, variant((d) => { node(d, 'done').end.message = 'Done {quantity'; }));
    t.same(braces.map((d) => d.type), ['malformed_placeholder']);
  });

  await t.test('branch values must be well-formed', async (t) => {
    const at = [...DEF, 'nodes', index('check_box'), 'branch', 'cases'];
    const cases = (list: unknown[]) => variant((d) => { node(d, 'check_box').branch.cases = list; });
    const wrongType = await refused(t, cases([{ op: 'eq', value: 'B-12', next: 'confirm_quantity' }]));
    t.same(wrongType.map((d) => [d.loc, d.type]), [[[...at, 0, 'value'], 'variable_type_mismatch']]);
    const fraction = await refused(t, cases([{ op: 'eq', value: 1.5, next: 'confirm_quantity' }]));
    t.same(fraction.map((d) => d.type), ['variable_type_mismatch']);
    const twice = await refused(t, cases([{ op: 'ge', value: 3, next: 'confirm_quantity' }, { op: 'ge', value: 3, next: 'wrong_box' }]));
    t.same(twice.map((d) => [d.loc, d.type]), [[[...at, 1], 'duplicate_case']]);
    const mixed = await refused(t, cases([{ op: 'eq', value: 'box {job_box_id}', next: 'confirm_quantity' }]));
    t.same(mixed.map((d) => d.type), ['malformed_placeholder']);
    const ordered = await refused(t, variant((d) => { node(d, 'check_box').branch = { variable: 'sku_id', cases: [{ op: 'lt', value: 'M', next: 'confirm_quantity' }], otherwise: 'wrong_box' }; }));
    t.same(ordered.map((d) => [d.loc, d.type]), [[[...at, 0, 'op'], 'variable_type_mismatch']]);
    const badOp = await refused(t, cases([{ op: 'like', value: 3, next: 'confirm_quantity' }]));
    t.same(badOp.map((d) => [d.loc, d.type]), [[[...at, 0, 'op'], 'literal_error']]);
  });

  await t.test('API actions are limited to the documented list and their fields', async (t) => {
    const call = [...DEF, 'nodes', index('trigger'), 'call'];
    const unknown = await refused(t, variant((d) => { node(d, 'trigger').call.action = 'POST /api/v2/requests/cancel_all'; }));
    t.same(unknown.map((d) => [d.loc, d.type]), [[[...call, 'action'], 'literal_error']]);
    t.match(unknown[0]!.msg, /"POST \/api\/v2\/trigger\/\{job_id\}"/);
    const field = await refused(t, variant((d) => { node(d, 'trigger').call.body.selected_qty = 1; }));
    t.same(field.map((d) => [d.loc, d.type]), [[[...call, 'body', 'selected_qty'], 'unknown_parameter']]);
    const missingParam = await refused(t, variant((d) => { node(d, 'trigger').call.params = {}; }));
    t.same(missingParam.map((d) => [d.loc, d.type]), [[[...call, 'params', 'job_id'], 'missing']]);
    const noQuery = await refused(t, variant((d) => { node(d, 'trigger').call.query = { x: 1 }; }));
    t.same(noQuery.map((d) => [d.loc, d.type]), [[[...call, 'query'], 'unknown_parameter']]);
    const textInInteger = await refused(t, variant((d) => { node(d, 'trigger').call.body.selected_quantity = '{quantity} pcs'; }));
    t.same(textInInteger.map((d) => [d.loc, d.type]), [[[...call, 'body', 'selected_quantity'], 'variable_type_mismatch']]);
    const stringVar = await refused(t, variant((d) => { node(d, 'trigger').call.body.selected_quantity = '{sku_id}'; }));
    t.same(stringVar.map((d) => d.type), ['variable_type_mismatch']);
  });

  await t.test('other rules: version, variable types, patterns, prompt ranges', async (t) => {
    const version = await refused(t, variant((d) => { d.version = 2; }));
    t.same(version, [{ loc: [...DEF, 'version'], msg: 'Input should be 1', type: 'literal_error' }]);
    const retyped = await refused(t, variant((d) => { node(d, 'scan_box').scan.variable = 'sku_id'; }));
    t.ok(retyped.some((d) => d.type === 'variable_type_mismatch' && d.loc.join('.') === `${DEF.join('.')}.nodes.${index('scan_box')}.scan.value_type`));
    const pattern = await refused(t, variant((d) => { node(d, 'scan_balcony').scan.pattern = '([0-9'; }));
    t.same(pattern.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', index('scan_balcony'), 'scan', 'pattern'], 'invalid_pattern']]);
    const countDef = structuredClone(count);
    Object.assign(countDef.workflowDefinition.nodes[2].prompt, { minimum: 5, maximum: 1 });
    const range = await refused(t, countDef);
    t.same(range.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes', 2, 'prompt', 'maximum'], 'invalid_range']]);
  });

  await t.test('wrong types, missing fields, malformed JSON', async (t) => {
    const types = await refused(t, { title: 7, workflowDefinition: { version: '1', start: 'a', nodes: 'none' } });
    t.same(types.map((d) => [d.loc, d.type]).sort(), [
      [['body', 'title'], 'string_type'],
      [[...DEF, 'nodes'], 'list_type'],
      [[...DEF, 'version'], 'float_type'],
      [[...DEF, 'version'], 'literal_error'],
    ].sort());
    const nodeTypes = await refused(t, variant((d) => { node(d, 'scan_box').scan.next = 5; d.nodes[0].id = 'bad id'; }));
    t.same(nodeTypes.map((d) => [d.loc, d.type]).sort(), [
      [[...DEF, 'nodes', 0, 'id'], 'string_pattern_mismatch'],
      [[...DEF, 'nodes', index('scan_box'), 'scan', 'next'], 'string_type'],
    ].sort());
    t.same(await refused(t, { title: 'x' }), [{ loc: [...DEF], msg: 'Field required', type: 'missing' }]);
    const empty = await refused(t, variant((d) => { d.nodes = []; }));
    t.same(empty.map((d) => [d.loc, d.type]), [[[...DEF, 'nodes'], 'too_short']]);
    const bad = await c.request('/api/v2/workflows', { method: 'POST', body: '{"title": "x", ', headers: { 'content-type': 'application/json' } });
    t.equal(bad.status, 400);
    t.equal(bad.json.detail[0].type, 'json_invalid');
  });

  await t.test('delete answers what it removed; then the workflow is gone', async (t) => {
    const id = created.pop()!;
    const r = await c.request(`/api/v2/workflows/${id}`, { method: 'DELETE' });
    t.equal(r.status, 200);
    t.same(r.json, { message: `Workflow ${'é'.repeat(255)} deleted`, id });
    for (const method of ['GET', 'DELETE']) {
      const gone = await c.request(`/api/v2/workflows/${id}`, { method });
      t.equal(gone.status, 404, method);
      t.equal(gone.json.code, 'not_found');
    }
    t.equal((await c.get('/api/v2/workflows')).json.total, created.length);
    t.equal((await c.get(`/api/v2/workflows/${created[0]!.toUpperCase()}`)).json.id, created[0], 'uuids are case-insensitive');
  });

  await t.test('a malformed id is 422, not 404', async (t) => {
    for (const method of ['GET', 'DELETE']) {
      const r = await c.request('/api/v2/workflows/not-a-uuid', { method });
      t.equal(r.status, 422, method);
      t.same(r.json.detail.map((d: any) => d.loc), [['path', 'workflow_id']]);
    }
  });

  await t.test('each route asks for its permission', async (t) => {
    t.equal((await viewer.get('/api/v2/workflows')).status, 200);
    t.equal((await viewer.get(`/api/v2/workflows/${created[0]}`)).status, 200);
    t.equal((await viewer.post('/api/v2/workflows', pick)).status, 403);
    t.equal((await viewer.request(`/api/v2/workflows/${created[0]}`, { method: 'DELETE' })).status, 403);
    t.equal((await s.client.get('/api/v2/workflows')).status, 401);
  });

});

t.test('an acknowledged workflow survives closing and reopening the store', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-workflows-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let store = await Store.open({ dir }, [...WORKFLOW_COLLECTIONS]);
  const example = docExample('cycle-count');
  const made = await createWorkflow(store, example, Date.UTC(2024, 0, 2, 3, 4, 5));
  await store.close();
  store = await Store.open({ dir }, [...WORKFLOW_COLLECTIONS]);
  t.teardown(() => store.close());
  t.same(getWorkflow(store, made.id), made);
  t.same(listWorkflows(store).map((w) => w.id), [made.id]);
});
