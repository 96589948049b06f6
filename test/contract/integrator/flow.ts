/**
 * A WMS vendor's integration, written the way a vendor would: against the TypeScript client
 * generated from the document the daemon serves, and nothing else. No types are written by
 * hand and nothing is cast, so every field read and every body sent here is checked against
 * the document: when the document stops describing what the daemon does, this stops compiling.
 *
 * It sets the site up, then takes each of the 12 request kinds to a final status, playing the
 * people at the balconies: every job that waits for a trigger is triggered.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { client } from './generated/client.gen.js';
import {
  getBalconies, getBots, getInventoryView, getJobs, getLevels, getRequests, getSkus, patchSkuId, postRequests, postTriggerJobId,
} from './generated/sdk.gen.js';
import type { Job, RequestInput, RequestStatus } from './generated/types.gen.js';

type Kind = RequestInput['type'];
type Body<K extends Kind> = Extract<RequestInput, { type: K }>;

const KIND_TIMEOUT_MS = 120_000;
const POLL_MS = 250;
const FINAL: ReadonlySet<RequestStatus> = new Set<RequestStatus>(['SUCCEEDED', 'CANCELLED', 'ABORTED']);
const OPEN: RequestStatus[] = ['CREATED', 'ACCEPTED', 'EXECUTING'];
/** Abort code: the bot has open work already (docs/requests.md, "Abort codes"). */
const BOT_BUSY = '0x500D';

/**
 * Facts of the site a vendor learns at commissioning, not from the API: an empty half box takes
 * any SKU (box-size key "1/2", docs/inventory.md), the RFID tag to rewrite, and the id printed
 * on a new carrier.
 */
const HALF_BOX = '1/2';
const RFID_TAG = { x: 3, y: 1 };
const NEW_CARRIER = 'N1';

/**
 * A generated call's data, or an error naming the call, its HTTP status and the answer: the
 * client returns errors rather than throwing them, and an integrator wants to know which call.
 */
