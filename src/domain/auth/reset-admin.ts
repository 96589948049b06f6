/**
 * A new administrator credential for a box whose administrators are all lost, run by the
 * technician with the daemon stopped (`warehouse-controller reset-admin`). The first Super
 * Admin gets a new password; its tokens and sessions stop working. Recorded as an event.
 */
import { EVENT } from '../events/catalogue.js';
import type { Events } from '../events/events.js';
import type { Store } from '../../store/store.js';
import { generatePassword, hashPassword } from './passwords.js';
import { SEEDED_ROLES } from './roles.js';
import { sessions, users, type UserRecord } from './records.js';
import { AUTH_VERSION, type AuthSettings } from './context.js';

/** Resets the first Super Admin (the bootstrap one unless removed); throws if there is none. */
export async function resetAdministrator(store: Store, events: Events, policy: AuthSettings['passwordPolicy'], now: number): Promise<{ user: UserRecord; password: string }> {
  const superAdmin = SEEDED_ROLES[0]!;
  const admins = [...store.collection(users).findBy('role_id', superAdmin.id)].sort((a, b) => a.id - b.id);
  const admin = admins[0];
  if (!admin) throw new Error(`no user has the ${superAdmin.name} role`);
  const password = generatePassword(policy);
  const hash = await hashPassword(password);
  const user = await store.write(() => {
    const updated: UserRecord = { ...admin, password_hash: hash, token_version: admin.token_version + 1, password_expires_at: null, otp_digest: null, otp_expires_at: null, updated_at: now };
    store.collection(users).put(updated);
    for (const key of store.collection(sessions).keysBy('user_id', admin.id)) store.collection(sessions).remove(key);
    store.nextId(AUTH_VERSION);
    events.record(EVENT.passwordReset, `administrator user ${admin.id} (${admin.email}) given a new password from the command line; its sessions were ended`);
    return updated;
  });
  return { user, password };
}
