/**
 * Structured JSON logging to stdout (journald keeps it). Secrets are redacted by path so that
 * a careless `log.info({ body })` cannot leak a password, key or token.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Paths whose values never reach a log line. */
export const REDACTED_PATHS = [
  'password', '*.password', 'new_password', '*.new_password', 'old_password', '*.old_password',
  'otp', '*.otp', 'api_key', '*.api_key', 'token', '*.token', 'access_token', '*.access_token',
  'refresh_token', '*.refresh_token', 'authorization', '*.authorization', 'headers.authorization',
  '*.headers.authorization', 'secret', '*.secret', 'key_pem', '*.key_pem',
];

/** Creates the daemon's root logger. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'warehouse-controller' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
