// The level runner against the real store (src/brain/worker/level/runner.ts): a pass's
// decisions are written together, and a decision that a commit overtook (a cancel between the
// pass and its write) is dropped alone. Before, one ConflictError ("job ... is CANCELLED and
// cannot become EXECUTING") threw away every start of the pass.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { ALL_COLLECTIONS } from '../../../src/domain/collections.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { Events } from '../../../src/domain/events/events.js';
import { Inventory } from '../../../src/domain/inventory/inventory.js';
import { CarrierPlaces } from '../../../src/domain/inventory/carrier-places.js';
import { OpenWork } from '../../../src/domain/requests/open-work.js';
import { Requests } from '../../../src/domain/requests/requests.js';
import { buildSite } from '../../../src/domain/site/load.js';
import { LevelRunner } from '../../../src/brain/worker/level/runner.js';
import { takeSnapshot } from '../../../src/brain/worker/level/snapshot.js';
import { decide } from '../../../src/brain/worker/policy/dispatch.js';
import type { GoalOutcome, LevelMotion, MotionBot, MotionGoal } from '../../../src/brain/worker/motion/motion.js';
import { createLogger } from '../../../src/log/logger.js';
import { e2eSite } from '../../fixtures/e2e-site.js';
import { until } from '../../helpers/until.js';

/** The e2e site's level 1 in a real store, with its runner and snapshots; no bot is asked anything unless a motion is given. */
async function level1(t: Test, hands?: HandMotion) {
  const motion = (hands ?? { levelId: 1, bots: () => [], onBackOnLine: () => () => undefined }) as unknown as LevelMotion;
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-runner-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const site = buildSite(e2eSite());
  const store = await Store.open({ dir }, ALL_COLLECTIONS, MIGRATIONS);
  t.teardown(() => store.close());
  const events = new Events(store, Date.now);
  const inventory = new Inventory({ store, site, now: Date.now, events });
  await inventory.seedFromLayout();
  const requests = new Requests({ store, site, inventory, events, now: Date.now, refresh: () => undefined, externalPicking: () => false, botLevel: () => undefined });
  const work = new OpenWork(store, [1]);
  const carriers = new CarrierPlaces(store);
  t.teardown(() => {
    work.close();
    carriers.close();
  });
  const level = site.level(1)!;
  /** Snapshots the runner took itself. */
  const taken = { count: 0 };
  const runner: LevelRunner = new LevelRunner({ level, requests, inventory, carriers, motion, logger: createLogger('silent'), now: Date.now, snapshot: () => (taken.count++, snapshot()) });
  const snapshot = () => takeSnapshot({
    level, work, carriers, findJob: (id) => requests.findJob(id), bots: () => motion.bots(), unplaced: () => [], line: () => ({ up: true }), paused: () => false, chargeBelow: () => 20, now: Date.now,
  }, runner);
  return { store, requests, inventory, runner, snapshot, taken };
}

/** A goal a bot was given, waiting for the test to say how it ended. */
interface GivenGoal { bot: number; goal: MotionGoal; end(outcome: GoalOutcome | Error): void }

/**
 * Bots moved by the test's hand: a goal ends when the test ends it (ok: the bot stands on the
 * goal, lift up or down as it said). `seen` is what the bots' last reports said where it differs
 * (a bot off the line moved on after its last report).
 */
class HandMotion {
  readonly levelId = 1;
  readonly seen = new Map<number, { x: number; y: number; lifted: boolean }>();
  private readonly given: GivenGoal[] = [];
  private wake: (() => void) | undefined;
  private back: ((botId: number, standing: { x: number; y: number; lifted: boolean }) => void) | undefined;

  constructor(private readonly list: MotionBot[]) {}

  bot(id: number): MotionBot {
    return this.list.find((b) => b.id === id)!;
  }

  bots(): MotionBot[] {
    return this.list.map((b) => ({ ...b }));
  }

  unplaced() {
    return [];
  }

  refreshCell(): void {}

  onBackOnLine(listener: NonNullable<HandMotion['back']>): () => void {
    this.back = listener;
    return () => (this.back = undefined);
  }

