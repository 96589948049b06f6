// The served OpenAPI document passes the OpenAPI linter (Redocly CLI, rules in redocly.yaml)
// with no error; and the linter does catch an error, offline, so a pass means something.
import t from 'tap';
import { lintOpenApi } from '../../scripts/lint-openapi.js';
import { servedOpenApi } from '../../scripts/served-openapi.js';

t.test('the served document has no lint error', async (t) => {
  const doc = await servedOpenApi();
  const { status, output } = lintOpenApi(doc);
  t.equal(status, 0, output);
  t.notMatch(output, /\berror\b/, 'no error lines');

  // An operation with two responses of one status cannot be written in JSON; a path
  // parameter that the path does not name can: the linter must refuse it.
  const broken = structuredClone(doc);
  broken.paths['/api/v2/health'].get.parameters = [{ name: 'nowhere', in: 'path', required: true, schema: { type: 'string' } }];
  const bad = lintOpenApi(broken);
  t.not(bad.status, 0, 'a broken document fails the lint');
  t.match(bad.output, /error/);
});
