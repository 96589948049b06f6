/** What the store keeps about identities. Instants are epoch milliseconds. */
import type { CollectionDef } from '../../store/collection.js';

export interface UserRecord {
  id: number;
  username: string;
  /** Lowercased and trimmed; unique. */
  email: string;
  /** Absent until the user sets a first password with a reset code. */
  password_hash?: string;
  role_id: string;
  locale: string;
  /** Raised to revoke every token of the user at once (password reset, role change, deletion). */
  token_version: number;
  password_expires_at: number | null;
  /** Digest of the pending reset code, never the code itself. */
  otp_digest: string | null;
  otp_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface RoleRecord {
  id: string;
  name: string;
  authority_level: number;
  is_seeded: boolean;
  permissions: string[];
  created_at: number;
  updated_at: number;
}

export interface ApiKeyRecord {
  id: number;
  name: string;
  /** Keyed digest of the key value: how a presented key is found. The value itself is not kept. */
  key_digest: string;
  /** The value's prefix and last characters: enough to recognise a key, not to use it. */
  hint: string;
  permission_keys: string[];
  expires_at: number | null;
  last_used: number | null;
  /** Authority of its creator when it was made: the ceiling for what the key may do to roles. */
  authority_level: number;
  /**
   * The user whose authority bounds the key at every use (the creating user, or the owner of the
   * key that created it); null for keys made before owners were kept, bounded by themselves only.
   */
  created_by: number | null;
  created_at: number;
}

/** One refresh token; rotation marks it used and links the next one through `family`. */
export interface SessionRecord {
  id: string;
  user_id: number;
  family: string;
  /** Digest of the token's secret part. */
  secret_digest: string;
  expires_at: number;
  used_at: number | null;
  /** The user's token_version when the token was issued; a later version refuses it. */
  token_version: number;
}

export const users: CollectionDef<UserRecord> = {
  name: 'users',
  key: (u) => u.id,
  indexes: [
    { name: 'email', of: (u) => u.email, unique: true },
    { name: 'username', of: (u) => u.username },
    { name: 'role_id', of: (u) => u.role_id },
  ],
};

export const roles: CollectionDef<RoleRecord> = {
  name: 'roles',
  key: (r) => r.id,
  indexes: [{ name: 'name', of: (r) => r.name.toLowerCase(), unique: true }],
};

export const apiKeys: CollectionDef<ApiKeyRecord> = {
  name: 'api_keys',
  key: (k) => k.id,
  indexes: [
    { name: 'key_digest', of: (k) => k.key_digest, unique: true },
    { name: 'name', of: (k) => k.name },
  ],
};

export const sessions: CollectionDef<SessionRecord> = {
  name: 'sessions',
  key: (s) => s.id,
  indexes: [
    { name: 'family', of: (s) => s.family },
    { name: 'user_id', of: (s) => s.user_id },
  ],
};

/** Every collection of the auth domain, for Store.open. */
export const AUTH_COLLECTIONS = [users, roles, apiKeys, sessions] as const;
