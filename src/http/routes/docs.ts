/**
 * The machine-readable description (`/api/openapi.json`) and the interactive documentation
 * (`/api`), served from the swagger-ui-dist package so they work on a box with no internet.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
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

const CSP = { 'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'", 'cache-control': 'no-cache' };

/** Routes of the documentation; `routes` is read when the document is first asked for. */
export function docsRoutes(routes: () => readonly AnyRoute[], info: ApiInfo): AnyRoute[] {
  let document: string | undefined;
  const files = new Map<string, Buffer>();
  const uiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

  return [
    route({
      method: 'GET', path: '/api/openapi.json', tag: 'documentation', permission: null,
      summary: 'The OpenAPI 3.1 description of this API',
      responses: { 200: { description: 'OpenAPI document', contentType: 'application/json' } },
      handler: () => new Reply((document ??= JSON.stringify(openApiDocument(routes(), info))), 'application/json'),
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
  ];
}
