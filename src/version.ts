/** Build identity, shown in the OpenAPI document, the logs and diagnostics. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION = pkg.version;

/**
 * What `--version` prints: this build, the Node.js it runs on and the uWS.js build it serves
 * HTTP with (the package and the binary its loader picks for this runtime), read without
 * loading the server.
 */
export function buildIdentity(): string {
  const { platform, arch } = process;
  const abi = process.versions.modules;
  let uws: string;
  try {
    const p = createRequire(import.meta.url)('uWebSockets.js/package.json') as { name: string; version: string };
    uws = `${p.name}@${p.version} (uws_${platform}_${arch}_${abi}.node)`;
  } catch {
    uws = 'not installed';
  }
  return `warehouse-controller ${VERSION}\nNode.js ${process.version} (ABI ${abi}, ${platform}-${arch})\nuWebSockets.js: ${uws}\n`;
}

export const API_INFO = {
  title: 'Warehouse controller API',
  version: `2 (controller ${VERSION})`,
  description: [
    'REST/JSON API v2 of the warehouse controller. Every endpoint takes `Authorization: Bearer <API key or access token>`.',
    'List endpoints share one filter, search, sort and paging language (see docs/listing.md).',
    'Validation failures answer 422 with `detail[]` (`loc`, `msg`, `type`); other errors answer `{detail, code, request_id}`.',
    // OpenAPI cannot describe a WebSocket's messages: the stream is explained here and in docs/events.md.
    'Live events (beyond the spec): `wss://<box>/api/v2/events/stream` is a WebSocket that pushes each new event as it commits. '
      + 'It needs `events:view` and takes the filters and `search` of `GET /api/v2/events`; browsers may pass `?access_token=`. '
      + 'Messages are JSON text: `{"type":"ready","after","last_id","oldest_retained_id"}` first, then `{"type":"event","event":{...}}` in id order. '
      + 'Reconnect with `?after=<last id seen>` to get every retained event missed, then the live feed, with no gap and no duplicate. '
      + 'Close codes: 4008 the client fell more than 1 MiB behind (reconnect with `?after=`); 4401 the credential no longer authenticates '
      + '(deleted key, expired or revoked token); 4403 it no longer holds `events:view`; 1001 the controller is stopping.',
  ].join('\n\n'),
};
