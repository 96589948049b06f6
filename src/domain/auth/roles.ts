/**
 * Roles and authority. A caller may create, edit, delete or assign only roles strictly below
 * its own authority level, and may put into a role only permissions it holds itself.
 * Seeded roles exist from the first start and cannot be edited or deleted.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../errors.js';
import type { Caller } from './caller.js';
import { authChanged, type AuthDeps } from './context.js';
import { EVENT } from '../events/catalogue.js';
import { who } from './caller.js';
import { ALL_PERMISSION_KEYS, expandPermissions, isPermission } from './permissions.js';
import { roles, users, type RoleRecord } from './records.js';
import type { NewRoleInput, RoleInput } from './inputs.js';

const view = (k: string): boolean => k.endsWith(':view');

/** The roles every box starts with. */
export const SEEDED_ROLES: readonly Omit<RoleRecord, 'created_at' | 'updated_at'>[] = [
  { id: 'super_admin', name: 'Super Admin', authority_level: 100, is_seeded: true, permissions: [...ALL_PERMISSION_KEYS] },
  { id: 'admin', name: 'Admin', authority_level: 80, is_seeded: true, permissions: ALL_PERMISSION_KEYS.filter((k) => k !== 'system:delete_bots') },
  {
    id: 'operator', name: 'Operator', authority_level: 40, is_seeded: true,
    permissions: [
      'requests:view', 'requests:fulfillment', 'requests:replenishment', 'requests:fetch', 'requests:putaway',
      'jobs:view', 'jobs:trigger', 'inventory:view', 'inventory:loads', 'skus:view', 'events:view', 'system:view',
      'system:balcony_leds', 'workflows:view', 'settings:view', 'support:create_issue',
    ],
  },
  {
    // Not support:view either: support issues hold reporters' contact details and their files,
    // for support managers (Admin and above, or a custom role) and each issue's creator only.
    id: 'viewer', name: 'Viewer', authority_level: 10, is_seeded: true,
    permissions: ALL_PERMISSION_KEYS.filter((k) => view(k) && !/^(users|roles|api_keys|permissions|support):/.test(k)),
  },
];

/** Creates missing seeded roles and refreshes their permissions (the catalogue may have grown); true when any changed. */
export function seedRoles(deps: AuthDeps): boolean {
  const c = deps.store.collection(roles);
  const now = deps.now();
  let changed = false;
  for (const seed of SEEDED_ROLES) {
    const existing = c.get(seed.id);
    if (existing && sameSet(existing.permissions, seed.permissions) && existing.name === seed.name) continue;
    c.put({ ...seed, permissions: [...seed.permissions], created_at: existing?.created_at ?? now, updated_at: now });
    changed = true;
  }
  return changed;
}

/** The role, or a 404. */
export function getRole(deps: AuthDeps, id: string): RoleRecord {
  const role = deps.store.collection(roles).get(id);
  if (!role) throw new NotFoundError(`No role ${id}`);
  return role;
}

/** Every role, highest authority first. */
export function listRoles(deps: AuthDeps): RoleRecord[] {
  return [...deps.store.collection(roles).scan()].sort((a, b) => b.authority_level - a.authority_level || a.name.localeCompare(b.name));
}

/** Roles the caller may assign: strictly below its authority level. */
export function assignableRoles(deps: AuthDeps, caller: Caller): RoleRecord[] {
  return listRoles(deps).filter((r) => r.authority_level < caller.authorityLevel);
}

/** Creates a custom role under the caller's rules. */
export async function createRole(deps: AuthDeps, caller: Caller, input: NewRoleInput): Promise<RoleRecord> {
  checkLevel(caller, input.authority_level, ['body', 'authority_level']);
  const permissions = checkPermissions(caller, input.permissions ?? [], ['body', 'permissions']);
  const now = deps.now();
  const role: RoleRecord = { id: randomUUID(), name: input.name.trim(), authority_level: input.authority_level, is_seeded: false, permissions, created_at: now, updated_at: now };
  return deps.store.write(() => {
    uniqueName(deps, role.name, undefined);
    deps.store.collection(roles).put(role);
    authChanged(deps, EVENT.roleCreated, `role "${role.name}" (authority ${role.authority_level}) created by ${who(caller)}`);
    return role;
  });
}

