/** Spec 4.1: authentication, users, roles, permissions and API keys. */
import Type from 'typebox';
import type { Auth } from '../../domain/auth/auth.js';
import type { Caller } from '../../domain/auth/caller.js';
import { PERMISSIONS, expandPermissions } from '../../domain/auth/permissions.js';
import type { ApiKeyRecord, RoleRecord, UserRecord } from '../../domain/auth/records.js';
import { DomainError } from '../../domain/errors.js';
import { executeList, listQuerySchema, parseListQuery, type FieldTable } from '../../domain/list/index.js';
import { legacyStamp, utcStamp } from '../../domain/time.js';
import { documentedError } from '../errors.js';
import { AUTHENTICATED, route, type AnyRoute } from '../route.js';
import { Page } from '../schemas/common.js';
import {
  ApiKeyInfo, ApiKeyPermission, CreateAccountBody, CreateAccountResponse, ForgotBody, GenerateKeyBody, Identity, KeyPermissionsBody, LoginBody, Message,
  PasswordPolicySchema, PermissionAssignment, RefreshBody, ResetBody, RoleBody, RolePatchBody, RoleResponse, TokenResponse, UpdateUserBody,
  UpdateUserResponse, UserSchema,
} from '../schemas/auth.js';
import { listRoute } from '../list-route.js';

export interface AuthRouteOptions {
  timeZone: string;
  maxPageSize: number;
  /** Resolved settings shown by /auth/authenticate. */
  settingsOf?: (caller: Caller) => Record<string, unknown>;
  settingsVersion?: () => string;
}

const USER_FIELDS: FieldTable<UserRecord> = {
  id: { type: 'integer', filters: ['eq', 'ilike'], search: true },
  username: { type: 'string', filters: ['eq', 'ilike'], search: true },
  email: { type: 'string', filters: ['eq', 'ilike'], search: true },
  role: { type: 'string', filters: ['eq', 'in'], search: true, get: (u) => u.role_id },
  otp_expires_at: { type: 'datetime', filters: ['gte', 'lte'] },
  password_expires_at: { type: 'datetime', filters: ['gte', 'lte'] },
  created_at: { type: 'datetime' },
};

const KEY_FIELDS: FieldTable<ApiKeyRecord> = {
  id: { type: 'integer', filters: ['eq', 'ilike'], search: true },
  name: { type: 'string', filters: ['eq', 'ilike'], search: true },
  expires_at: { type: 'datetime', filters: ['gte', 'lte'] },
  last_used: { type: 'datetime', filters: ['gte', 'lte'] },
  created_at: { type: 'datetime' },
};

// Answers of these routes besides the framework's own (src/http/openapi.ts adds 400/401/403/422...).
const WRONG_CREDENTIALS = documentedError('Incorrect email or password, or the password has expired (set a new one with reset_password and old_password)');
const TOO_MANY_ATTEMPTS = documentedError('Too many attempts for this account or from this address; retry after `Retry-After` seconds');
const NO_KEY = documentedError('No API key with this id');
const NO_ROLE = documentedError('No role with this id');
const ROLE_NAME_TAKEN = documentedError('A role with this name exists');
const USER_TAKEN = documentedError('Another user has this username or email');

const RoleId = Type.Object({ role_id: Type.String({ minLength: 1, maxLength: 100 }) });
const KeyId = Type.Object({ api_key_id: Type.Integer({ minimum: 1 }) });

