// Where the daemon and the spec disagreed, tried against the real app the way an
// integrator found each one.
import t from 'tap';
import { startAdminApp, type AdminApp } from '../helpers/app.js';

let a: AdminApp;
t.before(async () => {
  a = await startAdminApp();
});
t.teardown(() => a.close());

t.test('a filter typo is a 422 naming the parameter on every list endpoint, not the unfiltered list', async (t) => {
  for (const path of ['/api/v2/jobs?stauts__eq=EXECUTING', '/api/v2/requests?status__like=A', '/api/v2/skus?nmae__ilike=bolt', '/api/v2/events?severity__gt=10', '/api/v2/inventory_view?sku__eq=x']) {
    const r = await a.admin.get(path);
    t.equal(r.status, 422, path);
    t.same(r.json.detail[0].loc, ['query', path.slice(path.indexOf('?') + 1).split('=')[0]], `${path}: the parameter named`);
  }
});

t.test('a body whose every field has a default may be left out: the defaults apply', async (t) => {
  const charge = await a.admin.request('/api/v2/system/charge_all_bots', { method: 'POST' });
  t.equal(charge.status, 200, 'charge_all_bots without a body');
  const trigger = await a.admin.request('/api/v2/trigger/no-such-job', { method: 'POST' });
  t.equal(trigger.status, 404, 'trigger without a body gets to the job (unknown here), not a 422');
  const required = await a.admin.request('/api/v2/sku', { method: 'POST' });
  t.equal(required.status, 422, 'a body with a required field still must be sent');
});

t.test('POST /requests explains a refusal in the words of the kind `type` names', async (t) => {
  const fetch = await a.admin.post('/api/v2/requests', { type: 'FETCH' });
  t.equal(fetch.status, 422);
  t.ok(fetch.json.detail.length > 0 && fetch.json.detail.every((d: { loc: unknown[] }) => d.loc[0] === 'body'));
  t.notOk(JSON.stringify(fetch.json).includes('FULFILLMENT'), 'nothing about the other eleven kinds');
  const none = await a.admin.post('/api/v2/requests', { priority: 10 });
  t.same(none.json.detail, [{ loc: ['body', 'type'], msg: 'Field required', type: 'missing' }], 'no type: type alone');
  const unknown = await a.admin.post('/api/v2/requests', { type: 'TELEPORT' });
  t.same(unknown.json.detail.map((d: { loc: unknown[] }) => d.loc), [['body', 'type']], 'an unknown type: type alone');
  t.match(unknown.json.detail[0].msg, /"FETCH"/);
});

t.test('priority is a number, as the spec says; the request shows it as an integer', async (t) => {
  const sku = (await a.admin.get('/api/v2/skus?size=1')).json.items[0].id as string;
  const r = await a.admin.post('/api/v2/requests', { type: 'FULFILLMENT', priority: 10.6, entities: [{ sku_id: sku, quantity: 1 }] });
  t.equal(r.status, 201, JSON.stringify(r.json));
  t.equal(r.json.priority, 11);
});
