// The console in a real browser: Debian's Chromium, headless, driven by
// playwright-core against the whole daemon on the demo site (real TLS, store, brain, planner
// and simulated bots). An operator logs in, watches the bots move, opens a bot on the map,
// confirms a pick on the balcony screen and sees the request progress, and is refused a
// control action the role does not permit. CONSOLE_SCREENSHOTS=docs/console also saves a
// picture of each view there (docs/console.md shows them).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { type Browser, type Page } from 'playwright-core';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { launchChromium, newUser, skipWithoutChromium } from '../helpers/console-browser.js';
import { buildConsole } from '../../scripts/build-console.js';

skipWithoutChromium();
t.setTimeout(180_000);

const shots = process.env.CONSOLE_SCREENSHOTS ?? mkdtempSync(path.join(tmpdir(), 'wh-console-shots-'));
mkdirSync(shots, { recursive: true });

let a: AdminApp;
let browser: Browser;
let page: Page;
let operator: { email: string; password: string };


const get = async (p: string) => (await a.admin.get(p)).json;

t.before(async () => {
  // The bundle from the sources under test, not a stale build.
  await buildConsole();
  a = await startAdminApp({ WAREHOUSE_LINKS: 'on', WAREHOUSE_SIM_SPEED: '4' });
  await until('the demo bots online', async () => (await get('/api/v2/bots')).filter((b: { online: boolean }) => b.online).length === 20, 30_000);
  operator = await newUser(a, 'operator');
  browser = await launchChromium();
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1400, height: 900 }, colorScheme: 'light' });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
});
t.teardown(async () => {
  await browser?.close();
  await a?.close();
});

const url = (hash = '') => `https://127.0.0.1:${a.app.port}/console${hash}`;

t.test('an operator logs in and sees the bots of level 1 move on the map', async (t) => {
  await page.goto(url());
  await page.getByLabel('Email').fill(operator.email);
  await page.getByLabel('Password').fill('wrong-Password-1');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();
  await page.screenshot({ path: path.join(shots, 'login.png') });
  await page.getByLabel('Password').fill(operator.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  t.match(await page.getByTestId('who').textContent(), /operator on shift · operator/);

  const bots = (await get('/api/v2/bots?level_id=1')) as { id: number; x: number; y: number }[];
  await page.getByTestId('bot-count').filter({ hasText: `${bots.length} bots` }).waitFor();
  t.ok(bots.length > 0, `${bots.length} bots on level 1`);

  // The canvas draws each bot in its state's colour at its cell. A bot may move between the
  // API's answer and the sample (a top-up): read its cell again until the two agree.
  const STATE_COLOURS = ['#1565c0', '#e69500', '#2e7d32', '#6b7280', '#7b1fa2', '#c62828'];
  const sample = (at: { x: number; y: number }) => page.evaluate(({ x, y }) => {
    // Runs in the page: the DOM's globals, which this file's Node types do not describe.
    const canvas = (globalThis as any).document.querySelector('canvas');
    const cell = Number(canvas.dataset.cell);
    const [r, g, b] = canvas.getContext('2d').getImageData(Math.floor((x + 0.5) * cell) + 2, Math.floor((y + 0.5) * cell) - Math.floor(cell * 0.3), 1, 1).data;
    return `#${[r, g, b].map((v: number) => v.toString(16).padStart(2, '0')).join('')}`;
  }, at);
  const probeId = bots[0]!.id;
  let drawn = '';
  for (const end = Date.now() + 10_000; Date.now() < end && !STATE_COLOURS.includes(drawn);) {
    const now = ((await get('/api/v2/bots?level_id=1')) as { id: number; x: number; y: number }[]).find((b) => b.id === probeId)!;
    drawn = await sample(now);
  }
  t.ok(STATE_COLOURS.includes(drawn), `bot ${probeId} drawn in a state colour (${drawn})`);

  // Work for the bots: the cells in the list follow the bot stream while a bot fetches the carrier.
  const sku = (await get('/api/v2/skus?size=1&sort_by=-total_quantity')).items[0].id as string;
  const r = await a.admin.post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: sku, quantity: 1 }] });
  t.equal(r.status, 201, r.status === 201 ? 'a FULFILLMENT for the bots' : r.text);
  requestId = r.json.id;
  const retrieving = await until('a bot sent for the carrier', async () => {
    const jobs = (await get(`/api/v2/jobs?request_id__eq=${requestId}&type__eq=RETRIEVING`)).items as { level_id: number | null; bot_id: number | null }[];
    return jobs.find((j) => j.bot_id !== null && j.level_id !== null);
  }, 30_000);
  await page.goto(url(`#/site/${retrieving.level_id}`));
  const mover = page.getByTestId(`bot-${retrieving.bot_id}-cell`);
  const before = await mover.textContent();
  await until('the bot to move on the page', async () => (await mover.textContent()) !== before, 30_000);
  const state = page.getByTestId(`bot-${retrieving.bot_id}-state`);
  await until('the bot to show as busy', async () => /working|waiting/.test((await state.textContent()) ?? ''), 15_000)
    .catch(async (err: Error) => t.fail(`${err.message}: shown as ${await state.textContent()}`));
  t.pass('a bot moved on the page');
  await page.screenshot({ path: path.join(shots, 'site.png') });
});

