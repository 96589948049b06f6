// Every write body is an allow-list ("mass assignment"): for each POST, PUT and PATCH
// route with a JSON body, each field its answer shows that its body does not take (ids,
// totals, counters, timestamps: read-only or computed) is refused with 422, naming the field,
// and nothing is written. A body that is a union of kinds (POST /requests) must be strict in
// every kind.
import t from 'tap';
import type { TSchema } from 'typebox';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { isMultipart } from '../../src/http/route.js';
import { skus } from '../../src/domain/inventory/records.js';

let a: AdminApp;
t.before(async () => {
  a = await startAdminApp();
});
t.teardown(() => a.close());

type Obj = { type?: string; properties?: Record<string, TSchema>; additionalProperties?: unknown; anyOf?: Obj[]; oneOf?: Obj[] };

/** The object schemas a body may be: itself, or each member of a union. */
function kinds(schema: Obj): Obj[] {
  return schema.anyOf ?? schema.oneOf ?? [schema];
}

t.test('read-only and computed fields are refused on every write', async (t) => {
  const writes = a.app.server.router.routes.filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method) && r.body !== undefined && !isMultipart(r.body));
  t.ok(writes.length >= 20, `${writes.length} write routes with a JSON body`);
  let tried = 0;
  for (const r of writes) {
    const body = r.body as Obj;
    for (const kind of kinds(body)) {
      if (kind.type === 'object' && kind.properties) t.equal(kind.additionalProperties, false, `${r.method} ${r.path}: ${kind.properties['type'] ? JSON.stringify((kind.properties['type'] as { const?: string }).const) : 'body'} takes no field it does not name`);
    }
    const taken = new Set(kinds(body).flatMap((k) => Object.keys(k.properties ?? {})));
    const answer = (r.responses[201] ?? r.responses[200]) as Obj | undefined;
    const shown = Object.keys(answer?.properties ?? {}).filter((f) => !taken.has(f));
    const url = r.path.replace(/\{\w+\}/g, '999999');
    for (const field of shown) {
      const res = await a.admin.request(url, { method: r.method, json: { [field]: 1 } });
      tried++;
      t.equal(res.status, 422, `${r.method} ${r.path} refuses ${field}`);
      t.ok(res.json?.detail?.some?.((d: { loc: unknown[]; type: string }) => d.loc.at(-1) === field && d.type === 'extra_forbidden'), `${r.method} ${r.path}: the answer names ${field}`);
    }
  }
  t.ok(tried > 40, `${tried} read-only fields tried`);
});

t.test('PATCH /sku/{id} cannot set an SKU\'s id, totals or counters', async (t) => {
  const before = a.app.store.collection(skus).get('SKU-00001')!;
  for (const field of ['id', 'total_quantity', 'load_count', 'max_quantity', 'fulfillable', 'created_at', 'deleted_at']) {
    const r = await a.admin.request('/api/v2/sku/SKU-00001', { method: 'PATCH', json: { name: 'renamed', [field]: field === 'id' ? 'SKU-XXXX' : 0 } });
    t.equal(r.status, 422, field);
  }
  t.same(a.app.store.collection(skus).get('SKU-00001'), before, 'nothing changed');
});
