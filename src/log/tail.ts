/**
 * The most recent log lines, kept in memory for the diagnostics report: a technician who
 * sends a report should not need shell access to journalctl. Lines arrive already redacted
 * (pino applies redaction before any destination).
 */
import type { DestinationStream } from 'pino';

export class LogTail implements DestinationStream {
  private readonly lines: string[] = [];
  private next = 0;

  constructor(private readonly capacity = 2000) {}

  /** Keeps one serialized line, dropping the oldest beyond the capacity. */
  write(line: string): void {
    if (this.lines.length < this.capacity) this.lines.push(line);
    else this.lines[this.next] = line;
    this.next = (this.next + 1) % this.capacity;
  }

  /** The kept lines, oldest first. */
  recent(): string[] {
    return this.lines.length < this.capacity ? [...this.lines] : [...this.lines.slice(this.next), ...this.lines.slice(0, this.next)];
  }
}
