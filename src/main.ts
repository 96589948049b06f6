/**
 * The daemon's entry point: configuration, logging, the app, systemd notifications and a
 * bounded graceful shutdown on SIGTERM/SIGINT.
 */
import { loadConfig, ConfigError, type Config } from './config/config.js';
import { createLogger, type Logger } from './log/logger.js';
import { startApp, type App } from './app.js';
import { notifyReady, notifyStatus, notifyStopping, notifyWatchdog, watchdogIntervalMs } from './native/addon.js';
import { VERSION } from './version.js';
import { SiteError } from './domain/site/load.js';
import { StateDirInUse } from './state-dir.js';
import { LogTail } from './log/tail.js';

/** sysexits(3) EX_CONFIG: the unit does not restart on it, since a restart cannot help. */
const EXIT_CONFIG = 78;
const EXIT_SOFTWARE = 70;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`warehouse-controller: ${err.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  const logTail = new LogTail();
  const logger = createLogger(config.log_level, undefined, logTail);
  installCrashHandlers(logger);
  logger.info({ version: VERSION, node: process.version, pid: process.pid, state_dir: config.state_dir, site: config.site, timezone: config.timezone }, 'starting');

  const underSystemd = process.env.NOTIFY_SOCKET !== undefined;
  let app: App;
  try {
    app = await startApp(config, logger, { logTail });
  } catch (err) {
    if (err instanceof StateDirInUse) {
      logger.fatal({ code: 'state_dir_in_use', state_dir: err.dir, holder_pid: err.holder }, err.message);
      process.stderr.write(`warehouse-controller: ${err.message}\n`);
      process.exitCode = EXIT_CONFIG;
      return;
    }
    if (err instanceof SiteError) {
      // Every problem of the layout file, one per line, so a site engineer fixes it in one pass.
      logger.fatal({ site: config.site, problems: err.problems }, 'the site layout file cannot be used');
      process.stderr.write(`warehouse-controller: ${err.message}\n`);
      process.exitCode = EXIT_CONFIG;
      return;
    }
    logger.fatal({ err }, 'start failed');
    process.exitCode = EXIT_SOFTWARE;
    return;
  }
  if (underSystemd) {
    notifyReady();
    notifyStatus(`API on port ${app.port}`);
    const interval = watchdogIntervalMs();
    if (interval !== undefined) setInterval(notifyWatchdog, interval).unref();
  }

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
    app.close().then(
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
