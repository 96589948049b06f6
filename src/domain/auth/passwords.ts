/**
 * Passwords: the policy of spec 2.7, and scrypt hashes with per-password salt. Verification
 * compares in constant time, and an unknown account still costs one hash, so timing does
 * not tell whether an email exists.
 */
import { randomBytes, randomInt, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { ValidationIssue } from '../errors.js';

export interface PasswordPolicy {
  min_length: number;
  require_digit: boolean;
  require_lowercase: boolean;
  require_uppercase: boolean;
  require_special: boolean;
  special_characters: string;
  special_characters_pattern: string;
}

const SPECIALS = '!@#$%^&*()-_=+[]{};:,.?/~|<>';

/** The policy new passwords must meet (a setting; these are its defaults). */
export const DEFAULT_POLICY: PasswordPolicy = {
  min_length: 12,
  require_digit: true,
  require_lowercase: true,
  require_uppercase: true,
  require_special: true,
  special_characters: SPECIALS,
  special_characters_pattern: `[${SPECIALS.replace(/[\\\]^-]/g, '\\$&')}]`,
};

/** Longest password accepted: scrypt hashes any length, but a megabyte password is an attack. */
export const MAX_PASSWORD_LENGTH = 256;

/** The rules a password breaks, as validation issues at `loc` (empty when it passes). */
export function policyIssues(password: string, policy: PasswordPolicy, loc: (string | number)[]): ValidationIssue[] {
  const broken: string[] = [];
  if ([...password].length < policy.min_length) broken.push(`at least ${policy.min_length} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) broken.push(`at most ${MAX_PASSWORD_LENGTH} characters`);
  if (policy.require_digit && !/\d/.test(password)) broken.push('a digit');
  if (policy.require_lowercase && !/\p{Ll}/u.test(password)) broken.push('a lowercase letter');
  if (policy.require_uppercase && !/\p{Lu}/u.test(password)) broken.push('an uppercase letter');
  if (policy.require_special && ![...password].some((ch) => policy.special_characters.includes(ch))) {
    broken.push(`one of the special characters ${policy.special_characters}`);
  }
  return broken.map((rule) => ({ loc, msg: `Password must contain ${rule}`, type: 'password_policy' }));
}

// N=2^15, r=8: about 32 MiB and tens of milliseconds per hash on this class of machine.
const PARAMS = { N: 1 << 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

function scrypt(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 128 * params.N * params.r * 2 };
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Hashes a password as `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

const DUMMY_HASH = hashPassword(randomBytes(16).toString('hex'));

/** Checks a password against a stored hash; with no hash, spends the same time and fails. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? (await DUMMY_HASH)).split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected) && stored !== undefined;
}

/** A random password that meets the policy (for the first admin). */
export function generatePassword(policy: PasswordPolicy): string {
  const lower = 'abcdefghijkmnopqrstuvwxyz';
  const upper = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
  const digits = '23456789';
  const all = lower + upper + digits;
  const pick = (set: string): string => set[randomInt(set.length)]!;
  const chars = [pick(lower), pick(upper), pick(digits), pick(policy.special_characters || '!')];
  while (chars.length < Math.max(policy.min_length, 20)) chars.push(pick(all));
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join('');
}
