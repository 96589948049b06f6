// The KPI rules as tables: which changes of a job, request or event count, and how a bot's or a
// balcony's state moves and closes its intervals.
import t from 'tap';
import { newJob, type JobRecord, type RequestRecord } from '../../../src/domain/requests/records.js';
import type { EventRecord } from '../../../src/domain/events/events.js';
import { EVENT } from '../../../src/domain/events/catalogue.js';
import {
  activityOf, balconyMoves, botMoves, botNews, botRole, errorCounted, newBalconyState, newBotState, picked, presented, requestDone, waitingAt,
} from '../../../src/domain/kpi/transitions.js';

const job = (fields: Partial<JobRecord>): JobRecord => newJob({ id: 'j1', request_id: 'r1', type: 'PICKING', entity_id: 'SKU-1', entity_index: 0, seq: 1, now: 1000 }, fields);
const trigger = { waiting_for: 'trigger' as const, reason: 'waiting for a person' };
const atBalcony = job({ status: 'EXECUTING', balcony_id: 2, carrier_id: 'C1', wait: trigger });

t.test('carriers presented and balconies kept busy', async (t) => {
  const cases: { name: string; before: JobRecord | undefined; after: JobRecord | undefined; waiting: number | null; presented: boolean }[] = [
    { name: 'starts waiting for the trigger', before: job({ status: 'EXECUTING', balcony_id: 2, carrier_id: 'C1', wait: { waiting_for: 'balcony', reason: '' } }), after: atBalcony, waiting: 2, presented: true },
    { name: 'new, already waiting', before: undefined, after: atBalcony, waiting: 2, presented: true },
    { name: 'still waiting (another field changed)', before: atBalcony, after: { ...atBalcony, updated_at: 2000 }, waiting: 2, presented: false },
    { name: 'waits for the trigger without a carrier (PACKING)', before: undefined, after: { ...atBalcony, type: 'PACKING', carrier_id: null }, waiting: 2, presented: false },
    { name: 'waits for a bot', before: undefined, after: { ...atBalcony, wait: { waiting_for: 'bot', reason: '' } }, waiting: null, presented: false },
    { name: 'no balcony', before: undefined, after: { ...atBalcony, balcony_id: null }, waiting: null, presented: false },
    { name: 'confirmed', before: atBalcony, after: { ...atBalcony, status: 'SUCCEEDED', wait: null }, waiting: null, presented: false },
    { name: 'removed', before: atBalcony, after: undefined, waiting: null, presented: false },
  ];
  for (const c of cases) {
    t.equal(waitingAt(c.after), c.waiting, `${c.name}: waiting at`);
    t.equal(presented(c.before, c.after) !== null, c.presented, `${c.name}: presented`);
  }
  t.same(presented(undefined, atBalcony), { balcony_id: 2, request_id: 'r1', carrier_id: 'C1' });
});

t.test('picks confirmed', async (t) => {
  const done = (fields: Partial<JobRecord>) => ({ ...atBalcony, status: 'SUCCEEDED' as const, wait: null, ...fields });
  const person = (booked: number | null) => ({ kind: 'person' as const, trigger_status: 'SUCCEEDED_TRIGGER', booked_quantity: booked });
  const cases: { name: string; before: JobRecord | undefined; after: JobRecord; want: { balcony_id: number; pieces: number } | null }[] = [
    { name: 'confirmed with its booked quantity', before: atBalcony, after: done({ quantity: 5, progress: person(4) }), want: { balcony_id: 2, pieces: 4 } },
    { name: 'booked quantity unknown: the planned one', before: atBalcony, after: done({ quantity: 5, progress: person(null) }), want: { balcony_id: 2, pieces: 5 } },
    { name: 'already SUCCEEDED', before: done({ quantity: 5, progress: person(5) }), after: done({ quantity: 5, progress: person(5), updated_at: 9 }), want: null },
    { name: 'ended without a trigger', before: atBalcony, after: done({ quantity: 5 }), want: null },
    { name: 'a PACKING confirmed', before: atBalcony, after: done({ type: 'PACKING', quantity: 5, progress: person(5) }), want: null },
    { name: 'cancelled', before: atBalcony, after: { ...atBalcony, status: 'CANCELLED', wait: null }, want: null },
  ];
  for (const c of cases) t.same(picked(c.before, c.after), c.want, c.name);
});

t.test('what a job has its bot do', async (t) => {
  const cases: { name: string; job: Partial<JobRecord>; want: ReturnType<typeof botRole> }[] = [
    { name: 'a RETRIEVING running', job: { type: 'RETRIEVING', status: 'EXECUTING', bot_id: 4 }, want: { bot_id: 4, role: 'working' } },
    { name: 'a STORING being cancelled', job: { type: 'STORING', status: 'CANCELLING', bot_id: 4 }, want: { bot_id: 4, role: 'working' } },
    { name: 'a CHARGING running', job: { type: 'CHARGING', status: 'EXECUTING', bot_id: 7 }, want: { bot_id: 7, role: 'charging' } },
    { name: 'accepted, not yet running', job: { type: 'RETRIEVING', status: 'ACCEPTED', bot_id: 4 }, want: null },
    { name: 'running without a bot', job: { type: 'RETRIEVING', status: 'EXECUTING', bot_id: null }, want: null },
    { name: 'a person\'s job', job: { type: 'PICKING', status: 'EXECUTING', bot_id: 4 }, want: null },
    { name: 'done', job: { type: 'RETRIEVING', status: 'SUCCEEDED', bot_id: 4 }, want: null },
  ];
  for (const c of cases) t.same(botRole(job(c.job)), c.want, c.name);
  t.equal(botRole(undefined), null, 'no job');
});