  /** A bot lost holding a carrier answers again, standing so. */
  answersAgain(id: number, standing: { x: number; y: number; lifted: boolean }): void {
    Object.assign(this.bot(id), { online: true, ...standing });
    this.back?.(id, standing);
  }

  lastSeen(id: number) {
    const b = this.bot(id);
    return this.seen.get(id) ?? { x: b.x, y: b.y, lifted: b.lifted };
  }

  go(id: number, goal: MotionGoal): Promise<GoalOutcome> {
    const b = this.bot(id);
    b.idle = false;
    return new Promise((resolve, reject) => {
      this.given.push({
        bot: id, goal, end: (outcome) => {
          b.idle = true;
          if (outcome instanceof Error) return reject(outcome);
          if (outcome.ok) Object.assign(b, { x: goal.x, y: goal.y, lifted: goal.then === 'lift' || (goal.then !== 'lower' && b.lifted) });
          resolve(outcome);
        },
      });
      this.wake?.();
    });
  }

  /** The goals given to a bot and not yet taken by `next()`. */
  goalsOf(id: number): MotionGoal[] {
    return this.given.filter((g) => g.bot === id).map((g) => g.goal);
  }

  /** The next goal given to a bot (waits for it). */
  async next(): Promise<GivenGoal> {
    while (this.given.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.given.shift()!;
  }

  abandon(): boolean {
    return false;
  }
}

/** An idle bot with a full battery at x,y. */
const idleBot = (id: number, x: number, y: number): MotionBot => ({ id, level_id: 1, online: true, idle: true, x, y, lifted: false, charging: false, battery: 100, faulted: false, stuck: false });

/** Polls until the job of `type` of a request is in `status` (the runner writes after each goal). */
async function jobIn(requests: Requests, requestId: string, type: string, status: string) {
  return until(`${type} of ${requestId} to be ${status}`, async () => requests.jobsOf(requestId).find((j) => j.type === type && j.status === status), 5000);
}

t.test('a pass whose jobs wait as they said already writes nothing, not even an empty commit', async (t) => {
  const { store, requests, runner, snapshot } = await level1(t);
  // No bots on the level: the retrieval waits for one, and says so.
  const fetch = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] })).request.id;
  await runner.apply(decide(snapshot()));
  const retrieving = () => requests.jobsOf(fetch).find((j) => j.type === 'RETRIEVING')!;
  t.match(retrieving().wait, { waiting_for: 'bot' }, 'the first pass wrote why it waits');
  // Counted at the store: a transaction that changes nothing is announced to no one.
  let writes = 0;
  const write = store.write.bind(store);
  store.write = (fn) => (writes++, write(fn));
  for (let i = 0; i < 3; i++) await runner.apply(decide(snapshot()));
  t.equal(writes, 0, 'three passes more, no transaction');
  t.match(retrieving().wait, { waiting_for: 'bot' }, 'the wait is as it was');
});

t.test('a cancel between a pass and its write voids that one decision; the others are written', async (t) => {
  const { requests, runner, snapshot } = await level1(t);
  // Two carriers brought in at balconies: each first waits for a person (ONBOARDING).
  const first = (await requests.create({ type: 'CARRIER_ONBOARDING', carrier_id: 'N1', balcony_id: 1 })).request.id;
  const second = (await requests.create({ type: 'CARRIER_ONBOARDING', carrier_id: 'N2', balcony_id: 2 })).request.id;
  const decisions = decide(snapshot());
  t.same(decisions.map((d) => [d.kind, d.job.request_id]).sort(), [['await_person', first], ['await_person', second]].sort(), 'both wait for a person');
  // The other thread's cancel lands before this pass writes.
  await requests.cancel(first);
  await runner.apply(decisions);
  const status = (id: string) => requests.jobsOf(id).find((j) => j.type === 'ONBOARDING')!.status;
  t.equal(status(first), 'CANCELLED', 'the cancelled one stays cancelled');
  t.equal(status(second), 'EXECUTING', 'the other one waits for its person as decided');
  t.match(requests.jobsOf(second).find((j) => j.type === 'ONBOARDING')!.wait, { waiting_for: 'trigger', reason: /balcony 2/ });
});

