/**
 * Ids of requests and jobs: UUIDs of version 7 (RFC 9562), which begin with the time they were
 * made. The store keys records and their index entries by id, so a new request lands at the
 * end of each tree beside the last one instead of on a random page: a commit of a turn's new
 * requests writes a few pages instead of one per request and index, and the pages stay full
 * (docs/benchmarks.md, "Ninth round"). The spec asks only for a uuid.
 *
 * The `uuid` package lays out the bytes. Its own generator asks the system for 16 random bytes
 * per id (2.2 µs, against 0.35 here, where a successful request makes half a dozen ids); this
 * one draws them from a pool filled 256 ids at a time, as node's `randomUUID` does, and keeps
 * the package's rule for ids made within one millisecond: a counter, started at random, that
 * goes up by one.
 */
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

const POOLED_IDS = 256;
const pool = new Uint8Array(16 * POOLED_IDS);
let pooled = 0;
/** The millisecond of the last id, and its counter within it. */
let msecs = -Infinity;
let seq = 0;

/** A new id for a request or a job, after every id this thread made before. */
export function newRecordId(): string {
  if (pooled === 0) {
    randomFillSync(pool);
    pooled = POOLED_IDS;
  }
  const at = (POOLED_IDS - pooled--) * 16;
  const random = pool.subarray(at, at + 16);
  const now = Date.now();
  if (now > msecs) {
    msecs = now;
    seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    seq = (seq + 1) | 0;
    // The counter ran over (2^31 ids in a millisecond, or a clock set back): borrow the next one.
    if (seq === 0) msecs++;
  }
  return v7({ random, msecs, seq });
}
