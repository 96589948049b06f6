/** `reset-admin [--out FILE]`: the daemon stopped, the first Super Admin gets a new password in a 0600 file. */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { Store } from '../store/store.js';
import { ALL_COLLECTIONS } from '../domain/collections.js';
import { MIGRATIONS } from '../store/migrations.js';
import { Events } from '../domain/events/events.js';
import { Settings } from '../domain/settings/settings.js';
import { settingRegistry } from '../domain/settings/registry.js';
import { authSettingsFrom } from '../domain/settings/auth-settings.js';
import { resetAdministrator } from '../domain/auth/reset-admin.js';
import { BOOTSTRAP_FILE } from '../domain/auth/auth.js';
import { CliError, existingStateDir, EXIT, withoutDaemon } from './context.js';

/** Resets the administrator; returns the file holding the new credential. */
export async function resetAdmin(config: Config, out: string | undefined): Promise<{ file: string; email: string }> {
  const stateDir = existingStateDir(config);
  const file = path.resolve(out ?? path.join(stateDir, BOOTSTRAP_FILE));
  if (existsSync(file)) throw new CliError(`${file} exists: read and remove it first, or give another --out`, EXIT.cannotCreate);
  const lock = withoutDaemon(stateDir, 'reset-admin');
  try {
    const store = await Store.open({ dir: path.join(stateDir, 'db'), mapSize: config.store_map_size_bytes }, ALL_COLLECTIONS, MIGRATIONS);
    try {
      const events = new Events(store, Date.now);
      const settings = new Settings(store, settingRegistry({ timeZone: config.timezone, maxPageSize: config.max_page_size }), Date.now, events);
      let reset;
      try {
        reset = await resetAdministrator(store, events, authSettingsFrom(settings)().passwordPolicy, Date.now());
      } catch (err) {
        throw new CliError(`cannot reset the administrator: ${(err as Error).message}`, EXIT.dataError);
      }
      // Created with its mode: the password is never readable by others, not even briefly.
      writeFileSync(file, `${JSON.stringify({ email: reset.user.email, password: reset.password }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      return { file, email: reset.user.email };
    } finally {
      await store.close();
    }
  } finally {
    lock.release();
  }
}
