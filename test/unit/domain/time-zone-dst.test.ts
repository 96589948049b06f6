// The API's naive local timestamps and their _utc twins on both sides of Berlin's changes to
// and from summer time in 2026, every quarter hour, and how naive filter bounds in the missing
// and the repeated hour are read (docs/timestamps.md: Temporal's "compatible" rule).
import t from 'tap';
import { legacyTime, parseTimeBound, stampPair, utcTime } from '../../../src/domain/time.js';

const BERLIN = 'Europe/Berlin';
const at = (iso: string): number => Date.parse(iso);

t.test('rendering across the spring-forward change (2026-03-29 02:00 CET -> 03:00 CEST)', async (t) => {
  // [instant (UTC), naive Berlin wall time]
  const rows: [string, string][] = [
    ['2026-03-29T00:00:00.000Z', '2026-03-29T01:00:00.000'],
    ['2026-03-29T00:45:00.000Z', '2026-03-29T01:45:00.000'],
    ['2026-03-29T00:59:59.999Z', '2026-03-29T01:59:59.999'],
    ['2026-03-29T01:00:00.000Z', '2026-03-29T03:00:00.000'],
    ['2026-03-29T01:15:00.000Z', '2026-03-29T03:15:00.000'],
    ['2026-03-29T01:59:59.999Z', '2026-03-29T03:59:59.999'],
    ['2026-03-29T02:00:00.000Z', '2026-03-29T04:00:00.000'],
  ];
  for (const [utc, naive] of rows) {
    t.same(stampPair('created_at', at(utc), BERLIN), { created_at: naive, created_at_utc: `${utc.slice(0, -1)}+00:00` }, utc);
  }
});

t.test('rendering across the fall-back change (2026-10-25 03:00 CEST -> 02:00 CET): the repeated hour twice, its _utc twins apart', async (t) => {
  const rows: [string, string][] = [
    ['2026-10-24T23:59:59.999Z', '2026-10-25T01:59:59.999'],
    ['2026-10-25T00:00:00.000Z', '2026-10-25T02:00:00.000'],
    ['2026-10-25T00:30:00.000Z', '2026-10-25T02:30:00.000'],
    ['2026-10-25T00:59:59.999Z', '2026-10-25T02:59:59.999'],
    ['2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00.000'],
    ['2026-10-25T01:30:00.000Z', '2026-10-25T02:30:00.000'],
    ['2026-10-25T01:59:59.999Z', '2026-10-25T02:59:59.999'],
    ['2026-10-25T02:00:00.000Z', '2026-10-25T03:00:00.000'],
  ];
  for (const [utc, naive] of rows) {
    t.equal(legacyTime(at(utc), BERLIN), naive, `${utc} naive`);
    t.equal(utcTime(at(utc)), `${utc.slice(0, -1)}+00:00`, `${utc} _utc`);
  }
  // Rendered in the other order, the offset cache must not carry one side's offset to the other.
  t.equal(legacyTime(at('2026-10-25T01:30:00Z'), BERLIN), '2026-10-25T02:30:00.000');
  t.equal(legacyTime(at('2026-10-25T00:30:00Z'), BERLIN), '2026-10-25T02:30:00.000');
});

t.test('naive filter bounds in the missing and the repeated hour', async (t) => {
  // [bound as given, instant it means, why]
  const rows: [string, string, string][] = [
    ['2026-03-29T01:59:59.999', '2026-03-29T00:59:59.999Z', 'last instant before the gap'],
    ['2026-03-29T02:00', '2026-03-29T01:00:00Z', 'in the gap: moved forward by the hour, to 03:00 CEST'],
    ['2026-03-29T02:30', '2026-03-29T01:30:00Z', 'in the gap: 03:30 CEST'],
    ['2026-03-29T02:59:59', '2026-03-29T01:59:59Z', 'in the gap: 03:59:59 CEST'],
    ['2026-03-29T03:00', '2026-03-29T01:00:00Z', 'first wall time after the gap'],
    ['2026-03-29', '2026-03-28T23:00:00Z', 'a plain date: midnight, still winter time'],
    ['2026-10-25T01:59:59', '2026-10-24T23:59:59Z', 'before the repeated hour'],
    ['2026-10-25T02:00', '2026-10-25T00:00:00Z', 'repeated: the earlier (summer time) instant'],
    ['2026-10-25T02:30', '2026-10-25T00:30:00Z', 'repeated: the earlier instant'],
    ['2026-10-25T02:59:59.999', '2026-10-25T00:59:59.999Z', 'repeated: the earlier instant'],
    ['2026-10-25T03:00', '2026-10-25T02:00:00Z', 'after the repeated hour, winter time'],
    ['2026-10-25T02:30+01:00', '2026-10-25T01:30:00Z', 'the later 02:30 needs its offset'],
    ['2026-10-25T02:30+02:00', '2026-10-25T00:30:00Z', 'the earlier 02:30 with its offset'],
    ['2026-10-25T02:30:00Z', '2026-10-25T02:30:00Z', 'UTC is UTC'],
  ];
  for (const [bound, instant, why] of rows) t.equal(parseTimeBound(bound, BERLIN), at(instant), `${bound}: ${why}`);
});
