/**
 * One HTTP(S) POST with a deadline, for the support forwarder. node:https rather than fetch
 * so that a private CA can be trusted for this endpoint alone (`ca`), without touching the
 * process-wide trust store.
 */
import http from 'node:http';
import https from 'node:https';

/** The part of an answer the forwarder uses. */
export interface PostAnswer {
  status: number;
  /** Retry-After in seconds, when the endpoint sent a number. */
  retryAfterSeconds: number | undefined;
  /** The body, at most 64 KiB of it. */
  text: string;
}

export interface PostOptions {
  ca?: string | Buffer;
  /** Longest silence on the socket (connect, send or answer) before the attempt fails. */
  timeoutMs: number;
  signal: AbortSignal;
}

const MAX_ANSWER_BYTES = 64 * 1024;

/** Sends one POST; rejects on network errors, timeout or abort, resolves with any status. */
export function postOnce(url: URL, body: Buffer, headers: Record<string, string>, options: PostOptions): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(url, {
      method: 'POST', headers, signal: options.signal, timeout: options.timeoutMs,
      ...(url.protocol === 'https:' && options.ca ? { ca: options.ca } : {}),
      // No keep-alive: attempts are minutes apart and an idle socket would outlive close().
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < MAX_ANSWER_BYTES) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => {
        const header = res.headers['retry-after'];
        const seconds = header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
        resolve({ status: res.statusCode ?? 0, retryAfterSeconds: seconds, text: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no progress for ${options.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
