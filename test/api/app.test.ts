// The assembled app: health, OpenAPI document (checked by a real validator), documentation UI, TLS.
import t from 'tap';
import { statSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp } from '../helpers/app.js';

t.test('app', async (t) => {
  const a = await startTestApp();
  t.teardown(() => a.close());
  const c = a.client;

  t.test('health answers OK', async (t) => {
    const r = await c.get('/api/v2/health');
    t.equal(r.status, 200);
    t.equal(r.text, 'OK');
  });

  t.test('the OpenAPI document is valid OpenAPI 3.1 and lists the routes', async (t) => {
    const r = await c.get('/api/openapi.json');
    t.equal(r.status, 200);
    const doc = r.json;
    t.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc);
    t.same(result.errors ?? [], [], 'no validation errors');
    t.equal(result.valid, true);
    t.ok(doc.paths['/api/v2/health'].get, 'health documented');
    t.notOk(doc.paths['/api/static/{file}'], 'hidden routes are left out');
    t.same(doc.paths['/api/v2/health'].get.security, [], 'public routes say so');
  });

  t.test('the documentation page and its files are served locally', async (t) => {
    const page = await c.get('/api');
    t.equal(page.status, 200);
    t.match(page.headers['content-type'], /text\/html/);
    t.match(page.text, /swagger-ui-bundle\.js/);
    for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'init.js']) {
      const r = await c.get(`/api/static/${file}`);
      t.equal(r.status, 200, file);
      t.ok(r.text.length > 10, `${file} has content`);
    }
    t.equal((await c.get('/api/static/..%2Fpackage.json')).status, 404, 'no path traversal');
    t.equal((await c.get('/api/static/index.html')).status, 404, 'only listed files');
  });

  t.test('the self-signed certificate is made once, with a private key only the daemon reads', async (t) => {
    t.ok(a.app.tls.selfSigned);
    t.match(a.app.tls.fingerprint256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    t.equal(statSync(a.app.tls.keyFile).mode & 0o777, 0o600);
    t.ok(a.lines.some((l) => l.msg === 'TLS certificate' && l.sha256 === a.app.tls.fingerprint256), 'fingerprint logged');
  });
});
