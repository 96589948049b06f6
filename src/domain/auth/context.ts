/** What the auth domain needs from the rest of the daemon, passed in once. */
import type { Store } from '../../store/store.js';
import type { Logger } from '../../log/logger.js';
import { DEFAULT_POLICY, type PasswordPolicy } from './passwords.js';
import type { AuthSecrets } from './secrets.js';
import type { Events } from '../events/events.js';
import type { EventKind } from '../events/catalogue.js';

/** Lifetimes and rules; the settings hold them, these are the documented defaults. */
export interface AuthSettings {
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  /** 0: passwords never expire. */
  passwordMaxAgeDays: number;
  resetCodeSeconds: number;
  apiKeyDefaultDays: number;
  passwordPolicy: PasswordPolicy;
}

export const DEFAULT_AUTH_SETTINGS: AuthSettings = {
  accessTokenSeconds: 15 * 60,
  refreshTokenSeconds: 7 * 24 * 3600,
  passwordMaxAgeDays: 180,
  resetCodeSeconds: 15 * 60,
  apiKeyDefaultDays: 30,
  passwordPolicy: DEFAULT_POLICY,
};

export interface AuthDeps {
  store: Store;
  secrets: AuthSecrets;
  settings: () => AuthSettings;
  logger: Logger;
  stateDir: string;
  /** The wall clock: instants that are stored or shown (issued, expires). */
  now: () => number;
  /** The monotonic clock (performance.now when absent): waits kept in memory, which a step of the wall clock must not stretch or cut. */
  monotonic?: () => number;
  /** The event log; absent in the few unit tests that do not need it. */
  events?: Events;
}

/** The sequence whose value is `auth_version` of client_state; raised by every auth change. */
export const AUTH_VERSION = 'auth_version';

/** Marks an auth change inside a write: moves `auth_version` and logs the event with it. */
export function authChanged(deps: AuthDeps, kind: EventKind, description: string): void {
  deps.store.nextId(AUTH_VERSION);
  deps.events?.record(kind, description);
}
