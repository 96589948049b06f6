// Whole UTC hours: rounding, and intervals split over hour boundaries.
import t from 'tap';
import { elapsedIn, hourCeil, hourOf, hoursOf, splitByHour } from '../../../src/domain/kpi/hours.js';

const at = (iso: string) => Date.parse(iso);
const H = 3_600_000;

t.test('rounding to whole hours', async (t) => {
  const cases: [string, string, string][] = [
    ['2026-11-28T10:00:00Z', '2026-11-28T10:00:00Z', '2026-11-28T10:00:00Z'],
    ['2026-11-28T10:00:00.001Z', '2026-11-28T10:00:00Z', '2026-11-28T11:00:00Z'],
    ['2026-11-28T23:59:59Z', '2026-11-28T23:00:00Z', '2026-11-29T00:00:00Z'],
  ];
  for (const [ms, down, up] of cases) {
    t.equal(hourOf(at(ms)), at(down), `${ms} down`);
    t.equal(hourCeil(at(ms)), at(up), `${ms} up`);
  }
  t.same(hoursOf(at('2026-11-28T22:00:00Z'), at('2026-11-29T01:00:00Z')).map((h) => new Date(h).toISOString()),
    ['2026-11-28T22:00:00.000Z', '2026-11-28T23:00:00.000Z', '2026-11-29T00:00:00.000Z']);
});

t.test('an interval split over the hours it spans', async (t) => {
  const cases: { name: string; from: string; to: string; want: [string, number][] }[] = [
    { name: 'within one hour', from: '2026-11-28T10:10:00Z', to: '2026-11-28T10:20:00Z', want: [['2026-11-28T10:00:00Z', 600_000]] },
    { name: 'across one boundary', from: '2026-11-28T10:50:00Z', to: '2026-11-28T11:05:00Z', want: [['2026-11-28T10:00:00Z', 600_000], ['2026-11-28T11:00:00Z', 300_000]] },
    { name: 'whole hours between', from: '2026-11-28T10:30:00Z', to: '2026-11-28T13:00:00Z', want: [['2026-11-28T10:00:00Z', 1_800_000], ['2026-11-28T11:00:00Z', H], ['2026-11-28T12:00:00Z', H]] },
    { name: 'across midnight', from: '2026-11-28T23:59:00Z', to: '2026-11-29T00:01:00Z', want: [['2026-11-28T23:00:00Z', 60_000], ['2026-11-29T00:00:00Z', 60_000]] },
    { name: 'empty', from: '2026-11-28T10:00:00Z', to: '2026-11-28T10:00:00Z', want: [] },
    { name: 'backward (a clock stepped back)', from: '2026-11-28T11:00:00Z', to: '2026-11-28T10:00:00Z', want: [] },
  ];
  for (const c of cases) {
    t.same(splitByHour(at(c.from), at(c.to)), c.want.map(([hour, ms]) => ({ hour: at(hour), ms })), c.name);
  }
});

t.test('elapsed time of an hour, clipped to when keeping began and to now', async (t) => {
  const hour = at('2026-11-28T10:00:00Z');
  const cases: { name: string; began: string; now: string; want: number }[] = [
    { name: 'a past hour, kept throughout', began: '2026-11-01T00:00:00Z', now: '2026-11-28T12:00:00Z', want: H },
    { name: 'the current hour', began: '2026-11-01T00:00:00Z', now: '2026-11-28T10:15:00Z', want: 900_000 },
    { name: 'keeping began within it', began: '2026-11-28T10:45:00Z', now: '2026-11-28T12:00:00Z', want: 900_000 },
    { name: 'before keeping began', began: '2026-11-28T12:00:00Z', now: '2026-11-28T13:00:00Z', want: 0 },
    { name: 'in the future', began: '2026-11-01T00:00:00Z', now: '2026-11-28T09:00:00Z', want: 0 },
  ];
  for (const c of cases) t.equal(elapsedIn(hour, at(c.began), at(c.now)), c.want, c.name);
});
