import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Hosts on this machine: one network namespace each (`ip netns`), joined by a bridge that lives in a
 * namespace of its own (a switch), so that the machine's firewall (Docker's FORWARD policy with
 * br_netfilter, say) never sees the traffic between them. The test runner stays in the root
 * namespace and reaches the switch by one more link, as the `.1` of the subnet. No namespace gets a
 * default route, there is no NAT and nothing forwards: nothing inside can reach past the machine.
 *
 * Names carry the creating process's pid (`fleet43-<pid>-…`), so that a run killed before its
 * teardown leaves namespaces the next run recognises and deletes (their pid is no longer alive).
 */
const PREFIX = 'fleet43';
/** The switch's end of each host's link, as named inside the switch namespace. */
const switchPort = (host: string) => `p-${host}`.slice(0, 15);
/** The runner's end of its link, in the root namespace: interface names are 15 bytes at most. */
const runnerLink = (pid: number) => `f43-${pid}`;

export interface HostSpec {
  readonly name: string;
  /** The last octet of its address in the subnet (2–254; 1 is the runner). */
  readonly octet: number;
}

export interface Host {
  readonly name: string;
  readonly namespace: string;
  readonly address: string;
  /** The command that runs a program in this host (it execs the program, so signals reach it). */
  readonly launcher: readonly string[];
}

export class HostNetwork {
  private constructor(
    private readonly pid: number,
    /** `10.43.N` */
    readonly subnet: string,
    readonly runnerAddress: string,
    private readonly hosts: ReadonlyMap<string, Host>,
  ) {}

  /**
   * Builds the hosts, first deleting whatever an earlier run of this test left behind. Fails with
   * the reason when this machine cannot (not root, no `ip`, no namespaces).
   */
  static async build(specs: readonly HostSpec[]): Promise<HostNetwork> {
    await requireNamespaces();
    await removeStaleHosts();
    const pid = process.pid;
    const subnet = await freeSubnet();
    const switchNs = namespaceName(pid, 'switch');
    const hosts = new Map(specs.map((spec) => [spec.name, { name: spec.name, namespace: namespaceName(pid, spec.name), address: `${subnet}.${spec.octet}`, launcher: ['nsenter', `--net=/run/netns/${namespaceName(pid, spec.name)}`, '--'] }]));
    const network = new HostNetwork(pid, subnet, `${subnet}.1`, hosts);
    try {
      await ip('netns', 'add', switchNs);
      await ip('-n', switchNs, 'link', 'add', 'br0', 'type', 'bridge');
      await ip('-n', switchNs, 'link', 'set', 'br0', 'up');
      await ip('-n', switchNs, 'link', 'set', 'lo', 'up');
      // The runner's link: its root-namespace end holds the subnet's .1.
      await ip('link', 'add', runnerLink(pid), 'type', 'veth', 'peer', 'name', 'p-runner', 'netns', switchNs);
      await network.plug('p-runner');
      await ip('addr', 'add', `${network.runnerAddress}/24`, 'dev', runnerLink(pid));
      await ip('link', 'set', runnerLink(pid), 'up');
      for (const host of hosts.values()) {
        await ip('netns', 'add', host.namespace);
        await ip('-n', host.namespace, 'link', 'set', 'lo', 'up');
        await ip('-n', switchNs, 'link', 'add', switchPort(host.name), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.namespace);
        await network.plug(switchPort(host.name));
        await ip('-n', host.namespace, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0');
        await ip('-n', host.namespace, 'link', 'set', 'eth0', 'up');
      }
    } catch (err) {
      await network.destroy();
      throw err;
    }
    return network;
  }

  host(name: string): Host {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name}`);
    return host;
  }

  /** Cuts a host off the network: its link to the switch goes down, and every packet to or from it is lost. */
  async cut(name: string): Promise<void> {
    await ip('-n', this.switchNamespace, 'link', 'set', switchPort(this.host(name).name), 'down');
  }

  async restore(name: string): Promise<void> {
    await ip('-n', this.switchNamespace, 'link', 'set', switchPort(this.host(name).name), 'up');
  }

  /**
   * A host's ways out: its routes as `ip route` prints them, what the kernel says of an address
   * outside the machine, and whether it forwards packets (a router would be a way out for the others).
   */
  async exits(name: string): Promise<{ routes: string[]; outside: string; forwarding: string }> {
    const { namespace } = this.host(name);
    const routes = (await ip('-n', namespace, 'route', 'show', 'table', 'all')).split('\n').map((line) => line.trim()).filter((line) => line !== '' && !/^(local|broadcast|multicast|fe80|ff00|::1|anycast)\b/.test(line));
    const outside = await ip('-n', namespace, 'route', 'get', '1.1.1.1').then(
      (route) => `routed: ${route.trim()}`,
      (err: Error) => err.message,
    );
    // /proc/sys/net shows the namespace of the process that reads it.
    const forwarding = (await run('nsenter', [`--net=/run/netns/${namespace}`, '--', 'cat', '/proc/sys/net/ipv4/ip_forward'])).stdout.trim();
    return { routes, outside, forwarding };
  }

  /** Deletes every namespace of this run; the links inside go with them, the runner's included. */
  async destroy(): Promise<void> {
    await removeHostsOf(this.pid);
  }

  private get switchNamespace(): string {
    return namespaceName(this.pid, 'switch');
  }

  private async plug(port: string): Promise<void> {
    await ip('-n', this.switchNamespace, 'link', 'set', port, 'master', 'br0');
    await ip('-n', this.switchNamespace, 'link', 'set', port, 'up');
  }
}

function namespaceName(pid: number, host: string): string {
  return `${PREFIX}-${pid}-${host}`;
}

async function ip(...args: string[]): Promise<string> {
  try {
    return (await run('ip', args)).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`ip ${args.join(' ')}: ${(e.stderr ?? e.message).trim()}`);
  }
}

/** Why this machine cannot build the hosts, as an error; nothing when it can. */
async function requireNamespaces(): Promise<void> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) throw new Error('the multi-host test builds network namespaces and needs root (CI runs as root)');
  for (const program of ['ip', 'nsenter']) {
    await run(program, ['-V']).catch((err: Error) => {
      throw new Error(`the multi-host test needs \`${program}\` (Debian: iproute2, util-linux): ${err.message}`);
    });
  }
}

