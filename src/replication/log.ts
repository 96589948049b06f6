/**
 * The replicated log of a pair of boxes, kept in etcd (docs/high-availability.md). etcd's
 * quorum (the two boxes and the witness, two of three) makes a change durable; this module
 * only says which keys hold what and asks etcd's transactions to keep the rules:
 *
 * - `leader`: the active box (its name and peer address), held by that box's lease. Its
 *   create revision is the active's term: a new election makes a larger one.
 * - `log/<seq>`: each committed batch, in order; `head` the last one's seq. An append is one
 *   transaction that holds only while `leader` still has the appender's term and `head` is
 *   where the appender left it, so an old active that lost its lease cannot add an entry.
 * - `origin`: the log's id and the point (seq and term) its first kept entry follows; a box
 *   whose store does not continue this log takes a snapshot first.
 * - `members/<name>`: each box's role and the last entry it holds, under its own lease.
 */
import { randomUUID } from 'node:crypto';
import { noop } from 'cockatiel';
import { Etcd3, type Lease, type Namespace } from 'etcd3';
import { decodeEntry, type LogPoint } from '../store/store.js';

/** How long one call to etcd may take: past it, the box treats etcd as unreachable. */
const CALL_MS = 1500;
/** Entries read at a time, and appended at most in one transaction (etcd takes up to 128 operations and 1.5 MiB). */
export const ENTRIES_PER_CALL = 100;
/** Bytes of entries in one transaction, under etcd's default request limit with room to spare. */
export const BYTES_PER_CALL = 1024 * 1024;

/** The active box as its peers reach it. */
export interface LeaderInfo {
  name: string;
  /** Where the active serves snapshots to a standby (`https://host:port`). */
  peer: string;
}

/** The log's identity and where its kept entries begin. */
export interface LogOrigin {
  id: string;
  /** The point the first kept entry follows (entries up to it were trimmed, or came before the log). */
  base: LogPoint;
}

/** A box as it announces itself to its peer. */
export interface MemberInfo {
  name: string;
  role: 'active' | 'standby' | 'joining';
  /** The last log entry its store holds. */
  seq: number;
  at: string;
}

/** The outcome of an append: taken, or refused because the box is no longer the active one or the log moved. */
export type AppendOutcome = 'taken' | 'fenced';

const padded = (seq: number): string => String(seq).padStart(16, '0');
const seqKey = (seq: number): string => `log/${padded(seq)}`;
const partKey = (seq: number, part: number): string => `part/${padded(seq)}/${String(part).padStart(6, '0')}`;
/** First byte of an entry stored in parts (a msgpack map never starts with it). */
const PARTS_MARK = 0x50;

/** The pair's keys in one etcd cluster, under `/warehouse/<pair>/`. */
export class ReplicatedLog {
  private readonly client: Etcd3;
  private readonly ns: Namespace;

