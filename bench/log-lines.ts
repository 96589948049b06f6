/** The daemon's stdout as parsed JSON log lines (a line that is not JSON is passed over). */
import type { Readable } from 'node:stream';

/** Calls `each` with every JSON line the stream carries, and the line's text. */
export function eachLogLine(stream: Readable, each: (line: Record<string, unknown>, text: string) => void): void {
  let buffered = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      each(line, text);
    }
  });
}
