/**
 * Requests and their jobs as durable facts: creation (validated against the warehouse and
 * split into a job graph in one transaction), every job transition with its event, the
 * request status and entity counters derived in the same transaction, reservations that keep
 * `fulfillable`/`replenishable` exact, triggers that book inventory, and cancellation.
 * The brain drives bot jobs through `moveJob`; people drive person jobs through `trigger`.
 */
import type { Store } from '../../store/store.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { PRUNED_MARK } from '../history/marks.js';
import { prunedReason } from '../history/retention.js';
import { EVENT } from '../events/catalogue.js';
import type { Events } from '../events/events.js';
import type { Inventory } from '../inventory/inventory.js';
import { carriers, positionKey, skus } from '../inventory/records.js';
import type { Site } from '../site/load.js';
import { RequestAbortedError } from './abort.js';
import { Bots } from '../bots/bots.js';
import { retriedProgress } from './records.js';
import type { CreateInput, TriggerInput } from './inputs.js';
import { assertMove, entityCounters, requestStatus } from './lifecycle.js';
import { planRequest, type Plan } from './plan.js';
import { HOME_JOBS, isFinalJob, jobs, newJob, PERSON_JOBS, requests, type JobRecord, type JobStatus, type JobType, type JobWait, type RequestRecord } from './records.js';
import { newRecordId } from './record-id.js';
import type { TriggerStatus } from './vocabulary.js';

export interface RequestsDeps {
  store: Store;
  site: Site;
  inventory: Inventory;
  /** Told, once a write is durable, which carriers and SKUs it changed (the inventory view follows). */
  refresh: (carriers: readonly string[], skus: readonly string[]) => void;
  events: Events;
  now: () => number;
  externalPicking: () => boolean;
  /** The level of a bot in the database: undefined when unknown, null while offboarded. */
  botLevel: (botId: number) => number | null | undefined;
}

export interface CreateOptions {
  /** Idempotency-Key header, already scoped to the caller. */
  idempotencyKey?: string;
}

export interface Created {
  request: RequestRecord;
  /** False when an earlier post with the same Idempotency-Key made it. */
  created: boolean;
}

/** Jobs whose target is part of their plan, not chosen by dispatch. */
const PLANNED_TARGET: ReadonlySet<JobRecord['type']> = new Set(['WRITE_RFID_TAG', 'CHECK_RFID_TAG', 'MOVING_BOT']);

export class Requests {
  /** Carriers and SKUs the write in progress changed, for this thread's inventory view. */
  private readonly carriersTouched = new Set<string>();
  private readonly skusTouched = new Set<string>();

  constructor(private readonly deps: RequestsDeps) {}

  private get store(): Store {
    return this.deps.store;
  }

  // ------------------------------------------------------------------ reads

  /** The request, or a NotFoundError. */
  request(id: string): RequestRecord {
    const r = this.store.collection(requests).get(id);
    if (!r) throw new NotFoundError(prunedReason('request', id, this.store.sequence(PRUNED_MARK.requests)) ?? `request ${id} does not exist`);
    return r;
  }

  /** Every job of a request, in creation order. */
  jobsOf(requestId: string): JobRecord[] {
    return [...this.store.collection(jobs).findBy('request_id', requestId)].sort((a, b) => a.seq - b.seq);
  }

  /** The job, or a NotFoundError. */
  job(id: string): JobRecord {
    const j = this.store.collection(jobs).get(id);
    if (!j) throw new NotFoundError(prunedReason('job', id, this.store.sequence(PRUNED_MARK.jobs)) ?? `job ${id} does not exist`);
    return j;
  }

  /** The job, or undefined. */
  findJob(id: string): JobRecord | undefined {
    return this.store.collection(jobs).get(id);
  }

  /** Requests not in a final status. */
  openRequests(): RequestRecord[] {
    const out: RequestRecord[] = [];
    for (const key of this.store.collection(requests).keysBy('open', 1)) {
      const r = this.store.collection(requests).get(key);
      if (r) out.push(r);
    }
    return out;
  }

  /** Why open work holds an SKU (SKU deletion is refused then), or undefined. */
  skuHold(skuId: string): string | undefined {
    for (const j of this.store.collection(jobs).findBy('sku_id', skuId)) {
      if (!isFinalJob(j.status)) return `open request ${j.request_id} (job ${j.type} ${j.id}) works on it`;
    }
    return undefined;
  }

