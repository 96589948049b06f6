/**
 * Structured JSON logging to stdout (journald keeps it). Secrets are redacted by path so that
 * a careless `log.info({ body })` cannot leak a password, key or token.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import type { LogTail } from './tail.js';

export type { Logger };

/** Names of fields whose values never reach a log line. */
const SECRET_FIELDS = ['password', 'new_password', 'old_password', 'otp', 'api_key', 'token', 'access_token', 'refresh_token', 'authorization', 'secret', 'key_pem'];

/** Paths whose values never reach a log line: a secret field at the top and up to two levels down (`{ body: { user: { password } } }`). */
export const REDACTED_PATHS = SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);

/** Creates the daemon's root logger; with `tail`, recent lines are also kept in memory. */
export function createLogger(level: string, destination?: DestinationStream, tail?: LogTail): Logger {
  const out = destination ?? pino.destination({ dest: 1, sync: false });
  return pino(
    {
      level,
      base: { service: 'warehouse-controller' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    tail && level !== 'silent' ? pino.multistream([{ stream: out, level: level as pino.Level }, { stream: tail, level: level as pino.Level }]) : out,
  );
}
