/**
 * Growing delays against password guessing. Each key (an account, a client address) may fail
 * a few times freely; after that every further attempt must wait twice as long as the last,
 * up to a ceiling. Callers count an attempt as a failure before checking the password (the
 * check is slow, and parallel guesses must not all pass the limit while it runs), then clear
 * or release it on success. Kept in memory: a restart forgives, which costs an attacker a
 * daemon restart per few guesses, not a real weakness. Being in memory, it is timed on the
 * monotonic clock: on the wall clock a step back of hours locked a key out for those hours, and
 * a step forward forgave every failure.
 */

export interface LimitRule {
  /** Failures allowed before delays start. */
  free: number;
  /** First delay once `free` is used up. */
  baseMs: number;
  maxMs: number;
  /** Failures older than this are forgotten. */
  windowMs: number;
}

interface Entry {
  failures: number;
  last: number;
}

export class AttemptLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly rule: LimitRule,
    /** A monotonic clock in milliseconds. */
    private readonly now: () => number,
  ) {}

  /** Milliseconds the caller must still wait before trying `key` again (0: go ahead). */
  waitMs(key: string): number {
    const e = this.current(key);
    return e ? Math.max(0, e.last + this.lockMs(key) - this.now()) : 0;
  }

  /**
   * The wait the key's failures impose, counted from the last one (0 while under `free`): what
   * a failure just recorded locks the key for, however long the caller took since.
   */
  lockMs(key: string): number {
    const e = this.current(key);
    if (!e || e.failures < this.rule.free) return 0;
    return Math.min(this.rule.maxMs, this.rule.baseMs * 2 ** (e.failures - this.rule.free));
  }

  /** Records a failed attempt. */
  fail(key: string): void {
    const e = this.current(key) ?? { failures: 0, last: 0 };
    e.failures++;
    e.last = this.now();
    this.entries.set(key, e);
    if (this.entries.size > 100_000) this.prune();
  }

  /** Takes back one counted failure (an attempt counted up front that succeeded). */
  release(key: string): void {
    const e = this.current(key);
    if (!e) return;
    if (--e.failures <= 0) this.entries.delete(key);
  }

  /** Forgets a key's failures (after a success). */
  clear(key: string): void {
    this.entries.delete(key);
  }

  private current(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e && this.now() - e.last > this.rule.windowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  private prune(): void {
    for (const key of this.entries.keys()) this.current(key);
  }
}
