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
import { Etcd3, type Namespace } from 'etcd3';
import { decodeEntry, type LogPoint } from '../store/store.js';

/** How long one call to etcd may take: past it, the box treats etcd as unreachable. */
const CALL_MS = 1500;
/** How long one keepalive may take before it is sent again. */
const KEEPALIVE_MS = 600;
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

/**
 * The cluster's members, one client each, used one at a time: a call goes to the member that
 * answered last, and on any failure to the next, each try with its own deadline. etcd3's pool
 * shuffles every call over all members, and its retries keep the first try's deadline, so a
 * member that does not answer (a box cut off or off) stalled calls long after the others had
 * taken over; its keepalive stream to one member neither answered nor failed.
 */
class Members {
  private readonly clients: Etcd3[];
  private readonly spaces: Namespace[];
  private current = 0;

  constructor(endpoints: readonly string[], prefix: string) {
    this.clients = endpoints.map((host) => new Etcd3({
      hosts: host, dialTimeout: CALL_MS, faultHandling: { host: () => noop, global: noop },
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + CALL_MS }),
    }));
    this.spaces = this.clients.map((c) => c.namespace(prefix));
  }

  /** Runs `fn` on the member that answered last, then on each other until one does. */
  async call<T>(fn: (ns: Namespace) => Promise<T>): Promise<T> {
    let failure: unknown;
    for (let i = 0; i < this.spaces.length; i++) {
      const at = (this.current + i) % this.spaces.length;
      try {
        const result = await fn(this.spaces[at]!);
        this.current = at;
        return result;
      } catch (err) {
        failure = err;
      }
    }
    throw failure;
  }

  /** How many members answer a status call now. */
  async answering(): Promise<number> {
    const answers = await Promise.all(this.clients.map((c) => c.maintenance.status().then(() => true, () => false)));
    return answers.filter(Boolean).length;
  }

  get size(): number {
    return this.clients.length;
  }

  close(): void {
    for (const c of this.clients) c.close();
  }
}

const padded = (seq: number): string => String(seq).padStart(16, '0');
const seqKey = (seq: number): string => `log/${padded(seq)}`;
const partKey = (seq: number, part: number): string => `part/${padded(seq)}/${String(part).padStart(6, '0')}`;
/** First byte of an entry stored in parts (a msgpack map never starts with it). */
const PARTS_MARK = 0x50;

/**
 * A lease kept alive by one keepalive call every fifth of its time, each with a deadline and
 * tried on the endpoints that answer. etcd3's own keepalive holds one stream to one endpoint,
 * which on a cut network neither answers nor fails: the lease ran out while the box that held it
 * was well and the cluster reachable through its other members.
 */
export class HeldLease {
  private id: string | undefined;
  private kept = Date.now();
  private lost = false;
  private keeping = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly members: Members, private readonly ttlSeconds: number) {}

  /** Grants the lease (once) and starts keeping it; resolves to its id. */
  async grant(): Promise<string> {
    if (this.id !== undefined) return this.id;
    if (this.lost) throw new Error('the lease was revoked');
    const asked = Date.now();
    const res = await this.members.call((ns) => ns.leaseClient.leaseGrant({ TTL: this.ttlSeconds, ID: 0 }));
    this.id = res.ID;
    this.kept = asked;
    this.timer = setInterval(() => void this.keep(), (this.ttlSeconds * 1000) / 5);
    this.timer.unref();
    return this.id;
  }

  /** When a keepalive was last sent that etcd took (ms since the epoch): the lease lasts its time from then at least. */
  keptAt(): number {
    return this.kept;
  }

  /** Whether etcd said the lease is gone. */
  isLost(): boolean {
    return this.lost;
  }

  /** Stops keeping it and frees it in etcd (its keys go with it). */
  async revoke(): Promise<void> {
    clearInterval(this.timer);
    this.lost = true;
    const id = this.id;
    if (id !== undefined) await this.members.call((ns) => ns.leaseClient.leaseRevoke({ ID: id }, { deadline: Date.now() + CALL_MS }));
  }

  private async keep(): Promise<void> {
    if (this.keeping || this.lost || this.id === undefined) return;
    this.keeping = true;
    const id = this.id;
    const sent = Date.now();
    try {
      const ttl = await this.members.call(async (ns) => {
        const stream = await ns.leaseClient.leaseKeepAlive({ deadline: Date.now() + KEEPALIVE_MS });
        return new Promise<number>((resolve, reject) => {
          stream.on('data', (res: { TTL: string }) => {
            stream.end();
            resolve(Number(res.TTL));
          });
          stream.on('error', reject);
          stream.write({ ID: id });
        });
      });
      if (ttl <= 0) {
        this.lost = true;
        clearInterval(this.timer);
      } else {
        this.kept = Math.max(this.kept, sent);
      }
    } catch {
      // No member answered: the next fifth of the lease tries again, and the holder watches keptAt().
    } finally {
      this.keeping = false;
    }
  }
}

