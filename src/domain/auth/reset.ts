/**
 * One-time reset codes. The box has no mail: a code is written to the reset outbox,
 * `<state>/password-resets/`, one JSON file per code (mode 0600), where a technician with
 * shell access on the box, or a tool that forwards them, picks it up. The store keeps only a
 * keyed digest of the code. Answers never say whether an email exists.
 */
import { randomInt, timingSafeEqual } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DomainError, ValidationError } from '../errors.js';
import { AUTH_VERSION, authChanged, type AuthDeps } from './context.js';
import { EVENT } from '../events/catalogue.js';
import { hashPassword, policyIssues, verifyPassword } from './passwords.js';
import { digest } from './secrets.js';
import { setBeforeStepBack } from '../wall-clock.js';
import { users, type UserRecord } from './records.js';
import { revokeSessions } from './tokens.js';
import type { ResetInput } from './inputs.js';

export type { ResetInput } from './inputs.js';

const CODE_DIGITS = 8;

/** Creates a fresh code for the user (replacing any pending one) and puts it in the outbox. */
export async function issueResetCode(deps: AuthDeps, user: UserRecord, reason: string): Promise<void> {
  const code = String(randomInt(10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
  const expires = deps.now() + deps.settings().resetCodeSeconds * 1000;
  await deps.store.write(() => {
    const current = deps.store.collection(users).get(user.id);
    if (!current) return;
    deps.store.collection(users).put({ ...current, otp_digest: digest(deps.secrets.digestKey, `${user.id}:${code}`), otp_expires_at: expires, updated_at: deps.now() });
    deps.store.nextId(AUTH_VERSION); // the user's otp_expires_at changed; no event, as forgot_password answers must not be told apart
  });
  const dir = path.join(deps.stateDir, 'password-resets');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${new Date(deps.now()).toISOString().replace(/[:.]/g, '-')}-user-${user.id}.json`);
  writeFileSync(file, `${JSON.stringify({ email: user.email, code, expires_at: new Date(expires).toISOString(), reason })}\n`, { mode: 0o600 });
  deps.logger.info({ user_id: user.id, outbox: dir, reason }, 'password reset code issued');
}

/**
 * Sets a new password when the reset code or the old password is right. Every token of the
 * user stops working. Throws 401 for a wrong code or password, 422 for a policy failure.
 */
export async function resetPassword(deps: AuthDeps, user: UserRecord | undefined, input: ResetInput): Promise<void> {
  if (input.otp === undefined && input.old_password === undefined) {
    throw ValidationError.of(['body'], 'Give either otp (the reset code) or old_password', 'missing');
  }
  const issues = policyIssues(input.new_password, deps.settings().passwordPolicy, ['body', 'new_password']);
  if (issues.length > 0) throw new ValidationError(issues);
  let allowed = false;
  if (input.otp !== undefined) {
    allowed = user !== undefined && codeMatches(deps, user, input.otp);
  } else {
    allowed = (await verifyPassword(input.old_password!, user?.password_hash)) && user !== undefined;
  }
  if (!allowed || !user) throw new DomainError('unauthorized', 'The reset code or the old password is wrong or has expired');
  if (input.old_password !== undefined && input.old_password === input.new_password) {
    throw ValidationError.of(['body', 'new_password'], 'The new password must differ from the old one');
  }
  const hash = await hashPassword(input.new_password);
  const maxAgeDays = deps.settings().passwordMaxAgeDays;
  await deps.store.write(() => {
    const current = deps.store.collection(users).get(user.id);
    if (!current) throw new DomainError('unauthorized', 'The reset code or the old password is wrong or has expired');
    deps.store.collection(users).put({
      ...current,
      password_hash: hash,
      password_expires_at: maxAgeDays > 0 ? deps.now() + maxAgeDays * 86400_000 : null,
      otp_digest: null,
      otp_expires_at: null,
      token_version: current.token_version + 1,
      updated_at: deps.now(),
    });
    revokeSessions(deps, user.id);
    authChanged(deps, EVENT.passwordReset, `user ${user.id} set a new password`);
  });
}

function codeMatches(deps: AuthDeps, user: UserRecord, code: string): boolean {
  if (!user.otp_digest || user.otp_expires_at === null || user.otp_expires_at < deps.now()) return false;
  // Issued under a clock that has since gone back: it would live the whole step longer; a new code is asked for.
  if (setBeforeStepBack(user.otp_expires_at, deps.settings().resetCodeSeconds * 1000, deps.now())) return false;
  const presented = Buffer.from(digest(deps.secrets.digestKey, `${user.id}:${code.trim()}`));
  const stored = Buffer.from(user.otp_digest);
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
