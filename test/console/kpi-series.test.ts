// The KPI page's shaping of GET /api/v2/kpi answers (browser/console/kpi-series.ts): period
// bounds in the site's timezone, the plots' series, the table per balcony and the CSV.
import t from 'tap';
import {
  balconyTable, botAvailability, botsCsv, botTable, busyShare, kpiCsv, kpiSeries, localTime, loneValues, periodRange, startOfDay, type BalconyHour, type KpiAnswer,
} from '../../browser/console/kpi-series.js';

t.test('period bounds: local midnights as whole UTC hours', async (t) => {
  const cases: { name: string; now: string; tz: string; period: 'today' | 'yesterday' | 'week'; from: string; to: string }[] = [
    { name: 'Berlin in winter (UTC+1): today', now: '2026-11-28T17:49:54Z', tz: 'Europe/Berlin', period: 'today', from: '2026-11-27T23:00:00.000Z', to: '2026-11-28T18:00:00.000Z' },
    { name: 'Berlin in winter: yesterday', now: '2026-11-28T17:49:54Z', tz: 'Europe/Berlin', period: 'yesterday', from: '2026-11-26T23:00:00.000Z', to: '2026-11-27T23:00:00.000Z' },
    { name: 'Berlin in winter: the last 7 days, today included', now: '2026-11-28T17:49:54Z', tz: 'Europe/Berlin', period: 'week', from: '2026-11-21T23:00:00.000Z', to: '2026-11-28T18:00:00.000Z' },
    { name: 'Berlin in summer (UTC+2)', now: '2026-07-01T10:00:00Z', tz: 'Europe/Berlin', period: 'today', from: '2026-06-30T22:00:00.000Z', to: '2026-07-01T11:00:00.000Z' },
    { name: 'just after local midnight: still the new day', now: '2026-11-27T23:00:30Z', tz: 'Europe/Berlin', period: 'today', from: '2026-11-27T23:00:00.000Z', to: '2026-11-28T00:00:00.000Z' },
    { name: 'just before local midnight: the old day', now: '2026-11-27T22:59:30Z', tz: 'Europe/Berlin', period: 'today', from: '2026-11-26T23:00:00.000Z', to: '2026-11-27T23:00:00.000Z' },
    { name: 'a day that lost an hour (spring forward): yesterday is 23 hours', now: '2026-03-30T08:00:00Z', tz: 'Europe/Berlin', period: 'yesterday', from: '2026-03-28T23:00:00.000Z', to: '2026-03-29T22:00:00.000Z' },
    { name: 'a week across the autumn change', now: '2026-10-27T12:00:00Z', tz: 'Europe/Berlin', period: 'week', from: '2026-10-20T22:00:00.000Z', to: '2026-10-27T13:00:00.000Z' },
    { name: 'UTC', now: '2026-11-28T00:00:00Z', tz: 'UTC', period: 'today', from: '2026-11-28T00:00:00.000Z', to: '2026-11-28T01:00:00.000Z' },
    { name: 'west of UTC (New York, UTC-5)', now: '2026-11-28T03:00:00Z', tz: 'America/New_York', period: 'today', from: '2026-11-27T05:00:00.000Z', to: '2026-11-28T04:00:00.000Z' },
    { name: 'half an hour off UTC (Kolkata): midnight down to its hour', now: '2026-11-28T12:10:00Z', tz: 'Asia/Kolkata', period: 'today', from: '2026-11-27T18:00:00.000Z', to: '2026-11-28T13:00:00.000Z' },
  ];
  for (const c of cases) t.same(periodRange(c.period, Date.parse(c.now), c.tz), { from: c.from, to: c.to }, c.name);
  t.equal(new Date(startOfDay(Date.parse('2026-11-28T12:10:00Z'), 'Asia/Kolkata')).toISOString(), '2026-11-27T18:30:00.000Z', 'the exact local midnight');
});

t.test('busy share and bot availability', async (t) => {
  const shares: [number, number, number | null][] = [[1800, 1800, 0.5], [3600, 0, 1], [0, 3600, 0], [0, 0, null], [900, 2700, 0.25]];
  for (const [busy, idle, want] of shares) t.equal(busyShare(busy, idle), want, `busy ${busy} s, idle ${idle} s`);
  const bots: [number[], number | null][] = [
    [[3600, 0, 0, 0, 0], 1], [[1000, 800, 600, 1200, 0], 0.5], [[0, 0, 0, 3600, 0], 0], [[0, 0, 0, 0, 0], null], [[0, 1800, 0, 0, 1800], 1],
  ];
  for (const [[working_seconds, charging_seconds, faulted_seconds, offline_seconds, idle_seconds], want] of bots) {
    t.equal(botAvailability({ working_seconds: working_seconds!, charging_seconds: charging_seconds!, faulted_seconds: faulted_seconds!, offline_seconds: offline_seconds!, idle_seconds: idle_seconds! }), want, `bots ${[working_seconds, charging_seconds, faulted_seconds, offline_seconds, idle_seconds]}`);
  }
});