/** The pair's keys in one etcd cluster, under `/warehouse/<pair>/`. */
export class ReplicatedLog {
  private readonly cluster: Members;

  constructor(endpoints: readonly string[], pair: string) {
    this.cluster = new Members(endpoints, `/warehouse/${pair}/`);
  }

  /** A lease of `ttlSeconds`, kept alive until it is lost or revoked. */
  lease(ttlSeconds: number): HeldLease {
    return new HeldLease(this.cluster, ttlSeconds);
  }

  /** The active box and its term, if one holds the lead. */
  async leader(): Promise<(LeaderInfo & { term: number }) | undefined> {
    const res = await this.cluster.call((ns) => ns.get('leader').exec());
    const kv = res.kvs[0];
    if (!kv) return undefined;
    return { ...(JSON.parse(kv.value.toString()) as LeaderInfo), term: Number(kv.create_revision) };
  }

  /** Takes the lead under `lease` if nobody holds it; resolves to the new term, or undefined when another box holds it. */
  async campaign(me: LeaderInfo, lease: HeldLease): Promise<number | undefined> {
    const leaseId = await lease.grant();
    const res = await this.cluster.call((ns) => ns.if('leader', 'Version', '==', 0).then(ns.put('leader').value(JSON.stringify(me)).lease(leaseId)).commit());
    if (!res.succeeded) return undefined;
    const now = await this.leader();
    return now && now.name === me.name ? now.term : undefined;
  }

  /** Gives up the lead of `term` (a planned switchover); nothing if another term holds it. */
  async resign(term: number): Promise<void> {
    await this.cluster.call((ns) => ns.if('leader', 'Create', '==', term).then(ns.delete().key('leader')).commit());
  }

  /** The box a planned switchover hands the lead to, while the handover lasts. */
  async handover(): Promise<string | undefined> {
    return (await this.cluster.call((ns) => ns.get('handover').string())) ?? undefined;
  }

  /**
   * A planned switchover: only `target` may campaign for the next `seconds`, and the active box
   * of `term` gives up the lead (its writes stop being acknowledged; none is lost).
   */
  async switchover(term: number, target: string, seconds: number): Promise<boolean> {
    const { ID } = await this.cluster.call((ns) => ns.leaseClient.leaseGrant({ TTL: seconds, ID: 0 }));
    const res = await this.cluster.call((ns) => ns.if('leader', 'Create', '==', term)
      .then(ns.put('handover').value(target).lease(ID), ns.delete().key('leader'))
      .commit());
    return res.succeeded;
  }

  /** The log's origin, if one was started. */
  async origin(): Promise<LogOrigin | undefined> {
    const value = await this.cluster.call((ns) => ns.get('origin').string());
    return value === null ? undefined : (JSON.parse(value) as LogOrigin);
  }

  /** The last entry's seq (the origin's base before any). */
  async head(): Promise<number | undefined> {
    const value = await this.cluster.call((ns) => ns.get('head').string());
    return value === null ? undefined : Number(value);
  }