t.test('carriers set in front of a planned retrieval that no job moves are set aside by its request, once', async (t) => {
  const { requests, inventory, runner, snapshot } = await level1(t);
  // C3 stands alone at the front of lane 4 when the FETCH is planned: no BUFFERING in its plan.
  const fetch = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] })).request.id;
  t.same(requests.jobsOf(fetch).map((j) => j.type).sort(), ['CHECKING', 'RETRIEVING', 'STORING'], 'nothing to set aside when planned');
  // Then (a recovery after a fault, a person's hands) C3 ends at the back and C4 in front of it.
  await requests.write(() => {
    inventory.placeCarrierInWrite('C3', 1, 4, 4);
    inventory.placeCarrierInWrite('C4', 1, 4, 3);
  });
  await runner.apply(decide(snapshot()));
  const jobsNow = requests.jobsOf(fetch);
  const buffering = jobsNow.filter((j) => j.type === 'BUFFERING');
  t.equal(buffering.length, 1, 'one BUFFERING');
  t.match(buffering[0], { carrier_id: 'C4', status: 'ACCEPTED', progress: { in_front_of: 'C3' } }, 'C4 is set aside for C3');
  const back = jobsNow.filter((j) => j.type === 'STORING' && j.carrier_id === 'C4');
  t.match(back, [{ status: 'CREATED', parent_job_ids: [buffering[0]!.id] }], 'and stored again after it is out of the way');
  t.match(jobsNow.find((j) => j.type === 'RETRIEVING')!.wait, { waiting_for: 'carriers_in_front', reason: /C4 set aside first/ });
  // The next pass sees the BUFFERING: nothing is added twice.
  await runner.apply(decide(snapshot()));
  t.equal(requests.jobsOf(fetch).length, jobsNow.length, 'no job added by the next pass');
  const request = requests.request(fetch);
  t.match(request, { status: 'ACCEPTED' }, 'the request is still open, its counters untouched');
});

t.test('a bot that brings its carrier to a position where the store has another fails that try once, with the reason; no endless retry', async (t) => {
  const hands = new HandMotion([idleBot(1, 4, 1), idleBot(2, 7, 1)]);
  const { requests, inventory, runner, snapshot } = await level1(t, hands);
  // Balcony 2's other position holds C1: C3 can only go to 5,0.
  await requests.write(() => inventory.placeCarrierInWrite('C1', 1, 6, 0));
  const fetch = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] })).request.id;
  await runner.apply(decide(snapshot()));
  const lift = await hands.next();
  t.match(lift, { bot: 1, goal: { x: 4, y: 2, then: 'lift' } });
  lift.end({ ok: true });
  const bring = await hands.next();
  t.match(bring, { bot: 1, goal: { x: 5, y: 0, then: 'hold' } });
  // Meanwhile a record made from a stale report puts C4 on that position.
  await requests.write(() => inventory.placeCarrierInWrite('C4', 1, 5, 0));
  bring.end({ ok: true });
  const aborted = await jobIn(requests, fetch, 'RETRIEVING', 'ABORTED');
  t.match(aborted.ended_because, /carrier C3 at 5,0, where the store has carrier C4: carrier C4 is not there/, 'the try ends, saying which record is wrong');
  t.equal(aborted.attempt, 1);
  const copy = requests.jobsOf(fetch).find((j) => j.type === 'RETRIEVING' && j.status !== 'ABORTED')!;
  t.match(copy, { attempt: 2, status: 'ACCEPTED' }, 'a copy tries again after its backoff, counted: a person gets it after the last try');
  t.ok(copy.retry_at! > Date.now(), 'not at once');
  t.match(inventory.carrierOnCell(1, 5, 0), 'C4', 'the store keeps the other record for a person to judge');
  t.equal(runner.running.size, 0, 'nothing is driven any more');
  // Before, the final write threw; the job stayed EXECUTING and every pass drove it again.
  await runner.apply(decide(snapshot()));
  t.equal(runner.running.size, 0, 'the next pass drives nothing');
});

