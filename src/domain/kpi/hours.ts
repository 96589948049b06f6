/** Whole UTC hours: the unit every KPI is kept in, and intervals split over them. */

export const HOUR_MS = 3_600_000;

/** The start of the UTC hour `ms` falls in. */
export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/** `ms` rounded up to a whole UTC hour (itself when it is one). */
export function hourCeil(ms: number): number {
  return Math.ceil(ms / HOUR_MS) * HOUR_MS;
}

/** The starts of the hours from `from` (a whole hour) up to `to` (excluded). */
export function hoursOf(from: number, to: number): number[] {
  const out: number[] = [];
  for (let h = hourOf(from); h < to; h += HOUR_MS) out.push(h);
  return out;
}

/** The part of the interval [from, to) in each hour it touches, in ms; an empty or backward interval has none. */
export function splitByHour(from: number, to: number): { hour: number; ms: number }[] {
  const out: { hour: number; ms: number }[] = [];
  for (let at = from; at < to;) {
    const hour = hourOf(at);
    const end = Math.min(to, hour + HOUR_MS);
    out.push({ hour, ms: end - at });
    at = end;
  }
  return out;
}

/** The ms of hour `hour` that KPIs were kept in: from `began` up to `now`. */
export function elapsedIn(hour: number, began: number, now: number): number {
  return Math.max(0, Math.min(hour + HOUR_MS, now) - Math.max(hour, began));
}
