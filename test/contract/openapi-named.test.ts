// The served document names what a generated client needs to name: every resource, page,
// input kind and enum is a component referenced where it occurs, and the request flow (which
// jobs wait for a person, what to send) is in the document, not only in docs/requests.md.
import t from 'tap';
import Type from 'typebox';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestApp } from '../helpers/app.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { route } from '../../src/http/route.js';
import { PERSON_JOBS } from '../../src/domain/requests/vocabulary.js';

let doc: any;
t.before(async () => {
  const a = await startTestApp();
  doc = (await a.client.request('/api/openapi.json')).json;
  await a.close();
});

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (op: any, status: string) => op.responses[status].content['application/json'].schema;

t.test('every reference resolves, and resources, pages, input kinds and enums are named', async (t) => {
  const refs = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) if (k === '$ref' && typeof v === 'string') refs.add(v); else walk(v);
    }
  };
  walk(doc);
  for (const r of refs) t.ok(r.startsWith('#/components/schemas/') && doc.components.schemas[r.split('/').pop()!], `${r} resolves`);
  const names = Object.keys(doc.components.schemas);
  for (const name of ['Request', 'Job', 'JobGraph', 'Sku', 'Box', 'Load', 'InventoryRow', 'Bot', 'Event', 'User', 'Role', 'ApiKey', 'Setting', 'Level', 'Balcony',
    'Page_Request_', 'Page_Job_', 'Page_Sku_', 'Page_InventoryRow_', 'Page_Event_',
    'RequestType', 'RequestStatus', 'JobType', 'JobStatus', 'TriggerStatus', 'WaitingFor', 'MeasurementUnit', 'OnEmptySkuAction',
    'RequestInput', 'Trigger', 'RequestCreated', 'BoxSectionCode', 'SectionCode', 'SectionCode32']) {
    t.ok(names.includes(name), `${name} is a component`);
  }
  t.ok(refs.size >= names.length - 2, 'and the components are used');
});

t.test('lists and their filters reference the named shapes', async (t) => {
  const jobs = doc.paths['/api/v2/jobs'].get;
  t.same(json(jobs, '200'), ref('Page_Job_'));
  t.same(doc.components.schemas.Page_Job_.properties.items.items, ref('Job'));
  const param = (name: string) => jobs.parameters.find((p: any) => p.name === name).schema;
  t.same(param('status__eq').allOf, [ref('JobStatus')], 'an enum filter is typed as its field');
  t.same(param('status__in').items, ref('JobStatus'));
  t.same(param('type__in').items, ref('JobType'));
  t.same(doc.components.schemas.Job.properties.status, ref('JobStatus'));
  t.same(doc.components.schemas.JobDetails.properties.waiting_for, ref('WaitingFor'));
  t.ok(doc.components.schemas.WaitingFor.enum.includes('trigger'));
  t.match(doc.components.schemas.WaitingFor.description, /PACKING follows each PICKING and waits for its own trigger/);
});

t.test('POST /requests: one named kind per input, an example each, the flow of each, the 201 per kind', async (t) => {
  const op = doc.paths['/api/v2/requests'].post;
  const media = op.requestBody.content['application/json'];
  t.same(media.schema, ref('RequestInput'));
  const input = doc.components.schemas.RequestInput;
  t.equal(input.anyOf.length, 12);
  t.equal(Object.keys(input.discriminator.mapping).length, 12);
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ ...doc, $id: 'doc' });
  for (const [type, target] of Object.entries<string>(input.discriminator.mapping)) {
    const name = target.split('/').pop()!;
    const kind = doc.components.schemas[name];
    t.equal(kind.properties.type.const, type, `${type} maps to its own schema`);
    const example = media.examples[name];
    t.ok(example, `${type} has an example`);
    t.ok(ajv.validate({ $ref: `doc#/components/schemas/${name}` }, example.value), `${type}'s example is valid`);
    t.ok(Array.isArray(kind['x-person-jobs']) && kind['x-person-jobs'].every((j: string) => PERSON_JOBS.has(j as never)), `${type} says which jobs wait for a person`);
    t.ok(doc.components.schemas.RequestType.enum.includes(kind['x-request-type']), `${type} says the request type it reads back as`);
    t.match(kind.description, /Jobs: /);
  }
  t.same(doc.components.schemas.FulfillmentInput['x-person-jobs'], ['PICKING', 'PICKING_ALERT', 'PACKING'], 'a fulfillment\'s PACKING waits for a person too');
  t.equal(doc.components.schemas.PutawayInput['x-request-type'], 'REPLENISHMENT');
  t.same(json(op, '201'), ref('RequestCreated'));
  t.match(doc.components.schemas.RequestCreated.properties.placements.description, /PUTAWAY.*Every other kind: empty/);
  t.match(op.description, /PUTAWAY: REPLENISHMENT/);
  t.same(doc.components.schemas.Request.properties.input_type, ref('InputType'));
  t.ok(doc.components.schemas.InputType.enum.includes('PUTAWAY'), 'what was posted comes back beside the spec\'s type');
});

t.test('two different schemas under one name refuse to make a document', async (t) => {
  const make = (body: ReturnType<typeof Type.Object>) => route({
    method: 'POST', path: `/api/v2/x${Math.random()}`, tag: 't', permission: null, summary: 's', body, responses: { 200: Type.Object({}) }, handler: () => ({}),
  });
  const info = { title: 't', version: '1', description: 'd' };
  t.doesNotThrow(() => openApiDocument([make(Type.Object({ a: Type.String() }, { $id: 'X' })), make(Type.Object({ a: Type.String() }, { $id: 'X' }))], info), 'the same shape twice is one component');
  t.throws(() => openApiDocument([make(Type.Object({ a: Type.String() }, { $id: 'X' })), make(Type.Object({ b: Type.String() }, { $id: 'X' }))], info), /Two different schemas are named X/);
});
