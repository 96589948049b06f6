/**
 * The brain's figures for /metrics, gathered in its thread and posted to the main thread every
 * few seconds (and when it is ready), so that a scrape reads the latest copy there and never
 * waits on, or holds up, a dispatch pass.
 */
import type { CommitFigures } from '../../domain/figures/commits.js';
import type { Buckets } from '../../domain/figures/buckets.js';
import type { OpenWork } from '../../domain/requests/open-work.js';
import type { WaitingFor } from '../../domain/requests/records.js';
import type { JobStatus, JobType } from '../../domain/requests/vocabulary.js';
import type { LevelPlannerStats } from '../../native/planner.js';
import type { BrainFigures, PlannerFigures } from '../messages.js';

/** How often the brain's thread posts its figures: Prometheus scrapes every 15 to 60 s. */
export const BRAIN_FIGURES_MS = 5000;

export interface FigureSources {
  passes: Buckets;
  commits: CommitFigures;
  work: OpenWork;
  /** Each level planner's stats, by level. */
  planners: () => Iterable<[levelId: number, stats: LevelPlannerStats]>;
}

/** The figures as of now. */
export function brainFigures(s: FigureSources): BrainFigures {
  const jobs = new Map<string, { type: JobType; status: JobStatus; count: number }>();
  const waiting = new Map<WaitingFor, number>();
  for (const job of s.work.allJobs()) {
    const key = `${job.type} ${job.status}`;
    const entry = jobs.get(key);
    if (entry) entry.count++;
    else jobs.set(key, { type: job.type, status: job.status, count: 1 });
    if (job.wait) waiting.set(job.wait.waiting_for, (waiting.get(job.wait.waiting_for) ?? 0) + 1);
  }
  const planners: PlannerFigures[] = [];
  for (const [levelId, p] of s.planners()) {
    planners.push({
      level_id: levelId, steps: p.steps, step_ms: { p50: p.stepMs.p50, p99: p.stepMs.p99, max: p.stepMs.max },
      stalls: p.stalls.detected, escapes: p.escapes.planned, over_budget: p.overBudget,
    });
  }
  return {
    pass_seconds: s.passes.copy(), commit_seconds: s.commits.seconds.copy(), commit_writes: s.commits.writes.copy(), slow_commits: s.commits.slow,
    jobs: [...jobs.values()], waiting: [...waiting].map(([reason, count]) => ({ reason, count })), planners,
  };
}
