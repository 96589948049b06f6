/**
 * One box of a replicated pair (docs/high-availability.md): a standby that follows the log and
 * stands for the lead, then the active box that runs the whole daemon with its writes through
 * the log, then, once it loses the lead, a standby again that takes the log's history.
 *
 * - Joining: the store must continue the log (same log id, and the entry it last holds is the
 *   log's); if not, the active box's snapshot replaces it.
 * - Standby: applies the log's new entries, announces how far it is, and campaigns when no box
 *   leads and it holds the whole log.
 * - Active: starts the daemon with the appender as its store's gate, serves snapshots, keeps
 *   the lease alive, watches its peer and the witness, trims what both boxes hold. A lease that
 *   runs out, or a log another box appended to, ends it: the daemon closes and the box joins
 *   again.
 */
import { renameSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:https';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import { ALL_COLLECTIONS } from '../domain/collections.js';
import { MIGRATIONS } from '../store/migrations.js';
import { decodeEntry, Store, type LogPoint } from '../store/store.js';
import { LogAppender } from './appender.js';
import { ENTRIES_PER_CALL, ReplicatedLog, type HeldLease, type LogOrigin } from './log.js';
import { fetchSnapshot, installSnapshot, servePeer } from './snapshot.js';

/** How often a standby reads the log and an active checks its peer, the witness and the lead. */
const TICK_MS = 200;
/** How often the active checks the witness and trims (each check is a call to every member). */
const WATCH_MS = 2000;
/** Entries the log keeps for a standby that is gone, before it is trimmed anyway (the standby then takes a snapshot). */
const KEEP_WITHOUT_PEER = 200_000;

export type PairRole = 'joining' | 'standby' | 'active' | 'stopped';

/** What `status`, /metrics and the status file show of the pair. */
export interface PairStatus {
  name: string;
  role: PairRole;
  /** The active box's name, as the log says. */
  leader: string | null;
  term: number | null;
  /** The other box, as it last announced itself. */
  peer: { name: string; role: string; seq: number } | null;
  /** Entries this box (standby) or its peer (active) is behind the log. */
  lag_entries: number | null;
  /** The last entry this box's store holds. */
  seq: number;
  /** etcd members that answer, of all (the witness and both boxes). */
  members: { healthy: number; total: number } | null;
  /** False when losing one more box or the witness would stop the site: the warning says what is missing. */
  protected: boolean;
  warning: string | null;
  since: string;
}

/** What the active box's daemon is to the pair: it starts with the pair's gate, and closes. */
export interface ActiveDaemon {
  close(): Promise<void>;
}

/** How the pair starts the daemon when this box becomes the active one. */
export interface ActiveStart {
  /** The gate the daemon's store (and its brain thread) write through. */
  gate(store: Store): LogAppender;
  /** This box's pair status, for the daemon's status file and /metrics. */
  status(): PairStatus;
  /** Tells the pair a technician-visible change (the daemon records it as an event). */
  onChange(listener: (kind: 'took_over' | 'unprotected' | 'protected', message: string) => void): void;
}

export interface PairOptions {
  config: Config;
  logger: Logger;
  endpoints: readonly string[];
  /** The secret the peer port's callers must show. */
  peerToken: string;
  tls: { certFile: string; keyFile: string };
  startActive(start: ActiveStart): Promise<ActiveDaemon>;
}

/**
 * `<state_dir>/pair-track`: 0 while this box is the active one, 1 otherwise, for keepalived's
 * `track_file` (weight 0: any value but 0 is a fault), so the site's virtual address follows
 * the active box (docs/high-availability.md).
 */
export const TRACK_FILE = 'pair-track';

function writeTrackFile(stateDir: string, active: boolean): void {
  const file = path.join(stateDir, TRACK_FILE);
  try {
    writeFileSync(`${file}.tmp`, active ? '0\n' : '1\n', { mode: 0o644 });
    renameSync(`${file}.tmp`, file);
  } catch {
    // The file is for keepalived: a full disk must not stop the role change.
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One box of the pair, from its start until `close`. */
export class PairMember {
  private readonly log: ReplicatedLog;
  private readonly logger: Logger;
  private readonly name: string;
  private readonly dbDir: string;
  private state: PairStatus;
  private stopping = false;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private listeners: ((kind: 'took_over' | 'unprotected' | 'protected', message: string) => void)[] = [];

  constructor(private readonly options: PairOptions) {
    this.log = new ReplicatedLog(options.endpoints, options.config.replication_pair);
    this.logger = options.logger.child({ component: 'replication' });
    this.name = options.config.replication_name ?? hostname();
    this.dbDir = path.join(options.config.state_dir, 'db');
    writeTrackFile(options.config.state_dir, false);
    this.state = { name: this.name, role: 'joining', leader: null, term: null, peer: null, lag_entries: null, seq: 0, members: null, protected: false, warning: null, since: new Date().toISOString() };
  }

  /** Runs the box's roles until `close`. */
  start(): void {
    this.running = this.loop();
  }

  /** This box's role and the pair's state. */
  status(): PairStatus {
    return this.state;
  }

  /** Ends whichever role runs (the active's daemon closes as on SIGTERM). */
  async close(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    this.log.close();
  }

  private set(change: Partial<PairStatus>): void {
    if (change.role && change.role !== this.state.role) {
      this.logger.info({ role: change.role, previous: this.state.role, leader: change.leader ?? this.state.leader, term: change.term ?? this.state.term }, `this box is now ${change.role}`);
      change.since = new Date().toISOString();
      writeTrackFile(this.options.config.state_dir, change.role === 'active');
    }
    this.state = { ...this.state, ...change };
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let store: Store | undefined;
      try {
        store = await this.join();
        const won = await this.standBy(store);
        if (won === undefined) break;
        const leading = store;
        store = undefined;
        await this.lead(leading, won.term, won.origin, won.lease);
      } catch (err) {
        this.logger.error({ err }, 'replication: the box could not go on in its role; joining again');
        await sleep(1000);
      } finally {
        // The standby's store; the active's closes in lead() before the daemon opens its own.
        await store?.close().catch(() => undefined);
      }
    }
    this.set({ role: 'stopped' });
  }

  private openStore(): Promise<Store> {
    return Store.open({ dir: this.dbDir, mapSize: this.options.config.store_map_size_bytes }, ALL_COLLECTIONS, MIGRATIONS);
  }

  /** Opens the store, replaced by the active's snapshot when it does not continue the log. */
  private async join(): Promise<Store> {
    this.set({ role: 'joining' });
    let store = await this.openStore();
    for (;;) {
      if (this.stopping) return store;
      let reason: string | undefined;
      try {
        reason = await this.divergence(store);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'replication: etcd cannot be reached; retrying');
        await sleep(1000);
        continue;
      }
      if (reason === undefined) return store;
      const leader = await this.log.leader().catch(() => undefined);
      if (!leader || leader.name === this.name) {
        // No box leads: one whose store went past the log with its own batches may lead and append them.
        if (!leader && (await this.divergence(store, true).catch(() => 'unknown')) === undefined) return store;
        await sleep(500);
        continue;
      }
      this.logger.warn({ reason, from: leader.name }, `replication: this box's store ${reason}; taking a snapshot of ${leader.name}`);
      const file = path.join(this.options.config.state_dir, 'snapshot', 'warehouse.mdb');
      try {
        await fetchSnapshot(leader.peer, this.options.peerToken, file);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message, from: leader.peer }, 'replication: the snapshot could not be taken; retrying');
        await sleep(1000);
        continue;
      }
      await store.close();
      installSnapshot(file, this.dbDir);
      store = await this.openStore();
      this.logger.info({ seq: store.logPoint().seq }, 'replication: snapshot installed');
    }
  }

  /**
   * Why the store cannot continue the log from where it stands, or undefined when it can (or no
   * log was started). A store past the log's head (batches this box stamped as the active one
   * that the log never took) can continue it only as the active box, appending those batches
   * first, and only while the log's last entry is its own: `asActive` allows that.
   */
  private async divergence(store: Store, asActive = false): Promise<string | undefined> {
    const origin = await this.log.origin();
    if (!origin) return undefined;
    const point = store.logPoint();
    if (store.logId() !== origin.id) return 'belongs to no log or another one';
    if (point.seq === origin.base.seq && point.term === origin.base.term) return undefined;
    if (point.seq < origin.base.seq) return `is at entry ${point.seq}, which the log no longer keeps`;
    const head = (await this.log.head()) ?? origin.base.seq;
    if (point.seq > head) {
      if (!asActive) return `holds entries ${head + 1} to ${point.seq}, which the log never took`;
      const anchor = store.outbox(head, point.seq - head + 1);
      const theirs = head === origin.base.seq ? origin.base.term : await this.log.termOf(head);
      const contiguous = anchor.length === point.seq - head + 1 && anchor[0]!.seq === head;
      if (contiguous && decodeEntry(anchor[0]!.bytes).term === theirs) return undefined;
      return `holds entries ${head + 1} to ${point.seq}, which the log never took, after another entry ${head} than the log's`;
    }
    const term = await this.log.termOf(point.seq);
    if (term === undefined) return `holds entry ${point.seq}, which the log never took`;
    if (term !== point.term) return `holds another entry ${point.seq} than the log`;
    return undefined;
  }

  /** Follows the log until this box wins the lead (its term), or the box stops (undefined). */
  private async standBy(store: Store): Promise<{ term: number; origin: LogOrigin | undefined; lease: HeldLease } | undefined> {
    this.set({ role: 'standby', term: null, peer: null, members: null, protected: false, warning: null });
    const lease = this.log.lease(this.options.config.replication_lease_seconds);
    let announced = 0;
    try {
      while (!this.stopping) {
        const origin = await this.log.origin().catch(() => undefined);
        const leader = await this.log.leader().catch(() => null);
        const head = await this.log.head().catch(() => undefined);
        const caughtUp = await this.catchUp(store).catch((err: unknown) => {
          this.logger.warn({ err: (err as Error).message }, 'replication: the log could not be read');
          return false;
        });
        const seq = store.logPoint().seq;
        this.set({ leader: leader?.name ?? null, seq, lag_entries: head === undefined ? null : Math.max(0, head - seq) });
        if (Date.now() - announced > 1000) {
          announced = Date.now();
          await this.log.announce({ name: this.name, role: 'standby', seq, at: new Date().toISOString() }, lease).catch(() => undefined);
        }
        if (leader === undefined && caughtUp && (await this.divergence(store, true).catch(() => 'unknown')) === undefined) {
          const handover = await this.log.handover().catch(() => undefined);
          if (handover === undefined || handover === this.name) {
            const leaderLease = this.log.lease(this.options.config.replication_lease_seconds);
            const term = await this.log.campaign({ name: this.name, peer: this.peerUrl() }, leaderLease).catch(() => undefined);
            if (term !== undefined) return { term, origin, lease: leaderLease };
            await leaderLease.revoke().catch(() => undefined);
          }
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, TICK_MS);
        });
      }
      return undefined;
    } finally {
      await lease.revoke().catch(() => undefined);
    }
  }

  /** Applies the log's entries past the store's point, once the store is known to hold the log's entries up to it; resolves true once it holds them all. */
  private async catchUp(store: Store): Promise<boolean> {
    for (let checked = false; ;) {
      const from = store.logPoint().seq + 1;
      const entries = await this.log.read(from, ENTRIES_PER_CALL);
      if (entries.length === 0) return true;
      if (entries[0]!.seq !== from) throw new Error(`the log's entries begin at ${entries[0]!.seq}, after this box's ${from - 1}`);
      if (!checked) {
        const reason = await this.divergence(store);
        if (reason !== undefined) throw new Error(`this box's store ${reason}`);
        checked = true;
      }
      await store.applyLog(entries.map((e) => e.bytes));
      if (entries.length < ENTRIES_PER_CALL) return true;
    }
  }

  private peerUrl(): string {
    return `https://${this.options.config.replication_address ?? this.options.config.host}:${this.options.config.replication_peer_port}`;
  }

  /** Runs the daemon as the active box of `term` until the lead is lost or the box stops. */
  private async lead(store: Store, term: number, known: LogOrigin | undefined, lease: HeldLease): Promise<void> {
    this.set({ role: 'active', term, leader: this.name });
    // The lease the campaign took holds the leader key: the appender may write while it lives,
    // and gives up a little before etcd would let it run out, by this box's own clock.
    const ttlMs = this.options.config.replication_lease_seconds * 1000;
    const leaseLost = () => lease.isLost() || Date.now() - lease.keptAt() > ttlMs * 0.8;

    let point: LogPoint;
    let head: number;
    let origin = known;
    try {
      await this.catchUp(store);
      point = store.logPoint();
      if (!origin) {
        origin = await this.log.start(term, point);
        await store.joinLog(origin.id);
      }
      // Past the head: this box's own batches the log never took, appended first (divergence()).
      head = (await this.log.head()) ?? point.seq;
      if (head > point.seq) throw new Error(`won the lead at entry ${point.seq} but the log ends at ${head}`);
      if (head < point.seq) this.logger.warn({ head, seq: point.seq }, `replication: this box holds entries ${head + 1} to ${point.seq} that the log never took; it appends them first`);
      else await store.sent(point.seq);
    } catch (err) {
      await this.log.resign(term).catch(() => undefined);
      await lease.revoke().catch(() => undefined);
      throw err;
    } finally {
      await store.close();
    }

    let appender: LogAppender | undefined;
    let peerServer: Server | undefined;
    let daemon: ActiveDaemon | undefined;
    let refusal: string | undefined;
    const ended = new Promise<void>((resolve) => (this.wake = resolve));
    try {
      daemon = await this.options.startActive({
        gate: (appStore) => {
          appender = new LogAppender({ store: appStore, log: this.log, term, after: head, leaseLost });
          if (head < point.seq) void appender.durable(point.seq).catch(() => undefined);
          appender.onRefused((message) => {
            refusal = message;
            this.wake?.();
          });
          void servePeer({
            store: appStore, host: '0.0.0.0', port: this.options.config.replication_peer_port, ...this.options.tls, token: this.options.peerToken,
            scratchDir: path.join(this.options.config.state_dir, 'snapshot'),
          }).then((server) => (peerServer = server), (err: unknown) => this.logger.error({ err }, 'replication: the peer port could not be opened; a standby cannot take a snapshot'));
          return appender;
        },
        status: () => this.status(),
        onChange: (listener) => this.listeners.push(listener),
      });
      this.tell('took_over', `this box (${this.name}) is the active one of the pair (term ${term}) from log entry ${point.seq}`);
      // Apart from the watch's calls to etcd, which may each wait out their deadline on a cut network.
      const leaseWatch = setInterval(() => {
        if (leaseLost()) appender?.refuse('this box lost its lease on the lead (etcd unreachable): writes are no longer acknowledged here');
      }, 100);
      try {
        await this.watchAsActive(term, origin, lease, () => appender, leaseLost, ended, () => refusal);
      } finally {
        clearInterval(leaseWatch);
      }
    } finally {
      if (appender && !appender.refused()) appender.refuse(this.stopping ? 'the box is stopping' : 'this box gave up the lead');
      this.set({ role: 'joining', term: null });
      peerServer?.close();
      peerServer?.closeAllConnections();
      // Its last writes are refused (the box may not write any more): what fails to close is logged, not fatal.
      await daemon?.close().catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'replication: the daemon closed with an error after the lead ended'));
      await this.log.resign(term).catch(() => undefined);
      await lease.revoke().catch(() => undefined);
      this.logger.warn({ reason: refusal ?? 'stopping' }, 'replication: this box is no longer the active one');
    }
  }

  private tell(kind: 'took_over' | 'unprotected' | 'protected', message: string): void {
    this.logger.warn({ kind }, message);
    for (const listener of this.listeners) listener(kind, message);
  }

  /** The active's watch: lease, lead, peer and witness, trimming; returns when the lead ends or the box stops. */
  private async watchAsActive(term: number, origin: LogOrigin, lease: HeldLease, appender: () => LogAppender | undefined, leaseLost: () => boolean, ended: Promise<void>, refusal: () => string | undefined): Promise<void> {
    const watch: ActiveWatch = { term, origin, lease, appender, leaseLost, watched: 0, wasProtected: true };
    const end = ended.then(() => 'stop' as const);
    while (!this.stopping && refusal() === undefined) {
      // A step's calls may each wait out their deadline on a cut network: the lead's end does not wait for them.
      if ((await Promise.race([end, this.watchStep(watch)])) === 'stop') break;
      if ((await Promise.race([end, sleep(TICK_MS)])) === 'stop') break;
    }
  }

  /** One round of the active's watch; 'stop' once the lead is lost. */
  private async watchStep(w: ActiveWatch): Promise<'stop' | 'go'> {
    const appender = w.appender();
    if (w.leaseLost()) {
      appender?.refuse('this box lost its lease on the lead (etcd unreachable): writes are no longer acknowledged here');
      return 'stop';
    }
    const leader = await this.log.leader().catch(() => null);
    if (leader === undefined || (leader && leader.term !== w.term)) {
      appender?.refuse(leader ? `box ${leader.name} is the active one now` : 'the lead was given up (a switchover)');
      return 'stop';
    }
    const seq = appender?.last() ?? 0;
    this.set({ seq });
    if (Date.now() - w.watched < WATCH_MS) return 'go';
    w.watched = Date.now();
    await this.log.announce({ name: this.name, role: 'active', seq, at: new Date().toISOString() }, w.lease).catch(() => undefined);
    const peers = await this.log.members().catch(() => undefined);
    const peer = peers?.find((m) => m.name !== this.name);
    const members = await this.log.healthyMembers().catch(() => null);
    const missing: string[] = [];
    if (peers && !peer) missing.push('no standby box follows the log');
    if (members && members.healthy < members.total) missing.push(`${members.total - members.healthy} of ${members.total} etcd members (the witness or a box) do not answer`);
    const isProtected = missing.length === 0;
    this.set({ peer: peer ? { name: peer.name, role: peer.role, seq: peer.seq } : null, lag_entries: peer ? Math.max(0, seq - peer.seq) : null, members, protected: isProtected, warning: isProtected ? null : `unprotected: ${missing.join('; ')}` });
    if (isProtected !== w.wasProtected) {
      this.tell(isProtected ? 'protected' : 'unprotected', isProtected ? 'the pair is protected again: the standby follows and every etcd member answers' : `the pair is unprotected: ${missing.join('; ')}; the active box keeps serving`);
      w.wasProtected = isProtected;
    }
    const keepFrom = peer ? Math.min(peer.seq, seq) : seq - KEEP_WITHOUT_PEER;
    if (keepFrom > w.origin.base.seq + ENTRIES_PER_CALL) {
      const point = { seq: keepFrom, term: (await this.log.termOf(keepFrom).catch(() => undefined)) ?? 0 };
      if (point.term !== 0) {
        await this.log.trim(w.term, w.origin, point).catch(() => undefined);
        w.origin = { ...w.origin, base: point };
      }
    }
    return 'go';
  }
}

/** What the active box's watch carries from one round to the next. */
interface ActiveWatch {
  term: number;
  origin: LogOrigin;
  lease: HeldLease;
  appender: () => LogAppender | undefined;
  leaseLost: () => boolean;
  /** When the peer and the witness were last checked. */
  watched: number;
  wasProtected: boolean;
}
