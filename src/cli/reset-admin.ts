/**
 * `reset-admin [--out FILE]`: the daemon stopped, the first Super Admin gets a new password and
 * a new API key with every permission, in a 0600 file of the shape the first start writes.
 */
import { existsSync } from 'node:fs';
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
import { BOOTSTRAP_FILE, writeAdminCredentials } from '../domain/auth/auth.js';
import { generateApiKey } from '../domain/auth/api-keys.js';
import { ALL_PERMISSION_KEYS } from '../domain/auth/permissions.js';
import { SEEDED_ROLES } from '../domain/auth/roles.js';
import { loadSecrets } from '../domain/auth/secrets.js';
import { createLogger } from '../log/logger.js';
import { CliError, existingStateDir, EXIT, withoutDaemon } from './context.js';

/** Resets the administrator; returns the file holding the new credentials and when their key expires. */
export async function resetAdmin(config: Config, out: string | undefined): Promise<{ file: string; email: string; keyExpiresAt: number | null }> {
  const stateDir = existingStateDir(config);
  const file = path.resolve(out ?? path.join(stateDir, BOOTSTRAP_FILE));
  if (existsSync(file)) throw new CliError(`${file} exists: read and remove it first, or give another --out`, EXIT.cannotCreate);
  const lock = withoutDaemon(stateDir, 'reset-admin');
  try {
    const store = await Store.open({ dir: path.join(stateDir, 'db'), mapSize: config.store_map_size_bytes }, ALL_COLLECTIONS, MIGRATIONS);
    try {
      const events = new Events(store, Date.now);
      const settings = new Settings(store, settingRegistry({ timeZone: config.timezone, maxPageSize: config.max_page_size }), Date.now, events);
      const authSettings = authSettingsFrom(settings);
      let credentials;
      try {
        const reset = await resetAdministrator(store, events, authSettings().passwordPolicy, Date.now());
        // Key values are shown once and the store keeps only their digests: the first start's key
        // cannot be shown again, so the reset makes a new one, made by the administrator (bounded by
        // its role, as the bootstrap key is) and expiring after the API key default lifetime.
        const deps = { store, secrets: loadSecrets(stateDir), settings: authSettings, logger: createLogger('silent'), stateDir, now: Date.now, events };
        const admin = { kind: 'user' as const, id: reset.user.id, permissions: new Set(ALL_PERMISSION_KEYS), authorityLevel: SEEDED_ROLES[0]!.authority_level };
        const key = await generateApiKey(deps, admin, { name: 'reset-admin', permission_keys: [...ALL_PERMISSION_KEYS] });
        credentials = { email: reset.user.email, password: reset.password, api_key: key.value, keyExpiresAt: key.record.expires_at };
      } catch (err) {
        throw new CliError(`cannot reset the administrator: ${(err as Error).message}`, EXIT.dataError);
      }
      writeAdminCredentials(file, { email: credentials.email, password: credentials.password, api_key: credentials.api_key }, true);
      return { file, email: credentials.email, keyExpiresAt: credentials.keyExpiresAt };
    } finally {
      await store.close();
    }
  } finally {
    lock.release();
  }
}