  // ------------------------------------------------------------------ creation

  /**
   * Creates a request from a validated input. A request the warehouse cannot do is stored as
   * ABORTED with its feedback and a RequestAbortedError is thrown; with an Idempotency-Key
   * seen before, the first answer is given again and nothing new is made.
   */
  async create(input: CreateInput, options: CreateOptions = {}, priority = 10): Promise<Created & { placements: RequestRecord['placements'] }> {
    const outcome = await this.write(() => {
      if (options.idempotencyKey) {
        const earlier = this.store.collection(requests).findOne('idempotency_key', options.idempotencyKey);
        if (earlier) return { request: earlier, created: false };
      }
      const now = this.deps.now();
      const id = newRecordId();
      const plan = planRequest({
        store: this.store, site: this.deps.site, now, externalPicking: this.deps.externalPicking(), botLevel: this.deps.botLevel,
        nextSeq: () => this.store.nextId('job'), openWork: (levelId) => this.store.collection(jobs).countBy('open', levelId),
      }, id, input);
      // The spec takes any number and shows an integer: 10.4 is a normal request, 10.6 a priority one.
      const request = this.newRequest(id, plan, Math.round(priority), now, options.idempotencyKey ?? null);
      if (plan.abort.failed) {
        request.status = 'ABORTED';
        request.abort_feedback = plan.abort.feedback;
        // Nothing of it will be done: what it asked for is cancelled, so its counters add up.
        request.entities = request.entities.map((e) => ({ ...e, cancelled_quantity: e.total_quantity }));
        this.store.collection(requests).put(request);
        this.deps.events.record(EVENT.requestRefused, `${request.type} request ${id} aborted: ${plan.abort.feedback.map((f) => `${f.entity_type} ${f.entity_id} ${f.error_code}`).join(', ')}`, { request_id: id });
        return { request, created: true };
      }
      this.store.collection(requests).put(request);
      for (const job of plan.jobs) {
        this.store.collection(jobs).put(job);
        this.reserve(job, +1);
      }
      this.deps.events.record(EVENT.requestCreated, `${request.type} request ${id} accepted with ${plan.jobs.length} job(s), priority ${request.priority}`, { request_id: id, level_id: request.level_id });
      this.settle(id);
      return { request: this.request(id), created: true };
    });
    if (outcome.request.abort_feedback) throw new RequestAbortedError(outcome.request.id, outcome.request.abort_feedback);
    return { ...outcome, placements: outcome.request.placements };
  }

  private newRequest(id: string, plan: Plan, priority: number, now: number, key: string | null): RequestRecord {
    return {
      id, type: plan.type, input_type: plan.input_type, status: 'CREATED', priority, counter: this.store.nextId('request'), level_id: plan.level_id, bot_id: plan.bot_id,
      placing_pos: null, entities: plan.entities, warnings: plan.warnings, cancel_requested: false, idempotency_key: key, abort_feedback: null,
      placements: plan.placements.length > 0 ? plan.placements : null, created_at: now, updated_at: now,
    };
  }

  // ------------------------------------------------------------------ transitions

  /** Moves a job to `to` with changes to its fields, in the current write; settles its request. */
  moveJob(job: JobRecord, to: JobStatus, patch: Partial<JobRecord> = {}, note?: string): JobRecord {
    const current = this.store.collection(jobs).get(job.id) ?? job;
    if (current.status !== to) assertMove(current, to);
    const next: JobRecord = { ...current, ...patch, status: to, updated_at: this.deps.now() };
    this.store.collection(jobs).put(next);
    if (current.status !== to) {
      if (isFinalJob(to)) this.reserve(current, -1);
      const kind = to === 'ABORTED' ? EVENT.jobAborted : EVENT.jobStatus;
      this.deps.events.record(kind, `job ${next.type} ${next.id} ${current.status} -> ${to}${note ? `: ${note}` : ''}`, {
        request_id: next.request_id, bot_id: next.bot_id === null ? null : String(next.bot_id), level_id: next.level_id,
      });
    }
    if (next.carrier_id) this.carriersTouched.add(next.carrier_id);
    return next;
  }