const HOURS = ['2026-11-28T08:00:00.000Z', '2026-11-28T09:00:00.000Z', '2026-11-28T10:00:00.000Z'];
const bh = (hour: string, carriers: number, lines: number, pieces: number, busy: number, idle: number): BalconyHour => ({
  hour, carriers_presented: carriers, order_lines_picked: lines, pieces_picked: pieces, busy_seconds: busy, idle_seconds: idle,
});

/** A sample answer: balcony 2 listed before 1, one quiet hour, one hour with a faulted bot. */
const sample: KpiAnswer = {
  from: HOURS[0]!, to: '2026-11-28T11:00:00.000Z', generated_at: '2026-11-28T10:30:00.000Z', timezone: 'Europe/Berlin', hours: HOURS,
  balconies: [
    { balcony_id: 2, hours: [bh(HOURS[0]!, 1, 1, 2, 600, 3000), bh(HOURS[1]!, 0, 0, 0, 0, 0), bh(HOURS[2]!, 3, 2, 7, 1800, 1800)] },
    { balcony_id: 1, hours: [bh(HOURS[0]!, 4, 5, 9, 3600, 0), bh(HOURS[1]!, 2, 2, 2, 900, 2700), bh(HOURS[2]!, 0, 0, 0, 0, 3600)] },
  ],
  bots: { count: 2, hours: [
    { hour: HOURS[0]!, working_seconds: 7200, charging_seconds: 0, faulted_seconds: 0, offline_seconds: 0, idle_seconds: 0 },
    { hour: HOURS[1]!, working_seconds: 1800, charging_seconds: 1800, faulted_seconds: 3600, offline_seconds: 0, idle_seconds: 0 },
    { hour: HOURS[2]!, working_seconds: 0, charging_seconds: 0, faulted_seconds: 0, offline_seconds: 0, idle_seconds: 0 },
  ] },
  requests: { done: 4, lead_time_p50_seconds: 95.4, lead_time_p95_seconds: 300, hours: [
    { hour: HOURS[0]!, done: 3, lead_time_p50_seconds: 90, lead_time_p95_seconds: 120.6 },
    { hour: HOURS[1]!, done: 1, lead_time_p50_seconds: 300, lead_time_p95_seconds: 300 },
    { hour: HOURS[2]!, done: 0, lead_time_p50_seconds: null, lead_time_p95_seconds: null },
  ] },
  errors: { by_code: [], hours: [] },
};

const empty: KpiAnswer = {
  from: HOURS[0]!, to: HOURS[0]!, generated_at: HOURS[0]!, timezone: 'UTC', hours: [], balconies: [],
  bots: { count: 0, hours: [] }, requests: { done: 0, lead_time_p50_seconds: null, lead_time_p95_seconds: null, hours: [] }, errors: { by_code: [], hours: [] },
};

t.test('the plots\' series: hours as Unix seconds, throughput summed, gaps as null', async (t) => {
  const s = kpiSeries(sample);
  t.same(s.x, HOURS.map((h) => Date.parse(h) / 1000));
  t.same(s.carriersPresented, [5, 2, 3]);
  t.same(s.piecesPicked, [11, 2, 7]);
  t.same(s.balconyIds, [2, 1], 'in the answer\'s order, matching busyShare');
  t.same(s.busyShare, [[600 / 3600, null, 0.5], [1, 0.25, 0]]);
  t.same(s.botAvailability, [1, 0.5, null]);
  t.same(s.leadTimeP50, [90, 300, null]);
  t.same(s.leadTimeP95, [120.6, 300, null]);
  t.same(kpiSeries(empty), { x: [], carriersPresented: [], piecesPicked: [], busyShare: [], balconyIds: [], botAvailability: [], leadTimeP50: [], leadTimeP95: [] }, 'no hours, no points');
});

