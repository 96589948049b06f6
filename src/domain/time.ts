/**
 * Timestamps of the API. Records keep instants as epoch milliseconds; answers carry a legacy
 * field (naive wall time in the configured zone, `YYYY-MM-DDTHH:mm:ss.SSS`) next to its `_utc`
 * twin (`YYYY-MM-DDTHH:mm:ss.SSS+00:00`). Filter bounds accept either form back.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Whether the zone is a known IANA time zone. */
export function isValidTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

// Offsets change only at transitions, which fall on quarter hours in every zone: one Intl call
// per zone and quarter hour instead of one per timestamp (Intl is ~8 µs, a list page has 50).
const QUARTER_HOUR = 900_000;
const offsetCache = new Map<string, Map<number, number>>();

/** Offset of the zone from UTC at an instant, in milliseconds (east positive). */
export function zoneOffsetMs(ms: number, zone: string): number {
  let cache = offsetCache.get(zone);
  if (!cache) offsetCache.set(zone, (cache = new Map()));
  const bucket = Math.floor(ms / QUARTER_HOUR);
  let offset = cache.get(bucket);
  if (offset === undefined) {
    if (cache.size > 50_000) cache.clear();
    offset = computeOffset(bucket * QUARTER_HOUR, zone);
    cache.set(bucket, offset);
  }
  return offset;
}

function computeOffset(ms: number, zone: string): number {
  const parts = formatter(zone).formatToParts(new Date(ms));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)!.value);
  // Not Date.UTC: it reads years 0 to 99 as 1900 to 1999.
  const wall = new Date(0);
  wall.setUTCFullYear(get('year'), get('month') - 1, get('day'));
  wall.setUTCHours(get('hour'), get('minute'), get('second'));
  return wall.getTime() - (ms - (((ms % 1000) + 1000) % 1000));
}

const MINUTE = 60_000;
const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

// `YYYY-MM-DDTHH:mm:` of recent minutes, direct-mapped by minute number: a list page's
// timestamps mostly share few minutes, and a slot costs two array reads where a Map lookup
// costs a hash. A collision only recomputes the prefix.
const PREFIX_SLOTS = 4096;
const prefixMinute = new Float64Array(PREFIX_SLOTS).fill(Number.NaN);
const prefixText: string[] = new Array<string>(PREFIX_SLOTS).fill('');

function minutePrefix(minute: number): string {
  const slot = minute & (PREFIX_SLOTS - 1);
  if (prefixMinute[slot] === minute) return prefixText[slot]!;
  const iso = new Date(minute * MINUTE).toISOString();
  // Up to the seconds; indexOf keeps the extended ±YYYYYY years right.
  const prefix = iso.slice(0, iso.indexOf('T') + 7);
  prefixMinute[slot] = minute;
  prefixText[slot] = prefix;
  return prefix;
}

/**
 * ISO 8601 without the zone designator: the cached minute prefix, then seconds and
 * milliseconds from lookup tables. A list page formats hundreds of these: Date#toISOString
 * costs about a microsecond each, this about 30 ns, and it leaves a short string chain that
 * JSON.stringify flattens cheaply.
 */
function isoNaive(ms: number): string {
  const minute = Math.floor(ms / MINUTE);
  const rest = ms - minute * MINUTE;
  const sec = Math.floor(rest / 1000);
  return minutePrefix(minute) + TWO[sec]! + '.' + THREE[rest - sec * 1000]!;
}

/** Legacy form: the wall time in `zone`, without offset. */
export function legacyTime(ms: number, zone: string): string {
  return isoNaive(ms + zoneOffsetMs(ms, zone));
}

/** `_utc` form: ISO 8601 with the explicit offset +00:00. */
export function utcTime(ms: number): string {
  return isoNaive(ms) + '+00:00';
}

/** Legacy form, or null when there is no instant: for views that list both fields themselves. */
export function legacyStamp(ms: number | null | undefined, zone: string): string | null {
  return ms === null || ms === undefined ? null : legacyTime(ms, zone);
}

/** `_utc` form, or null when there is no instant. */
export function utcStamp(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : utcTime(ms);
}

/**
 * The legacy field and its `_utc` twin for one instant (both null when there is none).
 * Views on hot list paths write the two fields with legacyStamp/utcStamp instead: spreading
 * this object into the row costs an extra object and a slower literal per row.
 */
export function stampPair<N extends string>(name: N, ms: number | null | undefined, zone: string): Record<N | `${N}_utc`, string | null> {
  const out = {} as Record<string, string | null>;
  const none = ms === null || ms === undefined;
  out[name] = none ? null : legacyTime(ms, zone);
  out[utcName(name)] = none ? null : utcTime(ms);
  return out as Record<N | `${N}_utc`, string | null>;
}

const utcNames = new Map<string, string>();
const utcName = (name: string): string => {
  let n = utcNames.get(name);
  if (n === undefined) utcNames.set(name, (n = `${name}_utc`));
  return n;
};

/**
 * The filter bounds parseTimeBound takes, as a JSON Schema pattern for the OpenAPI document:
 * a real calendar date (leap days of leap years only), years 1000 to 9999, an optional time
 * and an optional offset.
 */
export const TIME_BOUND_PATTERN = '^(?:[1-9][0-9]{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))'
  + '|(?:[1-9][0-9](?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00)-02-29)'
  + '(?:[Tt ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:[.,][0-9]{1,9})?)?)?\\s*(?:[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?$';

const BOUND = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Parses a filter bound: with an offset (or Z) it is an absolute instant; without, a wall time
 * in `zone`. A wall time that does not exist (spring-forward gap) moves forward by the gap; one
 * that exists twice (fall-back overlap) is the earlier instant, as JS Temporal's "compatible".
 */
export function parseTimeBound(text: string, zone: string): number {
  const m = BOUND.exec(text.trim());
  if (!m) throw new Error(`not a date or date-time: ${JSON.stringify(text)}`);
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', offset] = m;
  const fields = [Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s)] as const;
  const wall = Date.UTC(fields[0], fields[1] - 1, fields[2], fields[3], fields[4], fields[5]) + Number(frac.slice(0, 3).padEnd(3, '0'));
  const check = new Date(wall);
  if (check.getUTCMonth() + 1 !== fields[1] || check.getUTCDate() !== fields[2] || fields[3] > 23 || fields[4] > 59 || fields[5] > 59) {
    throw new Error(`not a valid calendar date-time: ${JSON.stringify(text)}`);
  }
  if (offset !== undefined) {
    if (offset.toUpperCase() === 'Z') return wall;
    const sign = offset[0] === '-' ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    return wall - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0')) * 60_000;
  }
  return wallToInstant(wall, zone);
}

/** The instant of a wall time (given as if it were UTC) in `zone`, "compatible" disambiguation. */
export function wallToInstant(wall: number, zone: string): number {
  // Offsets a day apart bracket any transition near this wall time.
  const before = zoneOffsetMs(wall - 86400_000, zone);
  const after = zoneOffsetMs(wall + 86400_000, zone);
  const candidates = [...new Set([before, after])].map((off) => wall - off).filter((ms) => ms + zoneOffsetMs(ms, zone) === wall);
  if (candidates.length > 0) return Math.min(...candidates); // overlap: the earlier instant
  // Gap: the wall time never happens; shift it forward by the gap, as the clock did.
  return wall - before;
}
