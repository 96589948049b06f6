// The dispatch policy as pure functions (src/brain/worker/policy/): snapshots of the end-to-end
// site's level and the decisions they must give, table by table, with no daemon, store or bot.
//
//   y0  # P P # B P P #     balcony 1 at (1,0) (2,0); a buffer at (4,0); balcony 2 at (5,0) (6,0)
//   y1  . . . . . . . .     the highway
//   y2  B S S S S S S C     a buffer at (0,2); lanes x = 1..6 open north, depth 1 here; a charger at (7,2)
//   y3  # S S S S S S #     depth 2
//   y4  # S S S S S S #     depth 3
import t from 'tap';
import { buildSite, type Cell } from '../../../src/domain/site/load.js';
import { newJob, type JobRecord, type JobType } from '../../../src/domain/requests/records.js';
import type { LevelSnapshot } from '../../../src/brain/worker/level/snapshot.js';
import type { MotionBot, Standing } from '../../../src/brain/worker/motion/motion.js';
import { decide, type Decision } from '../../../src/brain/worker/policy/dispatch.js';
import { standsOnItsCell } from '../../../src/brain/worker/policy/places.js';
import { MAX_ATTEMPTS, recover } from '../../../src/brain/worker/policy/recovery.js';
import { CONNECT_WAIT_MS, controlStep } from '../../../src/brain/worker/policy/control.js';
import { e2eSite } from '../../fixtures/e2e-site.js';
import { laneCarriersOf } from '../../helpers/lane-carriers.js';

const level = buildSite(e2eSite()).level(1)!;
const NOW = 1_000_000;

let seq = 0;
function job(type: JobType, fields: Partial<JobRecord> = {}, request = 'r1'): JobRecord {
  seq++;
  return newJob({ id: `${type.toLowerCase()}-${seq}`, request_id: request, type, entity_id: 'e', entity_index: 0, seq, now: NOW }, { status: 'ACCEPTED', level_id: 1, balcony_ids: [1, 2], ...fields });
}

function bot(id: number, x: number, y: number, more: Partial<MotionBot> = {}): MotionBot {
  return { id, level_id: 1, online: true, idle: true, x, y, lifted: false, charging: false, battery: 90, faulted: false, stuck: false, ...more };
}

interface World {
  jobs?: JobRecord[];
  bots?: MotionBot[] | null;
  unplaced?: Standing[];
  carriers?: Record<string, Cell>;
  paused?: boolean;
  line?: LevelSnapshot['line'];
  running?: string[];
  priority?: Record<string, number>;
  unreachable?: Record<string, string[]>;
  missing?: string[];
  /** Jobs that ended (a retry's last try): found by id, not dispatched. */
  ended?: JobRecord[];
}

function snapshot(w: World): LevelSnapshot {
  const carriers = w.carriers ?? {};
  const jobs = w.jobs ?? [];
  return {
    level, now: NOW, paused: w.paused ?? false, chargeBelow: 20,
    bots: w.bots === undefined ? [bot(1, 0, 1), bot(2, 7, 1)] : w.bots,
    unplaced: w.unplaced ?? [],
    line: w.line ?? { up: true }, jobs, running: new Set(w.running ?? []),
    order: (id) => ({ priority: w.priority?.[id] ?? 10, counter: Number(id.replace(/\D/g, '')) || 0 }),
    job: (id) => jobs.find((j) => j.id === id) ?? w.ended?.find((j) => j.id === id),
    carrierAt: (c) => Object.entries(carriers).find(([, at]) => at.x === c.x && at.y === c.y)?.[0],
    laneCarriers: laneCarriersOf(level, Object.values(carriers)),
    carrier: (id) => (carriers[id] ? { id, level_id: 1, ...carriers[id]! } : undefined),
    unreachable: (id) => new Set(w.unreachable?.[id] ?? []),
    missing: (id) => w.missing?.includes(id) ?? false,
  };
}

/** The decisions as short strings: "kind job-id [bot] [x,y] [waiting_for]". */
function said(decisions: Decision[]): string[] {
  return decisions.map((d) => {
    const parts: string[] = [d.kind, d.job.id];
    if (d.kind === 'start') parts.push(`bot ${d.bot}`, d.target ? `${d.target.x},${d.target.y}` : 'queued');
    if (d.kind === 'move_aside') parts.push(`bot ${d.bot}`, `${d.to.x},${d.to.y}`);
    if (d.kind === 'wait') parts.push(d.wait.waiting_for);
    if (d.kind === 'set_aside') parts.push(d.carriers.join(','));
    if (d.kind === 'await_person') parts.push(`balcony ${d.balcony}`);
    if (d.kind === 'finish') parts.push(d.note);
    if (d.kind === 'give_up') parts.push(d.reason);
    return parts.join(' ');
  });
}

