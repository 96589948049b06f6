/** The auth domain's lifetimes and password policy, read from settings at each use. */
import { DEFAULT_AUTH_SETTINGS, type AuthSettings } from '../auth/context.js';
import type { Settings } from './settings.js';

/** A reader of AuthSettings over the settings registry (changes apply to the next token, code or password). */
export function authSettingsFrom(settings: Settings): () => AuthSettings {
  return () => ({
    accessTokenSeconds: settings.value<number>('auth.accessTokenMinutes') * 60,
    refreshTokenSeconds: settings.value<number>('auth.refreshTokenDays') * 86_400,
    passwordMaxAgeDays: settings.value<number>('auth.passwordMaxAgeDays'),
    resetCodeSeconds: settings.value<number>('auth.resetCodeMinutes') * 60,
    apiKeyDefaultDays: settings.value<number>('auth.apiKeyDefaultDays'),
    passwordPolicy: {
      ...DEFAULT_AUTH_SETTINGS.passwordPolicy,
      min_length: settings.value<number>('auth.passwordPolicy.minLength'),
      require_digit: settings.value<boolean>('auth.passwordPolicy.requireDigit'),
      require_lowercase: settings.value<boolean>('auth.passwordPolicy.requireLowercase'),
      require_uppercase: settings.value<boolean>('auth.passwordPolicy.requireUppercase'),
      require_special: settings.value<boolean>('auth.passwordPolicy.requireSpecial'),
    },
  });
}
