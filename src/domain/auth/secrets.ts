/**
 * The daemon's own secret keys, made on first start and kept in `<state>/secrets/` with mode
 * 0600: the signing key of access tokens, and the keys that encrypt API keys at rest and
 * derive their lookup digests.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface AuthSecrets {
  /** HS256 key of access tokens. */
  tokenKey: Buffer;
  /** AES-256-GCM key of stored API key values. */
  encryptionKey: Buffer;
  /** HMAC-SHA256 key of API key lookup digests. */
  digestKey: Buffer;
}

/** Loads the secrets, creating any that are missing. */
export function loadSecrets(stateDir: string): AuthSecrets {
  const dir = path.join(stateDir, 'secrets');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = (name: string): Buffer => {
    const file = path.join(dir, name);
    if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    const value = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (value.length !== 32) throw new Error(`${file} is damaged (expected 32 bytes of base64); restore it from a backup`);
    return value;
  };
  return { tokenKey: key('token-signing.key'), encryptionKey: key('api-key-encryption.key'), digestKey: key('api-key-digest.key') };
}

/** Encrypts a short secret as base64url `iv.tag.ciphertext`. */
export function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url')).join('.');
}

/** Decrypts what `seal` made; throws when it was tampered with. */
export function unseal(key: Buffer, sealed: string): string {
  const [iv, tag, data] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  const decipher = createDecipheriv('aes-256-gcm', key, iv!);
  decipher.setAuthTag(tag!);
  return Buffer.concat([decipher.update(data!), decipher.final()]).toString('utf8');
}

/** Keyed digest used to find a record by a secret without storing the secret in the clear. */
export function digest(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value).digest('base64url');
}
