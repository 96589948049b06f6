/**
 * The machine-readable description (`/api/openapi.json`) and the interactive documentation
 * (`/api`), served from the swagger-ui-dist package so they work on a box with no internet,
 * and the Markdown files of docs/ that the description refers to (`/api/docs/…`).
 */
import { readdirSync, readFileSync, type Dirent } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Type from 'typebox';
import { openApiDocument, type ApiInfo } from '../openapi.js';
import { Reply, route, type AnyRoute } from '../route.js';
import { NotFoundError } from '../../domain/errors.js';

const UI_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Warehouse controller API</title>
<link rel="stylesheet" href="/api/static/swagger-ui.css"><link rel="icon" href="/api/static/favicon-32x32.png"></head>
<body><div id="ui"></div>
<script src="/api/static/swagger-ui-bundle.js"></script>
<script src="/api/static/swagger-ui-standalone-preset.js"></script>
<script src="/api/static/init.js"></script>
</body></html>`;

// Kept in a file of its own: the page must work under a Content-Security-Policy without inline scripts.
const INIT = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout', persistAuthorization: true });`;

// Three levels up from src/http/routes/ and from dist/http/routes/ alike: the checkout under tsx,
// and the checkout or the release tree (scripts/release.sh copies docs/*.md) once built.
const DOCS_DIR = fileURLToPath(new URL('../../../docs/', import.meta.url));
const DOC_NAME = /^[A-Za-z0-9._-]+\.md$/;
const MARKDOWN = 'text/markdown; charset=utf-8';

/**
 * The Markdown files of `dir` by name, each with its path. Only what is listed here is ever
 * read, so a request's name is a key to look up, never a path to resolve. Symbolic links are
 * left out: they could lead out of the folder.
 */
function listDocs(dir: string): ReadonlyMap<string, string> {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    // The documentation is a convenience: a tree without it still runs the warehouse.
    return new Map();
  }
  const names = entries.filter((e) => e.isFile() && DOC_NAME.test(e.name)).map((e) => e.name).sort();
  return new Map(names.map((name) => [name, path.join(dir, name)]));
}

// An existing link or code span is matched first and kept (a link inside either would break
// it); a mention counts only where it starts a path, not inside a URL or another path.
const MENTION = /\[[^\]\n]*\]\([^)\n]*\)|`[^`\n]*`|(?<![\w/.-])docs\/([A-Za-z0-9._-]+\.md)(#[\w-]+)?(?![\w-])/g;
const CODE_MENTION = /^`docs\/([A-Za-z0-9._-]+\.md)(#[\w-]+)?`$/;

/** `text` with each mention `docs/NAME.md[#anchor]` of a file in `known` made a Markdown link to `/api/docs/NAME.md`. */
export function linkDocMentions(text: string, known: ReadonlySet<string> | ReadonlyMap<string, unknown>): string {
  return text.replace(MENTION, (whole: string, name: string | undefined, anchor: string | undefined) => {
    if (whole.startsWith('`')) {
      const code = CODE_MENTION.exec(whole);
      return code && known.has(code[1]!) ? `[${whole}](/api/docs/${code[1]!}${code[2] ?? ''})` : whole;
    }
    if (name === undefined || !known.has(name)) return whole;
    return `[${whole}](/api/docs/${name}${anchor ?? ''})`;
  });
}

// Values, not prose: an example or a default is data a client may compare or send back.
const DATA_KEYS = new Set(['example', 'value', 'default', 'const', 'enum']);
// Maps whose keys are names a document chose (a property called `default`), not keywords.
const NAMED_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'schemas', 'examples']);

/**
 * A copy of the document (the original shares objects with the route table) whose CommonMark
 * fields link the files they mention. A summary is plain text (Swagger UI shows it inside a
 * button), so what it mentions is linked from the description beside it instead.
 */
function linkDocument(value: unknown, known: ReadonlyMap<string, string>, named = false): unknown {
  if (Array.isArray(value)) return value.map((v) => linkDocument(v, known));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (named) out[key] = linkDocument(v, known);
    else if (DATA_KEYS.has(key) || (key === 'examples' && Array.isArray(v))) out[key] = v;
    else if (key === 'description' && typeof v === 'string') out[key] = linkDocMentions(v, known);
    else out[key] = linkDocument(v, known, NAMED_MAPS.has(key));
  }
  const summary = (value as Record<string, unknown>).summary;
  if (!named && typeof summary === 'string') {
    const description = typeof out.description === 'string' ? out.description : '';
    const missing = [...new Set([...summary.matchAll(MENTION)].flatMap((m) => (m[1] !== undefined && known.has(m[1]) ? [m[1] + (m[2] ?? '')] : [])))]
      .filter((mention) => !description.includes(`](/api/docs/${mention})`));
    if (missing.length > 0) {
      const links = missing.map((mention) => `[docs/${mention}](/api/docs/${mention})`).join(', ');
      out.description = description === '' ? `See ${links}.` : `${description}\n\nSee ${links}.`;
    }
  }
  return out;
}

