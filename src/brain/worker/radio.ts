/**
 * The radio lines as the brain's worker sees them: the main thread owns the serial devices
 * and the native links; the worker sends commands and hears bot events through messages.
 */
import type { Command } from '../../native/link.js';
import type { BotEvent, CommandOutcome } from '../../lines/events.js';
import type { FromBrain } from '../messages.js';

/** Sends a command to a node of a level; resolves with its outcome. */
export type SendCommand = (levelId: number, node: number, command: Command) => Promise<CommandOutcome>;

/** The radio lines as the brain uses them (BridgedRadio in the worker). */
export interface BrainRadio {
  send: SendCommand;
  onBot(listener: (event: BotEvent) => void): () => void;
}

export class BridgedRadio {
  private nextId = 1;
  private readonly pending = new Map<number, (outcome: CommandOutcome) => void>();
  private readonly listeners = new Set<(event: BotEvent) => void>();

  constructor(private readonly post: (message: FromBrain) => void) {}

  /** Sends a command to a node of a level through the main thread; resolves with its outcome. */
  send(levelId: number, node: number, command: Command, timeoutMs = 10_000): Promise<CommandOutcome> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.post({ type: 'send', id, levelId, node, command, timeoutMs });
    });
  }

  /** Hears bot events; returns the function that stops listening. */
  onBot(listener: (event: BotEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A command's outcome came back from the main thread. */
  sent(id: number, outcome: CommandOutcome): void {
    this.pending.get(id)?.(outcome);
    this.pending.delete(id);
  }

  /** A bot event came from the main thread. */
  heard(event: BotEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Commands in flight end as not delivered (the brain stops). */
  close(): void {
    for (const resolve of this.pending.values()) resolve({ delivered: false, reason: 'the brain is stopping' });
    this.pending.clear();
  }
}