/**
 * C1 held up at balcony 1 to be stored; every lane but lane 1 full in front; C2 at the back of
 * lane 1 under a bot the planner has not placed yet, holding it up or not.
 */
function shutIn(lifted: boolean): World {
  return {
    jobs: [job('STORING', { id: 'st', carrier_id: 'C1' })],
    carriers: { C1: { x: 1, y: 0 }, C2: { x: 1, y: 4 }, C3: { x: 2, y: 2 }, C4: { x: 3, y: 2 }, C5: { x: 4, y: 2 }, C6: { x: 5, y: 2 }, C7: { x: 6, y: 2 } },
    bots: [bot(1, 1, 0, { lifted: true })], unplaced: [{ x: 1, y: 4, lifted }],
  };
}

/**
 * A retry (ret2) of a job whose try failed with bot 1 holding C6 up: the store still books C6 at
 * (6,3), behind C7 in lane 6, and bot 1, with no job, stands on the highway at (3,1).
 */
function retryOfHeldCarrier(type: JobType, holder: Partial<MotionBot>): World {
  const carrying = { kind: 'carrier' as const, phase: 'carrying' as const, staged_at: null, in_front_of: null };
  const last = job(type, { id: 'ret1', status: 'ABORTED', bot_id: 1, carrier_id: 'C6', progress: carrying, replaced_by: 'ret2' });
  return {
    jobs: [job(type, { id: 'ret2', carrier_id: 'C6', attempt: 2, recovers: 'ret1' })], ended: [last],
    carriers: { C6: { x: 6, y: 3 }, C7: { x: 6, y: 2 } }, bots: [bot(1, 3, 1, holder), bot(2, 7, 1)],
  };
}

