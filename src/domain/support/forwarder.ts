/**
 * Sends stored support issues to the configured support endpoint and retries until it
 * accepts them (any 2xx). The outbox on disk is the queue: at start every `pending` issue is
 * due at once, new issues are due when written, a failed attempt makes its issue due again
 * after an exponential backoff with jitter (capped, 15 minutes by default), and each attempt's
 * outcome is written to the issue's status.json before the next one starts.
 *
 * One attempt at a time, off the request path: a support endpoint that is down costs one
 * timer and one socket, never a slower API. Logs name the key, never the payload or files.
 */
import type { Logger } from '../../log/logger.js';
import { VERSION } from '../../version.js';
import type { ForwardingStatus, SupportOutbox } from './outbox.js';
import { postOnce, type PostAnswer } from './post.js';
import { encodeForward } from './wire.js';

export interface ForwarderOptions {
  outbox: SupportOutbox;
  /** The support endpoint (`support_url`); http: or https:. */
  url: string;
  logger: Logger;
  /** CA certificate(s) trusted for this endpoint instead of Node's built-in list (a private support CA). */
  ca?: string | Buffer;
  /** Socket silence that fails an attempt; default 60 s. */
  timeoutMs?: number;
  /** Delay before the first retry; doubles per failed attempt. Default 5 s. */
  baseDelayMs?: number;
  /** Longest delay between attempts. Default 15 min. */
  maxDelayMs?: number;
  /** Clocks and randomness, replaceable in tests: the wall clock for the instants the status shows, the monotonic one for when an issue is due. */
  now?: () => number;
  monotonic?: () => number;
  random?: () => number;
}

/**
 * Delay after the `attempts`-th failure: base·2^(attempts-1) capped, then "equal jitter"
 * (half fixed, half random) so boxes that lost the endpoint together do not retry together.
 */
export function retryDelay(attempts: number, baseMs: number, maxMs: number, random: () => number): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.min(attempts - 1, 30));
  return Math.round(exp / 2 + random() * (exp / 2));
}

