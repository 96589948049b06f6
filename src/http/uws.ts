/** uWebSockets.js is CommonJS with computed exports: ESM code imports it through here. */
import uws from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, us_socket_context_t, MultipartField, WebSocket } from 'uWebSockets.js';
export const { SSLApp, getParts, us_listen_socket_close, us_socket_local_port } = uws;

// uWS writes `uWebSockets: 20` into every answer unless its loop is "silent" (the only switch
// this build has: no option of SSLApp, no environment variable). It names the server and its
// major version to anyone scanning for known weaknesses.
// The switch is not in the package's types.
(uws as unknown as { _cfg(flag: string): void })._cfg('silent');