/** The routes of spec 4.1, bound to the auth domain. */
export function authRoutes(auth: Auth, options: AuthRouteOptions): AnyRoute[] {
  const zone = options.timeZone;
  const listOptions = { maxPageSize: options.maxPageSize, timeZone: zone };
  const userSource = auth.userList();
  const keySource = auth.apiKeyList();

  const roleView = (r: RoleRecord) => ({ id: r.id, name: r.name, authority_level: r.authority_level, is_seeded: r.is_seeded, permissions: r.permissions });
  // Views list every field, the timestamp pairs too: one fixed-shape literal per row is the
  // cheapest way to build a list page (see docs/benchmarks.md, "Findings").
  const userView = (u: UserRecord) => ({
    id: u.id, username: u.username, email: u.email, otp: null,
    otp_expires_at: legacyStamp(u.otp_expires_at, zone), otp_expires_at_utc: utcStamp(u.otp_expires_at),
    password_expires_at: legacyStamp(u.password_expires_at, zone), password_expires_at_utc: utcStamp(u.password_expires_at),
    role: u.role_id,
    role_details: roleView(auth.findRole(u.role_id) ?? missingRole(u.role_id)),
  });
  const keyView = (k: ApiKeyRecord) => {
    const lastUsed = auth.lastUsed.lastUsed(k);
    const owner = k.created_by === null ? undefined : auth.findUser(k.created_by);
    return {
      id: k.id, name: k.name, api_key: k.hint, owner: owner ? { id: owner.id, username: owner.username, email: owner.email } : null, permission_keys: k.permission_keys,
      expires_at: legacyStamp(k.expires_at, zone), expires_at_utc: utcStamp(k.expires_at),
      last_used: legacyStamp(lastUsed, zone), last_used_utc: utcStamp(lastUsed),
    };
  };
  const identity = (caller: Caller) => {
    if (caller.kind === 'user') {
      const u = auth.user(caller.id!);
      return { email: u.email, id: u.id, role_id: u.role_id, username: u.username };
    }
    // A key's id space is its own: negated, it can never be taken for the user with that id.
    const k = auth.findApiKey(caller.id!);
    return { email: '', id: -caller.id!, role_id: '', username: `api_key:${k?.name ?? caller.id}` };
  };

  return [
    route({
      method: 'POST', path: '/api/v2/auth/login', tag: 'auth', permission: null,
      summary: 'Log in with email and password',
      description: 'Returns a short-lived access token and a single-use refresh token. Failed attempts slow down per account and per client address (429 with Retry-After).',
      body: LoginBody,
      responses: { 200: TokenResponse, 401: WRONG_CREDENTIALS, 429: TOO_MANY_ATTEMPTS },
      handler: ({ body, remoteAddress }) => auth.login(body.email, body.password, remoteAddress),
    }),
    route({
      method: 'POST', path: '/api/v2/auth/refresh_token', tag: 'auth', permission: null,
      summary: 'Exchange a refresh token for new tokens',
      description: 'The refresh token is rotated: the presented one is used up. Presenting a used one revokes the whole chain.',
      body: RefreshBody,
      responses: { 200: TokenResponse, 401: documentedError('The refresh token is invalid, expired or used up (a used one also revokes its chain)') },
      handler: ({ body }) => auth.refresh(body.refresh_token),
    }),
    route({
      method: 'POST', path: '/api/v2/auth/logout', tag: 'auth', permission: null,
      summary: 'Log out: revoke a refresh token (beyond the spec)',
      description: 'Extension of this controller (docs/auth.md). The refresh token and every token rotated from it (its chain) stop refreshing at once. '
        + 'Public like refresh_token, because the refresh token is the credential; a malformed, unknown or already revoked token gets the same answer, so a logout can be retried. '
        + 'Access tokens already issued stay valid until they expire (15 minutes by default): a client drops its copy.',
      body: RefreshBody,
      responses: { 200: Type.Object({}, { description: 'The refresh token no longer refreshes' }) },
      handler: async ({ body, log }) => {
        const revoked = await auth.logout(body.refresh_token);
        log.info({ revoked }, 'logout');
        return {};
      },
    }),
    route({
      method: 'POST', path: '/api/v2/auth/forgot_password', tag: 'auth', permission: null,
      summary: 'Create a one-time password reset code',
      description: 'The same answer whether or not the account exists. The code goes to the reset outbox of the box (`<state>/password-resets/`, see docs/auth.md) and expires after 15 minutes.',
      body: ForgotBody,
      responses: { 202: Message, 429: TOO_MANY_ATTEMPTS },
      handler: async ({ body, remoteAddress }) => {
        await auth.forgotPassword(body.email, remoteAddress);
        return { message: 'If the account exists, a reset code was issued' };
      },
    }),
    route({
      method: 'POST', path: '/api/v2/auth/reset_password', tag: 'auth', permission: null,
      summary: 'Set a new password with the reset code or the old password',
      description: 'Every token of the user stops working. The new password must meet the password policy.',
      body: ResetBody,
      responses: { 200: Message, 401: documentedError('The reset code or the old password is wrong or has expired'), 429: TOO_MANY_ATTEMPTS },
      handler: async ({ body, remoteAddress }) => {
        await auth.resetPassword(body, remoteAddress);
        return { message: 'Password changed' };
      },
    }),
    route({
      method: 'GET', path: '/api/v2/auth/password_policy', tag: 'auth', permission: null,
      summary: 'The rules new passwords must meet',
      responses: { 200: PasswordPolicySchema },
      handler: () => auth.passwordPolicy(),
    }),
    route({
      method: 'GET', path: '/api/v2/auth/authenticate', tag: 'auth', permission: AUTHENTICATED,
      summary: 'Forward-authentication decision for a reverse proxy',
      description: '200 with the identity when the credentials are valid, 401 otherwise.',
      responses: {
        200: Type.Object({
          user: Identity,
          permissions: Type.Array(Type.String()),
          assigned_permissions: Type.Array(Type.String()),
          settings: Type.Record(Type.String(), Type.Unknown()),
        }),
      },
      handler: ({ caller }) => {
        let assigned: string[];
        if (caller.kind === 'user') assigned = auth.role(auth.user(caller.id!).role_id).permissions;
        else assigned = auth.findApiKey(caller.id!)?.permission_keys ?? [];
        return { user: identity(caller), permissions: [...caller.permissions].sort(), assigned_permissions: assigned, settings: options.settingsOf?.(caller) ?? {} };
      },
    }),
    route({
      method: 'GET', path: '/api/v2/auth/client_state', tag: 'auth', permission: AUTHENTICATED,
      summary: 'Versions that change whenever auth data or settings change',
      responses: { 200: Type.Object({ auth_version: Type.String(), settings_version: Type.String() }) },
      handler: () => ({ auth_version: auth.authVersion(), settings_version: options.settingsVersion?.() ?? '0' }),
    }),
    route({
      method: 'GET', path: '/api/v2/auth/permissions', tag: 'auth', permission: 'permissions:view',
      summary: 'Every permission key with the roles that hold it',
      responses: { 200: Type.Array(PermissionAssignment) },
      handler: () => {
        const all = auth.roles().map((r) => ({ name: r.name, held: expandPermissions(r.permissions) }));
        return PERMISSIONS.map((p) => ({ key: p.key, group: p.group, composes: [...(p.composes ?? [])], roles: all.filter((r) => r.held.has(p.key)).map((r) => r.name) }));
      },
    }),
    route({
      method: 'GET', path: '/api/v2/auth/api_key_permissions', tag: 'auth', permission: 'api_keys:view',
      summary: 'Permission keys the caller can put on an API key (those it holds)',
      responses: { 200: Type.Array(ApiKeyPermission) },
      handler: ({ caller }) => PERMISSIONS.filter((p) => caller.permissions.has(p.key)).map((p) => ({ group: p.group, key: p.key })),
    }),
    // Not listRoute: what each item shows depends on the caller.
    route({
      method: 'GET', path: '/api/v2/auth/api_keys', tag: 'auth', permission: 'api_keys:view',
      summary: 'API keys with their owners; never a key\'s value',
      description: 'A key\'s value is shown once, in the answer that creates it, and kept only as a digest: `api_key` is its hint (`whk_xxxx…xxxx`), enough to recognise it. `owner` is the user whose authority bounds the key at every use (null for a key made before owners were kept).',
      query: listQuerySchema(KEY_FIELDS, listOptions),
      responses: { 200: Page(ApiKeyInfo) },
      handler: ({ query }) => {
        const page = executeList(KEY_FIELDS, keySource, parseListQuery(KEY_FIELDS, query, listOptions));
        return { ...page, items: page.items.map(keyView) };
      },
    }),
    route({
      method: 'POST', path: '/api/v2/auth/generate_api_key', tag: 'auth', permission: 'api_keys:create',
      summary: 'Create an API key',
      description: 'The key has only the permissions given, each of which the caller must hold, and at every use no more than its owner (the caller, or the owner of the calling key) holds then. It expires at `expires_at`, 30 days from now by default, or never with `never_expires`. The value is in this answer and nowhere else, ever: store it.',
      body: GenerateKeyBody,
      responses: { 201: Type.Object({ api_key: Type.String() }) },
      handler: async ({ body, caller }) => {
        const { value } = await auth.generateApiKey(caller, {
          name: body.name,
          never_expires: body.never_expires,
          permission_keys: body.permission_keys,
          expires_at: body.expires_at !== undefined ? Date.parse(body.expires_at) : undefined,
        });
        return { api_key: value };
      },
    }),
    route({
      method: 'DELETE', path: '/api/v2/auth/api_keys/{api_key_id}', tag: 'auth', permission: 'api_keys:delete',
      summary: 'Delete an API key; it stops authenticating at once',
      description: 'A key made with more authority than the caller\'s is out of reach (403), as for replacing its permissions.',
      params: KeyId,
      responses: {
        200: Type.Object({ message: Type.String(), deleted_key: Type.String({ description: 'The key value, masked' }), deleted_key_id: Type.Integer(), deleted_key_name: Type.String() }),
        404: NO_KEY,
      },
      handler: async ({ params, caller }) => {
        const removed = await auth.deleteApiKey(caller, params.api_key_id);
        return { message: `API key ${removed.name} deleted`, deleted_key: removed.hint, deleted_key_id: removed.id, deleted_key_name: removed.name };
      },
    }),
    route({
      method: 'PATCH', path: '/api/v2/auth/api_keys/{api_key_id}/permissions', tag: 'auth', permission: 'api_keys:update',
      summary: "Replace an API key's permissions",
      params: KeyId,
      body: KeyPermissionsBody,
      responses: { 200: Type.Object({ api_key_id: Type.Integer(), message: Type.String(), permission_keys: Type.Array(Type.String()) }), 404: NO_KEY },
      handler: async ({ params, body, caller }) => {
        const k = await auth.setApiKeyPermissions(caller, params.api_key_id, body.permission_keys);
        return { api_key_id: k.id, message: 'Permissions replaced', permission_keys: k.permission_keys };
      },
    }),
    route({
      method: 'GET', path: '/api/v2/auth/roles', tag: 'auth', permission: 'roles:view',
      summary: 'Every role, highest authority first',
      responses: { 200: Type.Array(RoleResponse) },
      handler: () => auth.roles().map(roleView),
    }),
    route({
      method: 'GET', path: '/api/v2/auth/roles/assignable', tag: 'auth', permission: 'roles:view',
      summary: 'Roles the caller may assign (below its authority level)',
      responses: { 200: Type.Array(RoleResponse) },
      handler: ({ caller }) => auth.assignableRoles(caller).map(roleView),
    }),
    route({
      method: 'POST', path: '/api/v2/auth/roles', tag: 'auth', permission: 'roles:create',
      summary: 'Create a role below the caller’s authority level',
      body: RoleBody,
      responses: { 201: RoleResponse, 409: ROLE_NAME_TAKEN },
      handler: async ({ body, caller }) => roleView(await auth.createRole(caller, body)),
    }),
    route({
      method: 'PATCH', path: '/api/v2/auth/roles/{role_id}', tag: 'auth', permission: 'roles:update',
      summary: 'Edit a custom role below the caller’s authority level',
      params: RoleId,
      body: RolePatchBody,
      responses: { 200: RoleResponse, 404: NO_ROLE, 409: documentedError('The role is seeded (not editable), or another role has the name') },
      handler: async ({ params, body, caller }) => roleView(await auth.updateRole(caller, params.role_id, body)),
    }),
    route({
      method: 'DELETE', path: '/api/v2/auth/roles/{role_id}', tag: 'auth', permission: 'roles:delete',
      summary: 'Delete a custom role that no user holds',
      params: RoleId,
      responses: { 200: Type.Object({ message: Type.String(), id: Type.String() }), 404: NO_ROLE, 409: documentedError('The role is seeded, or users hold it') },
      handler: async ({ params, caller }) => {
        const r = await auth.deleteRole(caller, params.role_id);
        return { message: `Role ${r.name} deleted`, id: r.id };
      },
    }),
    route({
      method: 'POST', path: '/api/v2/auth/create_account', tag: 'auth', permission: 'users:create',
      summary: 'Create a user account',
      description: 'The account has no password yet: a one-time reset code is issued to the reset outbox, with which the person sets one (POST reset_password). The role must be below the caller’s authority level; Viewer when none is given.',
      body: CreateAccountBody,
      responses: { 201: CreateAccountResponse, 404: NO_ROLE, 409: USER_TAKEN },
      handler: async ({ body, caller }) => {
        const u = await auth.createAccount(caller, body);
        return { id: u.id, username: u.username, email: u.email };
      },
    }),
    route({
      method: 'PATCH', path: '/api/v2/auth/update_user', tag: 'auth', permission: 'users:update',
      summary: 'Change a user’s name, email or role',
      body: UpdateUserBody,
      responses: { 200: UpdateUserResponse, 404: documentedError('No user with this user_id, or no role with this role_id'), 409: USER_TAKEN },
      handler: async ({ body, caller }) => {
        const u = await auth.updateUser(caller, body);
        return { id: u.id, username: u.username, email: u.email, role_id: u.role_id };
      },
    }),
    listRoute({
      path: '/api/v2/auth/users', tag: 'auth', permission: 'users:view', summary: 'Users',
      fields: USER_FIELDS, source: userSource, item: UserSchema, view: userView, options: listOptions,
    }),
  ];
}

function missingRole(id: string): never {
  throw new DomainError('conflict', `The user's role ${id} no longer exists`);
}
