/** What the console's browser tests share: Debian's Chromium, and users made as an administrator would. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { chromium, type Browser } from 'playwright-core';
import type { AdminApp } from './app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Ends the test file with a pass when this machine has no Chromium (.ci/run installs it). */
export function skipWithoutChromium(): void {
  if (existsSync(CHROMIUM)) return;
  t.comment(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`);
  t.pass('nothing to drive');
  t.end();
  process.exit(0);
}

/** Chromium, headless, as the tests drive it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/** Creates a user with a role and a password through the API, as an administrator would. */
export async function newUser(a: AdminApp, role_id: string): Promise<{ email: string; password: string }> {
  const email = `${role_id}-${Date.now()}@example.com`;
  const created = await a.admin.post('/api/v2/auth/create_account', { username: `${role_id} on shift`, email, role_id });
  if (created.status !== 201) throw new Error(created.text);
  const dir = path.join(a.stateDir, 'password-resets');
  const code = readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8'))).find((e) => e.email === email).code;
  const password = 'Balcony-Shift-42';
  const reset = await a.client.post('/api/v2/auth/reset_password', { email, new_password: password, otp: code });
  if (reset.status !== 200) throw new Error(reset.text);
  return { email, password };
}
