/**
 * The brain's own jobs carried out (when each runs is policy/control.ts): PAUSE and RESUME set
 * the pause flag and tell every level's motion, CHANGE_RFID_WRITING_MODE sets its flag,
 * ONBOARDING_BD puts its bot on its level in the bot table, OFFBOARDING_BC parks its bot,
 * CONNECT_TO_BOTS and REFRESH_LEVEL refresh the level's motion, UNCHARGE_ALL takes every bot
 * off its charger. What the store keeps changes in the write that ends the job; the motion
 * follows once that write is durable.
 */
import type { Bots } from '../../domain/bots/bots.js';
import type { OpenWork } from '../../domain/requests/open-work.js';
import type { JobRecord } from '../../domain/requests/records.js';
import type { Requests } from '../../domain/requests/requests.js';
import type { Site } from '../../domain/site/load.js';
import type { StorageStatus } from '../../domain/system/control.js';
import type { SystemFlags } from '../../domain/system/flags.js';
import type { BotsOnLevels } from './bots-on-levels.js';
import type { LevelMotion } from './motion/motion.js';
import { controlStep, isControlJob } from './policy/control.js';

export interface ControlJobsDeps {
  site: Site;
  requests: Requests;
  work: OpenWork;
  bots: Bots;
  flags: SystemFlags;
  botsOnLevels: BotsOnLevels;
  motion: ReadonlyMap<number, LevelMotion>;
  now: () => number;
  /** Sets the storage status (PAUSE and RESUME change it at once). */
  setStatus: (status: StorageStatus, why: string) => Promise<void>;
}

export class ControlJobs {
  constructor(private readonly deps: ControlJobsDeps) {}

  /** Runs the brain's ready jobs that may run now; the others say what they wait for. */
  async run(): Promise<void> {
    for (const level of [0, ...this.deps.site.levels.map((l) => l.id)]) {
      for (const job of this.deps.work.jobsOn(level)) {
        // The facts below cost a list of bots each: gathered for the brain's own jobs only.
        if (job.status !== 'ACCEPTED' || !isControlJob(job)) continue;
        const step = controlStep(job, {
          now: this.deps.now(), bots: job.level_id === null ? [] : this.deps.motion.get(job.level_id)?.bots() ?? [],
          botsOnLevel: this.deps.botsOnLevels.on(job.level_id),
        });
        if (step.kind === 'not_mine') continue;
        if (step.kind === 'wait') await this.deps.requests.write(() => this.deps.requests.explain(job, step.wait));
        else await this.execute(job, step.note);
      }
    }
  }

  private async execute(job: JobRecord, note: string | undefined): Promise<void> {
    const motion = job.level_id === null ? undefined : this.deps.motion.get(job.level_id);
    await this.deps.requests.write(() => {
      const current = this.deps.requests.findJob(job.id);
      if (!current || current.status !== 'ACCEPTED') return;
      const running = this.deps.requests.moveJob(current, 'EXECUTING', { wait: null });
      switch (job.type) {
        case 'PAUSE':
        case 'RESUME':
          this.deps.flags.setInWrite('paused', job.type === 'PAUSE');
          break;
        case 'CHANGE_RFID_WRITING_MODE':
          this.deps.flags.setInWrite('rfid_writing_mode', job.progress.kind === 'writing_mode' && job.progress.writing_mode);
          break;
        case 'ONBOARDING_BD':
          this.deps.bots.onboardInWrite(job.bot_id!, job.level_id!, job.request_id);
          break;
      }
      this.deps.requests.moveJob(running, 'SUCCEEDED', note ? { ended_because: note } : {}, note);
      this.deps.requests.settle(job.request_id);
    });
    switch (job.type) {
      case 'PAUSE':
      case 'RESUME': {
        const paused = job.type === 'PAUSE';
        for (const m of this.deps.motion.values()) m.setPaused(paused);
        await this.deps.setStatus(paused ? 'PAUSED' : 'RUNNING', paused ? 'paused: bots get no new commands' : 'resumed');
        break;
      }
      case 'OFFBOARDING_BC':
        motion?.park(job.bot_id!);
        break;
      case 'CONNECT_TO_BOTS':
      case 'REFRESH_LEVEL':
        motion?.refresh();
        break;
      case 'UNCHARGE_ALL':
        for (const m of this.deps.motion.values()) for (const b of m.bots()) if (b.charging) await m.stopCharging(b.id);
        break;
    }
  }
}
