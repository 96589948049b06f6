/**
 * API keys. The value is shown once, at creation; the store keeps only its keyed digest (how a
 * presented key is found) and a hint to recognise it by. A key is bounded at every use by its
 * owner's authority now: a role change of the owner, or permissions taken from the owner's
 * role, narrow it at once (a key made by an admin who was demoted must not outlive that).
 * `last_used` is kept in memory and written in batches, never once per request.
 */
import { randomBytes } from 'node:crypto';
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import type { Caller } from './caller.js';
import { authChanged, type AuthDeps } from './context.js';
import { EVENT } from '../events/catalogue.js';
import { who } from './caller.js';
import { expandPermissions } from './permissions.js';
import { checkPermissions } from './roles.js';
import { apiKeys, type ApiKeyRecord } from './records.js';
import { digest, unseal } from './secrets.js';
import type { GenerateKeyInput } from './inputs.js';

/** Every key starts with this, so a leaked one is recognisable (and scanners can find it). */
export const API_KEY_PREFIX = 'whk_';

/** Creates a key with permissions the caller holds; returns the record and the one-time value. */
export async function generateApiKey(deps: AuthDeps, caller: Caller, input: GenerateKeyInput): Promise<{ record: ApiKeyRecord; value: string }> {
  const permission_keys = checkPermissions(caller, input.permission_keys ?? [], ['body', 'permission_keys']);
  const now = deps.now();
  let expires_at: number | null;
  if (input.never_expires) {
    if (input.expires_at !== undefined) throw ValidationError.of(['body', 'expires_at'], 'Give expires_at or never_expires, not both');
    expires_at = null;
  } else if (input.expires_at !== undefined) {
    if (input.expires_at <= now) throw ValidationError.of(['body', 'expires_at'], 'expires_at must be in the future');
    expires_at = input.expires_at;
  } else {
    expires_at = now + deps.settings().apiKeyDefaultDays * 86400_000;
  }
  const value = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  const record = await deps.store.write(() => {
    const r: ApiKeyRecord = {
      id: deps.store.nextId('api_keys'),
      name: input.name.trim(),
      key_digest: digest(deps.secrets.digestKey, value),
      hint: maskKey(value),
      permission_keys,
      expires_at,
      last_used: null,
      authority_level: caller.authorityLevel,
      created_by: caller.kind === 'user' ? caller.id! : caller.owner ?? null,
      created_at: now,
    };
    deps.store.collection(apiKeys).put(r);
    authChanged(deps, EVENT.apiKeyCreated, `API key ${r.id} "${r.name}" created by ${who(caller)} with ${permission_keys.length} permission(s), ${expires_at === null ? 'never expiring' : `expiring ${new Date(expires_at).toISOString()}`}`);
    return r;
  });
  return { record, value };
}

/** A key value cut to its prefix and last characters: enough to recognise, not to use. */
export function maskKey(value: string): string {
  return `${value.slice(0, 8)}…${value.slice(-4)}`;
}

/** Deletes a key under the rule of patching; it stops authenticating at once. */
export async function deleteApiKey(deps: AuthDeps, caller: Caller, id: number): Promise<ApiKeyRecord> {
  return deps.store.write(() => {
    const c = deps.store.collection(apiKeys);
    const record = c.get(id);
    if (!record) throw new NotFoundError(`No API key ${id}`);
    checkKeyReach(caller, record);
    c.remove(id);
    authChanged(deps, EVENT.apiKeyDeleted, `API key ${record.id} "${record.name}" deleted by ${who(caller)}`);
    return record;
  });
}