/** The index of the served documentation, as Markdown. */
function docsIndex(known: ReadonlyMap<string, string>): string {
  const lines = [...known.keys()].map((name) => `- [${name}](/api/docs/${name})`);
  return `# Warehouse controller documentation\n\nThe files of docs/ this controller serves; the API itself is described at [/api](/api).\n\n${lines.join('\n')}\n`;
}

const CSP = { 'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'", 'cache-control': 'no-cache' };

/** A Host header that is an address (name or IP, optional port): anything else is not written into the document. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** Documents kept by the address they were asked at; a box is reached by a few names. */
const KEPT_HOSTS = 8;

/**
 * The document for a client that reached the box as `host`: its server is that address, so a
 * client generated from it has a base URL that works (a relative `/` leaves it none).
 */
function forHost(document: Record<string, unknown>, host: string | undefined): Record<string, unknown> {
  if (host === undefined || !HOST.test(host)) return document;
  return { ...document, servers: [{ url: `https://${host}`, description: 'This controller, at the address this document was read from' }] };
}

/** Routes of the documentation; `routes` is read when the document is first asked for. */
export function docsRoutes(routes: () => readonly AnyRoute[], info: ApiInfo): AnyRoute[] {
  let document: Record<string, unknown> | undefined;
  const served = new Map<string, string>();
  const files = new Map<string, Buffer>();
  const uiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const docs = listDocs(DOCS_DIR);
  let index: string | undefined;

  return [
    route({
      method: 'GET', path: '/api/openapi.json', tag: 'documentation', permission: null,
      summary: 'The OpenAPI 3.1 description of this API',
      responses: { 200: { description: 'OpenAPI document', contentType: 'application/json' } },
      handler: ({ headers }) => {
        document ??= linkDocument(openApiDocument(routes(), info), docs) as Record<string, unknown>;
        const host = headers.host ?? '';
        let json = served.get(host);
        if (json === undefined) {
          json = JSON.stringify(forHost(document, headers.host));
          if (served.size >= KEPT_HOSTS) served.delete(served.keys().next().value!);
          served.set(host, json);
        }
        return new Reply(json, 'application/json');
      },
    }),
    route({
      method: 'GET', path: '/api', tag: 'documentation', permission: null,
      summary: 'Interactive API documentation',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: () => new Reply(PAGE, 'text/html; charset=utf-8', 200, CSP),
    }),
    route({
      method: 'GET', path: '/api/static/{file}', tag: 'documentation', permission: null, hidden: true,
      summary: 'Files of the documentation page',
      params: Type.Object({ file: Type.String() }),
      responses: { 200: { description: 'file', contentType: 'application/octet-stream' } },
      handler: ({ params }) => {
        if (params.file === 'init.js') return new Reply(INIT, 'text/javascript; charset=utf-8');
        const type = UI_FILES[params.file];
        if (!type) throw new NotFoundError(`No documentation file ${params.file}`);
        let data = files.get(params.file);
        if (!data) files.set(params.file, (data = readFileSync(path.join(uiDir, params.file))));
        return new Reply(data, type, 200, { 'cache-control': 'public, max-age=86400' });
      },
    }),
    route({
      method: 'GET', path: '/api/docs', tag: 'documentation', permission: null, hidden: true,
      summary: 'The documentation files served under /api/docs/',
      responses: { 200: { description: 'Markdown list of links', contentType: MARKDOWN } },
      handler: () => new Reply((index ??= docsIndex(docs)), MARKDOWN, 200, { 'cache-control': 'no-cache' }),
    }),
    route({
      method: 'GET', path: '/api/docs/{file}', tag: 'documentation', permission: null, hidden: true,
      summary: 'A Markdown file of docs/, as the document links it',
      params: Type.Object({ file: Type.String() }),
      responses: { 200: { description: 'Markdown', contentType: MARKDOWN } },
      handler: async ({ params }) => {
        const missing = () => new NotFoundError(`No documentation file ${JSON.stringify(params.file)}; /api/docs lists them`);
        const file = docs.get(params.file);
        if (file === undefined) throw missing();
        let data: Buffer;
        try {
          data = await readFile(file);
        } catch {
          // Removed or made unreadable since the start: gone, as far as a reader can tell.
          throw missing();
        }
        // Read afresh each time: an edited file is what the next reader sees.
        return new Reply(data, MARKDOWN, 200, { 'cache-control': 'no-cache' });
      },
    }),
  ];
}
