// A request's status from its jobs (src/domain/requests/lifecycle.ts).
import t from 'tap';
import { entityCounters, requestStatus } from '../../../src/domain/requests/lifecycle.js';
import type { EntityRecord, JobRecord, JobStatus, RequestRecord } from '../../../src/domain/requests/records.js';

const request = (cancel_requested = false) => ({ status: 'ACCEPTED', cancel_requested }) as RequestRecord;
const job = (status: JobStatus, replaced_by: string | null = null) => ({ status, replaced_by }) as JobRecord;

t.test('while jobs run', async (t) => {
  t.equal(requestStatus(request(), [job('CREATED'), job('CREATED')]), 'CREATED');
  t.equal(requestStatus(request(), [job('ACCEPTED'), job('CREATED')]), 'ACCEPTED');
  t.equal(requestStatus(request(), [job('SUCCEEDED'), job('CREATED')]), 'EXECUTING');
});

t.test('once every job ended', async (t) => {
  t.equal(requestStatus(request(), [job('SUCCEEDED'), job('SUCCEEDED')]), 'SUCCEEDED');
  t.equal(requestStatus(request(true), [job('SUCCEEDED'), job('CANCELLED')]), 'CANCELLED', 'cancelled by the user');
  t.equal(requestStatus(request(true), [job('ABORTED'), job('CANCELLED')]), 'CANCELLED', 'cancelled by the user while a job aborted');
  t.equal(requestStatus(request(), [job('ABORTED'), job('CANCELLED')]), 'ABORTED', 'a retrieval aborted for good, its storing cancelled');
  t.equal(requestStatus(request(), [job('ABORTED', 'x'), job('SUCCEEDED')]), 'SUCCEEDED', 'a replaced job does not count');
});

// Entity counters add up: requested = completed + cancelled + open, for every kind of job
// that works an entity, a picking alert included; cancelled work is never counted as completed.
t.test('entity counters: requested = completed + cancelled + open', async (t) => {
  const entity = (job_type: JobRecord['type'], total_quantity: number) =>
    ({ job_type, total_quantity, completed_quantity: 0, succeeded_quantity: 0, cancelled_quantity: 0 }) as EntityRecord;
  const worked = (type: JobRecord['type'], status: JobStatus, quantity: number, more: { booked?: number; replaced_by?: string } = {}) =>
    ({ type, status, quantity, entity_index: 0, replaced_by: more.replaced_by ?? null, progress: { kind: 'person', trigger_status: null, booked_quantity: more.booked ?? null } }) as JobRecord;
  const open = (e: EntityRecord) => e.total_quantity - e.completed_quantity - e.cancelled_quantity;
  const cases: { name: string; entity: EntityRecord; jobs: JobRecord[]; completed: number; succeeded: number; cancelled: number }[] = [
    { name: 'a pick done, one cancelled', entity: entity('PICKING', 5), jobs: [worked('PICKING', 'SUCCEEDED', 3), worked('PICKING', 'CANCELLED', 2)], completed: 3, succeeded: 3, cancelled: 2 },
    { name: 'a short pick completes its job', entity: entity('PICKING', 5), jobs: [worked('PICKING', 'SUCCEEDED', 5, { booked: 4 })], completed: 5, succeeded: 4, cancelled: 0 },
    { name: 'a picking alert is part of the entity', entity: entity('PICKING', 7), jobs: [worked('PICKING', 'SUCCEEDED', 4), worked('PICKING_ALERT', 'SUCCEEDED', 3)], completed: 7, succeeded: 7, cancelled: 0 },
    { name: 'a picking alert still open', entity: entity('PICKING', 7), jobs: [worked('PICKING', 'SUCCEEDED', 4), worked('PICKING_ALERT', 'EXECUTING', 3)], completed: 4, succeeded: 4, cancelled: 0 },
    { name: 'an aborted pick is not completed', entity: entity('PICKING', 2), jobs: [worked('PICKING', 'ABORTED', 2)], completed: 0, succeeded: 0, cancelled: 2 },
    { name: 'a replaced job counts once', entity: entity('CHECKING', 1), jobs: [worked('CHECKING', 'ABORTED', 1, { replaced_by: 'x' }), worked('CHECKING', 'SUCCEEDED', 1)], completed: 1, succeeded: 1, cancelled: 0 },
    { name: 'a refill cancelled at the balcony', entity: entity('REFILLING', 9), jobs: [worked('REFILLING', 'CANCELLED', 9)], completed: 0, succeeded: 0, cancelled: 9 },
    { name: 'tags written, one not', entity: entity('WRITE_RFID_TAG', 3), jobs: [worked('WRITE_RFID_TAG', 'SUCCEEDED', 1), worked('WRITE_RFID_TAG', 'SUCCEEDED', 1), worked('WRITE_RFID_TAG', 'ABORTED', 1)], completed: 2, succeeded: 2, cancelled: 1 },
  ];
  for (const c of cases) {
    const e = entityCounters(c.entity, 0, c.jobs);
    t.same([e.completed_quantity, e.succeeded_quantity, e.cancelled_quantity], [c.completed, c.succeeded, c.cancelled], c.name);
    const running = c.jobs.filter((j) => !['SUCCEEDED', 'CANCELLED', 'ABORTED'].includes(j.status) && j.replaced_by === null).reduce((n, j) => n + (j.quantity ?? 0), 0);
    t.equal(open(e), running, `${c.name}: what is neither completed nor cancelled is open`);
  }
});
