/** `GET /metrics` (beyond the spec): the controller's figures in the Prometheus text format, for the site's monitoring (docs/monitoring.md). */
import { Reply, route, type AnyRoute } from '../route.js';

/** What the route needs of the metrics: the exposition and its content type. */
export interface MetricsExposition {
  readonly contentType: string;
  exposition(): Promise<string>;
}

/** The metrics route. */
export function metricsRoutes(metrics: MetricsExposition): AnyRoute[] {
  return [
    route({
      method: 'GET', path: '/metrics', tag: 'System', permission: 'metrics:view',
      summary: 'The controller\'s figures in the Prometheus text format 0.0.4 (beyond the spec; docs/monitoring.md)',
      description: 'Process, HTTP, store, brain, planner, radio line and bot families. Scraped by Prometheus with an API key that holds `metrics:view` (docs/security.md).',
      responses: { 200: { description: 'The text exposition (Prometheus text format 0.0.4; the header says `text/plain; version=0.0.4; charset=utf-8`)', contentType: 'text/plain' } },
      handler: async () => new Reply(await metrics.exposition(), metrics.contentType),
    }),
  ];
}