let requestId = '';

t.test('a click on a bot at its balcony shows its job and why it waits', async (t) => {
  const picking = await until('the pick to wait at a balcony', async () => {
    const jobs = (await get(`/api/v2/jobs?request_id__eq=${requestId}&status__eq=EXECUTING`)).items as { type: string; level_id: number; balcony_id: number; details: { waiting_for?: string } }[];
    return jobs.find((j) => j.type === 'PICKING' && j.details.waiting_for === 'trigger');
  }, 60_000);
  const level = picking.level_id;
  await page.goto(url(`#/site/${level}`));
  const map = await get(`/api/v2/levels/${level}/map`);
  const ports = map.balconies.find((b: { id: number }) => b.id === picking.balcony_id).ports as { x: number; y: number }[];
  const holder = await until('the bot holding the carrier at the balcony', async () => {
    const bots = (await get(`/api/v2/bots?level_id=${level}`)) as { id: number; x: number; y: number; lifted_carrier: number }[];
    return bots.find((b) => b.lifted_carrier === 1 && ports.some((p) => p.x === b.x && p.y === b.y));
  });
  const canvas = page.locator('canvas');
  await page.getByTestId(`bot-${holder.id}-cell`).filter({ hasText: `${holder.x},${holder.y}` }).waitFor();
  const cell = Number(await canvas.getAttribute('data-cell'));
  await canvas.click({ position: { x: (holder.x + 0.5) * cell, y: (holder.y + 0.5) * cell } });
  const details = page.getByTestId('bot-details');
  await details.getByRole('heading', { name: `Bot ${holder.id}` }).waitFor();
  t.match(await details.textContent(), /holds a carrier/, 'the bot holds the carrier');
  // The page follows the event stream: the carrier's arrival shows within moments.
  await details.getByTestId('why').filter({ hasText: 'waiting for trigger' }).waitFor();
  t.match(await details.textContent(), /PICKING executing/, 'and shows the pick it waits for');
  await page.screenshot({ path: path.join(shots, 'bot.png') });

  // The balcony on the map tells the same from the balcony's side.
  const port = ports[0];
  if (port) {
    await canvas.click({ position: { x: (port.x + 0.5) * cell, y: (port.y + 0.5) * cell }, force: true });
    const balcony = page.getByTestId('balcony-details');
    if (await balcony.count() > 0) t.match(await balcony.textContent(), /PICKING/);
  }
  balconyId = picking.balcony_id;
});

let balconyId = 0;

