// The filters of every list endpoint are those the spec lists, read from the spec's
// own text and compared with the served OpenAPI document, which the same field tables build
// as the validation: a filter added, dropped or misspelt on either side fails here.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestApp } from '../helpers/app.js';

/** The spec, kept in the repository so that CI reads it; the shared original when this checkout has it beside. */
const SPEC = path.join(import.meta.dirname, '../../spec/api-v2.md');
const SHARED = path.join(import.meta.dirname, '../../../shared/spec/api-v2.md');
/** Filters we offer beyond the spec, each said so in its description. */
const BEYOND_SPEC: Record<string, string[]> = { '/api/v2/events': ['id__gte', 'id__lte'] };

/** The spec's text about each list endpoint's query parameters. */
function specBlocks(lines: string[]): Record<string, string> {
  const blocks: Record<string, string> = {};
  for (const line of lines) {
    const m = /^\| GET \| (\/api\/v2\/[a-z_/]+) \|(.*)$/.exec(line);
    if (m && m[2]!.includes('__')) blocks[m[1]!] = m[2]!;
  }
  const section = (start: string, end: string) => {
    const a = lines.findIndex((l) => l.startsWith(start));
    const b = lines.findIndex((l, i) => i > a && l.startsWith(end));
    return lines.slice(a, b).join('\n');
  };
  blocks['/api/v2/inventory_view'] = section('### 4.6', '### 4.7');
  blocks['/api/v2/events'] = section('### 4.7', '### 4.8');
  blocks['/api/v2/skus'] = section('Query parameters of GET /api/v2/skus', '### 4.13');
  return blocks;
}

t.test('the kept spec is the shared one', { skip: existsSync(SHARED) ? false : 'no shared spec beside this checkout' }, async (t) => {
  t.ok(readFileSync(SPEC).equals(readFileSync(SHARED)), 'spec/api-v2.md differs from ../shared/spec/api-v2.md: copy the new one in');
});

t.test('each list endpoint takes exactly the filters the spec lists', async (t) => {
  const blocks = specBlocks(readFileSync(SPEC, 'utf8').split('\n'));
  t.ok(Object.keys(blocks).length >= 7, 'the spec\'s list endpoints were found');
  const a = await startTestApp();
  t.teardown(() => a.close());
  const doc = (await a.client.request('/api/openapi.json')).json;
  for (const [endpoint, text] of Object.entries(blocks)) {
    const spec = [...new Set([...text.matchAll(/\b([a-z0-9_]+__(?:eq|gte|lte|ilike|in))\b/g)].map((m) => m[1]!))].sort();
    const served = ((doc.paths[endpoint]?.get?.parameters ?? []) as { name: string }[]).map((p) => p.name).filter((n) => n.includes('__'));
    const extra = BEYOND_SPEC[endpoint] ?? [];
    t.same(served.filter((n) => !extra.includes(n)).sort(), spec, endpoint);
    for (const name of extra) {
      const param = (doc.paths[endpoint].get.parameters as { name: string; description?: string }[]).find((p) => p.name === name);
      t.ok(param, `${endpoint} ${name} is served`);
    }
  }
});