/** Edits a custom role below the caller's level. */
export async function updateRole(deps: AuthDeps, caller: Caller, id: string, input: RoleInput): Promise<RoleRecord> {
  return deps.store.write(() => {
    const role = getRole(deps, id);
    if (role.is_seeded) throw new ConflictError(`${role.name} is a seeded role and cannot be edited`);
    checkReach(caller, role);
    if (input.authority_level !== undefined) checkLevel(caller, input.authority_level, ['body', 'authority_level']);
    const next: RoleRecord = {
      ...role,
      name: input.name?.trim() ?? role.name,
      authority_level: input.authority_level ?? role.authority_level,
      permissions: input.permissions ? checkPermissions(caller, input.permissions, ['body', 'permissions']) : role.permissions,
      updated_at: deps.now(),
    };
    if (next.name !== role.name) uniqueName(deps, next.name, role.id);
    deps.store.collection(roles).put(next);
    authChanged(deps, EVENT.roleUpdated, `role "${next.name}" (authority ${next.authority_level}, ${next.permissions.length} permission(s)) changed by ${who(caller)}`);
    return next;
  });
}

/** Deletes a custom role that no user holds. */
export async function deleteRole(deps: AuthDeps, caller: Caller, id: string): Promise<RoleRecord> {
  return deps.store.write(() => {
    const role = getRole(deps, id);
    if (role.is_seeded) throw new ConflictError(`${role.name} is a seeded role and cannot be deleted`);
    checkReach(caller, role);
    const holders = deps.store.collection(users).keysBy('role_id', role.id).length;
    if (holders > 0) throw new ConflictError(`${holders} user(s) hold the role ${role.name}; give them another role first`);
    deps.store.collection(roles).remove(id);
    authChanged(deps, EVENT.roleDeleted, `role "${role.name}" deleted by ${who(caller)}`);
    return role;
  });
}

/** Permissions a role grants, composites expanded. */
export function rolePermissions(role: RoleRecord): Set<string> {
  return expandPermissions(role.permissions);
}

/** Refuses a role at or above the caller's level. */
export function checkReach(caller: Caller, role: RoleRecord): void {
  if (role.authority_level >= caller.authorityLevel) {
    throw new DomainError('forbidden', `The role ${role.name} (authority ${role.authority_level}) is not below your authority level (${caller.authorityLevel})`);
  }
}

function checkLevel(caller: Caller, level: number, loc: string[]): void {
  if (level >= caller.authorityLevel) {
    throw new DomainError('forbidden', `authority_level ${level} is not below your own (${caller.authorityLevel}); ${loc.join('.')}`);
  }
}

/** Validates permission keys and refuses any the caller does not hold; returns them deduplicated. */
export function checkPermissions(caller: Caller, keys: readonly string[], loc: string[]): string[] {
  const unknown = keys.map((k, i) => ({ k, i })).filter(({ k }) => !isPermission(k));
  if (unknown.length > 0) {
    throw new ValidationError(unknown.map(({ k, i }) => ({ loc: [...loc, i], msg: `Unknown permission key ${k}`, type: 'value_error' })));
  }
  const lacking = [...expandPermissions(keys)].filter((k) => !caller.permissions.has(k));
  if (lacking.length > 0) throw new DomainError('forbidden', `You cannot grant permissions you do not hold: ${lacking.join(', ')}`);
  return [...new Set(keys)];
}

function uniqueName(deps: AuthDeps, name: string, self: string | undefined): void {
  const other = deps.store.collection(roles).findOne('name', name.toLowerCase());
  if (other && other.id !== self) throw new ConflictError(`A role named ${name} exists already`);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
