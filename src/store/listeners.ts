/**
 * The listeners of one kind of news from the store (its commits, what they cost, its disk's
 * faults). What they hear has happened already, so one that throws is warned about and the
 * others still hear it: a failing listener must not make a commit look refused.
 */
export class Listeners<A, B = void> {
  private readonly all = new Set<(a: A, b: B) => void>();

  /** `what` names the listeners in the warning when one throws. */
  constructor(private readonly what: string) {}

  /** Adds `listener`; returns the function that removes it. */
  add(listener: (a: A, b: B) => void): () => void {
    this.all.add(listener);
    return () => this.all.delete(listener);
  }

  /** Whether anyone listens (news that costs something to make is made only then). */
  listening(): boolean {
    return this.all.size > 0;
  }

  /** Tells every listener, in the order they were added. */
  tell(a: A, b: B): void {
    for (const listener of this.all) {
      try {
        listener(a, b);
      } catch (err) {
        process.emitWarning(`${this.what} failed: ${(err as Error).stack ?? String(err)}`);
      }
    }
  }
}
