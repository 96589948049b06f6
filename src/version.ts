/** Build identity, shown in the OpenAPI document, the logs and diagnostics. */
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION = pkg.version;

export const API_INFO = {
  title: 'Warehouse controller API',
  version: `2 (controller ${VERSION})`,
  description: [
    'REST/JSON API v2 of the warehouse controller. Every endpoint takes `Authorization: Bearer <API key or access token>`.',
    'List endpoints share one filter, search, sort and paging language (see docs/listing.md).',
    'Validation failures answer 422 with `detail[]` (`loc`, `msg`, `type`); other errors answer `{detail, code, request_id}`.',
  ].join('\n\n'),
};
