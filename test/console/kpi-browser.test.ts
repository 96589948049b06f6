// The KPI page (#/kpi) in a real browser: Debian's Chromium, headless, driven by playwright-core
// against the whole daemon on the demo site. A short scripted workload (fulfillment requests,
// each pick and pack confirmed through the trigger) gives the KPIs figures; the page must draw
// its plots, show per balcony what GET /api/v2/kpi answers and what the workload did, and
// offer the same figures as CSV. Only a role with kpi:view is offered the page.
// CONSOLE_SCREENSHOTS=docs/console saves the page's picture there (docs/console.md shows it).
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { launchChromium, newUser, skipWithoutChromium } from '../helpers/console-browser.js';
import { buildConsole } from '../../scripts/build-console.js';

skipWithoutChromium();
t.setTimeout(300_000);

const shots = process.env.CONSOLE_SCREENSHOTS ?? mkdtempSync(path.join(tmpdir(), 'wh-kpi-shots-'));
mkdirSync(shots, { recursive: true });

let a: AdminApp;
let browser: Browser;

const get = async (p: string) => (await a.admin.get(p)).json;
const url = (hash = '') => `https://127.0.0.1:${a.app.port}/console${hash}`;


/** A fresh tab signed in as a new user of `role_id`. */
async function signedIn(role_id: string): Promise<{ context: BrowserContext; page: Page }> {
  const user = await newUser(a, role_id);
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1400, height: 900 }, colorScheme: 'light', acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(url());
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor();
  return { context, page };
}

/** What the workload asks for: the quantity of each request, a SKU each. */
const ORDERS: { quantity: number }[] = [{ quantity: 1 }, { quantity: 2 }, { quantity: 1 }];
const requestIds: string[] = [];
/** What the workload did at each balcony, worked out from its own picks: carriers (one a request and carrier), order lines, pieces. */
const did = new Map<number, { carriers: Set<string>; lines: number; pieces: number }>();

t.before(async () => {
  await buildConsole();
  a = await startAdminApp({ WAREHOUSE_LINKS: 'on', WAREHOUSE_SIM_SPEED: '4' });
  await until('the demo bots online', async () => (await get('/api/v2/bots')).filter((b: { online: boolean }) => b.online).length === 20, 30_000);
  browser = await launchChromium();
});
t.teardown(async () => {
  await browser?.close();
  await a?.close();
});

t.test('a scripted workload: fulfillments picked and packed through the trigger', async (t) => {
  const skus = (await get(`/api/v2/skus?size=${ORDERS.length}&sort_by=-total_quantity`)).items as { id: string }[];
  for (const [i, o] of ORDERS.entries()) {
    const r = await a.admin.post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: skus[i]!.id, quantity: o.quantity }] });
    t.equal(r.status, 201, r.status === 201 ? `request ${i + 1}: ${o.quantity} of ${skus[i]!.id}` : r.text);
    requestIds.push(r.json.id);
  }
  // A person at each balcony: confirm whatever waits for its trigger until every request is done.
  await until('every request SUCCEEDED', async () => {
    for (const id of requestIds) {
      const waiting = (await get(`/api/v2/jobs?request_id__eq=${id}&status__eq=EXECUTING`)).items as { id: string; details: { waiting_for?: string } }[];
      for (const j of waiting.filter((w) => w.details.waiting_for === 'trigger')) await a.admin.post(`/api/v2/trigger/${j.id}`, {});
    }
    const done = await Promise.all(requestIds.map(async (id) => (await get(`/api/v2/requests?id__eq=${id}`)).items[0].status));
    return done.every((s) => s === 'SUCCEEDED');
  }, 180_000);
  t.pass(`${requestIds.length} requests SUCCEEDED`);
  for (const id of requestIds) {
    const picks = (await get(`/api/v2/jobs?request_id__eq=${id}&type__eq=PICKING&status__eq=SUCCEEDED`)).items as { balcony_id: number; carrier_id: string; details: { booked_quantity: number } }[];
    for (const p of picks) {
      const at = did.get(p.balcony_id) ?? { carriers: new Set<string>(), lines: 0, pieces: 0 };
      at.carriers.add(`${id}/${p.carrier_id}`);
      at.lines += 1;
      at.pieces += p.details.booked_quantity;
      did.set(p.balcony_id, at);
    }
  }
  t.equal([...did.values()].reduce((n, d) => n + d.pieces, 0), ORDERS.reduce((n, o) => n + o.quantity, 0), 'every piece asked for was picked');
});

