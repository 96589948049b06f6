/**
 * Settings: stored values over the registry's defaults, resolved per caller (user value,
 * else system value, else default). All records are few and kept in memory, so the hot
 * paths that read settings (every authentication) never touch the disk; the store is the
 * truth and the memory copy changes only after a commit. Subsystems read settings at each
 * use (`value`), so a change applies to the next use without a restart; `restart_required`
 * settings keep the value the process started with.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, CollectionDef } from '../../store/collection.js';
import type { Store } from '../../store/store.js';
import type { Caller } from '../auth/caller.js';
import { roles, users } from '../auth/records.js';
import { RoleCache } from '../auth/role-cache.js';
import { DomainError, NotFoundError, ValidationError, type ValidationIssue } from '../errors.js';
import { valueProblem, type Scope, type SettingDef, type ValueType } from './registry.js';
import type { Events } from '../events/events.js';
import { EVENT } from '../events/catalogue.js';
import { who } from '../auth/caller.js';
import type { CustomSettingInput } from './inputs.js';

export interface SettingRecord {
  id: string;
  key: string;
  /** null for the system value; a user id for that user's value. */
  user_idx: number | null;
  /** Absent when only a custom setting's definition is stored (its value was deleted). */
  has_value: boolean;
  value_json: unknown;
  /** Custom settings only: the definition the integrator gave. */
  default_value_json?: unknown;
  required_role?: string[];
  restart_required?: boolean;
  created_at: number;
  updated_at: number;
}

export const settingRecords: CollectionDef<SettingRecord> = {
  name: 'settings',
  key: (s) => recordKey(s.key, s.user_idx),
};

export const SETTINGS_COLLECTIONS = [settingRecords] as const;

const SETTINGS_VERSION = 'settings_version';

/** One setting as the list shows it (spec 2.20 list item). */
export interface SettingItem {
  key: string;
  value_type: ValueType;
  scope: Scope;
  user_idx: number | null;
  value_json: unknown;
  default_value_json: unknown;
  effective_value_json: unknown;
  effective_value_known: boolean;
  enum_values: string[] | null;
  minimum: number | null;
  maximum: number | null;
  required_role: string[];
  restart_required: boolean;
}

export class Settings {
  private readonly defs: Map<string, SettingDef>;
  private readonly records = new Map<string, SettingRecord>();
  /** Effective system values of restart_required settings when this process started. */
  private readonly startValues = new Map<string, unknown>();
  /** The authority level of the roles settings require. */
  private readonly roleFacts: RoleCache;

  constructor(
    private readonly store: Store,
    registry: readonly SettingDef[],
    private readonly now: () => number,
    private readonly events?: Events,
  ) {
    this.defs = new Map(registry.map((d) => [d.key, d]));
    this.roleFacts = new RoleCache(store);
    for (const r of store.collection(settingRecords).scan()) this.records.set(recordKey(r.key, r.user_idx), r);
    for (const def of registry) if (def.restart_required) this.startValues.set(def.key, this.systemValue(def.key));
  }

  /** The value the daemon uses now for a system setting (restart_required ones: the start value). */
  value<T>(key: string): T {
    if (this.startValues.has(key)) return this.startValues.get(key) as T;
    return this.systemValue(key) as T;
  }

  /** Reading or changing another user's settings needs more than one's own: NotFoundError for no such user, 'forbidden' without `permission`. */
  checkUserAccess(caller: Caller, userIdx: number, permission: string): void {
    if (!this.store.collection(users).has(userIdx)) throw new NotFoundError(`user ${userIdx} does not exist`);
    const own = caller.kind === 'user' && caller.id === userIdx;
    if (!own && !caller.permissions.has(permission)) throw new DomainError('forbidden', `another user's settings need the permission ${permission}`);
  }

  /** `settings_version` of client_state: moves with every change. */
  version(): string {
    return String(this.store.sequence(SETTINGS_VERSION));
  }

  /** Known keys and stored custom keys, as list items for `caller` (those it may read). */
  list(caller: Caller, userIdx: number | null): SettingItem[] {
    const keys = new Set([...this.defs.keys(), ...[...this.records.values()].map((r) => r.key)]);
    return [...keys].sort().filter((k) => this.mayAccess(caller, k)).map((k) => this.item(k, userIdx));
  }