  /**
   * Adds a job to an open request that clears the way for one of its jobs (a MOVING_BOT, a
   * carrier set aside): ready at once, or after `fields.parent_job_ids`. It serves no entity,
   * so the request's counters do not change. Call inside a write.
   */
  addJob(requestId: string, type: JobType, fields: Partial<JobRecord>, facts?: Parameters<typeof newJob>[2]): JobRecord {
    const waits = (fields.parent_job_ids ?? []).length > 0;
    const job = newJob(
      { id: newRecordId(), request_id: requestId, type, entity_id: String(fields.bot_id ?? fields.carrier_id ?? requestId), entity_index: -1, seq: this.store.nextId('job'), now: this.deps.now() },
      { ...fields, status: waits ? 'CREATED' : 'ACCEPTED' }, facts,
    );
    this.store.collection(jobs).put(job);
    this.deps.events.record(EVENT.jobStatus, `job ${type} ${job.id} added: ${job.status}`, { request_id: requestId, bot_id: job.bot_id === null ? null : String(job.bot_id), level_id: job.level_id });
    this.settle(requestId);
    return job;
  }

  /** Changes fields of a job (its wait, progress, bot, balcony, target) without a transition. */
  updateJob(job: JobRecord, patch: Partial<JobRecord>): JobRecord {
    const current = this.store.collection(jobs).get(job.id) ?? job;
    const next = { ...current, ...patch, updated_at: this.deps.now() };
    this.store.collection(jobs).put(next);
    return next;
  }

  /** Sets why a job waits (null: it does not); writes only when that changed. */
  explain(job: JobRecord, wait: JobWait | null): JobRecord {
    const current = this.store.collection(jobs).get(job.id) ?? job;
    if (current.wait?.waiting_for === wait?.waiting_for && current.wait?.reason === wait?.reason) return current;
    return this.updateJob(current, { wait });
  }

  /**
   * Aborts a job the system could not finish (spec 3.1: the system tries to recover). With
   * `retry`, a copy takes its place (children wait for the copy), not dispatched before
   * `retry.at`, counting one attempt more unless the failure was not the job's (a line lost).
   */
  abortJob(job: JobRecord, reason: string, retry: { at: number; counts: boolean } | null): JobRecord | undefined {
    const current = this.store.collection(jobs).get(job.id) ?? job;
    let replacement: JobRecord | undefined;
    if (retry) {
      const now = this.deps.now();
      replacement = {
        ...current, id: newRecordId(), status: 'ACCEPTED', bot_id: null, seq: this.store.nextId('job'), created_at: now, updated_at: now,
        wait: retry.at > now ? { waiting_for: 'retry', reason: `tried again from ${new Date(retry.at).toISOString()}: ${reason}` } : null,
        ended_because: null, progress: retriedProgress(current.progress), attempt: current.attempt + (retry.counts ? 1 : 0),
        recovers: current.id, replaced_by: null, retry_at: retry.at > now ? retry.at : null,
        // A place dispatch chose is chosen again; a cell the plan named (a tag, a bot's place) stays.
        target: PLANNED_TARGET.has(current.type) ? current.target : null,
      };
      this.store.collection(jobs).put(replacement);
      this.reserve(replacement, +1);
      for (const child of this.jobsOf(current.request_id)) {
        if (child.parent_job_ids.includes(current.id)) this.updateJob(child, { parent_job_ids: child.parent_job_ids.map((p) => (p === current.id ? replacement!.id : p)) });
      }
    }
    this.moveJob(current, 'ABORTED', { wait: null, ended_because: reason, replaced_by: replacement?.id ?? null }, reason);
    return replacement;
  }

  /**
   * A job that failed too often for the system to go on by itself: ERROR, waiting for a person
   * (POST /trigger retries it or gives it up), with an error event that says why.
   */
  failJob(job: JobRecord, reason: string): JobRecord {
    const current = this.store.collection(jobs).get(job.id) ?? job;
    const wait: JobWait = { waiting_for: 'person', reason: `${reason}; after ${current.attempt} attempt(s) it waits for a person: fix the cause, then POST /api/v2/trigger/${current.id} to try again` };
    const failed = this.moveJob(current, 'ERROR', { wait, bot_id: null, retry_at: null }, reason);
    this.deps.events.record(EVENT.jobError, `job ${failed.type} ${failed.id} waits for a person: ${reason}`, {
      request_id: failed.request_id, level_id: failed.level_id, bot_id: current.bot_id === null ? null : String(current.bot_id),
    });
    return failed;
  }

