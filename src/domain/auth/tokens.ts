/**
 * Access and refresh tokens. Access tokens are short-lived JWTs (HS256, key in the state
 * directory) naming the user and its token version; refresh tokens are opaque, stored as a
 * digest, and single-use: refreshing rotates them, and presenting a used one revokes its
 * whole family (it was stolen, or replayed). An access token names its family, and is refused
 * once the family is gone (a logout, a reuse): a tablet shared between shifts must not keep the
 * last user's access for the rest of its lifetime. Raising a user's token version (password
 * reset, role change) refuses both kinds at once; the user's stored sessions are removed as well.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { DomainError } from '../errors.js';
import type { AuthDeps } from './context.js';
import { sessions, users, type UserRecord } from './records.js';
import { digest } from './secrets.js';
import { boundedEnd, setBeforeStepBack } from '../wall-clock.js';

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
}

const ISSUER = 'warehouse-controller';
const REFRESH_PREFIX = 'whr_';

/** Issues a new pair for a user; `family` continues a rotation chain. */
export async function issueTokens(deps: AuthDeps, user: UserRecord, family: string = randomUUID()): Promise<TokenPair> {
  const now = deps.now();
  const s = deps.settings();
  const access_token = await new SignJWT({ ver: user.token_version, fam: family })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setSubject(String(user.id))
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor(now / 1000) + s.accessTokenSeconds)
    .sign(deps.secrets.tokenKey);
  const id = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  await deps.store.write(() => {
    deps.store.collection(sessions).put({
      id, user_id: user.id, family, secret_digest: digest(deps.secrets.digestKey, secret), expires_at: now + s.refreshTokenSeconds * 1000, used_at: null,
      token_version: user.token_version,
    });
  });
  return { access_token, refresh_token: `${REFRESH_PREFIX}${id}.${secret}`, token_type: 'bearer' };
}

const INVALID_REFRESH = (): DomainError => new DomainError('unauthorized', 'Invalid or expired refresh token');

/** Rotates a refresh token: the presented one is used up, a new pair is returned. */
export async function refreshTokens(deps: AuthDeps, presented: string): Promise<TokenPair> {
  const match = /^whr_([0-9a-f-]{36})\.([\w-]{43})$/.exec(presented);
  if (!match) throw INVALID_REFRESH();
  const [, id, secret] = match as unknown as [string, string, string];
  const outcome = await deps.store.write(() => {
    const c = deps.store.collection(sessions);
    const session = c.get(id);
    if (!session) return { ok: false as const };
    const given = Buffer.from(digest(deps.secrets.digestKey, secret));
    const stored = Buffer.from(session.secret_digest);
    if (given.length !== stored.length || !timingSafeEqual(given, stored)) return { ok: false as const };
    if (session.used_at !== null) {
      // Reuse: whoever holds this chain is not to be trusted any more.
      for (const key of c.keysBy('family', session.family)) c.remove(key);
      return { ok: false as const, reused: session };
    }
    if (session.expires_at <= deps.now()) return { ok: false as const };
    const user = deps.store.collection(users).get(session.user_id);
    // Sessions from before the token_version field count as version 0.
    if (!user || (session.token_version ?? 0) !== user.token_version) return { ok: false as const };
    c.put({ ...session, used_at: deps.now() });
    return { ok: true as const, user, family: session.family };
  });
  if (!outcome.ok) {
    if ('reused' in outcome && outcome.reused) deps.logger.warn({ user_id: outcome.reused.user_id }, 'refresh token reused: its session family is revoked');
    throw INVALID_REFRESH();
  }
  refuseExpiredPassword(deps, outcome.user);
  return issueTokens(deps, outcome.user, outcome.family);
}

/**
 * Logout (beyond the spec): ends the session a refresh token belongs to, with every token
 * rotated from it (its family), so none of them refreshes again. A token that is malformed,
 * unknown, or whose secret does not match changes nothing; the caller is told the same either
 * way. The access tokens issued in that family are refused from then on (verifyAccessToken).
 */
