/**
 * The replication gate of a thread that shares the environment (the brain's worker): its
 * batches are stamped as the main thread's are, and the main thread, which owns the connection
 * to the replicated log, says when each is in it. The term crosses once, and again whenever
 * the box may no longer write, so a stamp never waits on a message.
 */
import type { MessagePort } from 'node:worker_threads';
import { ReplicaWriteRefused, type ReplicationGate } from './replication.js';

type ToThread = { type: 'term'; term: number } | { type: 'refused'; message: string } | { type: 'durable'; id: number; error?: string };
type FromThread = { type: 'durable'; id: number; seq: number };

/** Answers the other thread's gate through `port` with `gate`'s; returns the function that stops it. */
export function serveGate(gate: ReplicationGate & { onRefused(listener: (message: string) => void): () => void }, port: MessagePort): () => void {
  try {
    port.postMessage({ type: 'term', term: gate.term() } satisfies ToThread);
  } catch (err) {
    port.postMessage({ type: 'refused', message: (err as Error).message } satisfies ToThread);
  }
  const stopRefused = gate.onRefused((message) => port.postMessage({ type: 'refused', message } satisfies ToThread));
  const onMessage = (m: FromThread) => {
    gate.durable(m.seq).then(
      () => port.postMessage({ type: 'durable', id: m.id } satisfies ToThread),
      (err: unknown) => port.postMessage({ type: 'durable', id: m.id, error: (err as Error).message } satisfies ToThread),
    );
  };
  port.on('message', onMessage);
  port.unref();
  return () => {
    stopRefused();
    port.off('message', onMessage);
    port.close();
  };
}

/** The gate of a thread whose main thread owns the log (`serveGate` on the other end). */
export class ThreadGate implements ReplicationGate {
  private current: number | undefined;
  private refusal: string | undefined = 'the main thread has not told the term yet';
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  constructor(private readonly port: MessagePort) {
    port.on('message', (m: ToThread) => {
      if (m.type === 'term') {
        this.current = m.term;
        this.refusal = undefined;
      } else if (m.type === 'refused') {
        this.refusal = m.message;
      } else {
        const w = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        if (m.error === undefined) w?.resolve();
        else w?.reject(new ReplicaWriteRefused(m.error));
      }
    });
    port.unref();
  }

  /** Resolves once the main thread has told the term (or that this box may not write). */
  ready(): Promise<void> {
    if (this.current !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.port.once('message', () => resolve()));
  }

  term(): number {
    if (this.refusal !== undefined || this.current === undefined) throw new ReplicaWriteRefused(this.refusal ?? 'no term');
    return this.current;
  }

  durable(seq: number): Promise<void> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.port.postMessage({ type: 'durable', id, seq } satisfies FromThread);
    });
  }
}