  /**
   * Readies jobs whose parents have ended, ends those that can no longer run, and writes the
   * request's status and counters. Call inside a write after changing jobs of the request.
   */
  settle(requestId: string): void {
    const request = this.request(requestId);
    let list = this.jobsOf(requestId);
    for (let changed = true; changed; ) {
      changed = false;
      const byId = new Map(list.map((j) => [j.id, j]));
      for (const job of list) {
        if (job.status !== 'CREATED') continue;
        const parents = job.parent_job_ids.map((id) => byId.get(id)).filter((p): p is JobRecord => p !== undefined);
        if (!parents.every((p) => isFinalJob(p.status))) continue;
        // A carrier is stored once nothing else of the request moves it (a cancelled retrieval
        // may still be on its way to the balcony).
        if (job.type === 'STORING' && list.some((o) => o !== job && o.carrier_id === job.carrier_id && o.type !== 'STORING' && !isFinalJob(o.status))) continue;
        const failed = parents.find((p) => p.status !== 'SUCCEEDED');
        let to: JobStatus;
        if (job.type === 'STORING') to = this.carrierAway(job) ? 'ACCEPTED' : 'CANCELLED';
        else if (request.cancel_requested) to = 'CANCELLED';
        else if (failed) to = failed.status === 'ABORTED' ? 'ABORTED' : 'CANCELLED';
        else to = 'ACCEPTED';
        this.moveJob(job, to, to === 'ACCEPTED' ? {} : { ended_because: failed ? `parent ${failed.type} ${failed.id} ended ${failed.status}` : 'request cancelled' });
        changed = true;
      }
      if (changed) list = this.jobsOf(requestId);
    }
    const status = requestStatus(request, list);
    const entities = request.entities.map((e, i) => entityCounters(e, i, list));
    if (status === request.status && JSON.stringify(entities) === JSON.stringify(request.entities)) return;
    const next = { ...request, status, entities, updated_at: this.deps.now() };
    this.store.collection(requests).put(next);
    if (status !== request.status) {
      this.deps.events.record(EVENT.requestStatus, `${request.type} request ${requestId} ${request.status} -> ${status}`, { request_id: requestId, level_id: request.level_id });
    }
  }

  /** A carrier a STORING job is about stands somewhere other than a storage space (or is not placed yet). */
  private carrierAway(job: JobRecord): boolean {
    if (!job.carrier_id) return false;
    const c = this.store.collection(carriers).get(job.carrier_id);
    if (!c) return this.store.collection(jobs).get(job.parent_job_ids[0] ?? '')?.status === 'SUCCEEDED';
    return this.deps.site.kindAt(c.level_id, c.x, c.y) !== 'storage';
  }

  /** What open PICKING and REFILLING jobs promise, kept on the SKU: +1 when such a job opens, -1 when it ends. */
  private reserve(job: JobRecord, sign: 1 | -1): void {
    if (!job.sku_id || job.quantity === null) return;
    if (job.type === 'PICKING') this.deps.inventory.reserveInWrite(job.sku_id, sign * job.quantity, 0);
    else if (job.type === 'REFILLING') this.deps.inventory.reserveInWrite(job.sku_id, 0, sign * job.quantity);
    else return;
    this.skusTouched.add(job.sku_id);
  }

  // ------------------------------------------------------------------ people at balconies

