/**
 * User accounts. Emails are normalized (trimmed, lowercased) and unique. A new account has no
 * password: it gets a one-time reset code (see reset.ts) with which the person sets one.
 * Nobody can raise a user to their own authority level or above, nor touch a user who is.
 */
import { NotFoundError, ValidationError } from '../errors.js';
import type { Caller } from './caller.js';
import { authChanged, type AuthDeps } from './context.js';
import { EVENT } from '../events/catalogue.js';
import { who } from './caller.js';
import { issueResetCode } from './reset.js';
import { checkReach, getRole, listRoles } from './roles.js';
import { roles, users, type RoleRecord, type UserRecord } from './records.js';
import { revokeSessions } from './tokens.js';
import type { CreateAccountInput, UpdateUserInput } from './inputs.js';

/** Trims and lowercases an email: the form it is stored and looked up in. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Creates an account with an assignable role (Viewer when none is named). */
export async function createAccount(deps: AuthDeps, caller: Caller, input: CreateAccountInput): Promise<UserRecord> {
  const role = resolveRole(deps, input.role_id, input.role);
  checkReach(caller, role);
  const now = deps.now();
  const user = await deps.store.write(() => {
    const record: UserRecord = {
      id: deps.store.nextId('users'),
      username: input.username.trim(),
      email: normalizeEmail(input.email),
      role_id: role.id,
      locale: input.locale ?? 'en',
      token_version: 0,
      password_expires_at: null,
      otp_digest: null,
      otp_expires_at: null,
      created_at: now,
      updated_at: now,
    };
    deps.store.collection(users).put(record); // the unique email index refuses a duplicate with 409
    authChanged(deps, EVENT.userCreated, `user ${record.id} "${record.username}" created with role ${role.id} by ${who(caller)}`);
    return record;
  });
  await issueResetCode(deps, user, 'account created');
  return deps.store.collection(users).get(user.id)!;
}

/** Changes a user's name, email or role under the authority rules. */
export async function updateUser(deps: AuthDeps, caller: Caller, input: UpdateUserInput): Promise<UserRecord> {
  return deps.store.write(() => {
    const user = getUser(deps, input.user_id);
    const current = getRole(deps, user.role_id);
    const self = caller.kind === 'user' && caller.id === user.id;
    if (!self) checkReach(caller, current);
    let role_id = user.role_id;
    let token_version = user.token_version;
    if (input.role_id !== undefined && input.role_id !== user.role_id) {
      const next = resolveRole(deps, input.role_id, undefined);
      checkReach(caller, next);
      role_id = next.id;
      token_version++; // tokens carry no permissions, but a role change is a moment to sign in again
    }
    const record: UserRecord = {
      ...user,
      username: input.username?.trim() ?? user.username,
      email: input.email !== undefined ? normalizeEmail(input.email) : user.email,
      role_id,
      token_version,
      updated_at: deps.now(),
    };
    deps.store.collection(users).put(record);
    if (token_version !== user.token_version) revokeSessions(deps, user.id);
    authChanged(deps, EVENT.userUpdated, `user ${record.id} "${record.username}" changed${role_id !== user.role_id ? ` (role ${user.role_id} -> ${role_id})` : ''} by ${who(caller)}`);
    return record;
  });
}

/** The user, or a 404. */
export function getUser(deps: AuthDeps, id: number): UserRecord {
  const user = deps.store.collection(users).get(id);
  if (!user) throw new NotFoundError(`No user ${id}`);
  return user;
}

function resolveRole(deps: AuthDeps, roleId: string | undefined, legacyRole: string | undefined): RoleRecord {
  if (roleId !== undefined) {
    const role = deps.store.collection(roles).get(roleId);
    if (!role) throw ValidationError.of(['body', 'role_id'], `Unknown role ${roleId}`);
    return role;
  }
  if (legacyRole !== undefined) {
    // The deprecated `role` names a role by id or by name, in any case.
    const wanted = legacyRole.trim().toLowerCase().replace(/[\s-]+/g, '_');
    const role = listRoles(deps).find((r) => r.id === wanted || r.name.toLowerCase().replace(/\s+/g, '_') === wanted);
    if (!role) throw ValidationError.of(['body', 'role'], `Unknown role ${legacyRole}`);
    return role;
  }
  return getRole(deps, 'viewer');
}