function must<T>(what: string, r: { data: T | undefined; error: unknown; response: Response }): T {
  if (r.data === undefined) throw new Error(`${what}: HTTP ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data;
}

const describe = (jobs: readonly Job[]) =>
  jobs.map((j) => `${j.type} ${j.status}${j.details.waiting_for ? ` waiting for ${j.details.waiting_for}` : ''}${j.details.reason ? ` (${j.details.reason})` : ''}`).join('; ');

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/**
 * Polls the request's jobs, triggers each one a person must finish, until the request is final.
 * A trigger answered 409 lost a race with the job moving on; the next poll shows where it is.
 */
async function settle(kind: Kind, id: string, log: (s: string) => void): Promise<RequestStatus> {
  const deadline = Date.now() + KIND_TIMEOUT_MS;
  const triggered = new Set<string>();
  let jobs: Job[] = [];
  for (;;) {
    jobs = must('GET /api/v2/jobs', await getJobs({ query: { request_id__eq: id, size: 500 } })).items;
    for (const j of jobs) {
      if (j.status !== 'EXECUTING' || j.details.waiting_for !== 'trigger' || triggered.has(j.id)) continue;
      const r = await postTriggerJobId({ path: { job_id: j.id }, body: { TriggerStatus: 'SUCCEEDED_TRIGGER' } });
      if (r.error === undefined) {
        triggered.add(j.id);
        log(`${kind}: triggered ${j.type} ${j.id}`);
      } else if (r.response.status !== 409) {
        throw new Error(`POST /api/v2/trigger/${j.id} (${j.type}): HTTP ${r.response.status} ${JSON.stringify(r.error)}`);
      }
    }
    const request = must('GET /api/v2/requests', await getRequests({ query: { id__eq: id } })).items.find((r) => r.id === id);
    if (request && FINAL.has(request.status)) return request.status;
    if (Date.now() > deadline) {
      throw new Error(`${kind} request ${id} is ${request?.status ?? 'not listed'} after ${KIND_TIMEOUT_MS / 1000} s; its jobs: ${describe(jobs)}`);
    }
    await sleep(POLL_MS);
  }
}

export async function runAllKinds(baseUrl: string, apiKey: string, log: (s: string) => void): Promise<Record<string, string>> {
  client.setConfig({ baseUrl, auth: apiKey });

  await until('every bot online', 30_000, async () => {
    const all = must('GET /api/v2/bots', await getBots());
    return all.length > 0 && all.every((b) => b.online) ? all : undefined;
  });
  const [level] = must('GET /api/v2/levels', await getLevels());
  const [balcony] = must('GET /api/v2/balconies', await getBalconies());
  if (!level || !balcony) throw new Error('the site needs a level and a balcony');

  /**
   * A bot in service that no open request names. The brain sends bots to charge by itself, and a
   * bot with open work cannot be charged or offboarded on request.
   */
  const freeBot = async () => {
    const open = must('GET /api/v2/requests', await getRequests({ query: { status__in: OPEN, size: 1000 } })).items;
    const busy = new Set(open.map((r) => r.bot_id));
    const bot = must('GET /api/v2/bots', await getBots()).find((b) => b.in_service && b.online && !busy.has(b.id));
    if (!bot) throw new Error(`no bot is free: open requests ${open.map((r) => `${r.type} bot ${r.bot_id}`).join(', ')}`);
    return bot.id;
  };
  // The bot sent to the charger is the one taken off it; the one offboarded is the one onboarded.
  let charged: number | undefined;
  let offboarded: number | undefined;
  const chosen = (bot: number | undefined, before: string) => {
    if (bot === undefined) throw new Error(`no bot was chosen: ${before} comes first`);
    return bot;
  };

  // Putaways and replenishments need room: let every SKU into the empty half boxes, as many
  // items as its fullest half box holds already (the daemon refuses a capacity below that).
  const skus = must('GET /api/v2/skus', await getSkus({ query: { size: 100 } })).items;
  const rows = must('GET /api/v2/inventory_view', await getInventoryView({ query: { size: 1000 } })).items;
  for (const s of skus) {
    const held = rows.filter((row) => row.sku_id === s.id && row.box_size_string === HALF_BOX).map((row) => row.item_count_max ?? 0);
    const capacity = Math.max(12, ...held);
    must(`PATCH /api/v2/sku/${s.id}`, await patchSkuId({ path: { id: s.id }, body: { allowed_box_size_capacities: { [HALF_BOX]: capacity } } }));
  }
  /** An SKU as it stands now, chosen by what the next request needs of it. */
  const skuWhere = async (what: string, fits: (s: (typeof skus)[number]) => boolean) => {
    const found = must('GET /api/v2/skus', await getSkus({ query: { size: 100 } })).items.find(fits);
    if (!found) throw new Error(`no SKU ${what}`);
    return found.id;
  };
  const carrier = rows.find((row) => row.carrier_id !== null)?.carrier_id;
  if (!carrier) throw new Error('no carrier in the inventory');

  // Insertion order is the run order: a bot is sent to charge before it is taken off the
  // charger, taken out of service before it is brought back, the site paused before resumed.
  // The mapped type makes leaving a kind out a compile error.
  const plans: { [K in Kind]: () => Promise<Body<K>> } = {
    FULFILLMENT: async () => ({ type: 'FULFILLMENT', entities: [{ sku_id: await skuWhere('to pick from', (s) => s.fulfillable >= 1), quantity: 1 }] }),
    REPLENISHMENT: async () => ({ type: 'REPLENISHMENT', entities: [{ sku_id: await skuWhere('with room for 2', (s) => s.replenishable >= 2), quantity: 2 }] }),
    PUTAWAY: async () => ({ type: 'PUTAWAY', entities: [{ sku_id: await skuWhere('at all', () => true), quantity: 3 }] }),
    FETCH: async () => ({ type: 'FETCH', entities: [{ carrier_id: carrier }] }),
    CARRIER_ONBOARDING: async () => ({ type: 'CARRIER_ONBOARDING', carrier_id: NEW_CARRIER, balcony_id: balcony.id }),
    RFID_WRITE: async () => ({ type: 'RFID_WRITE', level_id: level.id, tags: [RFID_TAG], check: true }),
    RECHARGE: async () => ({ type: 'RECHARGE', bot_id: (charged = await freeBot()) }),
    UNCHARGING: async () => ({ type: 'UNCHARGING', bot_id: chosen(charged, 'RECHARGE') }),
    OFFBOARD: async () => ({ type: 'OFFBOARD', bot_id: (offboarded = await freeBot()) }),
    ONBOARD: async () => ({ type: 'ONBOARD', bot_id: chosen(offboarded, 'OFFBOARD'), level_id: level.id, balcony_id: balcony.id }),
    PAUSE: async () => ({ type: 'PAUSE' }),
    RESUME: async () => ({ type: 'RESUME' }),
  };
  const isKind = (k: string): k is Kind => k in plans;

  /**
   * Posts a kind, planned afresh on each try: a bot found free may have been given work by the
   * brain a moment later, and the post is refused (kept as ABORTED); another try picks again.
   */
  const create = async (kind: Kind) => {
    const deadline = Date.now() + KIND_TIMEOUT_MS;
    for (;;) {
      const r = await postRequests({ body: await plans[kind]() });
      if (r.error === undefined) return r.data;
      const busy = 'entity_feedback' in r.error && r.error.entity_feedback.some((f) => f.error_code === BOT_BUSY);
      if (!busy || Date.now() > deadline) throw new Error(`POST /api/v2/requests (${kind}): HTTP ${r.response.status} ${JSON.stringify(r.error)}`);
      log(`${kind}: ${r.error.detail}; trying again`);
      await sleep(1000);
    }
  };

  const outcome: Record<string, string> = {};
  for (const kind of Object.keys(plans).filter(isKind)) {
    const started = Date.now();
    const created = await create(kind);
    log(`${kind}: request ${created.id} ${created.status}`);
    outcome[kind] = await settle(kind, created.id, log);
    log(`${kind}: ${outcome[kind]} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return outcome;
}
