/**
 * The store as the daemon's two threads share it. The brain's worker opens the environment the
 * main thread opened, with the same collections and migrations (every open of an LMDB
 * environment must use the same options), and each thread's commits are told to the other, so
 * a listener on either side hears every change whoever made it. The brain reaches the store
 * through this module and the domain's services only.
 */
import type { MessagePort } from 'node:worker_threads';
import { bridgeCommits } from '../../store/commit-bridge.js';
import { serveGate, ThreadGate } from '../../store/gate-bridge.js';
import type { ReplicationGate } from '../../store/replication.js';
import { MIGRATIONS } from '../../store/migrations.js';
import { Store } from '../../store/store.js';
import { botRecords } from '../bots/records.js';
import { ALL_COLLECTIONS } from '../collections.js';
import { carriers } from '../inventory/records.js';
import { systemFlags } from './records.js';

/** The store a thread opened, handed on to the domain's services. */
export type SharedStore = Store;

/** Opens the daemon's store from the brain's thread, as the main thread opened it. */
export function openSharedStore(dir: string, mapSize: number): Promise<SharedStore> {
  return Store.open({ dir, mapSize }, ALL_COLLECTIONS, MIGRATIONS);
}

/** Tells this thread's commits to the other thread through `port`, and the other's to this thread's listeners; returns the function that stops both. */
export function shareCommits(store: SharedStore, port: MessagePort): () => void {
  return bridgeCommits(store, port);
}

/** The main thread's gate to a pair's replicated log, which tells when the box may no longer write. */
export type SharedGate = ReplicationGate & { onRefused(listener: (message: string) => void): () => void };

/** The main thread's replication gate, as the gate of the thread at the other end of `port` (returns the function that stops it). */
export function shareGate(gate: SharedGate, port: MessagePort): () => void {
  return serveGate(gate, port);
}

/** Stamps this thread's batches for the main thread's replicated log (the other end of `shareGate`). */
export async function replicateThroughMainThread(store: SharedStore, port: MessagePort): Promise<void> {
  const gate = new ThreadGate(port);
  await gate.ready();
  store.replicateTo(gate);
}

/** What a commit changed that the brain follows besides the open work (OpenWork follows that). */
export interface StateChange {
  /** The bot table: a bot onboarded, offboarded or removed. */
  bots: boolean;
  /** A system flag (paused, RFID writing mode). */
  flags: boolean;
  /** Where a carrier stands. */
  carriers: boolean;
}

/** Hears every commit, of either thread, that changed the bot table, a system flag or where a carrier stands. */
export function onStateChange(store: SharedStore, listener: (change: StateChange) => void): () => void {
  return store.onCommit((notice) => {
    const bots = notice[botRecords.name] !== undefined;
    const flags = notice[systemFlags.name] !== undefined;
    const moved = notice[carriers.name] !== undefined;
    if (bots || flags || moved) listener({ bots, flags, carriers: moved });
  });
}