  constructor(endpoints: readonly string[], pair: string) {
    this.client = new Etcd3({
      hosts: [...endpoints],
      dialTimeout: CALL_MS,
      // Each call fails fast and is tried once more on another endpoint; etcd3's default circuit
      // breaker would keep an endpoint shut for 5 s after three failures, longer than a takeover may take.
      faultHandling: { host: () => noop, global: noop },
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + CALL_MS }),
    });
    this.ns = this.client.namespace(`/warehouse/${pair}/`);
  }

  /** A lease of `ttlSeconds` that etcd3 keeps alive until it is lost or revoked. */
  lease(ttlSeconds: number): Lease {
    return this.ns.lease(ttlSeconds, { autoKeepAlive: true });
  }

  /** The active box and its term, if one holds the lead. */
  async leader(): Promise<(LeaderInfo & { term: number }) | undefined> {
    const res = await this.ns.get('leader').exec();
    const kv = res.kvs[0];
    if (!kv) return undefined;
    return { ...(JSON.parse(kv.value.toString()) as LeaderInfo), term: Number(kv.create_revision) };
  }

  /** Takes the lead under `lease` if nobody holds it; resolves to the new term, or undefined when another box holds it. */
  async campaign(me: LeaderInfo, lease: Lease): Promise<number | undefined> {
    const leaseId = await lease.grant();
    const res = await this.ns.if('leader', 'Version', '==', 0)
      .then(this.ns.put('leader').value(JSON.stringify(me)).lease(leaseId))
      .commit();
    if (!res.succeeded) return undefined;
    const now = await this.leader();
    return now && now.name === me.name ? now.term : undefined;
  }

  /** Gives up the lead of `term` (a planned switchover); nothing if another term holds it. */
  async resign(term: number): Promise<void> {
    await this.ns.if('leader', 'Create', '==', term).then(this.ns.delete().key('leader')).commit();
  }

  /** The box a planned switchover hands the lead to, while the handover lasts. */
  async handover(): Promise<string | undefined> {
    return (await this.ns.get('handover').string()) ?? undefined;
  }

  /**
   * A planned switchover: only `target` may campaign for the next `seconds`, and the active box
   * of `term` gives up the lead (its writes stop being acknowledged; none is lost).
   */
  async switchover(term: number, target: string, seconds: number): Promise<boolean> {
    const lease = this.ns.lease(seconds, { autoKeepAlive: false });
    const id = await lease.grant();
    const res = await this.ns.if('leader', 'Create', '==', term)
      .then(this.ns.put('handover').value(target).lease(id), this.ns.delete().key('leader'))
      .commit();
    lease.release();
    return res.succeeded;
  }

  /** The log's origin, if one was started. */
  async origin(): Promise<LogOrigin | undefined> {
    const value = await this.ns.get('origin').string();
    return value === null ? undefined : (JSON.parse(value) as LogOrigin);
  }

  /** The last entry's seq (the origin's base before any). */
  async head(): Promise<number | undefined> {
    const value = await this.ns.get('head').string();
    return value === null ? undefined : Number(value);
  }

  /**
   * Starts a new log after `base` (the first active's store as it stands), unless one exists;
   * only while `term` holds the lead. Resolves to the log's origin, new or existing.
   */
  async start(term: number, base: LogPoint): Promise<LogOrigin> {
    const origin: LogOrigin = { id: randomUUID(), base };
    await this.ns.if('leader', 'Create', '==', term).and('origin', 'Version', '==', 0)
      .then(this.ns.put('origin').value(JSON.stringify(origin)), this.ns.put('head').value(String(base.seq)))
      .commit();
    const now = await this.origin();
    if (!now) throw new Error('the replicated log could not be started: this box lost the lead');
    return now;
  }

  /** Appends entries that follow `after`, only while `term` holds the lead and the log ends at `after`. */
  async append(term: number, after: number, entries: readonly { seq: number; bytes: Buffer }[]): Promise<AppendOutcome> {
    const last = entries[entries.length - 1]!.seq;
    const values: Buffer[] = [];
    for (const e of entries) {
      if (e.bytes.length <= BYTES_PER_CALL) {
        values.push(e.bytes);
        continue;
      }
      // Larger than etcd takes in one request: its parts first, each only while this term
      // leads; the entry itself (and with it the head) still lands in one transaction.
      const parts = Math.ceil(e.bytes.length / BYTES_PER_CALL);
      for (let i = 0; i < parts; i++) {
        const res = await this.ns.if('leader', 'Create', '==', term)
          .then(this.ns.put(partKey(e.seq, i)).value(e.bytes.subarray(i * BYTES_PER_CALL, (i + 1) * BYTES_PER_CALL)))
          .commit();
        if (!res.succeeded) return 'fenced';
      }
      values.push(Buffer.from([PARTS_MARK, ...Buffer.from(String(parts))]));
    }
    const res = await this.ns.if('leader', 'Create', '==', term).and('head', 'Value', '==', String(after))
      .then(...entries.map((e, i) => this.ns.put(seqKey(e.seq)).value(values[i]!)), this.ns.put('head').value(String(last)))
      .commit();
    return res.succeeded ? 'taken' : 'fenced';
  }

  /** Up to `limit` entries from `from` on, in order. */
  async read(from: number, limit: number): Promise<{ seq: number; bytes: Buffer }[]> {
    const res = await this.ns.getAll().inRange({ start: seqKey(from), end: 'log0' }).limit(limit).sort('Key', 'Ascend').exec();
    const out: { seq: number; bytes: Buffer }[] = [];
    for (const kv of res.kvs) {
      const seq = Number(/log\/(\d+)$/.exec(kv.key.toString())![1]);
      out.push({ seq, bytes: kv.value[0] === PARTS_MARK ? await this.joined(seq) : kv.value });
    }
    return out;
  }

  /** An entry stored in parts, whole again. */
  private async joined(seq: number): Promise<Buffer> {
    const parts = await this.ns.getAll().prefix(`part/${padded(seq)}/`).sort('Key', 'Ascend').buffers();
    return Buffer.concat(Object.values(parts));
  }

  /** The term of entry `seq`, if the log keeps it. */
  async termOf(seq: number): Promise<number | undefined> {
    const bytes = await this.ns.get(seqKey(seq)).buffer();
    if (!bytes) return undefined;
    return decodeEntry(bytes[0] === PARTS_MARK ? await this.joined(seq) : bytes).term;
  }

  /** Forgets entries up to `point.seq` (both boxes hold them), moving the origin's base there; only while `term` leads. */
  async trim(term: number, origin: LogOrigin, point: LogPoint): Promise<void> {
    if (point.seq <= origin.base.seq) return;
    await this.ns.if('leader', 'Create', '==', term)
      .then(
        this.ns.delete().inRange({ start: seqKey(origin.base.seq + 1), end: seqKey(point.seq + 1) }),
        this.ns.delete().inRange({ start: `part/${padded(origin.base.seq + 1)}`, end: `part/${padded(point.seq + 1)}` }),
        this.ns.put('origin').value(JSON.stringify({ ...origin, base: point })),
      )
      .commit();
  }

  /** Tells the peer where this box stands, under its lease (gone with the box). */
  async announce(member: MemberInfo, lease: Lease): Promise<void> {
    const leaseId = await lease.grant();
    await this.ns.put(`members/${member.name}`).value(JSON.stringify(member)).lease(leaseId).exec();
  }

  /** The boxes that announced themselves and are alive. */
  async members(): Promise<MemberInfo[]> {
    const all = await this.ns.getAll().prefix('members/').strings();
    return Object.values(all).map((v) => JSON.parse(v) as MemberInfo);
  }

  /** How many of the cluster's members answer (the witness among them): below all, the pair is less protected. */
  async healthyMembers(endpoints: readonly string[]): Promise<{ healthy: number; total: number }> {
    const checks = await Promise.all(endpoints.map(async (host) => {
      const one = new Etcd3({ hosts: host, dialTimeout: CALL_MS, faultHandling: { host: () => noop, global: noop }, defaultCallOptions: { deadline: Date.now() + CALL_MS } });
      try {
        await one.maintenance.status();
        return true;
      } catch {
        return false;
      } finally {
        one.close();
      }
    }));
    return { healthy: checks.filter(Boolean).length, total: endpoints.length };
  }

  /** Closes the connections. */
  close(): void {
    this.client.close();
  }
}
