// The served OpenAPI document sends readers to docs/*.md: on a box with no repository and no
// internet, those references only help when the daemon serves the files and links them.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { linkDocMentions } from '../../src/http/routes/docs.js';

const DOCS = path.resolve(import.meta.dirname, '../../docs');
const MENTION = /(?<![\w/.-])docs\/([A-Za-z0-9._-]+\.md)(?![\w-])/g;
const LINK = /\[[^\]]*\]\(\/api\/docs\/([^)#]+)(#[^)]*)?\)/g;
const MARKDOWN = 'text/markdown; charset=utf-8';

let a: TestApp;
let doc: Record<string, unknown>;
t.before(async () => {
  a = await startTestApp();
  const r = await a.client.request('/api/openapi.json');
  if (r.status !== 200) throw new Error(`GET /api/openapi.json answered ${r.status}`);
  doc = r.json as Record<string, unknown>;
});
t.teardown(() => a?.close());

/** Every string of the document under `key`, with the object holding it. */
function strings(value: unknown, found: { key: string; text: string; holder: Record<string, unknown> }[] = []) {
  if (Array.isArray(value)) for (const v of value) strings(v, found);
  else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'string') found.push({ key, text: v, holder: value as Record<string, unknown> });
      else strings(v, found);
    }
  }
  return found;
}

const bare = (text: string) => [...text.replace(/\[[^\]]*\]\([^)]*\)/g, '').matchAll(MENTION)].map((m) => m[0]);

t.test('no mention of docs/*.md in the document is left without a link to the served file', async (t) => {
  const all = strings(doc);
  t.ok(all.some((s) => s.key === 'description' && [...s.text.matchAll(LINK)].length > 0), 'there are links at all');
  const unlinked: string[] = [];
  for (const s of all) {
    if (s.key === 'description') unlinked.push(...bare(s.text).map((m) => `${m} in "${s.text.slice(0, 80)}"`));
    else if (s.key === 'summary') {
      // A summary is plain text (Swagger UI shows it inside a button): the description beside it links what it names.
      const beside = typeof s.holder.description === 'string' ? s.holder.description : '';
      for (const m of s.text.matchAll(MENTION)) if (!beside.includes(`](/api/docs/${m[1]!})`)) unlinked.push(`${m[0]} in the summary "${s.text.slice(0, 80)}"`);
    } else unlinked.push(...[...s.text.matchAll(MENTION)].map((m) => `${m[0]} in a ${s.key}: "${s.text.slice(0, 80)}"`));
  }
  t.same(unlinked, []);
});

t.test('every link of the document answers with the file itself, as Markdown', async (t) => {
  const names = new Set(strings(doc).flatMap((s) => [...s.text.matchAll(LINK)].map((m) => m[1]!)));
  t.ok(names.size >= 5, `the document links several files (${[...names].join(', ')})`);
  for (const name of names) {
    const r = await a.client.request(`/api/docs/${name}`);
    t.equal(r.status, 200, name);
    t.equal(r.headers['content-type'], MARKDOWN, `${name}: content type`);
    t.equal(r.headers['cache-control'], 'no-cache', `${name}: revalidated, not kept`);
    t.ok(Buffer.from(r.text, 'utf8').equals(readFileSync(path.join(DOCS, name))), `${name}: the file's exact bytes`);
  }
});

t.test('the index lists every Markdown file of docs/', async (t) => {
  const files = readdirSync(DOCS).filter((f) => f.endsWith('.md')).sort();
  for (const at of ['/api/docs', '/api/docs/']) {
    const r = await a.client.request(at);
    t.equal(r.status, 200, at);
    t.equal(r.headers['content-type'], MARKDOWN);
    t.same([...r.text.matchAll(LINK)].map((m) => m[1]), files, `${at} links each file once, in order`);
  }
});

t.test('anything but a listed file name is a 404 in the error shape, never a 500', async (t) => {
  for (const at of [
    '/api/docs/..%2Fpackage.json',
    '/api/docs/..%2F..%2Fpackage.json',
    '/api/docs/%2e%2e%2fREADME.md',
    '/api/docs/..%5CREADME.md',
    '/api/docs/requests.md%00',
    '/api/docs/req%00uests.md',
    '/api/docs/requests%5C.md',
    '/api/docs/nope.md',
    '/api/docs/.env',
    '/api/docs/REQUESTS.md',
    '/api/docs/requests',
    '/api/docs/console',
    '/api/docs/monitoring',
    '/api/docs/monitoring%2Fgrafana-warehouse-controller.json',
    '/api/docs/%E0%A4%A.md',
    '/api/docs/__proto__',
    '/api/docs/constructor',
    '/api/docs/../package.json',
  ]) {
    const r = await a.client.request(at);
    t.equal(r.status, 404, at);
    t.equal(typeof r.json?.detail, 'string', `${at}: the error body`);
  }
});

t.test('mentions become links; links, code and other paths stay as written', async (t) => {
  const known = new Set(['requests.md', 'inventory.md']);
  const cases: [string, string][] = [
    ['see docs/requests.md.', 'see [docs/requests.md](/api/docs/requests.md).'],
    ['(docs/requests.md#abort-codes)', '([docs/requests.md#abort-codes](/api/docs/requests.md#abort-codes))'],
    ['docs/inventory.md, docs/requests.md', '[docs/inventory.md](/api/docs/inventory.md), [docs/requests.md](/api/docs/requests.md)'],
    ['codes in `docs/requests.md`', 'codes in [`docs/requests.md`](/api/docs/requests.md)'],
    ['run `cat docs/requests.md`', 'run `cat docs/requests.md`'],
    ['[the codes](docs/requests.md)', '[the codes](docs/requests.md)'],
    ['[docs/requests.md](/api/docs/requests.md)', '[docs/requests.md](/api/docs/requests.md)'],
    ['https://example.com/docs/requests.md', 'https://example.com/docs/requests.md'],
    ['/api/docs/requests.md', '/api/docs/requests.md'],
    ['mydocs/requests.md', 'mydocs/requests.md'],
    ['docs/requests.mdx', 'docs/requests.mdx'],
    ['docs/missing.md', 'docs/missing.md'],
    ['docs/console/x.md', 'docs/console/x.md'],
  ];
  for (const [text, linked] of cases) t.equal(linkDocMentions(text, known), linked, text);
  t.equal(linkDocMentions(linkDocMentions('see docs/requests.md', known), known), 'see [docs/requests.md](/api/docs/requests.md)', 'linking twice changes nothing');
});

t.test('the document names the address it was read at as its server, so a generated client has a base URL', async (t) => {
  const at = (host?: string) => a.client.request('/api/openapi.json', host === undefined ? {} : { headers: { host } });
  t.same((await at()).json.servers.map((s: { url: string }) => s.url), [`https://127.0.0.1:${a.app.port}`]);
  t.same((await at('warehouse.local:8443')).json.servers.map((s: { url: string }) => s.url), ['https://warehouse.local:8443']);
  t.same((await at('[::1]:8443')).json.servers.map((s: { url: string }) => s.url), ['https://[::1]:8443']);
  for (const hostile of ['evil.example/"><script>', 'a b', 'x:99999999', 'host@other']) {
    const r = await at(hostile);
    t.equal(r.status, 200, `${JSON.stringify(hostile)} answered`);
    t.same(r.json.servers.map((s: { url: string }) => s.url), ['/'], `${JSON.stringify(hostile)} is not written into the document`);
  }
});
