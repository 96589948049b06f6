// The served OpenAPI document says what the daemon does. Each check here failed
// against the document before: answers the daemon gives that were undocumented, and parameter
// schemas looser than what the daemon accepts.
import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startAdminApp, type AdminApp } from '../helpers/app.js';

let a: AdminApp;
let doc: any;
const ajv = new Ajv2020({ strict: false });

t.before(async () => {
  a = await startAdminApp();
  doc = (await a.client.request('/api/openapi.json')).json;
  ajv.addSchema({ ...doc, $id: 'doc' });
});
t.teardown(() => a.close());

const op = (method: string, path: string) => doc.paths[path][method.toLowerCase()];
const param = (method: string, path: string, name: string) => op(method, path).parameters.find((p: any) => p.name === name).schema;
const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
/** Whether `body` validates against the document's schema of `status` on an operation. */
const fits = (method: string, path: string, status: number, body: unknown) =>
  ajv.validate({ $ref: `doc#/paths/${esc(path)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema` }, body);

t.test('answers the auth routes give are documented', async (t) => {
  const documented = (method: string, path: string) => Object.keys(op(method, path).responses);
  t.ok(['401', '429'].every((s) => documented('POST', '/api/v2/auth/login').includes(s)), 'POST /api/v2/auth/login documents 401, 429');
  t.ok(['401'].every((s) => documented('POST', '/api/v2/auth/refresh_token').includes(s)), 'POST /api/v2/auth/refresh_token documents 401');
  t.ok(['429'].every((s) => documented('POST', '/api/v2/auth/forgot_password').includes(s)), 'POST /api/v2/auth/forgot_password documents 429');
  t.ok(['401', '429'].every((s) => documented('POST', '/api/v2/auth/reset_password').includes(s)), 'POST /api/v2/auth/reset_password documents 401, 429');
  for (const [method, path] of [['DELETE', '/api/v2/auth/api_keys/{api_key_id}'], ['PATCH', '/api/v2/auth/api_keys/{api_key_id}/permissions']]) {
    t.ok(documented(method!, path!).includes('404'), `${method} ${path} documents 404`);
  }
  for (const [method, path] of [['PATCH', '/api/v2/auth/roles/{role_id}'], ['DELETE', '/api/v2/auth/roles/{role_id}'], ['PATCH', '/api/v2/auth/update_user'], ['POST', '/api/v2/auth/create_account']]) {
    t.ok(documented(method!, path!).includes('404') && documented(method!, path!).includes('409'), `${method} ${path} documents 404 and 409`);
  }
  t.ok(documented('POST', '/api/v2/auth/roles').includes('409'));

  // And the real answers fit what is documented.
  const login = await a.client.post('/api/v2/auth/login', { email: 'nobody@example.com', password: 'wrong' });
  t.equal(login.status, 401);
  t.ok(fits('POST', '/api/v2/auth/login', 401, login.json));
  const key = await a.admin.request('/api/v2/auth/api_keys/99999', { method: 'DELETE' });
  t.equal(key.status, 404);
  t.ok(fits('DELETE', '/api/v2/auth/api_keys/{api_key_id}', 404, key.json));
  const role = await a.admin.request('/api/v2/auth/roles/no-such-role', { method: 'DELETE' });
  t.equal(role.status, 404);
  t.ok(fits('DELETE', '/api/v2/auth/roles/{role_id}', 404, role.json));
});