/** A FETCH of C3 to balcony 2 by bot 1, checked there, up to the goal that takes C3 home (given, not ended). */
async function fetchedAndGoingHome(t: Test, hands: HandMotion, l: Pick<Awaited<ReturnType<typeof level1>>, 'requests' | 'inventory' | 'runner' | 'snapshot'>) {
  const { requests, inventory, runner, snapshot } = l;
  const fetch = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] })).request.id;
  await runner.apply(decide(snapshot()));
  (await hands.next()).end({ ok: true });
  (await hands.next()).end({ ok: true });
  await jobIn(requests, fetch, 'RETRIEVING', 'SUCCEEDED');
  t.equal(inventory.carrierOnCell(1, 5, 0), 'C3', 'C3 held at 5,0 for its check');
  await runner.apply(decide(snapshot()));
  await requests.trigger((await jobIn(requests, fetch, 'CHECKING', 'EXECUTING')).id, {});
  await runner.apply(decide(snapshot()));
  const home = await hands.next();
  t.match(home, { bot: 1, goal: { then: 'lower' } }, 'bot 1 takes C3 home');
  return { fetch, home, space: { x: home.goal.x, y: home.goal.y } };
}

t.test('a lost bot whose last report is a position given since to another carrier: its carrier is not put there', async (t) => {
  const hands = new HandMotion([idleBot(1, 4, 1), idleBot(2, 7, 1)]);
  const { requests, inventory, runner, snapshot } = await level1(t, hands);
  await requests.write(() => inventory.placeCarrierInWrite('C1', 1, 6, 0));
  const { fetch: first, home, space } = await fetchedAndGoingHome(t, hands, { requests, inventory, runner, snapshot });
  await until('C3 booked to its space', async () => inventory.carrierOnCell(1, space.x, space.y) === 'C3');
  // Its report still says 5,0; the position is free in the store: the next carrier gets it.
  const second = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] })).request.id;
  await runner.apply(decide(snapshot()));
  const lift = await hands.next();
  t.match(lift, { bot: 2, goal: { x: 6, y: 2, then: 'lift' } });
  lift.end({ ok: true });
  const bring = await hands.next();
  t.match(bring, { bot: 2, goal: { x: 5, y: 0, then: 'hold' } });
  // The line drops: bot 1 finishes its segment unseen; the brain's last report of it is 5,0.
  Object.assign(hands.bot(1), { online: false, x: 5, y: 1 });
  hands.seen.set(1, { x: 5, y: 0, lifted: true });
  home.end({ ok: false, cause: 'lost', reason: 'bot 1 went off the radio line' });
  await jobIn(requests, first, 'STORING', 'ABORTED');
  t.equal(inventory.carrierOnCell(1, 5, 0), undefined, 'C3 is not put on the position from the stale report');
  t.equal(inventory.carrierOnCell(1, space.x, space.y), 'C3', 'it stays booked to its space until its bot reports again');
  bring.end({ ok: true });
  const done = await jobIn(requests, second, 'RETRIEVING', 'SUCCEEDED');
  t.ok(done, 'C4 is set at the position');
  t.equal(inventory.carrierOnCell(1, 5, 0), 'C4');
});

t.test('a bot lost holding its carrier that answers again with its lift down set it down there: the store follows it', async (t) => {
  const hands = new HandMotion([idleBot(1, 4, 1)]);
  const { requests, inventory, runner, snapshot } = await level1(t, hands);
  const { fetch, home, space } = await fetchedAndGoingHome(t, hands, { requests, inventory, runner, snapshot });
  // The line drops as it lowers C3 on its space; its last report has it carrying at 4,1.
  Object.assign(hands.bot(1), { online: false });
  hands.seen.set(1, { x: 4, y: 1, lifted: true });
  home.end({ ok: false, cause: 'lost', reason: 'bot 1 went off the radio line' });
  await jobIn(requests, fetch, 'STORING', 'ABORTED');
  t.equal(inventory.carrierOnCell(1, 4, 1), 'C3', 'while it is away, C3 is booked where its bot was last seen');
  hands.answersAgain(1, { ...space, lifted: false });
  await until('C3 booked where its bot set it down', async () => inventory.carrierOnCell(1, space.x, space.y) === 'C3', 5000);
  t.equal(inventory.carrierOnCell(1, 4, 1), undefined, 'and no longer on the highway');
});