  /** One setting as SettingResponse (spec 2.20), or NotFoundError. */
  get(caller: Caller, key: string, userIdx: number | null = null): SettingRecord & { default_value_json: unknown; required_role: string[]; restart_required: boolean } {
    const def = this.defs.get(key);
    const record = this.records.get(recordKey(key, null));
    if (!def && !record) throw new NotFoundError(`setting ${key} does not exist`);
    this.checkAccess(caller, key);
    const own = userIdx === null ? undefined : this.records.get(recordKey(key, userIdx));
    const shown = own ?? record;
    const now = this.now();
    return {
      id: shown?.id ?? deterministicId(key),
      key,
      user_idx: shown?.user_idx ?? null,
      has_value: shown?.has_value ?? false,
      value_json: shown?.has_value ? shown.value_json : null,
      default_value_json: def ? def.default : (record?.default_value_json ?? null),
      required_role: [...(def?.required_role ?? record?.required_role ?? [])],
      restart_required: def?.restart_required ?? record?.restart_required ?? false,
      created_at: shown?.created_at ?? now,
      updated_at: shown?.updated_at ?? now,
    };
  }

  /** Resolved values of every key of a scope that `caller` may read: `{key: effective value}`. */
  resolved(caller: Caller, scope: Scope, userIdx: number | null): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const item of this.list(caller, userIdx)) {
      if (item.scope === scope && item.effective_value_known) out[item.key] = item.effective_value_json;
    }
    return out;
  }

  /** Effective system values of the controller's own settings (never custom ones, which may hold secrets). */
  known(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const def of this.defs.values()) if (def.scope === 'system') out[def.key] = this.systemValue(def.key);
    return out;
  }

  /** restart_required settings whose stored value differs from the one the daemon runs with. */
  pendingRestart(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, start] of this.startValues) {
      const current = this.systemValue(key);
      if (JSON.stringify(current) !== JSON.stringify(start)) out[key] = current;
    }
    return out;
  }

  /** POST /settings: creates or updates a setting; known keys take only a valid value. */
  async upsert(caller: Caller, input: CustomSettingInput): Promise<void> {
    const def = this.defs.get(input.key);
    // As PATCH /settings/system and /settings/{key}: a user setting is only stored per user.
    if (def?.scope === 'user') throw ValidationError.of(['body', 'key'], `${input.key} is a user setting; use PATCH /api/v2/settings/users/{user_idx}`, 'value_error');
    if (def) {
      const issues: ValidationIssue[] = [];
      for (const field of ['default_value_json', 'required_role', 'restart_required'] as const) {
        if (input[field] !== undefined) issues.push({ loc: ['body', field], msg: `${input.key} is defined by the controller; only value_json can be set`, type: 'value_error' });
      }
      if (issues.length > 0) throw new ValidationError(issues);
    }
    this.checkAccess(caller, input.key);
    if (input.required_role) this.checkRoles(input.required_role);
    await this.apply(caller, [{ key: input.key, userIdx: null, value: input.value_json, loc: ['body', 'value_json'], custom: input }], []);
  }

  /** Sets values (`updates`) and restores defaults (`resets`) of one scope atomically. */
  async update(caller: Caller, userIdx: number | null, updates: Record<string, unknown>, resets: string[]): Promise<void> {
    const scope: Scope = userIdx === null ? 'system' : 'user';
    const issues: ValidationIssue[] = [];
    for (const key of [...Object.keys(updates), ...resets]) {
      const def = this.defs.get(key);
      if (def && def.scope !== scope) issues.push({ loc: ['body', Object.hasOwn(updates, key) ? 'updates' : 'resets', key], msg: `${key} is a ${def.scope} setting`, type: 'value_error' });
      if (!def && scope === 'user') issues.push({ loc: ['body', 'updates', key], msg: `${key} is not a known user setting`, type: 'value_error' });
    }
    if (issues.length > 0) throw new ValidationError(issues);
    for (const key of [...Object.keys(updates), ...resets]) this.checkAccess(caller, key);
    await this.apply(caller, Object.entries(updates).map(([key, value]) => ({ key, userIdx, value, loc: ['body', 'updates', key] })), resets.map((key) => ({ key, userIdx })));
  }

  /** PATCH /settings/{key}: sets the system value. */
  async set(caller: Caller, key: string, value: unknown): Promise<void> {
    if (!this.defs.has(key) && !this.records.has(recordKey(key, null))) throw new NotFoundError(`setting ${key} does not exist; POST /api/v2/settings creates custom settings`);
    const def = this.defs.get(key);
    if (def?.scope === 'user') throw ValidationError.of(['path', 'key'], `${key} is a user setting; use /api/v2/settings/users/{user_idx}`, 'value_error');
    this.checkAccess(caller, key);
    await this.apply(caller, [{ key, userIdx: null, value, loc: ['body', 'value_json'] }], []);
  }

  /** DELETE /settings/{key}: removes the stored system value so the default applies. */
  async reset(caller: Caller, key: string): Promise<void> {
    if (!this.defs.has(key) && !this.records.has(recordKey(key, null))) throw new NotFoundError(`setting ${key} does not exist`);
    this.checkAccess(caller, key);
    await this.apply(caller, [], [{ key, userIdx: null }]);
  }

  private async apply(
    caller: Caller,
    sets: { key: string; userIdx: number | null; value: unknown; loc: (string | number)[]; custom?: CustomSettingInput }[],
    resets: { key: string; userIdx: number | null }[],
  ): Promise<void> {
    const issues: ValidationIssue[] = [];
    for (const s of sets) {
      const def = this.defs.get(s.key);
      if (def && s.value !== undefined) {
        const problem = valueProblem(def, s.value);
        if (problem) issues.push({ loc: s.loc, msg: problem, type: 'value_error' });
      }
    }
    if (issues.length > 0) throw new ValidationError(issues);

    const changed = new Set<string>();
    await this.store.write(() => {
      const collection = this.store.collection(settingRecords);
      // Queued before any event of this write: after-commit callbacks run in order, and the
      // listeners of a setting event (the brain) must read the new value, not the old one.
      this.store.afterCommit(() => this.reload(collection, changed, [...sets, ...resets]));
      const now = this.now();
      for (const s of sets) {
        const k = recordKey(s.key, s.userIdx);
        const current = collection.get(k);
        const next: SettingRecord = {
          id: current?.id ?? randomUUID(),
          key: s.key,
          user_idx: s.userIdx,
          has_value: s.value !== undefined ? true : (current?.has_value ?? false),
          value_json: s.value !== undefined ? s.value : (current?.value_json ?? null),
          created_at: current?.created_at ?? now,
          updated_at: now,
        };
        const custom = s.custom && !this.defs.has(s.key) ? s.custom : undefined;
        if (custom || current?.default_value_json !== undefined) next.default_value_json = custom?.default_value_json ?? current?.default_value_json ?? null;
        if (custom?.required_role ?? current?.required_role) next.required_role = custom?.required_role ?? current?.required_role;
        if (custom?.restart_required !== undefined || current?.restart_required !== undefined) next.restart_required = custom?.restart_required ?? current?.restart_required ?? false;
        collection.put(next);
        changed.add(s.key);
        // Custom settings may hold an integrator's secrets: only known values are shown.
        const shown = this.defs.has(s.key) && s.value !== undefined ? ` to ${short(s.value)}` : '';
        this.events?.record(EVENT.settingChanged, `${describe(s.key, s.userIdx)} set${shown} by ${who(caller)}`);
      }
      for (const r of resets) {
        const k = recordKey(r.key, r.userIdx);
        const current = collection.get(k);
        if (!current) continue;
        // A custom setting keeps its definition; only its value goes.
        if (!this.defs.has(r.key) && r.userIdx === null) collection.put({ ...current, has_value: false, value_json: null, updated_at: now });
        else collection.remove(k);
        changed.add(r.key);
        this.events?.record(EVENT.settingReset, `${describe(r.key, r.userIdx)} restored to its default by ${who(caller)}`);
      }
      if (changed.size > 0) this.store.nextId(SETTINGS_VERSION);
    });
  }

  /** Copies the committed records of the changed keys into memory. */
  private reload(collection: Collection<SettingRecord>, changed: ReadonlySet<string>, touched: readonly { key: string; userIdx: number | null }[]): void {
    for (const { key, userIdx } of touched) {
      if (!changed.has(key)) continue;
      const record = collection.get(recordKey(key, userIdx));
      if (record) this.records.set(recordKey(key, userIdx), record);
      else this.records.delete(recordKey(key, userIdx));
    }
  }

  private item(key: string, userIdx: number | null): SettingItem {
    const def = this.defs.get(key);
    const system = this.records.get(recordKey(key, null));
    const own = userIdx === null ? undefined : this.records.get(recordKey(key, userIdx));
    const scope: Scope = def?.scope ?? 'system';
    const shown = scope === 'user' ? own : system;
    const resolved = this.resolve(key, scope === 'user' ? userIdx : null);
    return {
      key,
      value_type: def?.value_type ?? 'json',
      scope,
      user_idx: scope === 'user' ? userIdx : null,
      value_json: shown?.has_value ? shown.value_json : null,
      default_value_json: def ? def.default : (system?.default_value_json ?? null),
      effective_value_json: resolved.known ? resolved.value : null,
      effective_value_known: resolved.known,
      enum_values: def?.enum_values ? [...def.enum_values] : null,
      minimum: def?.minimum ?? null,
      maximum: def?.maximum ?? null,
      required_role: [...(def?.required_role ?? system?.required_role ?? [])],
      restart_required: def?.restart_required ?? system?.restart_required ?? false,
    };
  }

  /** User value, else system value, else default; unknown when none of them exists. */
  private resolve(key: string, userIdx: number | null): { known: boolean; value: unknown } {
    if (userIdx !== null) {
      const own = this.records.get(recordKey(key, userIdx));
      if (own?.has_value) return { known: true, value: own.value_json };
    }
    const system = this.records.get(recordKey(key, null));
    if (system?.has_value) return { known: true, value: system.value_json };
    const def = this.defs.get(key);
    if (def) return { known: true, value: def.default };
    if (system && system.default_value_json !== undefined && system.default_value_json !== null) return { known: true, value: system.default_value_json };
    return { known: false, value: null };
  }

  private systemValue(key: string): unknown {
    return this.resolve(key, null).value;
  }

  /** Whether the caller reaches the authority of the setting's required roles (none: everyone). */
  private mayAccess(caller: Caller, key: string): boolean {
    const required = this.defs.get(key)?.required_role ?? this.records.get(recordKey(key, null))?.required_role ?? [];
    if (required.length === 0) return true;
    const levels = required.map((id) => this.roleFacts.get(id)?.authorityLevel).filter((l): l is number => l !== undefined);
    // A role deleted since keeps its setting closed to all but the top of the hierarchy.
    const needed = levels.length > 0 ? Math.min(...levels) : Number.MAX_SAFE_INTEGER;
    return caller.authorityLevel >= needed;
  }

  private checkAccess(caller: Caller, key: string): void {
    if (!this.mayAccess(caller, key)) throw new DomainError('forbidden', `setting ${key} needs the authority of role(s) ${(this.defs.get(key)?.required_role ?? this.records.get(recordKey(key, null))?.required_role ?? []).join(', ')}`);
  }

  private checkRoles(ids: string[]): void {
    const issues = ids.flatMap((id, i) => (this.store.collection(roles).has(id) ? [] : [{ loc: ['body', 'required_role', i], msg: `role ${id} does not exist`, type: 'value_error' }]));
    if (issues.length > 0) throw new ValidationError(issues);
  }
}

function recordKey(key: string, userIdx: number | null): string {
  return userIdx === null ? key : `${key}\u0000${userIdx}`;
}

/** A stable id for a known setting that has no stored record yet. */
function deterministicId(key: string): string {
  let h = 0x811c9dc5;
  const hex: string[] = [];
  for (let round = 0; round < 4; round++) {
    for (const ch of `${round}:${key}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    hex.push(h.toString(16).padStart(8, '0'));
  }
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-8${s.slice(17, 20)}-${s.slice(20, 32)}`;
}

function describe(key: string, userIdx: number | null): string {
  return userIdx === null ? `setting ${key}` : `setting ${key} of user ${userIdx}`;
}

/** A value as events show it: JSON, cut to a length a log line can carry. */
function short(value: unknown): string {
  const text = JSON.stringify(value) ?? 'nothing';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
