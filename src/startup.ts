/**
 * What a failed start means for a technician and for systemd: a stable code, a hint of what to
 * do, and the exit status. sysexits(3): 78 (EX_CONFIG) for anything a restart cannot fix (the
 * unit's RestartPreventExitStatus=78 stops the restart loop), 70 (EX_SOFTWARE) otherwise.
 */
import { ConfigError } from './config/config.js';
import { TlsFilesError } from './config/tls-files.js';
import { SiteError } from './domain/site/load.js';
import { StateDirInUse } from './state-dir.js';
import { StoreTooNewError } from './store/store.js';

export const EXIT_CONFIG = 78;
export const EXIT_SOFTWARE = 70;
/** sysexits(3) EX_USAGE: wrong arguments. */
export const EXIT_USAGE = 64;

export interface StartupFailure {
  code: string;
  hint: string;
  exit: number;
  problems?: string[];
}

/** The code, hint and exit status of an error that ended a start. */
export function startupFailure(err: unknown): StartupFailure {
  if (err instanceof ConfigError) {
    return { code: 'config_invalid', exit: EXIT_CONFIG, problems: err.problems, hint: 'fix the settings named (environment, or the WAREHOUSE_CONFIG file); `warehouse-controller check-config` checks them without starting' };
  }
  if (err instanceof SiteError) return { code: 'site_invalid', exit: EXIT_CONFIG, problems: err.problems, hint: 'fix the site layout file (WAREHOUSE_SITE); docs/site-layout.md' };
  if (err instanceof TlsFilesError) {
    return { code: 'tls_invalid', exit: EXIT_CONFIG, problems: err.problems, hint: 'point WAREHOUSE_TLS_CERT and WAREHOUSE_TLS_KEY at a readable PEM certificate and its key, or unset both for a self-signed one' };
  }
  if (err instanceof StoreTooNewError) {
    return { code: 'state_newer', exit: EXIT_CONFIG, hint: 'this build is older than the one that wrote the state directory: install that build again, or restore a backup made with this one' };
  }
  if (err instanceof StateDirInUse) return { code: 'state_dir_in_use', exit: EXIT_CONFIG, hint: 'stop the other daemon, or give this one its own WAREHOUSE_STATE_DIR' };
  if (err instanceof Error && /^cannot listen on /.test(err.message)) {
    return { code: 'listen_failed', exit: EXIT_SOFTWARE, hint: 'another program uses the port (WAREHOUSE_PORT), or the address (WAREHOUSE_HOST) is not on this box' };
  }
  return { code: 'start_failed', exit: EXIT_SOFTWARE, hint: 'see the error; `warehouse-controller check-config` checks the configuration' };
}