t.test('malformed JSON: the 400 answer fits the documented 400', async (t) => {
  const r = await a.admin.request('/api/v2/sku', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id": ' });
  t.equal(r.status, 400);
  t.match(r.json, { detail: [{ loc: ['body'], type: 'json_invalid' }] });
  t.ok(fits('POST', '/api/v2/sku', 400, r.json), 'validation-shaped 400 is documented');
  t.ok(fits('POST', '/api/v2/sku', 400, { detail: 'Malformed multipart', code: 'bad_request', request_id: 'x' }), 'and so is the plain error body');
});

t.test('timestamp filters: the pattern is what the daemon parses', async (t) => {
  const schema = param('GET', '/api/v2/jobs', 'created_at__gte');
  t.equal(schema.type, 'string');
  t.type(schema.pattern, 'string');
  const re = new RegExp(schema.pattern, 'u');
  for (const good of ['2026-01-31', '2026-01-31T10:00', '2026-01-31T10:00:00.5Z', '2024-02-29T00:00:00+01:00', '2000-02-29 23:59:59']) {
    t.ok(re.test(good), `${good} matches`);
    t.equal((await a.admin.request(`/api/v2/jobs?created_at__gte=${encodeURIComponent(good)}`)).status, 200, `${good} accepted`);
  }
  for (const bad of ['yesterday', '2026-02-30', '2023-02-29', '1900-02-29', '2026-13-01', '']) {
    t.notOk(re.test(bad), `${bad} does not match`);
    t.equal((await a.admin.request(`/api/v2/jobs?created_at__gte=${encodeURIComponent(bad)}`)).status, 422, `${bad} refused`);
  }
});

t.test('numeric filters are typed as their field, so a generated client takes numbers', async (t) => {
  t.match(param('GET', '/api/v2/inventory_view', 'item_count__eq'), { type: 'integer' });
  t.match(param('GET', '/api/v2/inventory_view', 'section_code_32__eq'), { type: 'integer' });
  t.match(param('GET', '/api/v2/inventory_view', 'box_height_string_max__eq'), { type: 'number' });
  t.equal((await a.admin.request('/api/v2/inventory_view?item_count__eq=3')).status, 200);
  for (const bad of ['0x10', ' 3', '3.5', 'three']) {
    t.equal((await a.admin.request(`/api/v2/inventory_view?item_count__eq=${encodeURIComponent(bad)}`)).status, 422, `${JSON.stringify(bad)} refused`);
  }
  const huge = await a.admin.request('/api/v2/inventory_view?box_height_string_max__eq=1e999');
  t.equal(huge.status, 422, 'a number beyond a double is not one the field can hold');
  t.equal(huge.json.detail[0].loc[1], 'box_height_string_max__eq');
});

t.test('sort_by names the sortable fields', async (t) => {
  const sort = param('GET', '/api/v2/events', 'sort_by');
  const re = new RegExp(sort.pattern, 'u');
  t.ok(re.test('-created_at, id') && re.test('') && !re.test('nonsense'));
  t.equal((await a.admin.request('/api/v2/events?sort_by=nonsense')).status, 422);
  t.match(sort.description, /each field at most once/);
  t.equal((await a.admin.request('/api/v2/events?sort_by=id,-id')).status, 422, 'as the description says');
});

t.test('section codes and bot ids: the schema refuses what the daemon refuses', async (t) => {
  const body = op('POST', '/api/v2/box/{id}').requestBody.content['application/json'].schema;
  t.same(body, { $ref: '#/components/schemas/BoxSectionCode' }, 'a named schema');
  const valid = ajv.compile({ $ref: 'doc#/components/schemas/BoxSectionCode' });
  t.notOk(valid({ section_code: 0 }), 'integer 0 takes no section');
  t.notOk(valid({ section_code: '00000000' }), 'nor does a string of zeros');
  t.ok(valid({ section_code: 255 }) && valid({ section_code: '1'.repeat(16) }) && valid({ section_code: '01' }));
  t.notOk(valid({ section_code: 256 }));
  t.ok(valid({ section_code_32: 65535 }), 'the canonical code as a box shows it');
  t.notOk(valid({}), 'one of the two is needed');
  t.equal((await a.admin.request('/api/v2/box/C1', { method: 'POST', json: { section_code: 0 } })).status, 422);

  const bots = param('DELETE', '/api/v2/bot', 'bot_idxs');
  const re = new RegExp(bots.items.pattern, 'u');
  t.notOk(re.test('0'), 'bot ids start at 1');
  t.ok(re.test('*') && re.test('7'));
});

t.test('the support payload string says which JSON it holds', async (t) => {
  const form = op('POST', '/api/v2/support/create_issue').requestBody.content['multipart/form-data'].schema;
  t.match(form.properties.payload, { type: 'string', contentMediaType: 'application/json', contentSchema: { type: 'object', required: Array } });
  t.ok(form.properties.payload.contentSchema.required.includes('title'), 'the route refuses a payload without title; the document says so');
});
