// Upgrading a box from the previous release (scripts/previous-release) with this tree's release
// tarball, as a technician does it. The previous release is built from its commit (git archive,
// its own package-lock.json through `npm ci --ignore-scripts`, its own tsc; the native addon is
// this tree's when what it is built from has not changed since: sameAddon). Its daemon runs the
// demo site with simulated bots and is given a history through its API: SKUs (one with stock
// loaded), a custom role and users, API keys, changed system and user settings, and requests
// that succeeded, were cancelled, were aborted, and are still open (one waiting at a balcony,
// one queued behind a PAUSE). Then it is started once more without bots (WAREHOUSE_LINKS=off, so nothing moves) and
// every record the API lists is read. This tree's release is built (scripts/release.sh) and
// installed with install.sh under a prefix whose state directory is the old daemon's (the
// build is shared with test/process/release.test.ts: helpers/release-build.ts).
//
// The store keeps no log of its migrations, only meta's schema_version: the first start of the
// new release must reach the newest version and, where no migration was due, leave every
// record byte-identical but for what any start writes (its events); so must a second start.
// A third, also without bots, must list the same records as the old release did, field for
// field (a new field only where a migration or the stored record explains it: ALLOWED_NEW_FIELDS), and take the old
// release's passwords, API keys and tokens. The previous release started on the upgraded state
// must refuse with exit 78 (state_newer) and change nothing when this release raised the schema
// version; when it did not, that downgrade is allowed (one schema) and must read the same
// records, and the refusal is checked on a copy one schema version newer. Last, with the bots
// running again, the open requests of the previous release end.
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ALL_COLLECTIONS } from '../../src/domain/collections.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { Store } from '../../src/store/store.js';
import { Client } from '../helpers/client.js';
import { releaseBuild } from '../helpers/release-build.js';
import { run, type Run } from '../helpers/run.js';
import { exited, startDaemon, type Daemon } from '../helpers/daemon.js';
import { recordChanges, storeRecords, summarize, type RecordChange, type StoreRecords } from '../helpers/store-records.js';
import { until } from '../helpers/until.js';

// A hang guard, not a bound: two builds (or one and a wait for release.test.ts's), an npm ci and a
// dozen daemon starts on a busy CI box.
t.setTimeout(900_000);

const ROOT = path.resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** scripts/previous-release: NAME=value lines, '#' comments. */
function previousRelease(): { commit: string; version: string } {
  const fields = new Map<string, string>();
  for (const line of readFileSync(path.join(ROOT, 'scripts/previous-release'), 'utf8').split('\n')) {
    const m = /^\s*([a-z_]+)=(.*)$/.exec(line);
    if (m && !line.trimStart().startsWith('#')) fields.set(m[1]!, m[2]!.trim());
  }
  const commit = fields.get('commit') ?? '';
  const version = fields.get('version') ?? '';
  if (!/^[0-9a-f]{40}$/.test(commit) || !/^\d+\.\d+\.\d+/.test(version)) throw new Error('scripts/previous-release needs commit=<40 hex digits> and version=<x.y.z>');
  return { commit, version };
}
const PREVIOUS = previousRelease();

/**
 * Fields this release adds to a record as the API lists it, by list name (the keys of
 * `snapshot`): each documented by its migration in src/store/migrations.ts, or read from what
 * the old release already stored (a request's `input_type`, the kind posted: docs/requests.md).
 * Any other new, lost or changed field fails the test.
 */
const ALLOWED_NEW_FIELDS: Record<string, readonly string[]> = { requests: ['input_type'] };

const WORK = mkdtempSync(path.join(tmpdir(), 'wh-upgrade-'));
t.teardown(() => rmSync(WORK, { recursive: true, force: true }));
const OLD = path.join(WORK, 'previous');
const PREFIX = path.join(WORK, 'root');
const APP = path.join(PREFIX, 'opt/warehouse-controller');
// The state directory install.sh keeps: the old release's, before and after the upgrade.
const STATE = path.join(PREFIX, 'var/lib/warehouse-controller');
const ENV = { WAREHOUSE_PORT: '0', WAREHOUSE_SITE: 'demo', WAREHOUSE_TIMEZONE: 'UTC', WAREHOUSE_LOG_LEVEL: 'info', WAREHOUSE_SIM_SPEED: '10' };

const timings: Array<[string, number]> = [];
const began = performance.now();
async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await fn();
  } finally {
    timings.push([what, Math.round(performance.now() - start)]);
  }
}


