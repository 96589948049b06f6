/**
 * Bounds the request handling of one event-loop turn. uSockets completes at most five TLS
 * handshakes a turn; when a turn runs the handler of every ready request back to back (two
 * hundred busy clients: a turn of 50-100 ms), the handshakes of new connections take seconds
 * (issue 22). Requests past the turn's budget wait, in the order they came, and are let in a
 * few at a time by later turns, each until its budget is spent, so every turn ends soon and
 * the handshakes keep flowing.
 *
 * Admission is a chain of microtasks: a request let in runs its first step, then the next one
 * is let in, and so on while the turn has budget left. The requests let in finish their later
 * steps within the same turn, so a turn overruns its budget by a few requests' steps at most.
 */
export class TurnBudget {
  /** When this turn started handling requests (performance.now()), or -1 between turns. */
  private turnStart = -1;
  private readonly waiting: (() => void)[] = [];
  /** A later turn is booked to let waiting requests in. */
  private booked = false;
  /** Requests that waited for a later turn since the server started (tests and benchmarks read it). */
  deferred = 0;

  constructor(private readonly budgetMs: number) {}

  /** Undefined when the request may run now; else a promise that resolves when a later turn lets it in. */
  slot(): Promise<void> | undefined {
    if (this.waiting.length === 0 && !this.spent()) return undefined;
    this.deferred++;
    const admitted = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.book();
    return admitted;
  }

  private spent(): boolean {
    const now = performance.now();
    if (this.turnStart < 0) {
      this.turnStart = now;
      // The check phase closes the turn: the next poll phase is a new one.
      setImmediate(this.endTurn);
    }
    return now - this.turnStart > this.budgetMs;
  }

  private readonly endTurn = (): void => {
    this.turnStart = -1;
  };

  private book(): void {
    if (this.booked) return;
    this.booked = true;
    setImmediate(this.nextTurn);
  }

  private readonly nextTurn = (): void => {
    this.booked = false;
    this.turnStart = performance.now();
    setImmediate(this.endTurn);
    // At least one a turn, whatever the budget: the queue always moves.
    if (this.waiting.length > 0) this.letIn();
  };

  private readonly admit = (): void => {
    if (this.waiting.length === 0) return;
    if (performance.now() - this.turnStart > this.budgetMs) return this.book();
    this.letIn();
  };

  private letIn(): void {
    this.waiting.shift()!();
    queueMicrotask(this.admit);
  }
}