  /**
   * POST /trigger/{job_id}: a person finished (or could not do) the work a job waits for; or,
   * for a job in ERROR, fixed its cause (it is tried again) or gave it up (CANCELLED_TRIGGER).
   */
  async trigger(jobId: string, input: TriggerInput): Promise<JobRecord> {
    return this.write(() => {
      const job = this.job(jobId);
      const status = input.TriggerStatus ?? 'SUCCEEDED_TRIGGER';
      if (job.status === 'ERROR') return this.afterError(job, status);
      if (!PERSON_JOBS.has(job.type)) throw new ConflictError(`job ${jobId} is a ${job.type} job, which the system finishes itself; only jobs that wait for a person can be triggered`);
      if (job.status !== 'EXECUTING') throw new ConflictError(`job ${jobId} is ${job.status}; only a job waiting at a balcony (EXECUTING) can be triggered${job.wait ? ` (${job.wait.reason})` : ''}`);
      this.checkSelection(job, input);
      if (status === 'CANCELLED_TRIGGER') {
        const cancelling = this.moveJob(job, 'CANCELLING', {}, 'cancelled at the balcony');
        const done = this.moveJob(cancelling, 'CANCELLED', { wait: null, ended_because: 'cancelled at the balcony' });
        this.settle(job.request_id);
        return done;
      }
      const booked = this.book(job, status, input.selected_quantity);
      this.deps.events.record(EVENT.jobTriggered, `job ${job.type} ${job.id} confirmed (${status}${booked === null ? '' : `, ${booked}`})`, { request_id: job.request_id, level_id: job.level_id });
      const done = this.moveJob(job, 'SUCCEEDED', { wait: null, progress: { kind: 'person', trigger_status: status, booked_quantity: booked } });
      this.settle(job.request_id);
      return done;
    });
  }

  /** A person dealt with a job in ERROR: tried again from the start, or given up. */
  private afterError(job: JobRecord, status: TriggerStatus): JobRecord {
    if (status === 'CANCELLED_TRIGGER') {
      const cancelling = this.moveJob(job, 'CANCELLING', {}, 'given up by a person');
      const done = this.moveJob(cancelling, 'CANCELLED', { wait: null, ended_because: 'given up by a person after it failed' });
      this.settle(job.request_id);
      return done;
    }
    if (status !== 'SUCCEEDED_TRIGGER') throw ValidationError.of(['body', 'TriggerStatus'], `job ${job.id} is in ERROR: SUCCEEDED_TRIGGER tries it again, CANCELLED_TRIGGER gives it up`);
    const again = this.moveJob(job, 'ACCEPTED', { wait: null, retry_at: null, attempt: 1, progress: retriedProgress(job.progress) }, 'tried again after a person fixed the cause');
    this.settle(job.request_id);
    return again;
  }

  private checkSelection(job: JobRecord, input: TriggerInput): void {
    const id = input.selected_entity_id;
    if (id !== undefined && ![job.entity_id, job.sku_id, job.carrier_id, job.box_id === null ? null : String(job.box_id)].includes(id)) {
      throw ValidationError.of(['body', 'selected_entity_id'], `'${id}' is not what job ${job.id} works on (${job.type} of ${job.entity_id})`);
    }
    if (input.selected_quantity !== undefined && job.quantity !== null && input.selected_quantity > job.quantity && job.type !== 'PICKING_ALERT') {
      throw ValidationError.of(['body', 'selected_quantity'], `the job is for ${job.quantity}; at most that many can be selected`);
    }
  }

