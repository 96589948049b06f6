/**
 * What the pipeline tells of each answered request, for /metrics: the route it matched (its
 * template, never the raw path), the method, the status and the time it took. Called once per
 * request: an implementation keeps it free of allocation.
 */
import type { AnyRoute } from './route.js';

export interface RequestMeter {
  /** Books one answered request; `route` is undefined when no route matched. */
  record(route: AnyRoute | undefined, method: string, status: number, ms: number): void;
}
