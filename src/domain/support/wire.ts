/**
 * The request the forwarder sends to the support endpoint: multipart/form-data in the same
 * shape as `POST /api/v2/support/create_issue` (a `payload` JSON string plus `files`), so the
 * endpoint can be another system speaking this API, plus a `source` JSON string saying where
 * and when the issue was made. Binary files travel as they are (no base64 growth).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { IssueRecord } from './outbox.js';

/** Bytes and headers of one forward attempt. */
export interface ForwardRequest {
  body: Buffer;
  headers: Record<string, string>;
}

/** Encodes an issue and its file contents (in `issue.files` order) as the forward request. */
export function encodeForward(issue: IssueRecord, contents: readonly Buffer[], userAgent: string): ForwardRequest {
  const boundary = `----warehouse-support-${randomBytes(12).toString('hex')}`;
  const source = {
    key: issue.key,
    created_at: issue.created_at,
    hostname: hostname(),
    files: issue.files.map(({ name, original_name, type, bytes, sha256 }) => ({ name, original_name, type, bytes, sha256 })),
  };
  const chunks: Buffer[] = [];
  const field = (name: string, value: string) => {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n`), Buffer.from(value, 'utf8'), Buffer.from('\r\n'));
  };
  field('payload', JSON.stringify(issue.payload));
  field('source', JSON.stringify(source));
  issue.files.forEach((file, i) => {
    // Stored names and types are already restricted to header-safe characters (names.ts, outbox.ts).
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`),
      contents[i]!,
      Buffer.from('\r\n'),
    );
  });
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const body = Buffer.concat(chunks);
  return {
    body,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(body.length),
      // The same key on every attempt: a retry after a lost answer must not open a second ticket.
      'idempotency-key': issue.key,
      'user-agent': userAgent,
    },
  };
}