  /**
   * Starts a new log after `base` (the first active's store as it stands), unless one exists;
   * only while `term` holds the lead. Resolves to the log's origin, new or existing.
   */
  async start(term: number, base: LogPoint): Promise<LogOrigin> {
    const origin: LogOrigin = { id: randomUUID(), base };
    await this.cluster.call((ns) => ns.if('leader', 'Create', '==', term).and('origin', 'Version', '==', 0)
      .then(ns.put('origin').value(JSON.stringify(origin)), ns.put('head').value(String(base.seq)))
      .commit());
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
        const part = e.bytes.subarray(i * BYTES_PER_CALL, (i + 1) * BYTES_PER_CALL);
        const res = await this.cluster.call((ns) => ns.if('leader', 'Create', '==', term).then(ns.put(partKey(e.seq, i)).value(part)).commit());
        if (!res.succeeded) return 'fenced';
      }
      values.push(Buffer.from([PARTS_MARK, ...Buffer.from(String(parts))]));
    }
    const res = await this.cluster.call((ns) => ns.if('leader', 'Create', '==', term).and('head', 'Value', '==', String(after))
      .then(...entries.map((e, i) => ns.put(seqKey(e.seq)).value(values[i]!)), ns.put('head').value(String(last)))
      .commit());
    return res.succeeded ? 'taken' : 'fenced';
  }

  /** Up to `limit` entries from `from` on, in order. */
  async read(from: number, limit: number): Promise<{ seq: number; bytes: Buffer }[]> {
    const res = await this.cluster.call((ns) => ns.getAll().inRange({ start: seqKey(from), end: 'log0' }).limit(limit).sort('Key', 'Ascend').exec());
    const out: { seq: number; bytes: Buffer }[] = [];
    for (const kv of res.kvs) {
      const seq = Number(/log\/(\d+)$/.exec(kv.key.toString())![1]);
      out.push({ seq, bytes: kv.value[0] === PARTS_MARK ? await this.joined(seq) : kv.value });
    }
    return out;
  }

  /** An entry stored in parts, whole again. */
  private async joined(seq: number): Promise<Buffer> {
    const parts = await this.cluster.call((ns) => ns.getAll().prefix(`part/${padded(seq)}/`).sort('Key', 'Ascend').buffers());
    return Buffer.concat(Object.values(parts));
  }

  /** The term of entry `seq`, if the log keeps it. */
  async termOf(seq: number): Promise<number | undefined> {
    const bytes = await this.cluster.call((ns) => ns.get(seqKey(seq)).buffer());
    if (!bytes) return undefined;
    return decodeEntry(bytes[0] === PARTS_MARK ? await this.joined(seq) : bytes).term;
  }

  /** Forgets entries up to `point.seq` (both boxes hold them), moving the origin's base there; only while `term` leads. */
  async trim(term: number, origin: LogOrigin, point: LogPoint): Promise<void> {
    if (point.seq <= origin.base.seq) return;
    await this.cluster.call((ns) => ns.if('leader', 'Create', '==', term)
      .then(
        ns.delete().inRange({ start: seqKey(origin.base.seq + 1), end: seqKey(point.seq + 1) }),
        ns.delete().inRange({ start: `part/${padded(origin.base.seq + 1)}`, end: `part/${padded(point.seq + 1)}` }),
        ns.put('origin').value(JSON.stringify({ ...origin, base: point })),
      )
      .commit());
  }

  /** Tells the peer where this box stands, under its lease (gone with the box). */
  async announce(member: MemberInfo, lease: HeldLease): Promise<void> {
    const leaseId = await lease.grant();
    await this.cluster.call((ns) => ns.put(`members/${member.name}`).value(JSON.stringify(member)).lease(leaseId).exec());
  }

  /** The boxes that announced themselves and are alive. */
  async members(): Promise<MemberInfo[]> {
    const all = await this.cluster.call((ns) => ns.getAll().prefix('members/').strings());
    return Object.values(all).map((v) => JSON.parse(v) as MemberInfo);
  }

  /** How many of the cluster's members answer (the witness among them): below all, the pair is less protected. */
  async healthyMembers(): Promise<{ healthy: number; total: number }> {
    return { healthy: await this.cluster.answering(), total: this.cluster.size };
  }

  /** Closes the connections. */
  close(): void {
    this.cluster.close();
  }
}
