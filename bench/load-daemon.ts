/**
 * The daemon that the load benchmarks measure: dist/main.js as `npm start` runs it, a child
 * process on a state directory of the bench's own, and the SKUs added to its store while it is
 * stopped. Shared by `bench:load` and `bench:load-autocannon`, so both load the same daemon.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORDS } from './mix-kinds.js';
import { daemonNodeFlags } from './daemon-flags.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Milliseconds of a clock tick, the unit of /proc's CPU times. */
export const TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100);

export interface Daemon {
  child: ChildProcess;
  port: number;
  /** The daemon's self-signed certificate, for a client that checks it. */
  ca: Buffer;
  /** The bootstrap admin's API key. */
  key: string;
}

export interface DaemonOptions {
  stateDir: string;
  /** WAREHOUSE_LINKS: `on` runs the demo site's simulated levels over their links. */
  links: string;
  /** Extra node flags (a CPU profile, say). */
  flags?: readonly string[];
  /** The daemon's lines that are not its log's JSON (what --trace-gc prints). */
  onOtherLine?: (line: string) => void;
  /** More settings (a box of a replicated pair: its WAREHOUSE_REPLICATION_* variables). */
  env?: Record<string, string>;
}

/** Starts dist/main.js on `stateDir`; resolves once it listens. */
export async function startDaemon(o: DaemonOptions): Promise<Daemon> {
  // The test runner's own variables (WAREHOUSE_TEST_DIST, when the suite runs a bench) are not the
  // daemon's, which refuses a WAREHOUSE_* name it does not know.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('WAREHOUSE_TEST_')));
  const child = spawn(process.execPath, [...daemonNodeFlags(), ...(o.flags ?? []), path.join(ROOT, 'dist/main.js')], {
    cwd: ROOT,
    env: { ...inherited, WAREHOUSE_STATE_DIR: o.stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: o.links, WAREHOUSE_LOG_LEVEL: 'info', ...o.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      rest += chunk.toString();
      let nl: number;
      while ((nl = rest.indexOf('\n')) !== -1) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        try {
          const rec = JSON.parse(line) as { msg?: string; port?: number };
          if (rec.msg === 'HTTPS API listening') resolve(Number(rec.port));
        } catch {
          o.onOtherLine?.(line);
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code} before listening`)));
  });
  const key = (JSON.parse(readFileSync(path.join(o.stateDir, 'bootstrap-admin.json'), 'utf8')) as { api_key: string }).api_key;
  return { child, port, ca: readFileSync(path.join(o.stateDir, 'tls/self-signed-cert.pem')), key };
}

/** SIGTERM, and waits for the exit. */
export async function stopDaemon(d: Daemon): Promise<void> {
  const exited = new Promise((resolve) => d.child.once('exit', resolve));
  d.child.kill('SIGTERM');
  await exited;
}

/** Adds SKUs straight into the stopped daemon's store, up to `total` with the demo's own. */
export async function seedSkus(stateDir: string, total: number): Promise<void> {
  const { Store } = await import('../src/store/store.js');
  const { MIGRATIONS } = await import('../src/store/migrations.js');
  const { skus } = await import('../src/domain/inventory/records.js');
  const store = await Store.open({ dir: path.join(stateDir, 'db') }, [skus as never], MIGRATIONS);
  const have = store.collection(skus).count();
  const now = Date.now();
  await store.write(() => {
    for (let n = have + 1; n <= total; n++) {
      store.collection(skus).put({
        id: `BENCH-${String(n).padStart(6, '0')}`, name: `Bench ${WORDS[n % WORDS.length]} part ${n}`, measurement_unit: 'PIECE', on_empty_sku_action: 'UNASSIGN',
        allowed_box_size_capacities: null, balcony_ids: null, image: null, total_quantity: 0, max_quantity: 0, total_positive_inventory_bookings: 0,
        total_negative_inventory_bookings: 0, reserved_out: 0, reserved_in: 0, load_count: 0, sections: 0, created_at: now, updated_at: now, deleted_at: null,
      });
    }
  });
  console.log(`seeded ${Math.max(0, total - have)} SKUs (${store.collection(skus).count()} in all)`);
  await store.close();
}

/**
 * CPU milliseconds every thread of a process has used (utime + stime), or with `main` its main
 * thread alone (the JS event loop that serves the API; its task id is the pid); with `kernel`,
 * the stime alone (commits' page faults and fsync calls).
 */
export function cpuMs(pid: number, main = false, kernel = false): number {
  const stat = readFileSync(main ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((kernel ? 0 : Number(fields[11])) + Number(fields[12])) * TICK_MS;
}
