/**
 * A test network of hosts on one machine: each host a network namespace with a veth pair to a
 * bridge in the root namespace, on a private /24 of its own, so processes started on a host
 * reach the others by address and the test process reaches them all. A host can be cut off
 * (its link down) and given back. Names carry this process's id, so parallel test files never
 * share one; what a crashed run left behind under this prefix is removed before a new network.
 * Needs root and iproute2 (CI runs as root).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';

/** Why this machine cannot make a test network, or undefined when it can. */
export function netnsAvailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  const ip = spawnSync('ip', ['netns', 'list']);
  if (ip.error || ip.status !== 0) return `ip netns does not work here: ${ip.error?.message ?? ip.stderr.toString()}`;
  return undefined;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const tryIp = (...args: string[]) => spawnSync('ip', args, { stdio: 'ignore' });

/** The hosts of one test network. */
export class Network {
  private readonly children: ChildProcess[] = [];
  private destroyed = false;

  private constructor(
    private readonly prefix: string,
    private readonly subnet: string,
    private readonly hosts: readonly string[],
  ) {}

  /** Makes a network with these hosts (names of up to 5 characters). */
  static async create(hosts: readonly string[]): Promise<Network> {
    // Interface names are at most 15 characters: "wn<pid % 1e5>" + "v" + host.
    const id = process.pid % 100000;
    const prefix = `wn${id}`;
    // 10.<200-249>.<0-255>.0/24 from the id: two live test files rarely meet, and a meeting is found at once (the address is taken).
    const subnet = `10.${200 + (Math.floor(id / 256) % 50)}.${id % 256}`;
    const net = new Network(prefix, subnet, hosts);
    net.removeLeftovers();
    ip('link', 'add', `${prefix}br`, 'type', 'bridge');
    ip('addr', 'add', `${subnet}.254/24`, 'dev', `${prefix}br`);
    ip('link', 'set', `${prefix}br`, 'up');
    hosts.forEach((host, i) => {
      const ns = net.ns(host);
      ip('netns', 'add', ns);
      ip('link', 'add', net.outside(host), 'type', 'veth', 'peer', 'name', net.inside(host));
      ip('link', 'set', net.inside(host), 'netns', ns);
      ip('link', 'set', net.outside(host), 'master', `${prefix}br`);
      ip('link', 'set', net.outside(host), 'up');
      ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
      ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${subnet}.${i + 1}/24`, 'dev', net.inside(host));
      ip('netns', 'exec', ns, 'ip', 'link', 'set', net.inside(host), 'up');
    });
    return net;
  }

  /** The host's address. */
  ip(host: string): string {
    const i = this.hosts.indexOf(host);
    if (i < 0) throw new Error(`no host ${host} in this network`);
    return `${this.subnet}.${i + 1}`;
  }

  /** Starts a process on the host; it is killed when the network is destroyed. */
  spawn(host: string, command: string, args: string[], env: Record<string, string> = {}): ChildProcess {
    // `ip netns exec` enters the namespace and execs the command: the child's pid is the command's.
    const child = spawn('ip', ['netns', 'exec', this.ns(host), command, ...args], {
      env: Object.keys(env).length > 0 ? env : process.env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.push(child);
    return child;
  }

  /** Cuts the host off from every other host (its link down, as a pulled cable). */
  async cut(host: string): Promise<void> {
    ip('link', 'set', this.outside(host), 'down');
  }

  /** Gives the host its link back. */
  async restore(host: string): Promise<void> {
    ip('link', 'set', this.outside(host), 'up');
  }

  /** Kills every process started on the network, and removes its namespaces and links. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all(this.children.map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    })));
    this.removeLeftovers();
  }

  private ns(host: string): string {
    return `${this.prefix}-${host}`;
  }

  private outside(host: string): string {
    return `${this.prefix}v${host}`;
  }

  private inside(host: string): string {
    return `${this.prefix}i${host}`;
  }

  /** Removes this prefix's namespaces and links, a crashed run's included. */
  private removeLeftovers(): void {
    const names = spawnSync('ip', ['netns', 'list']).stdout.toString().split('\n').map((l) => l.split(' ')[0]!).filter((n) => n.startsWith(`${this.prefix}-`));
    for (const ns of names) tryIp('netns', 'del', ns);
    for (const host of this.hosts) tryIp('link', 'del', this.outside(host));
    tryIp('link', 'del', `${this.prefix}br`);
  }
}