export class SupportForwarder {
  private readonly url: URL;
  private readonly now: () => number;
  private readonly monotonic: () => number;
  private readonly random: () => number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly timeoutMs: number;
  /**
   * Key → when it is due (monotonic ms); the in-memory index of the pending issues on disk. A
   * restart makes them all due, so nothing here need survive one, and a step of the wall clock
   * back must not hold retries for the length of the step.
   */
  private readonly due = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private inFlight: AbortController | undefined;
  private unsubscribe: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: ForwarderOptions) {
    this.url = new URL(options.url);
    if (this.url.protocol !== 'https:' && this.url.protocol !== 'http:') throw new Error(`support URL must be http: or https:, not ${this.url.protocol}`);
    this.now = options.now ?? Date.now;
    this.monotonic = options.monotonic ?? ((): number => performance.now());
    this.random = options.random ?? Math.random;
    this.baseDelayMs = options.baseDelayMs ?? 5_000;
    this.maxDelayMs = options.maxDelayMs ?? 15 * 60_000;
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  /** Queues every pending issue of the outbox (due now) and follows new ones. */
  async start(): Promise<void> {
    this.unsubscribe = this.options.outbox.onCreated((key) => this.enqueue(key, this.monotonic()));
    let pending = 0;
    for (const key of await this.options.outbox.keys()) {
      try {
        const { status } = await this.options.outbox.get(key);
        if (status.status !== 'pending') continue;
        // Due at once even if status.json names a later time: a restart is a good moment to
        // try, and the attempt count keeps the backoff growing if the endpoint is still down.
        this.due.set(key, this.monotonic());
        pending++;
      } catch (err) {
        this.options.logger.error({ err, key }, 'support issue unreadable; not forwarded');
      }
    }
    this.options.logger.info({ endpoint: this.url.origin, pending }, 'support forwarding started');
    this.schedule();
  }

  /** Stops: no new attempt, the one in flight is aborted (its issue stays pending), no timer left. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight?.abort();
    await this.running;
  }

  private enqueue(key: string, at: number): void {
    if (this.closed) return;
    this.due.set(key, at);
    this.schedule();
  }

  /** Arms one timer for the earliest due issue, unless a run is going (it looks again when done). */
  private schedule(): void {
    if (this.closed || this.running || this.due.size === 0) return;
    if (this.timer) clearTimeout(this.timer);
    const next = Math.min(...this.due.values());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.run().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, Math.max(0, next - this.monotonic()));
    // A retry 15 minutes away must not keep a stopping process alive.
    this.timer.unref();
  }

  /** Sends every issue that is due, one after the other. */
  private async run(): Promise<void> {
    while (!this.closed) {
      const now = this.monotonic();
      let key: string | undefined;
      for (const [k, at] of this.due) if (at <= now && (key === undefined || at < this.due.get(key)!)) key = k;
      if (key === undefined) return;
      this.due.delete(key);
      await this.attempt(key);
    }
  }

  private async attempt(key: string): Promise<void> {
    const { outbox, logger } = this.options;
    let status: ForwardingStatus;
    let request: ReturnType<typeof encodeForward>;
    try {
      const stored = await outbox.get(key);
      if (stored.status.status !== 'pending') return;
      status = stored.status;
      const contents = await Promise.all(stored.issue.files.map(async (f) => (await outbox.readFile(key, f.name)).data));
      request = encodeForward(stored.issue, contents, `warehouse-controller/${VERSION}`);
    } catch (err) {
      // Removed or damaged by hand: retrying cannot help, the log says which one.
      logger.error({ err, key }, 'support issue unreadable; not forwarded');
      return;
    }

    let answer: PostAnswer | undefined;
    let error: string | undefined;
    this.inFlight = new AbortController();
    try {
      answer = await postOnce(this.url, request.body, request.headers, { ca: this.options.ca, timeoutMs: this.timeoutMs, signal: this.inFlight.signal });
      if (answer.status < 200 || answer.status > 299) error = `HTTP ${answer.status}${summary(answer.text)}`;
    } catch (err) {
      if (this.closed) return; // aborted by close(): not the endpoint's failure, and not an attempt
      error = (err as Error).message || String(err);
    } finally {
      this.inFlight = undefined;
    }

    const at = this.now();
    const attempts = status.attempts + 1;
    try {
      if (error === undefined) {
        const remote = remoteIds(answer!.text);
        await outbox.setStatus(key, {
          ...status, status: 'forwarded', attempts, last_error: null, last_attempt_at: iso(at), next_attempt_at: null, forwarded_at: iso(at), ...remote,
        });
        logger.info({ key, attempts, remote_key: remote.remote_key }, 'support issue forwarded');
        return;
      }
      let delay = retryDelay(attempts, this.baseDelayMs, this.maxDelayMs, this.random);
      // An endpoint that says when to come back (429/503) is believed, within the cap.
      if (answer?.retryAfterSeconds !== undefined) delay = Math.min(this.maxDelayMs, Math.max(delay, answer.retryAfterSeconds * 1000));
      this.enqueue(key, this.monotonic() + delay);
      await outbox.setStatus(key, { ...status, attempts, last_error: error, last_attempt_at: iso(at), next_attempt_at: iso(at + delay) });
      logger.warn({ key, attempts, error, retry_in_ms: delay }, 'support issue not forwarded yet');
    } catch (err) {
      // The status file could not be written (disk full?): try again later, it is still pending on disk.
      logger.error({ err, key }, 'support issue status not recorded');
      if (!this.due.has(key)) this.enqueue(key, this.monotonic() + retryDelay(attempts, this.baseDelayMs, this.maxDelayMs, this.random));
    }
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The first line of an error answer, short: enough for a technician, not a log flood. */
function summary(text: string): string {
  const line = text.trim().split('\n', 1)[0]!.slice(0, 200);
  return line ? `: ${line}` : '';
}

/** `key` and `url` from a JSON answer (the shape of our own create_issue), when present. */
function remoteIds(text: string): { remote_key: string | null; remote_url: string | null } {
  try {
    const body = JSON.parse(text) as { key?: unknown; url?: unknown };
    return {
      remote_key: typeof body.key === 'string' ? body.key.slice(0, 200) : null,
      remote_url: typeof body.url === 'string' ? body.url.slice(0, 2000) : null,
    };
  } catch {
    return { remote_key: null, remote_url: null };
  }
}