t.test('decide: who starts, where to and with which bot, or why not', async (t) => {
  seq = 0;
  const cases: { name: string; world: () => World; want: string[] }[] = [
    {
      name: 'a retrieval of a free carrier goes to the free position nearest it with the nearest idle bot',
      world: () => ({ jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6', balcony_ids: [2] })], carriers: { C6: { x: 6, y: 2 } } }),
      want: ['start ret bot 2 6,0'],
    },
    {
      name: 'paused: nothing starts, and the job says so',
      world: () => ({ paused: true, jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })], carriers: { C6: { x: 6, y: 2 } } }),
      want: ['wait ret system_paused'],
    },
    {
      name: 'the line is down: the job waits for it',
      world: () => ({ line: { up: false, reason: 'device unavailable' }, jobs: [job('STORING', { id: 'st', carrier_id: 'C1' })], carriers: { C1: { x: 1, y: 0 } } }),
      want: ['wait st line'],
    },
    {
      name: 'no motion for the level: the job waits for bots',
      world: () => ({ bots: null, jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })], carriers: { C6: { x: 6, y: 2 } } }),
      want: ['wait ret bot'],
    },
    {
      name: 'every bot lost on the line: the reason is the line, not the battery',
      world: () => ({ bots: [bot(1, 0, 1, { online: false }), bot(2, 7, 1, { online: false })], jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })], carriers: { C6: { x: 6, y: 2 } } }),
      want: ['wait ret line'],
    },
    {
      name: 'a carrier with another in front of it in its lane waits while a job sets that one aside',
      world: () => ({ jobs: [job('BUFFERING', { id: 'buf', carrier_id: 'C7', status: 'CREATED' }), job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })], carriers: { C6: { x: 6, y: 3 }, C7: { x: 6, y: 2 } } }),
      want: ['wait ret carriers_in_front'],
    },
    {
      name: 'carriers in front that no job moves (stored there after the plan) are set aside, front first',
      world: () => ({ jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })], carriers: { C6: { x: 6, y: 4 }, C8: { x: 6, y: 3 }, C7: { x: 6, y: 2 } } }),
      want: ['set_aside ret C7,C8'],
    },
    {
      // Chaos seed 507696087: each pass set the missing carrier aside again, each try found
      // nothing and gave up, and the request grew 238 jobs.
      name: 'a carrier in front that a bot did not find where the store has it is not set aside again: the retrieval gives up',
      world: () => ({ jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })], carriers: { C6: { x: 6, y: 4 }, C8: { x: 6, y: 3 }, C7: { x: 6, y: 2 } }, missing: ['C8'] }),
      want: ['give_up ret carrier C8 in front of C6 was not found at 6,3, where the store has it: put it back there by hand, then post the request again'],
    },
    {
      name: 'a carrier that another retrieval takes is not set aside; one set aside in this pass is not set aside twice',
      world: () => ({
        jobs: [job('RETRIEVING', { id: 'ret1', carrier_id: 'C6' }), job('RETRIEVING', { id: 'ret2', carrier_id: 'C8' })],
        carriers: { C6: { x: 6, y: 4 }, C8: { x: 6, y: 3 }, C7: { x: 6, y: 2 } },
      }),
      want: ['set_aside ret1 C7', 'wait ret2 carriers_in_front'],
    },
    {
      name: 'a carrier being set down in front of it waits too',
      world: () => ({
        jobs: [job('STORING', { id: 'st', status: 'EXECUTING', bot_id: 1, carrier_id: 'C7', target: { x: 6, y: 2 } }), job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })],
        carriers: { C6: { x: 6, y: 3 }, C7: { x: 1, y: 0 } }, running: ['st'],
      }),
      want: ['wait ret carriers_in_front'],
    },
    {
      name: 'a carrier leaving a balcony goes first, to the deepest free space nearest it',
      world: () => ({
        jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6' }, 'r1'), job('STORING', { id: 'st', carrier_id: 'C1' }, 'r2')],
        carriers: { C6: { x: 6, y: 2 }, C1: { x: 1, y: 0 } }, bots: [bot(1, 1, 0, { lifted: true }), bot(2, 7, 1)],
      }),
      want: ['start st bot 1 1,4', 'start ret bot 2 6,0'],
    },
    {
      name: 'spaces its bot could not reach are not chosen again',
      world: () => ({
        jobs: [job('STORING', { id: 'st', carrier_id: 'C1' })], carriers: { C1: { x: 1, y: 0 } }, bots: [bot(1, 1, 0, { lifted: true })],
        unreachable: { C1: ['1:4', '2:4', '3:4', '4:4', '5:4', '6:4'] },
      }),
      want: ['start st bot 1 1,3'],
    },
    {
      name: 'after a failed try with no space in reach, a buffer will do',
      world: () => ({
        jobs: [job('STORING', { id: 'st', carrier_id: 'C1', attempt: 2 })], carriers: { C1: { x: 1, y: 0 } }, bots: [bot(1, 1, 0, { lifted: true })],
        unreachable: { C1: [1, 2, 3, 4, 5, 6].flatMap((x) => [2, 3, 4].map((y) => `${x}:${y}`)) },
      }),
      want: ['start st bot 1 4,0'],
    },
    {
      // After a brain restart, a bot that lifted C2 deep in lane 1 reports before the planner
      // places it: storing C1 in front of it would shut it in (loaded bots pass under no carrier).
      name: 'a lane where a bot not placed yet holds a carrier up is not chosen, nor its cell',
      world: () => shutIn(true),
      want: ['wait st storage_space'],
    },
    {
      name: 'the same level with that bot holding nothing: the lane is free to use',
      world: () => shutIn(false),
      want: ['start st bot 1 1,3'],
    },
    {
      name: 'higher priority first: it takes the one free position, the other queues with its carrier',
      world: () => ({
        jobs: [job('RETRIEVING', { id: 'low', carrier_id: 'C5', balcony_ids: [2] }, 'r1'), job('RETRIEVING', { id: 'high', carrier_id: 'C6', balcony_ids: [2] }, 'r2')],
        carriers: { C5: { x: 5, y: 2 }, C6: { x: 6, y: 2 }, C9: { x: 6, y: 0 } }, priority: { r2: 20 },
        bots: [bot(1, 0, 1), bot(2, 7, 1), bot(3, 3, 1), bot(4, 2, 1)],
      }),
      want: ['start high bot 2 5,0', 'start low bot 3 queued'],
    },
    {
      name: 'bots low on battery, reserved for work of their own, or stuck are not taken; a charging bot with enough is',
      world: () => ({
        jobs: [job('CHARGING', { id: 'ch', bot_id: 3, status: 'ACCEPTED' }, 'r9'), job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })],
        carriers: { C6: { x: 6, y: 2 } },
        bots: [bot(1, 6, 1, { battery: 15 }), bot(2, 5, 1, { stuck: true, idle: false }), bot(3, 4, 1), bot(4, 7, 2, { charging: true, battery: 85 })],
      }),
      want: ['start ret bot 4 6,0', 'wait ch bot'],
    },
    {
      name: 'a charging bot that could give its charger up but has not charged up to the top-up level is not taken for work',
      world: () => ({
        jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })],
        carriers: { C6: { x: 6, y: 2 } },
        bots: [bot(1, 6, 1, { battery: 15 }), bot(4, 7, 2, { charging: true, battery: 70 })],
      }),
      want: ['wait ret bot'],
    },
    {
      name: 'a carrier on a bot goes on with that bot, and waits while it is lost on the line',
      world: () => ({ jobs: [job('STORING', { id: 'st', carrier_id: 'C1' })], carriers: { C1: { x: 3, y: 1 } }, bots: [bot(1, 3, 1, { lifted: true, online: false }), bot(2, 7, 1)] }),
      want: ['wait st line'],
    },
    {
      // The store keeps the carrier where the failed try left it; the jobless bot holding it is
      // pushed along by traffic, and a bot sent to that cell finds nothing to lift.
      name: 'a retry whose last try ended with its bot holding the carrier goes on with that bot, wherever traffic took it',
      world: () => retryOfHeldCarrier('RETRIEVING', { lifted: true }),
      want: ['start ret2 bot 1 2,0'],
    },
    {
      name: 'a stored carrier\'s retry too: the holding bot takes it to the space nearest it, not the nearest idle bot to where the store books it',
      world: () => retryOfHeldCarrier('STORING', { lifted: true }),
      want: ['start ret2 bot 1 3,4'],
    },
    {
      name: 'that bot with its lift down holds it no more: the store\'s place counts, and the carrier in front is set aside',
      world: () => retryOfHeldCarrier('RETRIEVING', { lifted: false }),
      want: ['set_aside ret2 C7'],
    },
    {
      name: 'that bot holding it but busy with other work: the retry waits for it',
      world: () => retryOfHeldCarrier('RETRIEVING', { lifted: true, idle: false }),
      want: ['wait ret2 bot'],
    },
    {
      name: 'an idle bot in the way of a carrier it cannot take is moved aside (MOVING_BOT)',
      world: () => ({ jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6' })], carriers: { C6: { x: 6, y: 2 } }, bots: [bot(1, 6, 2, { battery: 10 }), bot(2, 0, 1)] }),
      want: ['move_aside ret bot 1 6,1'],
    },
    {
      name: 'a position where a stuck bot stands is not free',
      world: () => ({ jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6', balcony_ids: [2] })], carriers: { C6: { x: 6, y: 2 } }, bots: [bot(1, 6, 0, { stuck: true, idle: false }), bot(2, 7, 1)] }),
      want: ['start ret bot 2 5,0'],
    },
    {
      name: 'a job waiting out its retry backoff is left alone',
      world: () => ({ jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6', retry_at: NOW + 1000, attempt: 2 })], carriers: { C6: { x: 6, y: 2 } } }),
      want: [],
    },
    {
      name: 'a retry set before the wall clock went back 5 h is due once its own backoff would be, not 5 h later',
      world: () => ({ jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6', created_at: NOW + 5 * 3600_000, retry_at: NOW + 5 * 3600_000 + 4000, attempt: 2 })], carriers: { C6: { x: 6, y: 2 } } }),
      want: ['start ret bot 2 6,0'],
    },
    {
      name: 'a retry set before the wall clock went forward 5 h is due at once',
      world: () => ({ jobs: [job('RETRIEVING', { id: 'ret', carrier_id: 'C6', created_at: NOW - 5 * 3600_000, retry_at: NOW - 5 * 3600_000 + 4000, attempt: 2 })], carriers: { C6: { x: 6, y: 2 } } }),
      want: ['start ret bot 2 6,0'],
    },
    {
      name: 'a person job waits at the balcony where its carrier stands',
      world: () => ({ jobs: [job('PICKING', { id: 'pick', carrier_id: 'C1' })], carriers: { C1: { x: 2, y: 0 } } }),
      want: ['await_person pick balcony 1'],
    },
    {
      name: 'a started job nobody drives is taken up once its bot answers; until then it says why',
      world: () => ({
        jobs: [job('STORING', { id: 'a', status: 'EXECUTING', bot_id: 1, carrier_id: 'C1' }), job('STORING', { id: 'b', status: 'EXECUTING', bot_id: 2, carrier_id: 'C2' })],
        carriers: { C1: { x: 1, y: 0 }, C2: { x: 2, y: 0 } }, bots: [bot(1, 1, 0, { lifted: true }), bot(2, 2, 0, { lifted: true, online: false })],
      }),
      want: ['drive a', 'wait b bot'],
    },
    {
      name: 'a cancelled job whose bot has not lifted yet: the bot stops',
      world: () => ({
        jobs: [job('RETRIEVING', { id: 'ret', status: 'CANCELLING', bot_id: 1, carrier_id: 'C6', progress: { kind: 'carrier', phase: 'to_carrier', staged_at: null, in_front_of: null } })],
        carriers: { C6: { x: 6, y: 2 } }, running: ['ret'],
      }),
      want: ['abandon ret'],
    },
    {
      name: 'a charging job takes a free charger; with the charger taken by a full bot, a low bot takes it over',
      world: () => ({ jobs: [job('CHARGING', { id: 'ch', bot_id: 1 })], bots: [bot(1, 0, 1, { battery: 10 }), bot(2, 7, 2, { charging: true, battery: 95 })] }),
      want: ['start ch bot 1 7,2'],
    },
    {
      name: 'a carrier left on a bot with no work: set down where it is over a space, taken home from the highway',
      world: () => ({
        jobs: [job('CLEAR_AUTOBAHN', { id: 'here', carrier_id: 'C3' }), job('CLEAR_AUTOBAHN', { id: 'home', carrier_id: 'C5' })],
        carriers: { C3: { x: 3, y: 3 }, C5: { x: 5, y: 1 } }, bots: [bot(1, 3, 3, { lifted: true }), bot(2, 5, 1, { lifted: true })],
      }),
      want: ['start here bot 1 3,3', 'start home bot 2 5,4'],
    },
    {
      name: 'a bot to take off a charger it is not on, even holding a carrier: nothing to do',
      world: () => ({ jobs: [job('UNCHARGING', { id: 'un', bot_id: 1 })], bots: [bot(1, 2, 0, { lifted: true, idle: true })] }),
      want: ['finish un bot 1 is not on a charger'],
    },
    {
      name: 'every charger taken by a bot that must charge on: the job waits',
      world: () => ({ jobs: [job('CHARGING', { id: 'ch', bot_id: 1 })], bots: [bot(1, 0, 1, { battery: 30 }), bot(2, 7, 2, { charging: true, battery: 25 })] }),
      want: ['wait ch bot'],
    },
  ];
  for (const c of cases) t.same(said(decide(snapshot(c.world()))), c.want, c.name);
});

t.test('standsOnItsCell: a carrier a running job carries stands on no cell, wherever the store books it', async (t) => {
  const carrying = { kind: 'carrier' as const, phase: 'carrying' as const, staged_at: null, in_front_of: null };
  const cases: { name: string; jobs: JobRecord[]; want: boolean }[] = [
    { name: 'no job moves it', jobs: [], want: true },
    { name: 'its job has not lifted it yet', jobs: [job('RETRIEVING', { status: 'EXECUTING', bot_id: 1, carrier_id: 'C1', progress: { ...carrying, phase: 'to_carrier' } })], want: true },
    { name: 'lifted and carried off (booked still where it stood)', jobs: [job('RETRIEVING', { status: 'EXECUTING', bot_id: 1, carrier_id: 'C1', progress: carrying })], want: false },
    { name: 'carried by a job being cancelled', jobs: [job('STORING', { status: 'CANCELLING', bot_id: 1, carrier_id: 'C1', progress: carrying })], want: false },
    { name: 'a copy waiting to try again says nothing of where it is', jobs: [job('STORING', { status: 'ACCEPTED', carrier_id: 'C1', progress: carrying })], want: true },
    { name: 'another carrier is carried', jobs: [job('STORING', { status: 'EXECUTING', bot_id: 1, carrier_id: 'C2', progress: carrying })], want: true },
  ];
  for (const c of cases) t.equal(standsOnItsCell(c.jobs, 'C1'), c.want, c.name);
});

t.test('recover: a failed try is retried with a growing backoff, then waits for a person; never an endless loop', async (t) => {
  const at = (attempt: number, status: JobRecord['status'] = 'EXECUTING') => job('STORING', { attempt, status });
  const cases: { name: string; job: JobRecord; cause: Parameters<typeof recover>[1]['cause']; clearingInMs?: number; want: unknown }[] = [
    { name: 'a bot fault on the first try', job: at(1), cause: 'fault', want: { kind: 'retry', at: NOW + 1000, counts: true } },
    { name: 'no path on the second', job: at(2), cause: 'unreachable', want: { kind: 'retry', at: NOW + 4000, counts: true } },
    { name: 'the last try fails: a person', job: at(MAX_ATTEMPTS), cause: 'refused', want: { kind: 'person' } },
    { name: 'the bot lost on the line is not the job\'s failure', job: at(MAX_ATTEMPTS), cause: 'lost', want: { kind: 'retry', at: NOW, counts: false } },
    { name: 'no path while a stopped bot waits for its FAULT_CLEAR: tried after it, not counted', job: at(MAX_ATTEMPTS), cause: 'unreachable', clearingInMs: 3000, want: { kind: 'retry', at: NOW + 4000, counts: false } },
    { name: 'no path with the clearing under way now: a second later', job: at(1), cause: 'unreachable', clearingInMs: 0, want: { kind: 'retry', at: NOW + 1000, counts: false } },
    { name: 'a clearing elsewhere does not excuse another failure', job: at(MAX_ATTEMPTS), cause: 'refused', clearingInMs: 3000, want: { kind: 'person' } },
    { name: 'nothing to lift: given up at once', job: at(1), cause: 'no_carrier', want: { kind: 'give_up' } },
    { name: 'a cancelled job is not tried again', job: at(1, 'CANCELLING'), cause: 'fault', want: { kind: 'give_up' } },
    { name: 'the brain stops: the next one takes it up', job: at(1), cause: 'stopping', want: { kind: 'leave' } },
  ];
  for (const c of cases) t.same(recover(c.job, { cause: c.cause, reason: 'x', ...(c.clearingInMs === undefined ? {} : { clearingInMs: c.clearingInMs }) }, NOW), c.want, c.name);
  // However the failures come, a job's line of tries ends: count the copies until a person is asked.
  let j = at(1);
  let tries = 1;
  for (let r = recover(j, { cause: 'unreachable', reason: 'x' }, NOW); r.kind === 'retry'; r = recover(j, { cause: 'unreachable', reason: 'x' }, NOW)) {
    j = { ...j, attempt: j.attempt + (r.counts ? 1 : 0) };
    tries++;
  }
  t.equal(tries, MAX_ATTEMPTS, 'a bounded number of tries');
});

t.test('controlStep: the brain\'s own jobs run at once; a reconnection waits for its bots, a while', async (t) => {
  const connect = job('CONNECT_TO_BOTS', { created_at: NOW - 1000 });
  const facts = (online: number[], now = NOW) => ({ now, bots: [bot(1, 0, 1, { online: online.includes(1) }), bot(2, 7, 1, { online: online.includes(2) })], botsOnLevel: [1, 2] });
  t.same(controlStep(job('PAUSE'), facts([])), { kind: 'run' });
  t.same(controlStep(job('RETRIEVING'), facts([])), { kind: 'not_mine' });
  t.match(controlStep(connect, facts([1])), { kind: 'wait', wait: { waiting_for: 'line', reason: /bot\(s\) 2/ } });
  t.match(controlStep(connect, facts([1, 2])), { kind: 'run', note: /every bot/ });
  t.match(controlStep(connect, facts([1], NOW + CONNECT_WAIT_MS)), { kind: 'run', note: /bot\(s\) 2 did not answer/ });
  // Made before the wall clock went back 5 h: it does not wait those hours for the missing bot.
  t.match(controlStep(job('CONNECT_TO_BOTS', { created_at: NOW + 5 * 3600_000 }), facts([1])), { kind: 'run', note: /bot\(s\) 2 did not answer/ });
  t.match(controlStep(job('CONNECT_TO_BOTS', { created_at: NOW + 30_000 }), facts([1])), { kind: 'wait' }, 'a reading a little behind is no step');
});