t.test('a carrier not found where the store has it is missing until its record changes', async (t) => {
  const hands = new HandMotion([idleBot(1, 4, 1)]);
  const { requests, inventory, runner, snapshot } = await level1(t, hands);
  const fetch = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] })).request.id;
  await runner.apply(decide(snapshot()));
  t.equal(runner.missing('C3'), false);
  (await hands.next()).end({ ok: false, cause: 'no_carrier', reason: 'LIFT refused: NO_CARRIER' });
  await jobIn(requests, fetch, 'RETRIEVING', 'ABORTED');
  t.equal(runner.missing('C3'), true, 'missing: no other job is sent to look for it there');
  await requests.write(() => inventory.placeCarrierInWrite('C3', 1, 3, 1));
  t.equal(runner.missing('C3'), false, 'a person put it right: it may be worked again');
});

t.test('a bot job that throws is a failed try, counted, not a job every pass drives into the same error', async (t) => {
  const hands = new HandMotion([idleBot(1, 4, 1)]);
  const { requests, runner, snapshot } = await level1(t, hands);
  const fetch = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] })).request.id;
  await runner.apply(decide(snapshot()));
  (await hands.next()).end(new Error('a bug'));
  const aborted = await jobIn(requests, fetch, 'RETRIEVING', 'ABORTED');
  t.match(aborted.ended_because, /failed unexpectedly: a bug/);
  t.match(requests.jobsOf(fetch).find((j) => j.type === 'RETRIEVING' && j.status !== 'ABORTED'), { attempt: 2 }, 'tried again later, counted');
  await runner.apply(decide(snapshot()));
  t.equal(runner.running.size, 0, 'the next pass drives nothing');
});

/**
 * Both positions of balcony 2 hold carriers and two FETCHes to it are started: each bot is sent
 * to lift its carrier (the goals given, not ended), then waits with it for a position, at the
 * one buffer beside the balcony (4,0) if it is free.
 */
async function twoForAFullBalcony(t: Test) {
  // Four bots: a level queues retrievals only while it keeps a bot per balcony besides.
  const hands = new HandMotion([idleBot(1, 4, 1), idleBot(2, 7, 1), idleBot(3, 0, 1), idleBot(4, 1, 1)]);
  const level = await level1(t, hands);
  const { requests, inventory, runner, snapshot } = level;
  await requests.write(() => {
    inventory.placeCarrierInWrite('C1', 1, 6, 0);
    inventory.placeCarrierInWrite('C2', 1, 5, 0);
  });
  await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] });
  await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] });
  await runner.apply(decide(snapshot()));
  const lifts = [await hands.next(), await hands.next()];
  return { ...level, hands, lifts };
}

t.test('two bots waiting for the same full balcony are not sent to the same buffer', async (t) => {
  const { hands, lifts } = await twoForAFullBalcony(t);
  t.same(lifts.map((g) => g.goal.then), ['lift', 'lift'], 'both bots are sent to lift their carriers');
  // Both lift at once: their waits for a position run side by side, each choosing from
  // snapshots taken before the other's choice was written.
  for (const g of lifts) g.end({ ok: true });
  const first = await hands.next();
  t.match(first.goal, { x: 4, y: 0, then: 'hold' }, 'one bot is sent to the buffer');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const other = lifts.find((g) => g.bot !== first.bot)!.bot;
  t.same(hands.goalsOf(other).filter((g) => g.x === 4 && g.y === 0), [], 'the other is not sent there too');
  t.equal(hands.bot(other).idle, true, 'it waits where it is, holding its carrier');
});

t.test('bots waiting for a full balcony read one snapshot a poll between them, not one each', async (t) => {
  // On a large site hundreds of bots wait for a position at once; a snapshot each, every
  // poll, was the brain thread's largest cost.
  const { hands, lifts, taken } = await twoForAFullBalcony(t);
  for (const g of lifts) g.end({ ok: true });
  (await hands.next()).end({ ok: true }); // one of them to the buffer beside the balcony
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.same(hands.goalsOf(1).concat(hands.goalsOf(2), hands.goalsOf(3), hands.goalsOf(4)), [], 'both wait, given no goal');
  // Held up longer than a poll, the event loop then finds both waits due in one turn.
  const before = taken.count;
  const end = Date.now() + 200;
  while (Date.now() < end);
  // The loop's next timers phase runs every due timer; its check phase comes after them all.
  await new Promise((resolve) => setTimeout(resolve, 0));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(taken.count - before, 1, 'the two waits read one snapshot');
});