export async function revokeRefreshToken(deps: AuthDeps, presented: string): Promise<boolean> {
  const match = /^whr_([0-9a-f-]{36})\.([\w-]{43})$/.exec(presented);
  if (!match) return false;
  const [, id, secret] = match as unknown as [string, string, string];
  return deps.store.write(() => {
    const c = deps.store.collection(sessions);
    const session = c.get(id);
    if (!session) return false;
    const given = Buffer.from(digest(deps.secrets.digestKey, secret));
    const stored = Buffer.from(session.secret_digest);
    if (given.length !== stored.length || !timingSafeEqual(given, stored)) return false;
    for (const key of c.keysBy('family', session.family)) c.remove(key);
    return true;
  });
}

/** Throws the login's 401 when the user's password has expired: no new tokens until it is changed. */
export function refuseExpiredPassword(deps: AuthDeps, user: UserRecord): void {
  if (user.password_expires_at !== null && user.password_expires_at <= deps.now()) {
    throw new DomainError('unauthorized', 'The password has expired; set a new one with POST /api/v2/auth/reset_password and old_password');
  }
}

/** Removes every stored refresh session of a user; call inside a write. */
export function revokeSessions(deps: AuthDeps, userId: number): void {
  const c = deps.store.collection(sessions);
  for (const key of c.keysBy('user_id', userId)) c.remove(key);
}

/** The user an access token names, or undefined when it is invalid, expired or revoked. */
export async function verifyAccessToken(deps: AuthDeps, token: string): Promise<UserRecord | undefined> {
  let payload: { sub?: string; ver?: unknown; fam?: unknown; iat?: number; exp?: number };
  const now = deps.now();
  try {
    ({ payload } = await jwtVerify(token, deps.secrets.tokenKey, { issuer: ISSUER, algorithms: ['HS256'], currentDate: new Date(now) }));
  } catch {
    return undefined;
  }
  if (issuedAhead(payload, now)) return undefined;
  const user = deps.store.collection(users).get(Number(payload.sub));
  if (!user || payload.ver !== user.token_version) return undefined;
  // Its session ended (logout, a reused refresh token, expiry). A token without a family was
  // issued before tokens named one, and lives out its short lifetime.
  if (payload.fam !== undefined && (typeof payload.fam !== 'string' || deps.store.collection(sessions).countBy('family', payload.fam) === 0)) return undefined;
  return user;
}

/**
 * Whether an access token was issued under a wall clock that has since gone back (its `iat` is
 * ahead of now): its `exp` no longer bounds how long it lives, so it is refused and the client
 * refreshes. A token without both times is refused too; this daemon always sets them.
 */
export function issuedAhead(payload: { iat?: number; exp?: number }, now: number): boolean {
  if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number') return true;
  return setBeforeStepBack(payload.exp * 1000, (payload.exp - payload.iat) * 1000, now);
}

/**
 * Removes expired sessions (run now and then), and brings a session that expires further ahead
 * than the refresh lifetime (set under a clock that has since gone back) to expire one
 * lifetime from now.
 */
export async function pruneSessions(deps: AuthDeps): Promise<number> {
  const now = deps.now();
  const lifetimeMs = deps.settings().refreshTokenSeconds * 1000;
  const all = [...deps.store.collection(sessions).scan()];
  const expired = all.filter((s) => s.expires_at <= now).map((s) => s.id);
  const ahead = all.filter((s) => setBeforeStepBack(s.expires_at, lifetimeMs, now));
  if (expired.length === 0 && ahead.length === 0) return 0;
  await deps.store.write(() => {
    const c = deps.store.collection(sessions);
    for (const id of expired) c.remove(id);
    for (const s of ahead) {
      const current = c.get(s.id);
      if (current) c.put({ ...current, expires_at: boundedEnd(current.expires_at, lifetimeMs, now) });
    }
  });
  return expired.length;
}