async function must(what: string, command: string, args: string[], cwd: string): Promise<Run> {
  const r = await run(command, args, cwd);
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}:\n${(r.stderr || r.stdout).slice(-3000)}`);
  return r;
}

/** The previous release, runnable from its commit: returns its dist/main.js. */
async function buildPrevious(): Promise<string> {
  const found = await run('git', ['-C', ROOT, 'cat-file', '-e', `${PREVIOUS.commit}^{commit}`], ROOT);
  if (found.status !== 0) {
    const shallow = (await run('git', ['-C', ROOT, 'rev-parse', '--is-shallow-repository'], ROOT)).stdout.trim() === 'true';
    throw new Error(`the previous release's commit ${PREVIOUS.commit} (scripts/previous-release) is not in this clone${shallow ? ', a shallow one: fetch the whole history (git fetch --unshallow)' : ''}; the upgrade test cannot build that release without it`);
  }
  mkdirSync(OLD);
  await timed('previous: git archive', () => must('git archive', 'sh', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3"', 'sh', ROOT, PREVIOUS.commit, OLD], ROOT));
  const version = (JSON.parse(readFileSync(path.join(OLD, 'package.json'), 'utf8')) as { version: string }).version;
  if (version !== PREVIOUS.version) throw new Error(`commit ${PREVIOUS.commit} has version ${version}, scripts/previous-release says ${PREVIOUS.version}`);
  // Its own lock file: the packages that release shipped with. No install scripts: the addon is below.
  // Niced, as the release build: the test files running beside it (daemons under a watchdog) come first.
  await timed('previous: npm ci', () => must('npm ci', 'nice', ['-n', '10', 'npm', 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], OLD));
  // Its tsc and, when it differs from this tree's, its addon: each needs only the packages, so both at once.
  const tsc = timed('previous: tsc', () => must('tsc', 'nice', ['-n', '10', path.join(OLD, 'node_modules/.bin/tsc'), '-p', 'tsconfig.build.json'], OLD));
  const addon = (async () => {
    if ((await sameAddon()) && existsSync(ADDON_COPY)) {
      mkdirSync(path.dirname(path.join(OLD, ADDON)), { recursive: true });
      copyFileSync(ADDON_COPY, path.join(OLD, ADDON));
    } else {
      await timed('previous: native/build.sh', () => must('native/build.sh', 'nice', ['-n', '10', 'sh', 'native/build.sh'], OLD));
    }
  })();
  await Promise.all([tsc, addon]);
  return path.join(OLD, 'dist/main.js');
}

/** The packages the addon's build takes its headers and build tool from. */
const ADDON_PACKAGES = ['node-addon-api', 'node-api-headers', 'cmake-js'];

/**
 * Whether the previous release's addon would be built from what this tree's was: the same
 * sources and build files (native/ but for native/fuzz/, the link fuzzer that is built apart,
 * and the bot link codec in firmware-protocol/c/, both per native/sources.txt) and the same
 * versions of the packages that build it.
 */
async function sameAddon(): Promise<boolean> {
  const sources = await run('git', ['-C', ROOT, 'diff', '--quiet', PREVIOUS.commit, '--', 'native/', ':(exclude)native/fuzz/', 'firmware-protocol/c/'], ROOT);
  if (sources.status !== 0) return false;
  const versions = (lock: string) => {
    const packages = (JSON.parse(lock) as { packages: Record<string, { version?: string }> }).packages;
    return ADDON_PACKAGES.map((p) => packages[`node_modules/${p}`]?.version ?? 'none').join(' ');
  };
  return versions(readFileSync(path.join(OLD, 'package-lock.json'), 'utf8')) === versions(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
}

/**
 * This tree's release tarball: `npm run release` (scripts/release.sh prints its path last), niced,
 * built once for the tap run and shared with test/process/release.test.ts, which checks the build
 * itself (helpers/release-build.ts); this test only unpacks it.
 */
async function buildRelease(): Promise<string> {
  const r = await releaseBuild();
  if (r.status !== 0 || r.tarball === undefined) throw new Error(`npm run release exited ${r.status}:\n${(r.stderr || r.stdout).slice(-3000)}`);
  timings.push([r.builtHere ? 'release: the build (here)' : 'release: the build (by another test file, shared)', r.ms]);
  return r.tarball;
}

// This tree's addon, taken before release.sh runs native/build.sh beside the previous release's build.
const ADDON = 'native/build/Release/warehouse_native.node';
const ADDON_COPY = path.join(WORK, 'warehouse_native.node');
if (existsSync(path.join(ROOT, ADDON))) copyFileSync(path.join(ROOT, ADDON), ADDON_COPY);
// Both builds start at once: the release builds while the old daemon makes its history.
const previous = timed('previous release built', buildPrevious);
const release = timed('release built (beside the rest)', buildRelease);
previous.catch(() => undefined);
release.catch(() => undefined);

// ------------------------------------------------------------------------------ daemons

interface Running {
  build: 'old' | 'new';
  d: Daemon;
  c: Client;
  port: number;
}

const live = new Set<Daemon>();
t.teardown(() => {
  for (const d of live) d.child.kill('SIGKILL');
});

const tail = (d: Daemon) => `${d.lines.slice(-8).map((l) => JSON.stringify(l)).join('\n')}\n${d.stderr().slice(-2000)}`;
const bootstrap = () => JSON.parse(readFileSync(path.join(STATE, 'bootstrap-admin.json'), 'utf8')) as { email: string; password: string; api_key: string };
const certificate = () => readFileSync(path.join(STATE, 'tls/self-signed-cert.pem'));
/** The Node.js the installed release runs on: its own runtime when it carries one. */
const newNode = () => (existsSync(path.join(APP, 'runtime/bin/node')) ? path.join(APP, 'runtime/bin/node') : process.execPath);

function spawnBuild(build: 'old' | 'new', links: 'on' | 'off', stateDir = STATE): Daemon {
  const env = { ...ENV, WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_LINKS: links };
  const d = build === 'old'
    ? startDaemon(env, { main: path.join(OLD, 'dist/main.js'), cwd: WORK })
    : startDaemon(env, { main: path.join(APP, 'dist/main.js'), cwd: WORK, node: newNode() });
  live.add(d);
  return d;
}

async function start(build: 'old' | 'new', links: 'on' | 'off'): Promise<Running> {
  const d = spawnBuild(build, links);
  const port = await Promise.race([
    d.listening,
    exited(d.child).then((code): never => {
      throw new Error(`the ${build} daemon exited ${code} before it listened:\n${tail(d)}`);
    }),
  ]);
  return { build, d, c: new Client(port, certificate(), bootstrap().api_key), port };
}

async function stop(t: Test, r: Running): Promise<void> {
  r.c.close();
  r.d.child.kill('SIGTERM');
  t.equal(await exited(r.d.child), 0, `the ${r.build} daemon stops with exit 0`);
  live.delete(r.d);
  const bad = r.d.lines.filter((l) => l.level === 'error' || l.level === 'fatal');
  t.same(bad.map((l) => l.msg), [], `the ${r.build} daemon logged no error`);
}

type Rec = Record<string, any>;

async function get(c: Client, p: string): Promise<any> {
  const r = await c.get(p);
  if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.text.slice(0, 500)}`);
  return r.json;
}

async function post(c: Client, p: string, json: unknown, expect: number[] = [200, 201]): Promise<any> {
  const r = await c.request(p, { method: 'POST', json });
  if (!expect.includes(r.status)) throw new Error(`POST ${p} ${JSON.stringify(json)}: ${r.status} ${r.text.slice(0, 500)}`);
  return r.json;
}

async function patch(c: Client, p: string, json: unknown): Promise<any> {
  const r = await c.request(p, { method: 'PATCH', json });
  if (r.status !== 200) throw new Error(`PATCH ${p} ${JSON.stringify(json)}: ${r.status} ${r.text.slice(0, 500)}`);
  return r.json;
}

/** Every item of a paged list. */
async function all(c: Client, p: string): Promise<Rec[]> {
  const out: Rec[] = [];
  for (let page = 1; ; page++) {
    const answer = await get(c, `${p}${p.includes('?') ? '&' : '?'}size=1000&page=${page}`);
    out.push(...(answer.items as Rec[]));
    if (page >= answer.pages) return out;
  }
}

const request = async (c: Client, id: string): Promise<Rec> => (await get(c, `/api/v2/requests?id__eq=${id}`)).items[0];
const FINAL = ['SUCCEEDED', 'CANCELLED', 'ABORTED'];

/** Acts as the people at the balconies: confirms each job of the request that waits for a trigger, until the request ends. */
async function work(c: Client, id: string, trigger: (job: Rec) => unknown = () => ({}), ms = 150_000): Promise<Rec> {
  return until(`request ${id} to end`, async () => {
    for (const job of (await get(c, `/api/v2/jobs?request_id__eq=${id}&status__eq=EXECUTING&size=100`)).items) {
      if (job.details?.waiting_for === 'trigger') await post(c, `/api/v2/trigger/${job.id}`, trigger(job), [200, 409]);
    }
    const r = await request(c, id);
    return FINAL.includes(r.status) ? r : undefined;
  }, ms);
}

const waitingJob = async (c: Client, id: string): Promise<Rec | undefined> =>
  ((await get(c, `/api/v2/jobs?request_id__eq=${id}&status__eq=EXECUTING&size=100`)).items as Rec[]).find((j) => j.details?.waiting_for === 'trigger');

// ------------------------------------------------------------------------------ records

type Snapshot = Record<string, Map<string, Rec>>;

/** Every record the API lists (live bots aside: none without the radio lines), keyed; events up to `lastEvent` (the newest when not given). */
async function snapshot(c: Client, lastEvent?: number): Promise<{ lists: Snapshot; lastEvent: number }> {
  const byKey = (items: Rec[], key: (r: Rec) => unknown) => new Map(items.map((r) => [String(key(r)), r]));
  const upTo = lastEvent ?? ((await get(c, '/api/v2/events?size=1')).items[0]?.id as number);
  const requests = await all(c, '/api/v2/requests');
  const users = await all(c, '/api/v2/auth/users');
  const graphs = await Promise.all(requests.map(async (r) => ((await get(c, `/api/v2/requests/${r.id}/job-graph`)).nodes as Rec[]).map((n) => ({ request: r.id, ...n }))));
  const userSettings = await Promise.all(users.map(async (u) => ({ user: u.id, ...(await get(c, `/api/v2/settings/users/${u.id}`)) })));
  const lists: Snapshot = {
    requests: byKey(requests, (r) => r.id),
    jobs: byKey(await all(c, '/api/v2/jobs'), (r) => r.id),
    'job graph nodes': byKey(graphs.flat(), (n) => `${n.request}/${n.id}`),
    skus: byKey(await all(c, '/api/v2/skus'), (r) => r.id),
    'inventory rows': byKey(await all(c, '/api/v2/inventory_view'), (r) => r.box_id ?? `space ${r.level_id}:${r.position_x}:${r.position_y}`),
    users: byKey(users, (r) => r.id),
    'user settings': byKey(userSettings, (r) => r.user),
    'api keys': byKey(await all(c, '/api/v2/auth/api_keys'), (r) => r.id),
    roles: byKey(await get(c, '/api/v2/auth/roles'), (r) => r.id),
    settings: byKey((await get(c, '/api/v2/settings')).items, (r) => r.key),
    'system settings': byKey([await get(c, '/api/v2/settings/system')], () => 'system'),
    events: byKey(await all(c, `/api/v2/events?id__lte=${upTo}`), (r) => r.id),
    workflows: byKey((await get(c, '/api/v2/workflows')).items, (r) => r.id),
    levels: byKey(await get(c, '/api/v2/levels'), (r) => r.id),
    balconies: byKey(await get(c, '/api/v2/balconies'), (r) => r.id),
  };
  return { lists, lastEvent: upTo };
}

/**
 * What differs from `before` to `after`, record by record and field by field. `ignore` names
 * fields a reading changes (the last use of the key that reads).
 */
/** Permissions this release added to the catalogue: the seeded roles gain them on its first start. */
const ADDED_PERMISSIONS = new Set(['kpi:view', 'metrics:view']);
/** A permission list, or a role holding one, as the previous release would show it. */
function withoutAddedPermissions(value: unknown): unknown {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.filter((v) => !ADDED_PERMISSIONS.has(v));
  if (value && typeof value === 'object' && Array.isArray((value as Rec).permissions)) return { ...(value as Rec), permissions: withoutAddedPermissions((value as Rec).permissions) };
  return value;
}

function differences(before: Snapshot, after: Snapshot, ignore: (list: string, record: Rec, field: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const [list, old] of Object.entries(before)) {
    const now = after[list] ?? new Map<string, Rec>();
    for (const [key, a] of old) {
      const b = now.get(key);
      if (!b) {
        out.push(`${list} ${key}: missing`);
        continue;
      }
      for (const field of new Set([...Object.keys(a), ...Object.keys(b)])) {
        if (ignore(list, a, field)) continue;
        if (!(field in b)) out.push(`${list} ${key}: field ${field} lost (was ${JSON.stringify(a[field])})`);
        else if (!(field in a)) {
          if (!ALLOWED_NEW_FIELDS[list]?.includes(field)) out.push(`${list} ${key}: new field ${field} = ${JSON.stringify(b[field])}, which no migration documents`);
        } else if (!isDeepStrictEqual(a[field], withoutAddedPermissions(b[field]))) out.push(`${list} ${key}: ${field} was ${JSON.stringify(a[field])}, is ${JSON.stringify(b[field])}`);
      }
    }
    for (const key of now.keys()) if (!old.has(key)) out.push(`${list} ${key}: appeared`);
  }
  return out;
}

// The reading key's own last use moves with every call.
const readingKey = (list: string, record: Rec, field: string) => list === 'api keys' && record.name === 'bootstrap' && field.startsWith('last_used');

/** sha256 of every file under `dir` but lock files, by relative path. */
function fileSums(dir: string, sub = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
    const rel = path.join(sub, e.name);
    if (e.isDirectory()) Object.assign(out, fileSums(dir, rel));
    else if (!/lock$/.test(e.name)) out[rel] = createHash('sha256').update(readFileSync(path.join(dir, rel))).digest('hex');
  }
  return out;
}

// ------------------------------------------------------------------------------ the story

interface History {
  succeeded: string;
  cancelled: string;
  aborted: string[];
  waiting: string;
  queued: string;
  paused: string;
  user: { id: number; email: string; password: string };
  tokens: { access_token: string; refresh_token: string };
  keys: { name: string; value: string; id: number }[];
}

let history: History | undefined;
let before: { lists: Snapshot; lastEvent: number } | undefined;
let oldStore: StoreRecords | undefined;
let upgraded: StoreRecords | undefined;
let installed = false;
let upgradeOk = false;
let firstStartOk = false;

t.test(`the previous release (${PREVIOUS.version}, ${PREVIOUS.commit.slice(0, 12)}) builds from its commit`, async (t) => {
  const main = await previous;
  t.ok(existsSync(main), 'its dist/main.js');
});

t.test('the previous release gets a history through its API', async (t) => {
  if (!existsSync(path.join(OLD, 'dist/main.js'))) return t.fail('the previous release was not built');
  mkdirSync(STATE, { recursive: true, mode: 0o750 });
  const old = await timed('history: start', () => start('old', 'on'));
  const { c } = old;
  const anonymous = new Client(old.port, certificate());
  t.teardown(() => anonymous.close());

  const bots = await timed('history: bots online', () => until('every bot online', async () => {
    const list = (await get(c, '/api/v2/bots')) as Rec[];
    return list.length > 0 && list.every((b) => b.online) && list;
  }, 90_000));
  t.ok(bots.length > 0, `${bots.length} simulated bots online`);

  await timed('history: master data', async () => {
    // SKUs: one new, with stock loaded into an empty box; one of the site's renamed.
    await post(c, '/api/v2/sku', { id: 'UPGRADE-1', name: 'Kept across the upgrade', measurement_unit: 'PIECE' });
    await patch(c, '/api/v2/sku/SKU-00010', { name: 'Renamed by the previous release' });
    const empty = (await get(c, '/api/v2/inventory_view?sku_id__eq=none&size=50')).items.find((r: Rec) => r.box_id !== null);
    if (!empty) throw new Error('the demo site has no box without a load');
    await post(c, `/api/v2/load/${empty.box_id}`, { sku_id: 'UPGRADE-1', item_count: 7, item_count_max: 20 });

    // A custom role, a user in it with a password, a viewer who never logged in.
    const role = await post(c, '/api/v2/auth/roles', { name: 'Night shift', authority_level: 30, permissions: ['requests:view', 'jobs:view', 'jobs:trigger', 'skus:view'] });
    const email = 'night.shift@example.com';
    const created = await post(c, '/api/v2/auth/create_account', { username: 'night-shift', email, role_id: role.id });
    const outbox = path.join(STATE, 'password-resets');
    const code = readdirSync(outbox).map((f) => JSON.parse(readFileSync(path.join(outbox, f), 'utf8')) as Rec).find((e) => e.email === email)?.code as string;
    const password = 'Night-Shift-2026!';
    await post(anonymous, '/api/v2/auth/reset_password', { email, new_password: password, otp: code });
    await post(c, '/api/v2/auth/create_account', { username: 'viewer', email: 'viewer@example.com', role_id: 'viewer' });
    const tokens = await post(anonymous, '/api/v2/auth/login', { email, password });

    // API keys: one that never expires, one that does.
    const keys: History['keys'] = [];
    for (const [name, extra] of [['wms-link', { never_expires: true }], ['nightly-export', { expires_at: '2099-01-01T00:00:00Z' }]] as const) {
      const value = (await post(c, '/api/v2/auth/generate_api_key', { name, permission_keys: ['requests:view', 'skus:view'], ...extra })).api_key as string;
      const listed = (await get(c, `/api/v2/auth/api_keys?name__eq=${name}`)).items[0];
      keys.push({ name, value, id: listed.id });
    }

    // Settings: system ones (showCreated makes plans visible in GET /jobs) and a user's.
    await patch(c, '/api/v2/settings/system', { updates: { 'api.jobs.showCreated': true, 'history.retentionDays': 365, 'brain.chargeBelowPercent': 15 } });
    await patch(c, `/api/v2/settings/users/${created.id}`, { updates: { 'ui.locale': 'de', 'ui.balconyId': 1 } });
    history = { user: { id: created.id, email, password }, tokens, keys } as History;
  });

  const h = history!;
  await timed('history: requests', async () => {
    // Each fulfillment its own SKU of the site, one with stock to spare.
    const skus = (await all(c, '/api/v2/skus')).filter((s) => s.id.startsWith('SKU-') && s.fulfillable >= 2).map((s) => s.id as string);
    if (skus.length < 5) throw new Error(`the demo site has ${skus.length} SKUs with stock`);
    const fulfil = (sku: string, quantity: number) => post(c, '/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: sku, quantity }] }, [201, 409]);
    const made = async (sku: string, quantity: number): Promise<string> => {
      const r = await fulfil(sku, quantity);
      if (typeof r.id !== 'string') throw new Error(`a fulfillment of ${quantity} ${sku} was refused: ${JSON.stringify(r)}`);
      return r.id;
    };
    // Succeeded, with a short pick where a job picks more than one: the counters then differ.
    h.succeeded = await made(skus[0]!, 2);
    // Cancelled at once; aborted by validation (too many, and an unknown SKU).
    h.cancelled = await made(skus[1]!, 1);
    await post(c, `/api/v2/requests/${h.cancelled}/cancel`, {});
    h.aborted = [(await fulfil(skus[2]!, 1_000_000)).request_id, (await fulfil('NO-SUCH-SKU', 1)).request_id];
    // Open: one at a balcony, waiting for its person.
    h.waiting = await made(skus[3]!, 1);
    const done = await work(c, h.succeeded, (job) => (job.type === 'PICKING' && job.quantity > 1 ? { TriggerStatus: 'SHORT_PICK_TRIGGER', selected_quantity: job.quantity - 1 } : {}));
    t.equal(done.status, 'SUCCEEDED', 'a fulfillment succeeded');
    t.equal((await until(`request ${h.cancelled} cancelled`, async () => {
      const r = await request(c, h.cancelled);
      return FINAL.includes(r.status) && r;
    }, 120_000)).status, 'CANCELLED', 'a fulfillment was cancelled');
    for (const id of h.aborted) t.equal((await request(c, id)).status, 'ABORTED', `request ${id} aborted by validation`);
    await until(`request ${h.waiting} waits at a balcony`, () => waitingJob(c, h.waiting), 120_000);
    // Open: one queued while the site is paused.
    h.paused = (await post(c, '/api/v2/requests', { type: 'PAUSE' })).id;
    await until('the PAUSE request succeeded', async () => (await request(c, h.paused)).status === 'SUCCEEDED', 30_000);
    h.queued = await made(skus[4]!, 1);
    await new Promise((r) => setTimeout(r, 1000));
    t.match((await request(c, h.queued)).status, /^(CREATED|ACCEPTED)$/, 'a fulfillment queued behind the pause');
  });

  await timed('history: stop', () => stop(t, old));
  // Once more without bots: nothing moves while every record is read.
  const frozen = await timed('previous: start without bots', () => start('old', 'off'));
  before = await timed('previous: read every record', () => snapshot(frozen.c));
  t.match([...before.lists['events']!.values()].map((e) => e.description).join('\n'), `controller ${PREVIOUS.version} started`, `the daemon was ${PREVIOUS.version}`);
  await stop(t, frozen);
  oldStore = await storeRecords(STATE);

  const requestStatuses = new Set([...before.lists['requests']!.values()].map((r) => r.status as string));
  const jobStatuses = new Set([...before.lists['jobs']!.values()].map((j) => j.status as string));
  t.comment(`request statuses before the upgrade: ${[...requestStatuses].sort().join(', ')}; job statuses: ${[...jobStatuses].sort().join(', ')}`);
  t.comment(`records: ${Object.entries(before.lists).map(([k, v]) => `${k} ${v.size}`).join(', ')}; store schema version ${oldStore.schemaVersion}`);
  for (const status of ['SUCCEEDED', 'CANCELLED', 'ABORTED', 'EXECUTING', 'ACCEPTED']) t.ok(requestStatuses.has(status), `a request ${status}`);
});

t.test('install.sh puts the new release beside the old state', async (t) => {
  const tarball = await release;
  if (!oldStore) return t.fail('the previous release made no history');
  const unpacked = path.join(WORK, 'unpacked');
  mkdirSync(unpacked);
  await must('tar', 'tar', ['-xzf', tarball, '-C', unpacked], WORK);
  const top = readdirSync(unpacked);
  t.equal(top.length, 1, 'the tarball unpacks to one directory');
  await timed('install.sh', () => must('install.sh', path.join(unpacked, top[0]!, 'install.sh'), ['--prefix', PREFIX, '--no-systemd'], WORK));
  t.ok(existsSync(path.join(APP, 'dist/main.js')), 'installed');
  t.ok(statSync(path.join(STATE, 'bootstrap-admin.json')).isFile(), 'the state directory kept');
  installed = true;
});

/**
 * What any start of the daemon writes itself: its events (with their index entries and their
 * sequence in meta) and a sample of the store's size (store_usage, taken at start).
 */
const startWrites = (c: RecordChange) =>
  (/^(events|store_usage)(#|$)/.test(c.db) && c.change === 'added') || (c.db === 'meta' && c.change === 'changed' && /^seq:event/.test(c.key));
const unexpected = (changes: readonly RecordChange[], also: (c: RecordChange) => boolean = () => false) =>
  changes.filter((c) => !startWrites(c) && !also(c)).map((c) => `${c.db} ${c.change} ${c.key}`);
/**
 * What only the first start of a newer release writes, once: the built-in roles given the
 * catalogue's new permissions (the auth records' version moves with them), and the mark of when
 * keeping the KPIs began (with its collection's record structure). The second start writes none.
 */
const firstStartWrites = (c: RecordChange) =>
  (c.db === 'roles' && c.change === 'changed' && ['super_admin', 'admin', 'operator', 'viewer'].includes(c.key))
  || (c.db === 'meta' && c.change === 'changed' && c.key === 'seq:auth_version')
  || (c.db === 'kpi_states' && c.change === 'added' && c.key === 'began')
  || (c.db === 'meta' && c.change === 'added' && c.key === 'structures:kpi_states');

/** Starts the new release without bots, calls nothing, stops it: what the start itself wrote to the store. */
async function bareStart(t: Test, what: string): Promise<{ opened: Rec | undefined; changes: RecordChange[]; records: StoreRecords }> {
  const earlier = await storeRecords(STATE);
  const r = await timed(what, () => start('new', 'off'));
  await stop(t, r);
  const records = await storeRecords(STATE);
  return { opened: r.d.lines.find((l) => l.msg === 'store opened'), changes: recordChanges(earlier, records), records };
}

t.test('the new release opens the old store: the newest schema version, nothing else touched', async (t) => {
  if (!installed || !oldStore) return t.fail('nothing to upgrade');
  const latest = Math.max(...MIGRATIONS.map((m) => m.version));
  const pending = MIGRATIONS.filter((m) => m.version > oldStore!.schemaVersion);
  t.comment(`schema version ${oldStore.schemaVersion} -> ${latest}: migrations to run: ${pending.length ? pending.map((m) => `${m.version} (${m.description})`).join('; ') : 'none, this release changed no stored shape'}`);
  const first = await bareStart(t, 'new: first start');
  t.equal(first.opened?.schema_version, latest, 'the store opened at the newest schema version');
  t.equal(first.records.schemaVersion, latest, 'and meta keeps it');
  t.comment(`the first start wrote: ${summarize(first.changes)}`);
  // The store keeps no log of migrations, only the version they reached: where none was due,
  // the first start must write what every start writes and nothing more.
  if (pending.length === 0) t.same(unexpected(first.changes, firstStartWrites).slice(0, 40), [], 'no migration was due: every record byte-identical but for the start\'s own events');
  firstStartOk = first.opened?.schema_version === latest;
});

t.test('a second start of the new release migrates nothing again', async (t) => {
  if (!firstStartOk) return t.fail('the first start failed');
  const again = await bareStart(t, 'new: second start');
  t.equal(again.opened?.schema_version, Math.max(...MIGRATIONS.map((m) => m.version)), 'the same schema version');
  t.comment(`a second start wrote: ${summarize(again.changes)}`);
  t.same(unexpected(again.changes).slice(0, 40), [], 'every record byte-identical but for the start\'s own events');
});

t.test('the new release lists every record of the previous one, and takes its credentials', async (t) => {
  if (!firstStartOk || !before || !history) return t.fail('not upgraded');
  const fresh = await timed('new: start to read', () => start('new', 'off'));
  const after = await timed('new: read every record', () => snapshot(fresh.c, before!.lastEvent));
  const diffs = differences(before.lists, after.lists, readingKey);
  t.same(diffs.slice(0, 40), [], `every record of the previous release, field for field (${diffs.length} differences)`);
  const started = ((await get(fresh.c, `/api/v2/events?id__gte=${before.lastEvent + 1}&size=100`)).items as Rec[]).map((e) => e.description as string);
  t.match(started.join('\n'), `controller ${VERSION} started`, `the daemon that read them is ${VERSION}`);

  const anonymous = new Client(fresh.port, certificate());
  t.teardown(() => anonymous.close());
  const as = (token: string) => {
    const c = new Client(fresh.port, certificate(), token);
    t.teardown(() => c.close());
    return c;
  };
  const login = await anonymous.post('/api/v2/auth/login', { email: history.user.email, password: history.user.password });
  t.equal(login.status, 200, `the user's password from before logs in: ${login.text.slice(0, 200)}`);
  if (login.status === 200) t.equal((await as(login.json.access_token).get('/api/v2/auth/authenticate')).json?.user?.id, history.user.id, 'as that user');
  const boot = bootstrap();
  t.equal((await anonymous.post('/api/v2/auth/login', { email: boot.email, password: boot.password })).status, 200, 'the bootstrap administrator logs in');
  t.equal((await as(history.tokens.access_token).get('/api/v2/auth/authenticate')).status, 200, 'an access token issued before the upgrade is still good for its lifetime');
  const refreshed = await anonymous.post('/api/v2/auth/refresh_token', { refresh_token: history.tokens.refresh_token });
  t.equal(refreshed.status, 200, `a refresh token from before the upgrade refreshes: ${refreshed.text.slice(0, 200)}`);
  for (const key of history.keys) {
    const c = as(key.value);
    t.equal((await c.get('/api/v2/skus?size=1')).status, 200, `API key ${key.name} still works`);
    t.equal((await c.get('/api/v2/auth/users')).status, 403, `API key ${key.name} keeps its permissions, no more`);
  }
  await stop(t, fresh);
  upgraded = await storeRecords(STATE);
  upgradeOk = diffs.length === 0;
});