/** The namespaces of runs whose process is gone (killed before its teardown). */
async function removeStaleHosts(): Promise<void> {
  const owners = new Set((await listNamespaces()).map((name) => ownerPid(name)).filter((pid): pid is number => pid !== null));
  for (const pid of owners) if (!processAlive(pid)) await removeHostsOf(pid);
}

async function removeHostsOf(pid: number): Promise<void> {
  for (const name of await listNamespaces()) if (ownerPid(name) === pid) await ip('netns', 'delete', name).catch(() => undefined);
  // The runner's link goes with its peer in the switch namespace; this is for a run stopped between the two.
  await ip('link', 'delete', runnerLink(pid)).catch(() => undefined);
}

async function listNamespaces(): Promise<string[]> {
  return (await ip('netns', 'list')).split('\n').map((line) => line.split(' ')[0]!).filter((name) => name.startsWith(`${PREFIX}-`));
}

function ownerPid(namespace: string): number | null {
  const match = new RegExp(`^${PREFIX}-(\\d+)-`).exec(namespace);
  return match ? Number(match[1]) : null;
}

function processAlive(pid: number): boolean {
  return fs.existsSync(`/proc/${pid}`);
}

/** The first 10.43.N.0/24 (N from 0) that the root namespace does not route yet: two runs at once get different subnets. */
async function freeSubnet(): Promise<string> {
  const routed = await ip('-4', 'route', 'show', 'table', 'all');
  for (let n = 0; n < 256; n++) if (!routed.includes(`10.43.${n}.`)) return `10.43.${n}`;
  throw new Error('every 10.43.N.0/24 subnet is routed on this machine');
}
