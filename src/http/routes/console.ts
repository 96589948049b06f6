/**
 * The browser console (docs/console.md) under `/console`: the page and its bundle, built from
 * `browser/console/` into `dist/console/` by `npm run build` (so by `npm ci`). The page is public
 * like the API's documentation page: it holds no data, and every API call it makes carries the
 * user's token. Bundle files have their content hash in their names and are cached for a
 * year; the page itself is revalidated on each visit, so a new build is picked up at once.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Type from 'typebox';
import { NotFoundError } from '../../domain/errors.js';
import { HttpError } from '../errors.js';
import { Reply, route, type AnyRoute } from '../route.js';

/** Where `npm run build` puts the console: dist/console under the package root. */
export function consoleDir(): string {
  // src/http/routes (tsx) and dist/http/routes (built) are both three levels under the root.
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'dist', 'console');
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Hashed names never change content: a browser keeps them a year without asking again. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
// No inline script or style: the bundle is all there is. connect-src 'self' covers wss: to the same host.
const PAGE_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy': "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'referrer-policy': 'no-referrer',
};

interface Bundle {
  page: Buffer;
  assets: Map<string, { data: Buffer; type: string }>;
}

/** Reads the built console into memory (a few hundred kilobytes); undefined when it was not built. */
function loadBundle(dir: string): Bundle | undefined {
  const pageFile = path.join(dir, 'index.html');
  if (!existsSync(pageFile)) return undefined;
  const assets = new Map<string, { data: Buffer; type: string }>();
  const assetDir = path.join(dir, 'assets');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { data: readFileSync(path.join(assetDir, name)), type });
  }
  return { page: readFileSync(pageFile), assets };
}

/** GET /console and GET /console/assets/{file}; `dir` is the built console (default dist/console). */
export function consoleRoutes(dir: string = consoleDir()): AnyRoute[] {
  let bundle: Bundle | undefined;
  // Read on first use, and again while missing: a build made after the start is served.
  const current = (): Bundle => {
    bundle ??= loadBundle(dir);
    if (!bundle) throw new HttpError('unavailable', `The console is not built (${dir} is missing): run npm run build`);
    return bundle;
  };
  return [
    route({
      method: 'GET', path: '/console', tag: 'console', permission: null, hidden: true,
      summary: 'The site console in the browser (docs/console.md)',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: () => new Reply(current().page, 'text/html; charset=utf-8', 200, PAGE_HEADERS),
    }),
    route({
      method: 'GET', path: '/console/assets/{file}', tag: 'console', permission: null, hidden: true,
      summary: 'Files of the console (content-hashed names)',
      params: Type.Object({ file: Type.String({ maxLength: 200 }) }),
      responses: { 200: { description: 'file', contentType: 'application/octet-stream' } },
      handler: ({ params }) => {
        const asset = current().assets.get(params.file);
        if (!asset) throw new NotFoundError(`No console file ${params.file}`);
        return new Reply(asset.data, asset.type, 200, { 'cache-control': IMMUTABLE });
      },
    }),
  ];
}
