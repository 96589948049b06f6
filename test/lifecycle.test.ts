// A request's status from its jobs (src/domain/requests/lifecycle.ts).
import t from 'tap';
import { requestStatus } from '../src/domain/requests/lifecycle.js';
import type { JobRecord, JobStatus, RequestRecord } from '../src/domain/requests/records.js';

const request = (cancel_requested = false) => ({ status: 'ACCEPTED', cancel_requested }) as RequestRecord;
const job = (status: JobStatus, details: Record<string, unknown> = {}) => ({ status, details }) as JobRecord;

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
  t.equal(requestStatus(request(), [job('ABORTED', { replaced_by: 'x' }), job('SUCCEEDED')]), 'SUCCEEDED', 'a replaced job does not count');
});
