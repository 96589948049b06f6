/**
 * The simulator process: `node dist/sim/main.js --options='{"site":"demo"}'`, normally started
 * by the daemon through process.ts with an IPC channel. It opens one pseudo-terminal per
 * simulated level, tells its parent the device paths ("ready"), and runs until asked to stop,
 * signalled, or orphaned (a simulator without its daemon would hold ptys for nobody).
 *
 * Run by hand (no IPC channel) it prints the ready message as one JSON line on stdout, so a
 * developer can point a serial tool or a second daemon at the paths. Logs go to stderr. Given
 * a layout file whose levels say `tcp://host:port`, it stands in for the device servers of those
 * levels: it listens on each one's port (on `bind`, default 0.0.0.0) and the controllers, a
 * pair's two boxes among them, connect to it with that same layout file.
 */
import { pino } from 'pino';
import { knobsFromEnv } from './knobs.js';
import { OPTIONS_FLAG, type SimRequest, type ToChild, type ToParent } from './ipc.js';
import type { LevelSnapshot } from './gateway.js';
import { Simulator, type SimulatorOptions } from './simulator.js';

const log = pino({ base: { service: 'warehouse-sim' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 2, sync: true }));

function send(message: ToParent, then?: () => void): void {
  if (process.send) process.send(message, undefined, {}, () => then?.());
  else process.stdout.write(`${JSON.stringify(message)}\n`, () => then?.());
}

function readOptions(): SimulatorOptions {
  const arg = process.argv.slice(2).find((a) => a.startsWith(OPTIONS_FLAG));
  const given = arg ? (JSON.parse(arg.slice(OPTIONS_FLAG.length)) as SimulatorOptions) : { site: 'demo' };
  const seed = process.env.WAREHOUSE_SIM_SEED;
  return {
    ...given,
    seed: given.seed ?? (seed ? Number(seed) : undefined),
    knobs: { ...knobsFromEnv(process.env), ...given.knobs },
  };
}

let sim: Simulator | undefined;

function shutdown(code: number): void {
  sim?.close();
  sim = undefined;
  process.exit(code);
}

async function handle(sim: Simulator, r: SimRequest): Promise<{ result?: LevelSnapshot[]; carrier_id?: string }> {
  switch (r.op) {
    case 'knobs':
      sim.setKnobs(r.knobs, r.level_id);
      log.info({ knobs: r.knobs, level_id: r.level_id }, 'knobs changed');
      return {};
    case 'fault':
      sim.injectFault(r.level_id, r.bot, r.code, r.detail, r.clear_after_ms);
      log.info({ level_id: r.level_id, bot: r.bot, code: r.code }, 'fault injected');
      return {};
    case 'snapshot':
      return { result: sim.snapshot() };
    case 'unplug': {
      log.info({ level_id: r.level_id, down_ms: r.down_ms }, 'gateway unplugged');
      const path = await sim.unplug(r.level_id, r.down_ms);
      log.info({ level_id: r.level_id, path }, 'gateway plugged in again');
      return { result: sim.snapshot().filter((l) => l.level_id === r.level_id) };
    }
    case 'place_carrier':
      sim.placeCarrier(r.level_id, r.carrier_id, r.x, r.y);
      log.info({ level_id: r.level_id, carrier_id: r.carrier_id, x: r.x, y: r.y }, 'carrier placed by hand');
      return {};
    case 'remove_carrier': {
      const carrier = sim.removeCarrier(r.level_id, r.x, r.y);
      log.info({ level_id: r.level_id, carrier_id: carrier, x: r.x, y: r.y }, 'carrier removed by hand');
      return { carrier_id: carrier };
    }
    case 'take_bot':
      sim.takeBot(r.level_id, r.bot_id);
      log.info({ level_id: r.level_id, bot_id: r.bot_id }, 'bot taken off by hand');
      return {};
    case 'put_bot':
      sim.putBot(r.level_id, r.bot_id, r.x, r.y, r.heading, r.battery_permille);
      log.info({ level_id: r.level_id, bot_id: r.bot_id, x: r.x, y: r.y, heading: r.heading }, 'bot put on by hand');
      return {};
    case 'stop':
      return {}; // the message handler exits once this reply is out
  }
}

try {
  const options = readOptions();
  sim = new Simulator(options, (levelId) => ({
    connected: (remote, replaced) => log.info({ level_id: levelId, remote, replaced }, replaced ? 'controller connected; the older connection is closed' : 'controller connected'),
    disconnected: (remote) => log.info({ level_id: levelId, remote }, 'controller disconnected'),
    failed: (err) => log.error({ level_id: levelId, err: err.message }, 'the level\'s TCP port cannot listen'),
  }));
  // Ready only once every TCP port listens: a controller told "ready" may connect at once.
  await sim.ready();
  const devices = sim.devices();
  log.info({ site: options.site, seed: sim.seed, levels: devices }, 'simulator ready');
  send({ type: 'ready', seed: sim.seed, levels: devices });
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  log.error({ err: message }, 'simulator failed to start');
  // Exit only once the parent has the reason: exiting at once could lose the message.
  send({ type: 'failed', error: message }, () => shutdown(1));
}

process.on('message', (raw: ToChild) => {
  if (raw?.type !== 'request' || !sim) return;
  handle(sim, raw.request).then(
    (answer) => {
      const stop = raw.request.op === 'stop';
      send({ type: 'reply', id: raw.id, ok: true, ...answer }, stop ? () => shutdown(0) : undefined);
    },
    (err: unknown) => send({ type: 'reply', id: raw.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => {
  log.info('parent gone; stopping');
  shutdown(0);
});
// Under the daemon, a signal to the whole group (Ctrl-C, systemd's stop) must not close the
// lines before the daemon has closed its end: the daemon stops us over IPC, or we stop when it
// is gone. Run alone, the signals stop us.
const signalled = () => {
  if (!process.connected) shutdown(0);
};
process.on('SIGTERM', signalled);
process.on('SIGINT', signalled);
