/**
 * The daemon's entry point (the unit's ExecStart): configuration, logging, the app, systemd
 * notifications, signals. The technician's commands are in cli/; this file only answers
 * `--help` and `--version` without starting anything.
 */
import { loadConfig, type Config } from './config/config.js';
import { createLogger, type Logger } from './log/logger.js';
import { startApp } from './app.js';
import { startPairDaemon } from './replication/daemon.js';
import { notifyReady, notifyStatus, notifyStopping, notifyWatchdog, watchdogIntervalMs } from './native/addon.js';
import { buildIdentity, VERSION } from './version.js';
import { LogTail } from './log/tail.js';
import { EXIT_SOFTWARE, EXIT_USAGE, startupFailure } from './startup.js';

const USAGE = `usage: node dist/main.js            run the daemon (what the systemd unit does)
       node dist/main.js --version  print the version
The daemon takes its settings from WAREHOUSE_* variables (docs/configuration.md).
Status, checks, backups and the rest: \`warehouse-controller --help\` (docs/operations.md).
`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.length > 0) return answerArguments(args);

  const logTail = new LogTail();
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    // Before the configuration is known: logged at info with the default destination.
    failStart(createLogger('info'), err);
  }
  const logger = createLogger(config.log_level, undefined, logTail);
  installCrashHandlers(logger);
  logger.info({ version: VERSION, node: process.version, pid: process.pid, state_dir: config.state_dir, site: config.site, timezone: config.timezone }, 'starting');

  const underSystemd = process.env.NOTIFY_SOCKET !== undefined;
  // The handlers go in before the start awaits: a SIGTERM while the store opens or the port
  // binds must still end in an orderly close, not the default signal death.
  // A box of a replicated pair runs the app only while it is the active one (docs/high-availability.md).
  const started: Promise<{ close(): Promise<void>; reload(): Promise<void>; port?: number }> = (config.replication_endpoints
    ? startPairDaemon(config, logger, { logTail })
    : startApp(config, logger, { logTail })).catch((err: unknown) => failStart(logger, err));
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    if (underSystemd) notifyStopping();
    // Whatever happens below, the process ends within a bounded time.
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.shutdown_timeout_ms + 5000).unref();
    started.then((app) => app.close()).then(
      () => {
        logger.info('stopped');
        logger.flush();
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'error while shutting down');
        logger.flush();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    if (stopping) return;
    started
      .then((app) => app.reload())
      .catch((err: unknown) => logger.error({ err }, 'reload failed'));
  });

  const app = await started;
  if (underSystemd && !stopping) {
    notifyReady();
    notifyStatus(app.port === undefined ? 'one box of a replicated pair' : `API on port ${app.port}`);
    const interval = watchdogIntervalMs();
    if (interval !== undefined) setInterval(notifyWatchdog, interval).unref();
  }
}

/**
 * Ends a start that cannot go on: one structured line (stable code, hint, every problem), then
 * the exit status systemd acts on. Exits at once: whatever was started keeps no event loop alive.
 */
function failStart(logger: Logger, err: unknown): never {
  const failure = startupFailure(err);
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  logger.fatal({ code: failure.code, hint: failure.hint, problems: failure.problems, exit_code: failure.exit, err }, message);
  logger.flush();
  process.exit(failure.exit);
}

function answerArguments(args: string[]): void {
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    process.stdout.write(buildIdentity());
  } else if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    process.stdout.write(USAGE);
  } else {
    process.stderr.write(`the daemon takes no arguments (got ${args.join(' ')}); did you mean \`warehouse-controller ${args.join(' ')}\`?\n${USAGE}`);
    process.exitCode = EXIT_USAGE;
  }
}

function installCrashHandlers(logger: Logger): void {
  // Unknown state after an exception nobody caught: log it and let systemd restart us.
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception; exiting');
    logger.flush();
    process.exit(EXIT_SOFTWARE);
  });
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection');
  });
}

await main();