t.test('the previous release on the upgraded state', async (t) => {
  if (!upgraded || !before) return t.fail('not upgraded');
  const oldSchema = oldStore!.schemaVersion;
  /** Starts the previous release on `dir` and expects it to refuse; the state must stay as it was. */
  const refused = async (dir: string, what: string) => {
    const sums = fileSums(dir);
    const records = await storeRecords(dir);
    const d = spawnBuild('old', 'off', dir);
    const outcome = await Promise.race([exited(d.child).then((code) => ({ code })), d.listening.then(() => ({ code: 'listening' as const }))]);
    if (outcome.code === 'listening') d.child.kill('SIGKILL');
    live.delete(d);
    t.equal(outcome.code, 78, `${what}: exit 78 (EX_CONFIG), the unit does not restart it`);
    const fatal = d.lines.find((l) => l.level === 'fatal');
    t.equal(fatal?.code, 'state_newer', `${what}: code state_newer`);
    t.match(fatal?.msg, /schema version \d+, newer than this build knows/, `${what}: says why`);
    t.match(fatal?.hint, /older than the one that wrote the state directory/, `${what}: and what to do`);
    t.same(recordChanges(records, await storeRecords(dir)), [], `${what}: no record changed`);
    t.same(fileSums(dir), sums, `${what}: no file of the state directory changed`);
  };

  if (upgraded.schemaVersion > oldSchema) {
    await timed('downgrade refused', () => refused(STATE, 'the upgraded state'));
    return;
  }
  // This release raised no schema version: the previous one may read its state, and must read it as it was.
  t.comment(`the schema version stayed ${oldSchema}: the previous release is not refused on it`);
  const old = await timed('downgrade: previous release starts', () => start('old', 'off'));
  const read = await snapshot(old.c, before.lastEvent);
  // Every key was used since (the credentials above): its last use moved, nothing else may have.
  const diffs = differences(before.lists, read.lists, (list, _record, field) => list === 'api keys' && field.startsWith('last_used'));
  t.same(diffs.slice(0, 40), [], `the previous release reads every record as it wrote them (${diffs.length} differences)`);
  await stop(t, old);
  // The refusal itself, on a copy whose store a build one schema version newer has opened.
  const future = path.join(WORK, 'future-state');
  cpSync(STATE, future, { recursive: true });
  const store = await Store.open({ dir: path.join(future, 'db') }, ALL_COLLECTIONS, [...MIGRATIONS, { version: oldSchema + 1, description: 'a later build (test/process/upgrade.test.ts)', up: () => undefined }]);
  await store.close();
  await timed('downgrade refused (copy)', () => refused(future, 'state of a newer schema'));
});

t.test('with the bots running again, the open requests of the previous release end', async (t) => {
  if (!upgradeOk || !history) return t.fail('not upgraded');
  const h = history;
  const r = await timed('new: bots finish the open work', async () => {
    const r = await start('new', 'on');
    await until('every bot online', async () => {
      const bots = (await get(r.c, '/api/v2/bots')) as Rec[];
      return bots.length > 0 && bots.every((b) => b.online);
    }, 90_000);
    await post(r.c, '/api/v2/requests', { type: 'RESUME' });
    t.equal((await work(r.c, h.waiting)).status, 'SUCCEEDED', 'the request waiting at a balcony');
    t.equal((await work(r.c, h.queued)).status, 'SUCCEEDED', 'the request queued behind the pause');
    return r;
  });
  await stop(t, r);
});

t.teardown(() => {
  timings.push(['whole test', Math.round(performance.now() - began)]);
  console.log(`# upgrade test timings (ms): ${timings.map(([k, v]) => `${k} ${v}`).join('; ')}`);
});
