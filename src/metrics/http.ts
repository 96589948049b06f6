/**
 * Requests by route template, method and status class, and their time, counted as the pipeline
 * answers them (RequestMeter). Each route gets its counts the first time it answers, then a
 * request costs a map lookup and a few additions: no allocation on the request path.
 */
import { Buckets, SECONDS_BOUNDS } from '../domain/figures/buckets.js';
import type { RequestMeter } from '../http/request-meter.js';
import type { AnyRoute } from '../http/route.js';
import { histogramSamples, NO_LABELS, ReadFamily, type Sample } from './family.js';

/** The status classes counted apart; 1xx goes with 2xx (none is answered through the pipeline). */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
/** The route label of requests no route matched (404, 405, 501): one series, whatever their paths. */
export const UNMATCHED = 'unmatched';
/** The methods an unmatched request is counted under; any other is `other`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** The index in STATUS_CLASSES of a status. */
export function statusClassIndex(status: number): number {
  return status < 300 ? 0 : status < 400 ? 1 : status < 500 ? 2 : 3;
}

/** The counts of one route (or of unmatched requests of one method). */
interface Slot {
  route: string;
  method: string;
  /** Per status class, created on its first request. */
  times: (Buckets | undefined)[];
  /** Per status class, the labels, made once. */
  labels: { route: string; method: string; status_class: string }[];
}

function newSlot(route: string, method: string): Slot {
  return { route, method, times: [undefined, undefined, undefined, undefined], labels: STATUS_CLASSES.map((status_class) => ({ route, method, status_class })) };
}

export class HttpFigures implements RequestMeter {
  private readonly byRoute = new Map<AnyRoute, Slot>();
  private readonly unmatched = new Map<string, Slot>();
  /** Slots in the order they were made, for a stable exposition. */
  private readonly slots: Slot[] = [];

  record(route: AnyRoute | undefined, method: string, status: number, ms: number): void {
    const slot = route ? (this.byRoute.get(route) ?? this.routeSlot(route)) : (this.unmatched.get(method) ?? this.unmatchedSlot(method));
    const i = statusClassIndex(status);
    (slot.times[i] ?? (slot.times[i] = new Buckets(SECONDS_BOUNDS))).observe(ms / 1000);
  }

  /** Gives each route its counts before its first request, so the families list every route from the start. */
  prepare(routes: Iterable<AnyRoute>): void {
    for (const route of routes) if (!this.byRoute.has(route)) this.routeSlot(route);
  }

  /** The two families: requests (a counter) and their time (a histogram). */
  families(): ReadFamily[] {
    const labelNames = ['route', 'method', 'status_class'];
    return [
      new ReadFamily('warehouse_http_requests_total', 'HTTP requests answered, by route template, method and status class', 'counter', labelNames, (out) => this.each((labels, b) => out.push({ labels: NO_LABELS, sharedLabels: labels, value: b.count }))),
      new ReadFamily('warehouse_http_request_duration_seconds', 'Time from a request\'s arrival to its answer, by route template, method and status class', 'histogram', labelNames,
        (out: Sample[]) => this.each((labels, b) => histogramSamples(out, 'warehouse_http_request_duration_seconds', labels, SECONDS_BOUNDS, b))),
    ];
  }

  private each(fn: (labels: { route: string; method: string; status_class: string }, b: Buckets) => void): void {
    for (const slot of this.slots) {
      for (let i = 0; i < STATUS_CLASSES.length; i++) {
        const b = slot.times[i];
        if (b) fn(slot.labels[i]!, b);
      }
    }
  }

  private routeSlot(route: AnyRoute): Slot {
    // HEAD is answered by the GET route and counted with it.
    const slot = newSlot(route.path, route.method);
    this.byRoute.set(route, slot);
    this.slots.push(slot);
    return slot;
  }

  private unmatchedSlot(method: string): Slot {
    const known = KNOWN_METHODS.has(method) ? method : 'other';
    let slot = this.unmatched.get(known);
    if (!slot) {
      slot = newSlot(UNMATCHED, known);
      this.unmatched.set(known, slot);
      this.slots.push(slot);
    }
    // An unknown method keeps a key of its own only while the set stays small: a flood of made-up methods maps to `other` without growing the map.
    if (known === method || this.unmatched.size < 32) this.unmatched.set(method, slot);
    return slot;
  }
}
