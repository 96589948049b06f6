/**
 * The auth domain's front: who is calling (bearer API key or access token), login, refresh,
 * password resets with rate limits, the first administrator, and client_state versions.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DomainError, TooManyRequestsError } from '../errors.js';
import type { Caller } from './caller.js';
import { AUTH_VERSION, authChanged, type AuthDeps } from './context.js';
import { EVENT } from '../events/catalogue.js';
import { deleteApiKey, forgetKeyValues, generateApiKey, keyByDigest, keyCaller, keyExpired, LastUsedTracker, presentedDigest, setApiKeyPermissions } from './api-keys.js';
import { ALL_PERMISSION_KEYS } from './permissions.js';
import { generatePassword, hashPassword, verifyPassword } from './passwords.js';
import { AttemptLimiter } from './rate-limit.js';
import { apiKeys, roles, users, type ApiKeyRecord, type RoleRecord, type UserRecord } from './records.js';
import { issueResetCode, resetPassword } from './reset.js';
import { RoleCache } from './role-cache.js';
import { assignableRoles, createRole, deleteRole, getRole, listRoles, seedRoles, SEEDED_ROLES, updateRole } from './roles.js';
import { issueTokens, pruneSessions, refreshTokens, refuseExpiredPassword, revokeRefreshToken, verifyAccessToken, type TokenPair } from './tokens.js';
import { createAccount, getUser, normalizeEmail, updateUser } from './users.js';
import type { CreateAccountInput, GenerateKeyInput, NewRoleInput, ResetInput, RoleInput, UpdateUserInput } from './inputs.js';
import type { PasswordPolicy } from './passwords.js';
import { collectionSource } from '../list/collection-source.js';
import type { ListSource } from '../list/fields.js';

export const ANONYMOUS: Caller = { kind: 'anonymous', permissions: new Set(), authorityLevel: 0 };

export const BOOTSTRAP_FILE = 'bootstrap-admin.json';
export const BOOTSTRAP_EMAIL = 'admin@warehouse.local';

/** What the first start and `reset-admin` write: one shape, so one recipe reads the key from either. */
export interface AdminCredentials {
  email: string;
  password: string;
  api_key: string;
}

/**
 * Writes the credentials to `file`, created with mode 0600 so they are never readable by others,
 * not even briefly; `exclusive` refuses a file that exists (a reset must not overwrite unread ones).
 */
export function writeAdminCredentials(file: string, credentials: AdminCredentials, exclusive = false): void {
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: exclusive ? 'wx' : 'w' });
}

const FLUSH_INTERVAL_MS = 60_000;

export class Auth {
  readonly lastUsed: LastUsedTracker;
  private readonly perAccount: AttemptLimiter;
  private readonly perAddress: AttemptLimiter;
  private readonly roleFacts: RoleCache;
  /**
   * What each API key presented since the auth records last changed amounts to, by the value
   * presented: a request with a known key then costs one lookup, not its HMAC, three store
   * reads and a permission expansion (a tenth of the main thread under load, then the HMAC
   * alone a fortieth). Only values that are keys are kept. Emptied by any commit to
   * keys, users or roles, so a change holds from the next request on.
   */
  private readonly keyCallers = new Map<string, { key: ApiKeyRecord; caller: Caller | undefined }>();
  private readonly stopFollowing: () => void;
  private timer: NodeJS.Timeout | undefined;
  private userSource: ListSource<UserRecord> | undefined;
  private keySource: ListSource<ApiKeyRecord> | undefined;

  private constructor(readonly deps: AuthDeps) {
    this.lastUsed = new LastUsedTracker(deps);
    this.roleFacts = new RoleCache(deps.store);
    // Read at each call, so a test can swap the clock of a running daemon.
    const elapsed = (): number => (deps.monotonic ? deps.monotonic() : performance.now());
    this.perAccount = new AttemptLimiter({ free: 5, baseMs: 1000, maxMs: 15 * 60_000, windowMs: 60 * 60_000 }, elapsed);
    this.perAddress = new AttemptLimiter({ free: 20, baseMs: 1000, maxMs: 15 * 60_000, windowMs: 60 * 60_000 }, elapsed);
    this.stopFollowing = deps.store.onCommit((notice) => {
      if (notice[apiKeys.name] || notice[users.name] || notice[roles.name]) this.keyCallers.clear();
    });
  }