t.test('the table per balcony sums its hours, by balcony id', async (t) => {
  t.same(balconyTable(sample), [
    { balcony_id: 1, carriers_presented: 6, order_lines_picked: 7, pieces_picked: 11, busy_seconds: 4500, idle_seconds: 6300, busy_share: 4500 / 10800 },
    { balcony_id: 2, carriers_presented: 4, order_lines_picked: 3, pieces_picked: 9, busy_seconds: 2400, idle_seconds: 4800, busy_share: 2400 / 7200 },
  ]);
  t.same(balconyTable(empty), []);
});

t.test('the CSV: an hour a row, then the totals the table shows', async (t) => {
  const lines = kpiCsv(sample).split('\r\n');
  t.equal(lines.pop(), '', 'ends with CRLF');
  t.same(lines, [
    'hour_utc,hour_local,carriers_presented,pieces_picked,bot_availability_percent,requests_done,lead_time_p50_seconds,lead_time_p95_seconds,'
      + 'balcony_1_carriers_presented,balcony_1_order_lines_picked,balcony_1_pieces_picked,balcony_1_busy_share_percent,'
      + 'balcony_2_carriers_presented,balcony_2_order_lines_picked,balcony_2_pieces_picked,balcony_2_busy_share_percent',
    '2026-11-28T08:00:00.000Z,2026-11-28 09:00,5,11,100.0,3,90,121,4,5,9,100.0,1,1,2,16.7',
    '2026-11-28T09:00:00.000Z,2026-11-28 10:00,2,2,50.0,1,300,300,2,2,2,25.0,0,0,0,',
    '2026-11-28T10:00:00.000Z,2026-11-28 11:00,3,7,,0,,,0,0,0,0.0,3,2,7,50.0',
    'total,,10,20,75.0,4,95,300,6,7,11,41.7,4,3,9,33.3',
  ]);
  t.equal(kpiCsv(empty), 'hour_utc,hour_local,carriers_presented,pieces_picked,bot_availability_percent,requests_done,lead_time_p50_seconds,lead_time_p95_seconds\r\ntotal,,0,0,,0,,\r\n');
});

t.test('local time of an hour in the site\'s zone', async (t) => {
  const cases: [string, string, string][] = [
    ['2026-11-28T08:00:00.000Z', 'Europe/Berlin', '2026-11-28 09:00'],
    ['2026-07-01T22:00:00.000Z', 'Europe/Berlin', '2026-07-02 00:00'],
    ['2026-11-28T03:00:00.000Z', 'America/New_York', '2026-11-27 22:00'],
    ['2026-11-28T18:00:00.000Z', 'Asia/Kolkata', '2026-11-28 23:30'],
  ];
  for (const [iso, tz, want] of cases) t.equal(localTime(iso, tz), want, `${iso} in ${tz}`);
});

t.test('lone values: those a line cannot join', async (t) => {
  const cases: [(number | null)[], number[]][] = [
    [[], []], [[1], [0]], [[null, 2, null], [1]], [[1, 2, 3], []], [[1, null, 3], [0, 2]], [[null, null, 0, null, 4, 5], [2]], [[0, 0], []],
  ];
  for (const [values, want] of cases) t.same(loneValues(values), want, JSON.stringify(values));
});

t.test('the table per bot: the least available first, and its CSV', async (t) => {
  const bot = (bot_id: number, working: number, faulted: number, offline: number) => ({ bot_id, working_seconds: working, charging_seconds: 0, faulted_seconds: faulted, offline_seconds: offline, idle_seconds: 0 });
  const answer = { from: HOURS[0]!, to: HOURS[2]!, bots: [bot(1, 3600, 0, 0), bot(2, 1800, 1800, 0), bot(3, 0, 0, 0), bot(4, 2700, 0, 900.4), bot(5, 1800, 0, 1800)] };
  const rows = botTable(answer);
  t.same(rows.map((r) => [r.bot_id, r.availability]), [[2, 0.5], [5, 0.5], [4, 2700 / 3600.4], [1, 1], [3, null]]);
  t.same(botsCsv(answer).split('\r\n'), [
    'bot_id,availability_percent,working_seconds,charging_seconds,faulted_seconds,offline_seconds,idle_seconds',
    '2,50.0,1800,0,1800,0,0', '5,50.0,1800,0,0,1800,0', '4,75.0,2700,0,0,900,0', '1,100.0,3600,0,0,0,0', '3,,0,0,0,0,0', '',
  ]);
  t.same(botTable({ from: HOURS[0]!, to: HOURS[2]!, bots: [] }), []);
});
