/**
 * `warehouse-controller switchover [--to NAME]`: the planned handover of a replicated pair's
 * lead, for maintenance of the active box. Refused unless the standby holds the whole log, so
 * the handover loses nothing: the active box stops acknowledging writes as it gives up the
 * lead (a write in flight is answered 503 and retried by its client), the standby applies the
 * last entries and takes over. Runs from either box, or anywhere that reaches etcd.
 */
import type { Config } from '../config/config.js';
import { ReplicatedLog } from '../replication/log.js';
import { CliError, EXIT } from './exit.js';

/** How long the handover reserves the lead for the target, and how long this command waits for it. */
const HANDOVER_SECONDS = 30;

/** Hands the lead to the standby (or `to`); resolves once it leads. */
export async function switchover(config: Config, to: string | undefined): Promise<{ from: string; to: string; term: number; ms: number }> {
  if (!config.replication_endpoints) throw new CliError('this box is not one of a replicated pair (WAREHOUSE_REPLICATION_ENDPOINTS is not set)', EXIT.config);
  const log = new ReplicatedLog(config.replication_endpoints.split(','), config.replication_pair);
  try {
    const leader = await log.leader();
    if (!leader) throw new CliError('no box leads the pair now: nothing to hand over', EXIT.failure);
    const members = await log.members();
    const target = members.find((m) => (to === undefined ? m.name !== leader.name : m.name === to));
    if (!target) throw new CliError(to === undefined ? 'no standby box follows the log: a switchover would stop the site' : `box ${to} is not following the log`, EXIT.failure);
    if (target.name === leader.name) throw new CliError(`${target.name} leads already`, EXIT.usage);
    const head = await log.head();
    // The standby announces where it is every second: give it a few to catch up.
    const began = Date.now();
    for (let fresh = target; ; ) {
      if (head !== undefined && fresh.seq >= head - 100) break;
      if (Date.now() - began > 10_000) throw new CliError(`${fresh.name} is ${head! - fresh.seq} entries behind the log: wait until it catches up`, EXIT.tempFail);
      await new Promise((resolve) => setTimeout(resolve, 500));
      fresh = (await log.members()).find((m) => m.name === target.name) ?? fresh;
    }
    if (!(await log.switchover(leader.term, target.name, HANDOVER_SECONDS))) throw new CliError(`the lead changed meanwhile (it is no longer ${leader.name}'s term ${leader.term})`, EXIT.tempFail);
    for (;;) {
      const now = await log.leader().catch(() => undefined);
      if (now?.name === target.name) return { from: leader.name, to: target.name, term: now.term, ms: Date.now() - began };
      if (Date.now() - began > HANDOVER_SECONDS * 1000) throw new CliError(`${target.name} did not take the lead within ${HANDOVER_SECONDS} s; the pair elects whichever box is ready`, EXIT.tempFail);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    log.close();
  }
}