  /** Books a trigger's items; returns the quantity booked for the job (null when it books none). */
  private book(job: JobRecord, status: TriggerStatus, selected: number | undefined): number | null {
    const planned = job.quantity ?? 0;
    switch (job.type) {
      case 'PICKING': {
        if (status === 'SUCCEEDED_TRIGGER' && selected !== undefined && selected !== planned) {
          throw ValidationError.of(['body', 'selected_quantity'], `SUCCEEDED_TRIGGER picks all ${planned}; use SHORT_PICK_TRIGGER for fewer`);
        }
        if (status === 'SHORT_PICK_TRIGGER' && selected === undefined) throw ValidationError.of(['body', 'selected_quantity'], 'SHORT_PICK_TRIGGER needs the quantity picked');
        const good = status === 'DAMAGED_ITEM_TRIGGER' ? (selected ?? 0) : (selected ?? planned);
        // Damaged items leave the box as well: they are no longer stock.
        const out = status === 'DAMAGED_ITEM_TRIGGER' ? planned : good;
        if (out > 0) this.deps.inventory.bookInWrite(job.box_id!, -out);
        this.carriersTouched.add(job.carrier_id!);
        this.skusTouched.add(job.sku_id!);
        return good;
      }
      case 'REFILLING': {
        const n = selected ?? planned;
        if (n > 0) {
          const sku = this.store.collection(skus).get(job.sku_id!);
          const box = this.deps.inventory.box(job.box_id!);
          const cap = box.load ? box.load.item_count_max : (sku?.allowed_box_size_capacities ? Math.max(...Object.values(sku.allowed_box_size_capacities)) : n);
          this.deps.inventory.fillInWrite(job.box_id!, job.sku_id!, n, Math.max(cap, n));
        }
        this.carriersTouched.add(job.carrier_id!);
        this.skusTouched.add(job.sku_id!);
        return n;
      }
      case 'PICKING_ALERT':
        return selected ?? planned;
      case 'OFFBOARDING_BD': {
        // The person has the bot in their hands: it leaves the level in the database with the trigger.
        new Bots(this.deps).offboardInWrite(job.bot_id!, job.request_id);
        return null;
      }
      case 'ONBOARDING':
        if (job.carrier_id) {
          const balcony = this.deps.site.balconies.find((b) => b.id === job.balcony_id)!;
          // The position the person set it down on: one no carrier holds (the other may still hold the last one).
          const port = balcony.ports.find((p) => !this.store.collection(carriers).findOne('position', positionKey(balcony.level_id, p.x, p.y)));
          if (!port) throw new ConflictError(`every position of balcony ${balcony.id} holds a carrier; store one before onboarding ${job.carrier_id} there`);
          this.deps.inventory.placeCarrierInWrite(job.carrier_id, balcony.level_id, port.x, port.y);
          this.carriersTouched.add(job.carrier_id);
        }
        return null;
      default:
        return null;
    }
  }

  // ------------------------------------------------------------------ cancellation

  /** A user cancels a request: work not started ends, running work goes through CANCELLING, carriers go home. */
  async cancel(requestId: string): Promise<RequestRecord> {
    return this.write(() => {
      this.cancelInWrite(this.request(requestId));
      return this.request(requestId);
    });
  }

  /** Cancels every open logistic request; returns how many. */
  async cancelAll(): Promise<number> {
    return this.write(() => {
      let n = 0;
      for (const r of this.openRequests()) {
        if (r.type !== 'FULFILLMENT' && r.type !== 'REPLENISHMENT' && r.type !== 'FETCH') continue;
        this.cancelInWrite(r);
        n++;
      }
      return n;
    });
  }

  private cancelInWrite(request: RequestRecord): void {
    if (request.status === 'SUCCEEDED' || request.status === 'CANCELLED' || request.status === 'ABORTED') {
      throw new ConflictError(`request ${request.id} is ${request.status} already`);
    }
    if (!request.cancel_requested) {
      this.store.collection(requests).put({ ...request, cancel_requested: true, updated_at: this.deps.now() });
      this.deps.events.record(EVENT.cancelRequested, `${request.type} request ${request.id}: cancellation asked`, { request_id: request.id });
    }
    for (const job of this.jobsOf(request.id)) {
      if (isFinalJob(job.status) || HOME_JOBS.has(job.type)) continue;
      if (job.status === 'CREATED') this.moveJob(job, 'CANCELLED', { ended_because: 'request cancelled' });
      else if (job.status === 'EXECUTING' && job.bot_id !== null && !PERSON_JOBS.has(job.type)) {
        // A bot is moving it: the brain ends the motion, then marks it CANCELLED.
        this.moveJob(job, 'CANCELLING', {}, 'request cancelled while a bot works on it');
      } else if (job.status !== 'CANCELLING') {
        const cancelling = this.moveJob(job, 'CANCELLING', {}, 'request cancelled');
        this.moveJob(cancelling, 'CANCELLED', { wait: null, ended_because: 'request cancelled' });
      }
    }
    this.settle(request.id);
  }

  // ------------------------------------------------------------------ writes

  /** Runs `fn` in one durable write; afterwards this thread's inventory view follows what it changed. */
  write<R>(fn: () => R): Promise<R> {
    return this.store.write(() => {
      // The callback runs whole on the JS thread, so these sets belong to this write alone.
      this.carriersTouched.clear();
      this.skusTouched.clear();
      const result = fn();
      const carriersNow = [...this.carriersTouched];
      const skusNow = [...this.skusTouched];
      if (carriersNow.length > 0 || skusNow.length > 0) this.store.afterCommit(() => this.deps.refresh(carriersNow, skusNow));
      return result;
    });
  }
}
