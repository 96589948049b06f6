/**
 * An etcd cluster of one member per host of a test network (Debian's etcd-server), with the
 * short heartbeat and election a LAN allows, as docs/high-availability.md installs it. A member
 * can be killed and started again on its data.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import type { Network } from './netns.js';
import { until } from './until.js';

export interface EtcdCluster {
  /** Client URLs of every member. */
  endpoints: string[];
  /** Kills the member on `host` (SIGKILL). */
  kill(host: string): Promise<void>;
  /** Starts the member on `host` again on its data. */
  restart(host: string): Promise<void>;
}

/** Starts the members and resolves once the cluster takes a write. */
export async function startEtcdCluster(net: Network, hosts: readonly string[], dataDir: string): Promise<EtcdCluster> {
  const peers = hosts.map((h) => `${h}=http://${net.ip(h)}:2380`).join(',');
  const members = new Map<string, ChildProcess>();
  const logs = new Map<string, string>();
  const start = (host: string, state: 'new' | 'existing') => {
    const dir = path.join(dataDir, host);
    mkdirSync(dir, { recursive: true });
    const address = net.ip(host);
    const child = net.spawn(host, 'etcd', [
      '--name', host, '--data-dir', dir,
      '--listen-client-urls', `http://${address}:2379`, '--advertise-client-urls', `http://${address}:2379`,
      '--listen-peer-urls', `http://${address}:2380`, '--initial-advertise-peer-urls', `http://${address}:2380`,
      '--initial-cluster', peers, '--initial-cluster-state', state, '--initial-cluster-token', path.basename(dataDir),
      '--heartbeat-interval', '100', '--election-timeout', '1000', '--pre-vote',
    ], { PATH: process.env.PATH ?? '', ETCD_UNSUPPORTED_ARCH: process.env.ETCD_UNSUPPORTED_ARCH ?? '' });
    let log = '';
    child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
    logs.set(host, '');
    child.once('exit', () => logs.set(host, log));
    members.set(host, child);
  };
  for (const host of hosts) start(host, 'new');
  const endpoints = hosts.map((h) => `http://${net.ip(h)}:2379`);
  const client = new Etcd3({ hosts: endpoints, dialTimeout: 1000 });
  try {
    await until('the etcd cluster to take a write', async () => {
      try {
        await client.put('/test/ready').value('1').exec();
        return true;
      } catch {
        return false;
      }
    }, 60_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${[...logs].map(([h, l]) => `${h}: ${l}`).join('\n')}`);
  } finally {
    client.close();
  }
  return {
    endpoints,
    async kill(host) {
      const child = members.get(host)!;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await ended;
    },
    async restart(host) {
      start(host, 'existing');
    },
  };
}