t.test('requests done and errors counted', async (t) => {
  const request = (status: RequestRecord['status'], updated_at = 61_000) => ({ status, created_at: 1000, updated_at }) as RequestRecord;
  t.same(requestDone(request('EXECUTING'), request('SUCCEEDED')), { at: 61_000, lead_seconds: 60 });
  t.equal(requestDone(request('SUCCEEDED'), request('SUCCEEDED', 70_000)), null, 'counted once');
  t.equal(requestDone(request('EXECUTING'), request('ABORTED')), null, 'only SUCCEEDED');
  t.equal(requestDone(request('SUCCEEDED'), undefined), null, 'pruned');
  const event = (kind: typeof EVENT[keyof typeof EVENT], bot_id: string | null = null): EventRecord => ({
    id: 1, component: kind.component, severity: kind.severity, hex_value: kind.hex, description: '', bot_id, level_id: null, request_id: null, created_at: 5000,
  });
  const cases: { name: string; event: EventRecord; error: string | null; news: string | null }[] = [
    { name: 'an error', event: event(EVENT.jobAborted), error: '0x6005', news: null },
    { name: 'a warning', event: event(EVENT.loginFailed), error: '0x2001', news: null },
    { name: 'a notice', event: event(EVENT.started), error: null, news: null },
    { name: 'a bot fault', event: event(EVENT.botFault, '3'), error: '0x7001', news: 'fault' },
    { name: 'a bot lost', event: event(EVENT.botOffline, '3'), error: '0x7002', news: 'offline' },
    { name: 'a bot back', event: event(EVENT.botOnline, '3'), error: null, news: 'online' },
  ];
  for (const c of cases) {
    t.equal(errorCounted(undefined, c.event)?.code ?? null, c.error, `${c.name}: error`);
    t.equal(botNews(undefined, c.event)?.news ?? null, c.news, `${c.name}: bot news`);
    t.equal(errorCounted(c.event, undefined), null, `${c.name}: pruned, not counted`);
  }
});

t.test('a bot\'s activity and the intervals its changes close', async (t) => {
  const base = newBotState(3, 0);
  const activities: [Partial<typeof base>, string][] = [
    [{}, 'idle'], [{ working: ['a'] }, 'working'], [{ charging: ['c'] }, 'charging'], [{ working: ['a'], charging: ['c'] }, 'charging'],
    [{ working: ['a'], faulted: true }, 'faulted'], [{ faulted: true, offline: true }, 'offline'], [{ offboarded: true }, 'offline'],
  ];
  for (const [facts, want] of activities) t.equal(activityOf({ ...base, ...facts }), want, JSON.stringify(facts));

  const steps: { name: string; change: Partial<typeof base>; at: number; activity: string; closed: [string, number, number] | null }[] = [
    { name: 'takes work', change: { working: ['a'] }, at: 1000, activity: 'working', closed: ['idle', 0, 1000] },
    { name: 'a second job: no change', change: { working: ['a', 'b'] }, at: 1500, activity: 'working', closed: null },
    { name: 'faults', change: { faulted: true }, at: 4000, activity: 'faulted', closed: ['working', 1000, 4000] },
    { name: 'lost, with a clock stepped back', change: { offline: true }, at: 3000, activity: 'offline', closed: ['faulted', 4000, 4000] },
    { name: 'back: idle, its jobs gone', change: { offline: false, faulted: false, working: [] }, at: 9000, activity: 'idle', closed: ['offline', 4000, 9000] },
  ];
  let state = base;
  for (const s of steps) {
    const moved = botMoves(state, s.change, s.at);
    t.equal(moved.state.activity, s.activity, `${s.name}: activity`);
    t.same(moved.closed && [moved.closed.activity, moved.closed.from, moved.closed.to], s.closed, `${s.name}: closed`);
    state = moved.state;
  }
});

t.test('a balcony busy from the first job waiting to the last one leaving', async (t) => {
  const steps: { name: string; job: string; waiting: boolean; at: number; busySince: number | null; closed: [number, number] | null }[] = [
    { name: 'first job waits', job: 'a', waiting: true, at: 100, busySince: 100, closed: null },
    { name: 'second job waits', job: 'b', waiting: true, at: 200, busySince: 100, closed: null },
    { name: 'the same job again', job: 'b', waiting: true, at: 250, busySince: 100, closed: null },
    { name: 'first leaves', job: 'a', waiting: false, at: 300, busySince: 100, closed: null },
    { name: 'last leaves', job: 'b', waiting: false, at: 500, busySince: null, closed: [100, 500] },
    { name: 'a job that never waited leaves', job: 'c', waiting: false, at: 600, busySince: null, closed: null },
  ];
  let state = newBalconyState(1);
  for (const s of steps) {
    const moved = balconyMoves(state, s.job, s.waiting, s.at);
    t.equal(moved.state.busy_since, s.busySince, `${s.name}: busy since`);
    t.same(moved.closed && [moved.closed.from, moved.closed.to], s.closed, `${s.name}: closed`);
    state = moved.state;
  }
});