t.test('a role without kpi:view is not offered the page', async (t) => {
  const { context, page } = await signedIn('operator');
  await page.getByRole('link', { name: 'Status' }).waitFor();
  t.equal(await page.getByRole('link', { name: 'KPIs' }).count(), 0, 'no KPIs link for an operator');
  await page.goto(url('#/kpi'));
  await page.getByRole('alert').filter({ hasText: 'kpi:view' }).waitFor();
  t.pass('the address alone names the permission it needs');
  await context.close();
});

interface Hour { carriers_presented: number; order_lines_picked: number; pieces_picked: number; busy_seconds: number; idle_seconds: number }
interface Answer { from: string; to: string; timezone: string; hours: string[]; balconies: { balcony_id: number; hours: Hour[] }[]; requests: { done: number } }

t.test('the KPI page: plots drawn, the balcony table as the API answers, the CSV as the table', async (t) => {
  const { context, page } = await signedIn('viewer');
  await page.getByRole('link', { name: 'KPIs' }).click();
  await page.getByTestId('balcony-table').waitFor();

  // The last 7 days hold the whole workload even when it ran across the site's midnight.
  const [response, botsResponse] = await Promise.all([
    page.waitForResponse((r) => /\/api\/v2\/kpi\?from=/.test(r.url()) && r.request().method() === 'GET'),
    page.waitForResponse((r) => /\/api\/v2\/kpi\/bots\?from=/.test(r.url()) && r.request().method() === 'GET'),
    page.getByRole('button', { name: 'Last 7 days' }).click(),
  ]);
  const shown = (await response.json()) as Answer;
  const shownBots = (await botsResponse.json()) as { from: string; to: string; bots: { bot_id: number; working_seconds: number; charging_seconds: number; faulted_seconds: number; offline_seconds: number; idle_seconds: number }[] };
  t.same([shownBots.from, shownBots.to], [shown.from, shown.to], 'the bots for the same window');
  const succeeded = (await get('/api/v2/requests?status__eq=SUCCEEDED&size=1')).total as number;
  const hours = (Date.parse(shown.to) - Date.parse(shown.from)) / 3_600_000;
  t.ok(hours > 6 * 24 && hours <= 8 * 24, `7 days and the hour under way asked for (${hours} hours)`);
  t.equal(shown.hours.length, hours, 'an hour a point');
  await page.getByRole('button', { name: 'Last 7 days', pressed: true }).waitFor();
  await page.getByTestId('kpi-range').filter({ hasText: shown.timezone }).waitFor();

  // The table, from the page.
  const rows = await until('the table of the 7 days', async () => {
    const r = await page.getByTestId('balcony-row').evaluateAll((trs) => trs.map((tr) => [...(tr as any).children].map((c: any) => String(c.textContent).trim())));
    return r.length > 0 && r;
  });
  // The same from the answer the page read, summed here.
  const sums = shown.balconies.map((b) => {
    const s = b.hours.reduce((n, h) => ({
      carriers: n.carriers + h.carriers_presented, lines: n.lines + h.order_lines_picked, pieces: n.pieces + h.pieces_picked, busy: n.busy + h.busy_seconds, idle: n.idle + h.idle_seconds,
    }), { carriers: 0, lines: 0, pieces: 0, busy: 0, idle: 0 });
    const share = s.busy + s.idle > 0 ? `${((s.busy / (s.busy + s.idle)) * 100).toFixed(1)} %` : '—';
    return [String(b.balcony_id), String(s.carriers), String(s.lines), String(s.pieces), share];
  }).sort((x, y) => Number(x[0]) - Number(y[0]));
  t.same(rows, sums, 'each balcony\'s row is the API\'s hours summed');
  t.equal(rows.length, (await get('/api/v2/balconies')).length, 'a row for every balcony of the site');

  // And what the workload did at each balcony, from its own picks (nothing else picks on the demo).
  t.same(rows.map((r) => [r[0], r[1], r[2], r[3]]), rows.map((r) => {
    const d = did.get(Number(r[0]));
    return [r[0], String(d?.carriers.size ?? 0), String(d?.lines ?? 0), String(d?.pieces ?? 0)];
  }), 'carriers, order lines and pieces per balcony as the workload\'s picks give them');
  // Requests done count every kind (the brain's charging requests too): all SUCCEEDED since the daemon began.
  t.ok(shown.requests.done >= ORDERS.length && shown.requests.done <= succeeded, `requests done: the workload's and the brain's (${shown.requests.done})`);
  t.equal(await page.getByTestId('requests-done').textContent(), String(shown.requests.done), 'shown on the page');
  const again = (await get(`/api/v2/kpi?from=${encodeURIComponent(shown.from)}&to=${encodeURIComponent(shown.to)}`)) as Answer;
  t.same(again.balconies.map((b) => [b.balcony_id, b.hours.reduce((n, h) => n + h.pieces_picked, 0)]).sort((x, y) => x[0]! - y[0]!),
    rows.map((r) => [Number(r[0]), Number(r[3])]), 'the daemon answers the same pieces when asked again');

  // The plots: a canvas each, with points, and the series' colour drawn on it.
  for (const id of ['plot-throughput', 'plot-busy', 'plot-bots', 'plot-lead']) {
    const fig = page.getByTestId(id);
    t.ok(Number(await fig.getAttribute('data-points')) > 0, `${id} has points`);
    const painted = await fig.locator('canvas').evaluate((c: any) => {
      const ctx = c.getContext('2d');
      const d = ctx.getImageData(0, 0, c.width, c.height).data as Uint8ClampedArray;
      const colours = [[0x15, 0x65, 0xc0], [0xe6, 0x95, 0x00], [0x2e, 0x7d, 0x32], [0xc6, 0x28, 0x28]];
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3]! > 200 && colours.some(([r, g, b]) => Math.abs(d[i]! - r!) < 24 && Math.abs(d[i + 1]! - g!) < 24 && Math.abs(d[i + 2]! - b!) < 24)) n++;
      return n;
    });
    t.ok(painted > 10, `${id}: a line drawn in a series colour (${painted} pixels)`);
  }

  // The CSV: what the page shows, its last row the table's figures.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('csv').click()]);
  t.match(download.suggestedFilename(), /^kpi-week-.*\.csv$/);
  const csv = readFileSync((await download.path())!, 'utf8').trimEnd().split('\r\n').map((l) => l.split(','));
  const header = csv[0]!;
  t.equal(csv.length, 1 + shown.hours.length + 1, 'a header, an hour a row, the totals');
  const last = csv[csv.length - 1]!;
  t.equal(last[0], 'total');
  for (const r of rows) {
    const col = (name: string) => last[header.indexOf(`balcony_${r[0]}_${name}`)];
    t.same([col('carriers_presented'), col('order_lines_picked'), col('pieces_picked'), col('busy_share_percent')],
      [r[1], r[2], r[3], r[4] === '—' ? '' : r[4]!.replace(' %', '')], `balcony ${r[0]} in the CSV as in the table`);
  }
  t.equal(last[header.indexOf('requests_done')], String(shown.requests.done));

  // The table per bot: every bot of the site, its availability as the answer's seconds give it.
  await page.getByText('the least available first').click();
  const botRows = await page.getByTestId('bot-row').evaluateAll((trs) => trs.map((tr) => [...(tr as any).children].slice(0, 2).map((c: any) => String(c.textContent).trim())));
  t.equal(botRows.length, (await get('/api/v2/bots')).length, 'a row for every bot');
  const availability = new Map(shownBots.bots.map((b) => {
    const total = b.working_seconds + b.charging_seconds + b.faulted_seconds + b.offline_seconds + b.idle_seconds;
    return [String(b.bot_id), total > 0 ? `${((1 - (b.faulted_seconds + b.offline_seconds) / total) * 100).toFixed(1)} %` : '—'];
  }));
  t.same(botRows, botRows.map(([id]) => [id, availability.get(id!)]), 'each bot\'s availability from the answer');
  const [botsDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('bots-csv').click()]);
  const botsCsv = readFileSync((await botsDownload.path())!, 'utf8').trimEnd().split('\r\n').slice(1).map((l) => l.split(',').slice(0, 2));
  t.same(botsCsv, botRows.map(([id, a]) => [id, a === '—' ? '' : a!.replace(' %', '')]), 'the bots CSV as the table, in its order');

  // The picture for docs/console.md: today, with the workload's hour, the bots folded away.
  await page.getByText('the least available first').click();
  await page.getByRole('button', { name: 'Today' }).click();
  await page.getByRole('button', { name: 'Today', pressed: true }).waitFor();
  await page.getByTestId('plot-throughput').waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(shots, 'kpi.png'), fullPage: true });
  await context.close();
});
