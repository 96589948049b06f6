// The generated OpenAPI document for routes using every framework feature passes a real validator;
// the daemon's own document explains the live event stream, which OpenAPI cannot describe.
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiDocument } from '../../src/http/openapi.js';
import { routes } from '../fixtures/routes.js';
import { startTestApp } from '../helpers/app.js';
import { CLOSE_TOO_SLOW } from '../../src/domain/events/subscription.js';
import { CLOSE_CREDENTIAL_INVALID, CLOSE_PERMISSION_REVOKED } from '../../src/http/routes/events.js';

t.test('document of the test routes', async (t) => {
  const doc = openApiDocument(routes, { title: 't', version: '1', description: 'd' }) as any;
  const result = await new Validator().validate(doc);
  t.same(result.errors ?? [], []);
  t.equal(result.valid, true);

  const list = doc.paths['/api/v2/things'].get;
  t.equal(list['x-permission'], 'things:view');
  const tagIn = list.parameters.find((p: any) => p.name === 'tag__in');
  t.match(tagIn, { in: 'query', style: 'form', explode: true, schema: { type: 'array' } });
  t.ok(list.responses['401'] && list.responses['403'] && list.responses['422'], 'auth and validation answers documented');

  const create = doc.paths['/api/v2/things'].post;
  t.ok(create.requestBody.content['application/json'].schema.properties.name);
  t.ok(create.responses['201'], 'declared success status');
  t.ok(create.responses['413'] && create.responses['415'] && create.responses['400']);

  const one = doc.paths['/api/v2/things/{thing_id}'].get;
  t.match(one.parameters[0], { name: 'thing_id', in: 'path', required: true, schema: { type: 'integer' } });

  const upload = doc.paths['/api/v2/upload'].post.requestBody.content['multipart/form-data'].schema;
  t.equal(upload.properties.files.items.format, 'binary');
  t.equal(doc.components.schemas.HTTPValidationError.properties.detail.type, 'array');
  t.equal(new Set(Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((o: any) => o.operationId))).size,
    Object.values(doc.paths).flatMap((p: any) => Object.values(p)).length, 'operation ids are unique');
});

t.test("the daemon's document describes the live event stream", async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.close());
  const r = await a.client.request('/api/openapi.json');
  t.equal(r.status, 200);
  const description: string = r.json.info.description;
  t.match(description, /wss:\/\/<box>\/api\/v2\/events\/stream/);
  t.match(description, /\?after=<last id seen>/);
  for (const code of [CLOSE_TOO_SLOW, CLOSE_CREDENTIAL_INVALID, CLOSE_PERMISSION_REVOKED]) t.match(description, String(code), `close code ${code}`);
  t.ok(r.json.paths['/api/v2/events/stream'].get, 'and the upgrade endpoint itself');
});

t.test('no two paths differ only by parameter names (OpenAPI 3.1): POST /box/{carrier_id} and /box/{box_id} share /box/{id}', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.close());
  const paths = Object.keys((await a.client.request('/api/openapi.json')).json.paths as Record<string, unknown>);
  const shapes = paths.map((p) => p.replace(/\{\w+\}/g, '{}'));
  t.same(shapes.filter((s, i) => shapes.indexOf(s) !== i), [], 'one template per shape');
  const box = (await a.client.request('/api/openapi.json')).json.paths['/api/v2/box/{id}'];
  t.same(Object.keys(box).sort(), ['delete', 'patch', 'post']);
  const param = (method: string) => box[method].parameters.find((p: { in: string }) => p.in === 'path');
  t.equal(param('post').name, 'id', 'no operation\'s parameter is named for what another takes');
  t.match(param('post').description, /The carrier that gets the new box \(the spec's `carrier_id`: the carrier id\)/);
  t.match(param('patch').description, /the spec's `box_id`: the box id/);
  t.match(param('delete').description, /the spec's `box_id`: the box id/);
});