  /** Seeds roles, creates the first administrator on an empty store, starts housekeeping. */
  static async open(deps: AuthDeps): Promise<Auth> {
    const auth = new Auth(deps);
    await deps.store.write(() => {
      if (seedRoles(deps)) deps.store.nextId(AUTH_VERSION);
      forgetKeyValues(deps);
    });
    if (deps.store.collection(users).count() === 0) await auth.bootstrap();
    else if (existsSync(path.join(deps.stateDir, BOOTSTRAP_FILE))) {
      // Every start says so while it is there: a file with an all-powerful key must not be forgotten.
      deps.logger.warn({ file: path.join(deps.stateDir, BOOTSTRAP_FILE) }, 'the first administrator\'s credentials are still in this file: store them safely and delete it');
    }
    await pruneSessions(deps);
    auth.timer = setInterval(() => {
      auth.housekeeping().catch((err: unknown) => deps.logger.error({ err }, 'auth housekeeping failed'));
    }, FLUSH_INTERVAL_MS);
    auth.timer.unref();
    return auth;
  }

  /** Resolves the bearer credentials of a request; anonymous when absent or invalid. */
  async authenticate(authorization: string | undefined): Promise<Caller> {
    if (authorization === undefined) return ANONYMOUS;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) return ANONYMOUS;
    const token = match[1]!;
    if (token.startsWith('whk_')) {
      let known = this.keyCallers.get(token);
      if (!known) {
        const keyDigest = presentedDigest(this.deps, token);
        // Unknown values are not kept: anyone may present any number of them.
        const key = keyDigest === undefined ? undefined : keyByDigest(this.deps, keyDigest);
        if (!key) return ANONYMOUS;
        known = { key, caller: keyCaller(key, this.ownerOf(key)) };
        this.keyCallers.set(token, known);
      }
      if (!known.caller || keyExpired(known.key, this.deps.now())) return ANONYMOUS;
      this.lastUsed.touch(known.key.id);
      return known.caller;
    }
    const user = await verifyAccessToken(this.deps, token);
    return user ? this.userCaller(user) : ANONYMOUS;
  }

  /** What a key's owner holds now: null for a key without one, undefined when the owner or its role is gone. */
  private ownerOf(key: ApiKeyRecord): { permissions: ReadonlySet<string>; authorityLevel: number } | null | undefined {
    if (key.created_by === null) return null;
    const owner = this.deps.store.collection(users).get(key.created_by);
    return owner ? this.roleFacts.get(owner.role_id) : undefined;
  }

  /** The caller a user is, from its role. */
  userCaller(user: UserRecord): Caller {
    const role = this.roleFacts.get(user.role_id);
    if (!role) return ANONYMOUS;
    return { kind: 'user', id: user.id, permissions: role.permissions, authorityLevel: role.authorityLevel };
  }

  /** Email and password in, tokens out; guarded by growing delays per account and address. */
  async login(email: string, password: string, address: string): Promise<TokenPair> {
    const account = `acct:${normalizeEmail(email)}`;
    const client = `ip:${address}`;
    this.reserveAttempt(account, client);
    const user = this.deps.store.collection(users).findOne('email', normalizeEmail(email));
    const ok = await verifyPassword(password, user?.password_hash);
    if (!ok || !user) {
      // Neither log nor event names the account: readers of either must not learn which emails exist.
      this.deps.logger.warn({ address }, 'login failed');
      await this.deps.events?.emit(EVENT.loginFailed, `login failed from ${address}`);
      // The lock this failure starts, not what is left of it: a slow check may outlast it.
      const locked = Math.max(this.perAccount.lockMs(account), this.perAddress.lockMs(client));
      if (locked > 0) await this.deps.events?.emit(EVENT.lockedOut, `logins from ${address} or for the account tried refused for ${Math.ceil(locked / 1000)} s after repeated failures`);
      throw new DomainError('unauthorized', 'Incorrect email or password');
    }
    this.perAccount.clear(account);
    this.perAddress.release(client);
    refuseExpiredPassword(this.deps, user);
    return issueTokens(this.deps, user);
  }

  /** Rotates a refresh token. */
  refresh(token: string): Promise<TokenPair> {
    return refreshTokens(this.deps, token);
  }

  /** Logout: the refresh token's session family ends; true when the token named one. */
  logout(refreshToken: string): Promise<boolean> {
    return revokeRefreshToken(this.deps, refreshToken);
  }

  /** Issues a reset code when the account exists; says nothing either way. */
  async forgotPassword(email: string, address: string): Promise<void> {
    const account = `reset:${normalizeEmail(email)}`;
    const client = `ip:${address}`;
    this.reserveAttempt(account, client); // kept even on success: codes are not to be farmed
    const user = this.deps.store.collection(users).findOne('email', normalizeEmail(email));
    if (user) await issueResetCode(this.deps, user, 'forgot_password');
    // A code moves auth_version; an unknown email moves it too, or client_state would tell them apart.
    else await this.deps.store.write(() => this.deps.store.nextId(AUTH_VERSION));
  }

  /** Applies a new password given the reset code or the old password. */
  async resetPassword(input: ResetInput, address: string): Promise<void> {
    const account = `acct:${normalizeEmail(input.email)}`;
    const client = `ip:${address}`;
    this.reserveAttempt(account, client);
    const user = this.deps.store.collection(users).findOne('email', normalizeEmail(input.email));
    try {
      await resetPassword(this.deps, user, input);
    } catch (err) {
      // Only a wrong code or password is a guess; a policy failure gives the attempt back.
      if (!(err instanceof DomainError && err.code === 'unauthorized')) {
        this.perAccount.release(account);
        this.perAddress.release(client);
      }
      throw err;
    }
    this.perAccount.clear(account);
    this.perAddress.release(client);
  }

  /** `auth_version` of client_state. */
  authVersion(): string {
    return String(this.deps.store.sequence(AUTH_VERSION));
  }

  // ------------------------------------------------------------------ accounts, roles and keys

  /** The rules new passwords must meet. */
  passwordPolicy(): PasswordPolicy {
    return this.deps.settings().passwordPolicy;
  }

  /** Users as a list source (looked up by id, username, email and role). */
  userList(): ListSource<UserRecord> {
    return (this.userSource ??= collectionSource(this.deps.store.collection(users), { id: null, username: 'username', email: 'email', role: 'role_id' }));
  }

  /** API keys as a list source (looked up by id and name). */
  apiKeyList(): ListSource<ApiKeyRecord> {
    return (this.keySource ??= collectionSource(this.deps.store.collection(apiKeys), { id: null, name: 'name' }));
  }

  /** A user; 404 when there is none. */
  user(id: number): UserRecord {
    return getUser(this.deps, id);
  }

  /** A user, or undefined (a key's owner may have been removed). */
  findUser(id: number): UserRecord | undefined {
    return this.deps.store.collection(users).get(id);
  }

  /** A role; 404 when there is none. */
  role(id: string): RoleRecord {
    return getRole(this.deps, id);
  }

  /** A role, or undefined. */
  findRole(id: string): RoleRecord | undefined {
    return this.deps.store.collection(roles).get(id);
  }

  /** An API key's record, or undefined. */
  findApiKey(id: number): ApiKeyRecord | undefined {
    return this.deps.store.collection(apiKeys).get(id);
  }

  /** Every role, highest authority first. */
  roles(): RoleRecord[] {
    return listRoles(this.deps);
  }

  /** The roles `caller` may give. */
  assignableRoles(caller: Caller): RoleRecord[] {
    return assignableRoles(this.deps, caller);
  }

  /** Creates a role below the caller's authority. */
  createRole(caller: Caller, input: NewRoleInput): Promise<RoleRecord> {
    return createRole(this.deps, caller, input);
  }

  /** Changes a role the caller reaches. */
  updateRole(caller: Caller, id: string, input: RoleInput): Promise<RoleRecord> {
    return updateRole(this.deps, caller, id, input);
  }

  /** Removes a role no user holds. */
  deleteRole(caller: Caller, id: string): Promise<RoleRecord> {
    return deleteRole(this.deps, caller, id);
  }

  /** Creates a user account. */
  createAccount(caller: Caller, input: CreateAccountInput): Promise<UserRecord> {
    return createAccount(this.deps, caller, input);
  }

  /** Changes a user account. */
  updateUser(caller: Caller, input: UpdateUserInput): Promise<UserRecord> {
    return updateUser(this.deps, caller, input);
  }

  /** Creates an API key; its value is in the answer only. */
  generateApiKey(caller: Caller, input: GenerateKeyInput): Promise<{ record: ApiKeyRecord; value: string }> {
    return generateApiKey(this.deps, caller, input);
  }

  /** Removes an API key. */
  deleteApiKey(caller: Caller, id: number): Promise<ApiKeyRecord> {
    return deleteApiKey(this.deps, caller, id);
  }

  /** Replaces an API key's permissions. */
  setApiKeyPermissions(caller: Caller, id: number, keys: string[]): Promise<ApiKeyRecord> {
    return setApiKeyPermissions(this.deps, caller, id, keys);
  }

  /** Writes pending state and stops timers. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.stopFollowing();
    await this.lastUsed.flush();
  }

  private async housekeeping(): Promise<void> {
    await this.lastUsed.flush();
    await pruneSessions(this.deps);
  }

  /**
   * Refuses with 429 while either key must wait, else counts the attempt as failed up front,
   * synchronously: parallel attempts then see each other before any slow password check runs.
   */
  private reserveAttempt(account: string, client: string): void {
    const wait = Math.max(this.perAccount.waitMs(account), this.perAddress.waitMs(client));
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new TooManyRequestsError(`Too many attempts; try again in ${seconds} s`, seconds);
    }
    this.perAccount.fail(account);
    this.perAddress.fail(client);
  }

  /** First start: a Super Admin and an all-permission key, written to a 0600 file. */
  private async bootstrap(): Promise<void> {
    const deps = this.deps;
    const password = generatePassword(deps.settings().passwordPolicy);
    const hash = await hashPassword(password);
    const superAdmin = SEEDED_ROLES[0]!;
    const now = deps.now();
    const user = await deps.store.write(() => {
      const record: UserRecord = {
        id: deps.store.nextId('users'), username: 'admin', email: BOOTSTRAP_EMAIL, password_hash: hash, role_id: superAdmin.id, locale: 'en',
        token_version: 0, password_expires_at: null, otp_digest: null, otp_expires_at: null, created_at: now, updated_at: now,
      };
      deps.store.collection(users).put(record);
      authChanged(deps, EVENT.userCreated, `first administrator user ${record.id} created (credentials in ${BOOTSTRAP_FILE})`);
      return record;
    });
    const caller: Caller = { kind: 'user', id: user.id, permissions: new Set(ALL_PERMISSION_KEYS), authorityLevel: superAdmin.authority_level };
    const { value } = await generateApiKey(deps, caller, { name: 'bootstrap', never_expires: true, permission_keys: [...ALL_PERMISSION_KEYS] });
    const file = path.join(deps.stateDir, BOOTSTRAP_FILE);
    writeAdminCredentials(file, { email: BOOTSTRAP_EMAIL, password, api_key: value });
    deps.logger.warn({ file }, 'first start: administrator credentials written; read them, then store them safely and delete the file');
  }
}
