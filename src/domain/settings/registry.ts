/**
 * The settings the controller knows (spec 2.20, 4.11): key, value type, scope, default,
 * bounds, who may read and write them, and whether a change waits for a restart. Keys not
 * listed here may still be stored as custom settings; they are the integrator's own.
 */
import { isValidTimeZone } from '../time.js';

export type ValueType = 'boolean' | 'integer' | 'number' | 'string' | 'json';
export type Scope = 'system' | 'user';

export interface SettingDef {
  key: string;
  value_type: ValueType;
  scope: Scope;
  default: unknown;
  description: string;
  enum_values?: readonly string[];
  minimum?: number;
  maximum?: number;
  /** Role ids whose authority level (or above) may read and write it; empty: any caller with the settings permissions. */
  required_role: readonly string[];
  /** The running daemon keeps the value it started with; a change applies at the next start. */
  restart_required: boolean;
  /** Extra check beyond type and bounds; returns a message when the value is refused. */
  check?: (value: unknown) => string | undefined;
}

const ADMINS = ['admin'] as const;

/** Builds the registry; `defaults` carries values the configuration decides (time zone, page size). */
export function settingRegistry(defaults: { timeZone: string; maxPageSize: number }): readonly SettingDef[] {
  return [
    { key: 'api.jobs.showCreated', value_type: 'boolean', scope: 'system', default: false, required_role: [], restart_required: false, description: 'List jobs in state CREATED (internal plans) in GET /jobs' },
    { key: 'api.maxPageSize', value_type: 'integer', scope: 'system', default: defaults.maxPageSize, minimum: 10, maximum: 5000, required_role: ADMINS, restart_required: true, description: 'Largest `size` a list endpoint accepts' },
    { key: 'time.zone', value_type: 'string', scope: 'system', default: defaults.timeZone, required_role: ADMINS, restart_required: true, description: 'IANA time zone of legacy (naive) timestamp fields and filter bounds', check: (v) => (isValidTimeZone(v as string) ? undefined : `${JSON.stringify(v)} is not an IANA time zone`) },
    { key: 'auth.accessTokenMinutes', value_type: 'integer', scope: 'system', default: 15, minimum: 1, maximum: 1440, required_role: ADMINS, restart_required: false, description: 'Lifetime of access tokens from login and refresh' },
    { key: 'auth.refreshTokenDays', value_type: 'integer', scope: 'system', default: 7, minimum: 1, maximum: 90, required_role: ADMINS, restart_required: false, description: 'Lifetime of refresh tokens' },
    { key: 'auth.resetCodeMinutes', value_type: 'integer', scope: 'system', default: 15, minimum: 5, maximum: 1440, required_role: ADMINS, restart_required: false, description: 'Lifetime of password reset codes' },
    { key: 'auth.apiKeyDefaultDays', value_type: 'integer', scope: 'system', default: 30, minimum: 1, maximum: 3650, required_role: ADMINS, restart_required: false, description: 'Expiry of a new API key when none is given' },
    { key: 'auth.passwordMaxAgeDays', value_type: 'integer', scope: 'system', default: 180, minimum: 0, maximum: 3650, required_role: ADMINS, restart_required: false, description: 'Days until a password expires; 0: never' },
    { key: 'auth.passwordPolicy.minLength', value_type: 'integer', scope: 'system', default: 12, minimum: 8, maximum: 128, required_role: ADMINS, restart_required: false, description: 'Shortest password accepted' },
    { key: 'auth.passwordPolicy.requireDigit', value_type: 'boolean', scope: 'system', default: true, required_role: ADMINS, restart_required: false, description: 'New passwords need a digit' },
    { key: 'auth.passwordPolicy.requireLowercase', value_type: 'boolean', scope: 'system', default: true, required_role: ADMINS, restart_required: false, description: 'New passwords need a lowercase letter' },
    { key: 'auth.passwordPolicy.requireUppercase', value_type: 'boolean', scope: 'system', default: true, required_role: ADMINS, restart_required: false, description: 'New passwords need an uppercase letter' },
    { key: 'auth.passwordPolicy.requireSpecial', value_type: 'boolean', scope: 'system', default: true, required_role: ADMINS, restart_required: false, description: 'New passwords need a special character' },
    { key: 'picking.external.enabled', value_type: 'boolean', scope: 'system', default: false, required_role: ADMINS, restart_required: false, description: 'External picking of missing fulfillment quantities (spec 2.19)' },
    { key: 'brain.chargeBelowPercent', value_type: 'integer', scope: 'system', default: 20, minimum: 5, maximum: 90, required_role: ADMINS, restart_required: false, description: 'Battery percent under which a bot gets no new work and is sent to charge' },
    { key: 'brain.faultClearSeconds', value_type: 'integer', scope: 'system', default: 10, minimum: 0, maximum: 3600, required_role: ADMINS, restart_required: false, description: 'Seconds after an ERROR fault before FAULT_CLEAR is tried; while the bot refuses it, tried again after twice as long, 5 tries in all (0: never; a technician clears it)' },
    { key: 'history.retentionDays', value_type: 'integer', scope: 'system', default: 90, minimum: 1, maximum: 3650, required_role: ADMINS, restart_required: false, description: 'Days ended requests (with their jobs) and support issues are kept before they are archived and pruned' },
    { key: 'history.maxStoreSharePercent', value_type: 'integer', scope: 'system', default: 50, minimum: 5, maximum: 95, required_role: ADMINS, restart_required: false, description: 'Share of its disk the store may take; past it the oldest history is archived and pruned whatever its age (events 0x100E and 0x100F warn at 80 and 90 % of it)' },
    { key: 'events.retentionDays', value_type: 'integer', scope: 'system', default: 30, minimum: 1, maximum: 3650, required_role: ADMINS, restart_required: false, description: 'Days events are kept before they are pruned' },
    { key: 'ui.locale', value_type: 'string', scope: 'user', default: 'en', enum_values: ['en', 'de', 'fr', 'it', 'es', 'nl', 'pl', 'cs'], required_role: [], restart_required: false, description: 'Language of the operator app for this user' },
    { key: 'ui.balconyId', value_type: 'integer', scope: 'user', default: null, minimum: 0, required_role: [], restart_required: false, description: 'Balcony the operator app opens on for this user (null: ask)' },
  ];
}

/** Why a value does not fit a known setting, or undefined when it does. */
export function valueProblem(def: SettingDef, value: unknown): string | undefined {
  if (value === null) return def.default === null ? undefined : 'null is not allowed; DELETE the setting to restore its default';
  switch (def.value_type) {
    case 'boolean':
      if (typeof value !== 'boolean') return 'Input should be a valid boolean';
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'Input should be a valid integer';
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'Input should be a valid number';
      break;
    case 'string':
      if (typeof value !== 'string') return 'Input should be a valid string';
      if (value.length > 1000) return 'String should have at most 1000 characters';
      break;
    case 'json':
      break;
  }
  if (def.enum_values && !def.enum_values.includes(value as string)) return `Input should be one of ${def.enum_values.map((v) => `'${v}'`).join(', ')}`;
  if (def.minimum !== undefined && (value as number) < def.minimum) return `Input should be greater than or equal to ${def.minimum}`;
  if (def.maximum !== undefined && (value as number) > def.maximum) return `Input should be less than or equal to ${def.maximum}`;
  return def.check?.(value);
}
