/**
 * The shapes the console reads from the API, and how a bot's state is told from them. The bot
 * and job shapes are the daemon's own response schemas (type-only: nothing of them is bundled),
 * and the job families its own lists, so a change there fails this build instead of drifting.
 */
import type { Static } from 'typebox';
import type { BotResponse } from '../../src/http/schemas/bots';
import type { JobResponse } from '../../src/http/schemas/requests';
import { PERSON_JOBS } from '../../src/domain/requests/vocabulary';

export type Bot = Static<typeof BotResponse>;

/** A job as GET /jobs answers it, with the details the console reads named. */
export type Job = Static<typeof JobResponse> & { details: { waiting_for?: string; reason?: string } };

export interface Page<T> {
  items: T[];
  total: number;
}

export interface LevelMap {
  id: number;
  width: number;
  depth: number;
  rows: string[];
  balconies: { id: number; ports: { x: number; y: number }[] }[];
}

export type BotState = 'working' | 'waiting' | 'charging' | 'idle' | 'offboarded' | 'link down';

/** Fill colours, each with a text label beside it in the legend (colour is never the only cue). */
export const STATE_COLOURS: Record<BotState, string> = {
  working: '#1565c0',
  waiting: '#e69500',
  charging: '#2e7d32',
  idle: '#6b7280',
  offboarded: '#7b1fa2',
  'link down': '#c62828',
};

/** Open job statuses: the work a bot or a balcony has now. */
export const OPEN_JOB_STATUSES = ['ACCEPTED', 'EXECUTING', 'ERROR', 'CANCELLING'];

/** Jobs a person confirms at a balcony: the daemon's own list. */
export { PERSON_JOBS };

/** The state a bot is drawn in: its link first, then service, charging, and its job. */
export function botState(bot: Bot, job: Job | undefined): BotState {
  if (!bot.line_up || !bot.online) return 'link down';
  if (!bot.in_service) return 'offboarded';
  if (bot.is_charging) return 'charging';
  // A job waiting for its own bot's motion is a bot at work, not one standing still.
  if (job) return job.details.waiting_for && job.details.waiting_for !== 'bot_motion' ? 'waiting' : 'working';
  return 'idle';
}

/** Open job statuses as a query: `__in` takes one parameter per value (docs/listing.md). */
export const OPEN_JOBS_QUERY = OPEN_JOB_STATUSES.map((s) => `status__in=${s}`).join('&');

/**
 * The open job of each bot (the newest when there are several). A bot holding a carrier up at
 * a balcony position has no job of its own while the person works: the balcony's job is its.
 */
export function jobsByBot(jobs: readonly Job[], bots: Iterable<Bot>, map: LevelMap | undefined): Map<number, Job> {
  const out = new Map<number, Job>();
  for (const j of jobs) if (j.bot_id !== null && !out.has(j.bot_id)) out.set(j.bot_id, j);
  if (!map) return out;
  for (const b of bots) {
    if (out.has(b.id) || b.lifted_carrier !== 1) continue;
    const balcony = map.balconies.find((bc) => bc.ports.some((p) => p.x === b.x && p.y === b.y));
    const job = balcony && jobs.find((j) => j.balcony_id === balcony.id && j.status === 'EXECUTING' && j.level_id === b.level_id);
    if (job) out.set(b.id, job);
  }
  return out;
}

/** "waiting for trigger: …" in words a person reads. */
export function waitText(job: Job): string {
  const w = job.details.waiting_for;
  const reason = job.details.reason;
  if (!w && !reason) return job.status === 'EXECUTING' ? 'moving on' : job.status.toLowerCase();
  return [w ? `waiting for ${w.replace(/_/g, ' ')}` : '', reason ?? ''].filter(Boolean).join(': ');
}
