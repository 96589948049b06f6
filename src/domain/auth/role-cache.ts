/**
 * What a request needs of a role (its permissions and authority level), read from the store
 * once per change of the auth data. A role record carries its whole permission list: decoding
 * it to learn one number was 11 KB of garbage on every settings write and every request made
 * with a user's token.
 */
import type { Store } from '../../store/store.js';
import { AUTH_VERSION } from './context.js';
import { roles } from './records.js';
import { rolePermissions } from './roles.js';

export interface RoleFacts {
  permissions: ReadonlySet<string>;
  authorityLevel: number;
}

export class RoleCache {
  /** By role id; null for an id with no role. */
  private readonly facts = new Map<string, RoleFacts | null>();
  private version = -1;

  constructor(private readonly store: Store) {}

  /** The role's facts as the store has them now, undefined for a role that does not exist. */
  get(roleId: string): RoleFacts | undefined {
    // Every change of a role moves AUTH_VERSION in the same write (authChanged).
    const version = this.store.sequence(AUTH_VERSION);
    if (version !== this.version) {
      this.facts.clear();
      this.version = version;
    }
    let facts = this.facts.get(roleId);
    if (facts === undefined) {
      const role = this.store.collection(roles).get(roleId);
      facts = role ? { permissions: rolePermissions(role), authorityLevel: role.authority_level } : null;
      this.facts.set(roleId, facts);
    }
    return facts ?? undefined;
  }
}
