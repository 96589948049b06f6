/**
 * What every subcommand starts from: the daemon's configuration as the unit gives it (the
 * environment file, then this process's WAREHOUSE_* variables, then --state-dir), whether a
 * daemon holds the state directory, and the store opened beside it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import path from 'node:path';
import { loadConfig, type Config } from '../config/config.js';
import { Store } from '../store/store.js';
import { ALL_COLLECTIONS } from '../domain/collections.js';
import { MIGRATIONS } from '../store/migrations.js';
import { holdStateDir, StateDirInUse } from '../state-dir.js';
import { CliError, EXIT } from './exit.js';

export { CliError, EXIT } from './exit.js';

/** The environment file the unit reads (EnvironmentFile=). */
export const DEFAULT_ENV_FILE = '/etc/warehouse-controller/environment';
/**
 * The unit's state directory (StateDirectory=), used when nothing else names one and it exists;
 * otherwise the daemon's own default holds: `./state` of the current directory, as in a checkout.
 */
export const DEFAULT_STATE_DIR = '/var/lib/warehouse-controller';

export interface CliOptions {
  stateDir?: string;
  envFile?: string;
}

/** The WAREHOUSE_* variables the daemon would see: the environment file's, then this process's. */
export function daemonEnvironment(options: CliOptions): { env: NodeJS.ProcessEnv; envFile: string | undefined } {
  const envFile = options.envFile ?? DEFAULT_ENV_FILE;
  let fromFile: Record<string, string> = {};
  if (existsSync(envFile)) {
    fromFile = parseEnv(readFileSync(envFile, 'utf8')) as Record<string, string>;
  } else if (options.envFile !== undefined) {
    throw new CliError(`no environment file at ${envFile}`, EXIT.noInput);
  }
  const env: NodeJS.ProcessEnv = { ...fromFile };
  for (const [name, value] of Object.entries(process.env)) if (name.startsWith('WAREHOUSE_')) env[name] = value;
  if (options.stateDir !== undefined) env.WAREHOUSE_STATE_DIR = options.stateDir;
  else if (env.WAREHOUSE_STATE_DIR === undefined && existsSync(DEFAULT_STATE_DIR)) env.WAREHOUSE_STATE_DIR = DEFAULT_STATE_DIR;
  return { env, envFile: existsSync(envFile) ? envFile : undefined };
}

/** The daemon's configuration (throws ConfigError). */
export function cliConfig(options: CliOptions): Config {
  return loadConfig(daemonEnvironment(options).env);
}

/** The state directory, which must exist (exit 66 otherwise). */
export function existingStateDir(config: Config): string {
  const dir = path.resolve(config.state_dir);
  if (!existsSync(path.join(dir, 'db'))) throw new CliError(`no controller state in ${dir} (give --state-dir, or set WAREHOUSE_STATE_DIR)`, EXIT.noInput);
  return dir;
}

/** The pid of the daemon holding the state directory, or undefined when none runs. */
export function daemonPid(stateDir: string): number | undefined {
  try {
    holdStateDir(stateDir).release();
    return undefined;
  } catch (err) {
    if (err instanceof StateDirInUse) return Number(err.holder) || -1;
    throw new CliError(`cannot tell whether the daemon runs: ${(err as Error).message}`, EXIT.unknown);
  }
}

/**
 * Takes the state directory for a command that must not run beside the daemon (restore,
 * reset-admin, compact); the lock keeps a daemon from starting meanwhile. Refused while the
 * daemon runs with EX_TEMPFAIL: the same command works once it is stopped.
 */
export function withoutDaemon(stateDir: string, what: string): { release(): void } {
  try {
    return holdStateDir(stateDir);
  } catch (err) {
    if (err instanceof StateDirInUse) {
      throw new CliError(`${what} needs the daemon stopped: pid ${err.holder} holds ${stateDir} (systemctl stop warehouse-controller)`, EXIT.tempFail);
    }
    throw err;
  }
}

/** Opens the store read-only, beside the daemon or not. */
export function openStoreReadOnly(stateDir: string, config: Config): Promise<Store> {
  return Store.open({ dir: path.join(stateDir, 'db'), mapSize: config.store_map_size_bytes, readOnly: true }, ALL_COLLECTIONS, MIGRATIONS);
}