t.test('the pick is confirmed by scanning on the balcony screen, and the request moves on', async (t) => {
  await page.goto(url(`#/balcony/${balconyId}`));
  const task = page.getByTestId('task');
  await task.waitFor();
  t.equal((await task.getByRole('heading').textContent())?.trim(), 'Pick');
  t.equal((await page.getByTestId('quantity').textContent())?.trim(), '1 piece');
  const sku = (await page.getByTestId('sku').textContent())!.trim();
  await page.screenshot({ path: path.join(shots, 'balcony.png') });
  const doneBefore = Number(await page.getByTestId('jobs-done').textContent());

  // A scan of something else is refused by the controller and shown; the job still waits.
  const scan = page.getByLabel('Scan SKU, box or carrier');
  t.ok(await scan.evaluate((el) => el === (globalThis as any).document.activeElement), 'the scan field has the focus');
  await scan.fill('NOT-THIS-ONE');
  await scan.press('Enter');
  await page.getByTestId('balcony-message').filter({ hasText: 'Not confirmed' }).waitFor();

  // The scanner types the SKU and sends Enter: that is the trigger.
  await scan.fill(sku);
  await scan.press('Enter');
  await page.getByTestId('balcony-message').filter({ hasText: 'Confirmed by scan' }).waitFor();
  await until('the progress to count the pick', async () => Number(await page.getByTestId('jobs-done').textContent()) > doneBefore);
  t.pass('jobs done went up on the screen');

  // Then the packing of that pick, confirmed with the button.
  await until('the packing at the balcony', async () => /Pack/.test((await task.getByRole('heading').textContent().catch(() => '')) ?? ''), 30_000);
  // The Pack step says what to pack (the pick's SKU and booked quantity) and the order's reference.
  const counter = (await get(`/api/v2/requests?id__eq=${requestId}`)).items[0].counter as number;
  await page.getByTestId('order').filter({ hasText: `#${counter}` }).waitFor();
  t.same(await page.getByTestId('pack-sku').allTextContents(), [sku], 'the SKU picked is the one to pack');
  t.same((await page.getByTestId('pack-quantity').allTextContents()).map((q) => q.trim()), ['1 piece'], 'as many as were picked');
  t.equal(await page.getByTestId('carrier').count(), 0, 'no carrier dashes on the Pack step');
  await page.getByRole('button', { name: 'Confirm', exact: true }).click();
  await page.getByTestId('balcony-message').filter({ hasText: 'Confirmed: Pack' }).waitFor();
  await page.getByTestId('request-status').filter({ hasText: 'SUCCEEDED' }).waitFor({ timeout: 60_000 });
  const request = (await get(`/api/v2/requests?id__eq=${requestId}`)).items[0];
  t.equal(request.status, 'SUCCEEDED', 'the controller agrees');
  t.equal(request.entities[0].succeeded_quantity, 1);
});

t.test('an action the role does not permit is refused, with the permission named', async (t) => {
  await page.goto(url('#/status'));
  await page.getByTestId('storage-status').filter({ hasText: /[A-Z]/ }).waitFor();
  // Keyboard: the refused button stays focusable (aria-disabled) and explains itself.
  await page.getByRole('button', { name: 'Restart brain' }).press('Enter');
  const message = page.getByTestId('control-message');
  await message.filter({ hasText: 'Refused' }).waitFor();
  t.match(await message.textContent(), /system:restart_brain/);
  t.equal(await page.locator('dialog').count(), 0, 'no confirmation asked for a refused action');
  await page.screenshot({ path: path.join(shots, 'status.png') });
  const restarts = (await get('/api/v2/events?hex_value__eq=0x7005')).total;
  t.equal(restarts, 0, 'the brain was not restarted');
});

t.test('logging out revokes the session: a reload shows the login again', async (t) => {
  const stored = await page.evaluate(() => (globalThis as any).sessionStorage.getItem('warehouse-console.refresh') as string | null);
  t.ok(stored, 'the tab held a refresh token');
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel('Email').waitFor();
  const again = await a.client.post('/api/v2/auth/refresh_token', { refresh_token: stored });
  t.equal(again.status, 401, 'the refresh token was revoked by the daemon');
  await page.reload();
  await page.getByLabel('Email').waitFor();
});
