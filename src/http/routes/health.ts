/** `GET /api/v2/health`: answers `OK` while the API runs (public, for probes and monitors). */
import { Reply, route, type AnyRoute } from '../route.js';

export const healthRoute: AnyRoute = route({
  method: 'GET', path: '/api/v2/health', tag: 'system', permission: null,
  summary: 'Liveness: OK while the API is running',
  description: 'Plain text `OK`. Public on purpose (see docs/decisions.md): probes and monitors hold no credentials.',
  responses: { 200: { description: 'The API is running', contentType: 'text/plain' } },
  handler: () => new Reply('OK', 'text/plain; charset=utf-8'),
});