/** Replaces a key's permissions, under the same rules as creation. */
export async function setApiKeyPermissions(deps: AuthDeps, caller: Caller, id: number, keys: string[]): Promise<ApiKeyRecord> {
  const permission_keys = checkPermissions(caller, keys, ['body', 'permission_keys']);
  return deps.store.write(() => {
    const record = deps.store.collection(apiKeys).get(id);
    if (!record) throw new NotFoundError(`No API key ${id}`);
    checkKeyReach(caller, record);
    const next = { ...record, permission_keys };
    deps.store.collection(apiKeys).put(next);
    authChanged(deps, EVENT.apiKeyPermissions, `API key ${id} "${record.name}" now has ${permission_keys.length} permission(s), set by ${who(caller)}`);
    return next;
  });
}

function checkKeyReach(caller: Caller, record: ApiKeyRecord): void {
  // A key made by someone of higher authority is out of reach, as that person's role would be.
  if (record.authority_level > caller.authorityLevel) throw new DomainError('forbidden', 'That key was made with more authority than yours');
}

/** The digest a presented key is stored under; undefined when the value cannot be a key. */
export function presentedDigest(deps: AuthDeps, presented: string): string | undefined {
  if (!presented.startsWith(API_KEY_PREFIX) || presented.length > 100) return undefined;
  // The digest is keyed: equal digests are the same key, and nothing about a near miss leaks.
  return digest(deps.secrets.digestKey, presented);
}

/** The key stored under `keyDigest`, or undefined when it is unknown or expired. */
export function keyByDigest(deps: AuthDeps, keyDigest: string): ApiKeyRecord | undefined {
  const record = deps.store.collection(apiKeys).findOne('key_digest', keyDigest);
  return record && !keyExpired(record, deps.now()) ? record : undefined;
}

/** Whether a key no longer authenticates for its age alone. */
export function keyExpired(record: ApiKeyRecord, now: number): boolean {
  return record.expires_at !== null && record.expires_at <= now;
}

/**
 * The caller a key is now: its own permissions and authority, each bounded by what its owner
 * holds now (`owner` undefined: the owner no longer exists, so the key authenticates nobody).
 */
export function keyCaller(record: ApiKeyRecord, owner: { permissions: ReadonlySet<string>; authorityLevel: number } | null | undefined): Caller | undefined {
  if (owner === undefined) return undefined;
  const own = expandPermissions(record.permission_keys);
  const permissions = owner === null ? own : new Set([...own].filter((k) => owner.permissions.has(k)));
  const authorityLevel = owner === null ? record.authority_level : Math.min(record.authority_level, owner.authorityLevel);
  return { kind: 'api_key', id: record.id, permissions, authorityLevel, owner: record.created_by };
}

/**
 * Keys stored before values were kept only as digests carry the value encrypted: it is reduced
 * to its hint and dropped, once, at start. Call inside a write.
 */
export function forgetKeyValues(deps: AuthDeps): void {
  const c = deps.store.collection(apiKeys);
  for (const record of [...c.scan()] as (ApiKeyRecord & { sealed_key?: string })[]) {
    if (record.sealed_key === undefined) continue;
    const { sealed_key, ...rest } = record;
    c.put({ ...rest, hint: maskKey(unseal(deps.secrets.encryptionKey, sealed_key)) });
  }
}

/** Remembers when keys were last used and writes it out in one transaction per interval. */
export class LastUsedTracker {
  private readonly pending = new Map<number, number>();

  constructor(private readonly deps: AuthDeps) {}

  /** Notes a use; no I/O. */
  touch(id: number): void {
    this.pending.set(id, this.deps.now());
  }

  /** The freshest known last use of a key (pending or stored). */
  lastUsed(record: ApiKeyRecord): number | null {
    return this.pending.get(record.id) ?? record.last_used;
  }

  /** Writes pending uses; keys deleted meanwhile are skipped. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending.clear();
    await this.deps.store.write(() => {
      const c = this.deps.store.collection(apiKeys);
      for (const [id, at] of batch) {
        const record = c.get(id);
        // The later use wins even when its reading is earlier: the wall clock went back between them.
        if (record && record.last_used !== at) c.put({ ...record, last_used: at });
      }
    });
  }
}
