/**
 * Ids of requests and jobs: UUIDs of version 7 (RFC 9562), which begin with the time they were
 * made. The store keys records and their index entries by id, so a new request lands at the
 * end of each tree beside the last one instead of on a random page: a commit of a turn's new
 * requests writes a few pages instead of one per request and index, and the pages stay full
 * (docs/benchmarks.md, "Ninth round"). The spec asks only for a uuid.
 */
import { v7 } from 'uuid';

/** A new id for a request or a job, after every id this thread made before. */
export function newRecordId(): string {
  return v7();
}
