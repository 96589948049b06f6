// Timestamps: legacy wall time and _utc twin, filter bounds, across DST changes.
import t from 'tap';
import fc from 'fast-check';
import { isValidTimeZone, legacyStamp, legacyTime, parseTimeBound, stampPair, utcStamp, utcTime, zoneOffsetMs } from '../../../src/domain/time.js';

const BERLIN = 'Europe/Berlin';
const NY = 'America/New_York';
const at = (iso: string): number => Date.parse(iso);

t.test('pairs of legacy and _utc fields', async (t) => {
  t.same(stampPair('created_at', at('2026-01-15T11:30:00.250Z'), BERLIN), { created_at: '2026-01-15T12:30:00.250', created_at_utc: '2026-01-15T11:30:00.250+00:00' });
  t.same(stampPair('created_at', at('2026-07-15T11:30:00Z'), BERLIN).created_at, '2026-07-15T13:30:00.000', 'summer time');
  t.same(stampPair('deleted_at', null, BERLIN), { deleted_at: null, deleted_at_utc: null });
  t.equal(legacyTime(at('2026-07-15T11:30:00Z'), NY), '2026-07-15T07:30:00.000');
  t.equal(utcTime(0), '1970-01-01T00:00:00.000+00:00');
});

t.test('around the spring-forward gap in Berlin (2026-03-29 02:00 -> 03:00)', async (t) => {
  t.equal(legacyTime(at('2026-03-29T00:59:59Z'), BERLIN), '2026-03-29T01:59:59.000');
  t.equal(legacyTime(at('2026-03-29T01:00:00Z'), BERLIN), '2026-03-29T03:00:00.000');
  t.equal(parseTimeBound('2026-03-29T01:59:59', BERLIN), at('2026-03-29T00:59:59Z'));
  t.equal(parseTimeBound('2026-03-29T03:00', BERLIN), at('2026-03-29T01:00:00Z'));
  t.equal(parseTimeBound('2026-03-29T02:30', BERLIN), at('2026-03-29T01:30:00Z'), 'a wall time in the gap moves forward by the gap');
});

t.test('around the fall-back overlap in Berlin (2026-10-25 03:00 -> 02:00)', async (t) => {
  t.equal(legacyTime(at('2026-10-25T00:30:00Z'), BERLIN), '2026-10-25T02:30:00.000');
  t.equal(legacyTime(at('2026-10-25T01:30:00Z'), BERLIN), '2026-10-25T02:30:00.000', 'the same wall time twice');
  t.equal(parseTimeBound('2026-10-25T02:30', BERLIN), at('2026-10-25T00:30:00Z'), 'ambiguous: the earlier instant');
  t.equal(parseTimeBound('2026-10-25T03:30', BERLIN), at('2026-10-25T02:30:00Z'));
  t.equal(zoneOffsetMs(at('2026-10-25T00:30:00Z'), BERLIN), 2 * 3600_000);
  t.equal(zoneOffsetMs(at('2026-10-25T01:30:00Z'), BERLIN), 3600_000);
});

t.test('New York changes on other dates', async (t) => {
  t.equal(parseTimeBound('2026-03-08T02:30', NY), at('2026-03-08T07:30:00Z'), 'gap 02:00 -> 03:00 EST->EDT');
  t.equal(parseTimeBound('2026-11-01T01:30', NY), at('2026-11-01T05:30:00Z'), 'overlap: earlier (EDT)');
});

t.test('bound formats', async (t) => {
  t.equal(parseTimeBound('2026-05-01', BERLIN), at('2026-04-30T22:00:00Z'), 'a plain date is local midnight');
  t.equal(parseTimeBound('2026-05-01T10:00:00Z', BERLIN), at('2026-05-01T10:00:00Z'));
  t.equal(parseTimeBound('2026-05-01T10:00:00.123456+02:00', BERLIN), at('2026-05-01T08:00:00.123Z'));
  t.equal(parseTimeBound('2026-05-01 10:00:00-0530', BERLIN), at('2026-05-01T15:30:00Z'));
  for (const bad of ['yesterday', '2026-13-01', '2026-02-30', '2026-05-01T25:00', '', '2026-05-01T10:00+2']) {
    t.throws(() => parseTimeBound(bad, BERLIN), /not a/, JSON.stringify(bad));
  }
  t.ok(isValidTimeZone(BERLIN));
  t.notOk(isValidTimeZone('Mars/Base'));
});

t.test('property: legacy text parses back to the instant, except in the repeated hour', async (t) => {
  const instant = fc.integer({ min: at('2000-01-01T00:00:00Z'), max: at('2040-01-01T00:00:00Z') });
  for (const zone of [BERLIN, NY, 'Asia/Kolkata', 'UTC']) {
    fc.assert(fc.property(instant, (ms) => {
      const back = parseTimeBound(legacyTime(ms, zone), zone);
      if (back === ms) return true;
      // The only other answer allowed: the same wall time one DST shift earlier.
      return legacyTime(back, zone) === legacyTime(ms, zone) && back < ms;
    }), { numRuns: 2000 });
    t.pass(zone);
  }
});

t.test('property: the formatted text is what Date#toISOString says, for any instant', async (t) => {
  // Whole range of Date, extended years and instants before 1970 included; the minute
  // prefix cache must never answer for another minute.
  const instant = fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2026-01-03T00:00:00Z') }));
  const YEAR_1 = at('0001-01-01T00:00:00Z');
  fc.assert(fc.property(instant, (ms) => {
    const iso = new Date(ms).toISOString();
    // Intl counts years before 1 by era, so the legacy form is checked from year 1 on.
    return utcTime(ms) === `${iso.slice(0, -1)}+00:00` && (ms < YEAR_1 || legacyTime(ms, 'UTC') === iso.slice(0, -1));
  }), { numRuns: 5000 });
  t.equal(legacyStamp(null, BERLIN), null);
  t.equal(utcStamp(undefined), null);
  t.equal(legacyStamp(at('2026-01-15T11:30:00.250Z'), BERLIN), '2026-01-15T12:30:00.250');
  t.equal(utcStamp(at('2026-01-15T11:30:00.250Z')), '2026-01-15T11:30:00.250+00:00');
});
