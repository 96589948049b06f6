/**
 * Structured JSON logging to stdout (journald keeps it). Secrets are redacted by path so that
 * a careless `log.info({ body })` cannot leak a password, key or token. When stdout is the
 * journal, each line starts with its syslog priority (`<3>` for an error), which journald reads
 * and strips: `journalctl -p err` then finds the errors, and `-o cat | jq` still gets JSON.
 */
import { fstatSync } from 'node:fs';
import { pino, type Logger, type DestinationStream } from 'pino';
import type { LogTail } from './tail.js';

export type { Logger };

/** Names of fields whose values never reach a log line. */
const SECRET_FIELDS = ['password', 'new_password', 'old_password', 'otp', 'api_key', 'token', 'access_token', 'refresh_token', 'authorization', 'secret', 'key_pem'];

/** Paths whose values never reach a log line: a secret field at the top and up to two levels down (`{ body: { user: { password } } }`). */
export const REDACTED_PATHS = SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);

/** syslog(3) priorities of pino's levels: crit, err, warning, info, debug. */
const PRIORITY: Readonly<Record<string, number>> = { fatal: 2, error: 3, warn: 4, info: 6, debug: 7, trace: 7 };

/** Whether stdout is the journal: systemd names stdout's device:inode in JOURNAL_STREAM. */
export function stdoutIsJournal(env: NodeJS.ProcessEnv = process.env): boolean {
  const stream = env.JOURNAL_STREAM;
  if (!stream) return false;
  try {
    const st = fstatSync(1);
    return stream === `${st.dev}:${st.ino}`;
  } catch {
    return false;
  }
}

/** The syslog priority of a line pino wrote (its level is the first field). */
export function priorityOf(line: string): number {
  const label = line.startsWith('{"level":"') ? line.slice(10, line.indexOf('"', 10)) : '';
  return PRIORITY[label] ?? 6;
}

/** A stream that puts each line's syslog priority in front of it, for journald. */
export function withPriorities(out: DestinationStream): DestinationStream {
  return { write: (line: string) => out.write(`<${priorityOf(line)}>${line}`) };
}

/**
 * Creates the daemon's root logger; with `tail`, recent lines are also kept in memory. Lines to
 * stdout carry their syslog priority when stdout is the journal (`journal`, detected by default).
 */
export function createLogger(level: string, destination?: DestinationStream, tail?: LogTail, journal = destination === undefined && stdoutIsJournal()): Logger {
  const stdout = destination ?? pino.destination({ dest: 1, sync: false });
  const out = journal ? withPriorities(stdout) : stdout;
  const family = new Set<WeakRef<Logger>>();
  let pruneAt = 64;
  const root = pino(
    {
      level,
      base: { service: 'warehouse-controller' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
      // A child keeps the level it was made with; the family lets setLevel reach it. Dead
      // children (a request's) are pruned whenever the family has doubled since the last pass.
      onChild: (child) => {
        family.add(new WeakRef(child));
        if (family.size < pruneAt) return;
        for (const ref of family) if (ref.deref() === undefined) family.delete(ref);
        pruneAt = Math.max(64, family.size * 2);
      },
    },
    // The streams take every line: the logger's level (which setLevel changes) does the filtering.
    tail ? pino.multistream([{ stream: out, level: 'trace' }, { stream: tail, level: 'trace' }]) : out,
  );
  families.set(root, family);
  return root;
}

const families = new WeakMap<Logger, Set<WeakRef<Logger>>>();

/** Sets the level of a root logger made by createLogger and of every child of it still alive. */
export function setLevel(root: Logger, level: string): void {
  root.level = level;
  for (const ref of families.get(root) ?? []) {
    const child = ref.deref();
    if (child) child.level = level;
    else families.get(root)?.delete(ref);
  }
}
