/**
 * A network lab for the chaos suite: network namespaces on one bridge, all created by the
 * suite and removed by it (also after an interrupted run: a state file names them). The
 * bridge lives in the `client` namespace, where the suite's own process runs, so nothing is
 * added to the machine's own network: one namespace per host (etcd, node1..node3), each with
 * a veth to the bridge and an address in a private /24.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One host of the lab. */
export interface LabHost {
  /** Short name: `etcd`, `node1`... */
  readonly name: string;
  /** The namespace (`ip netns` name). */
  readonly netns: string;
  /** Its address on the bridge. */
  readonly ip: string;
}

/** Where state files of live labs are kept (a later run removes the labs of dead runs). */
const STATE_DIR = join(tmpdir(), 'warden-chaos-labs');

/** Why the lab cannot run here (not root, no `ip netns`, no iptables), or null. */
export function labUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'the chaos suite needs root (network namespaces, iptables)';
  for (const [cmd, args] of [['ip', ['netns', 'list']], ['iptables', ['--version']]] as const) {
    try {
      execFileSync(cmd, [...args], { stdio: 'ignore' });
    } catch {
      return `\`${cmd} ${args.join(' ')}\` does not work here (install iproute2 and iptables)`;
    }
  }
  return null;
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

/** True while a process with this PID exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGKILL to every process in `netns` (by PID), then deletes it; quiet when it is gone already. */
function destroyNamespace(netns: string): void {
  try {
    const pids = execFileSync('ip', ['netns', 'pids', netns], { encoding: 'utf8' }).split('\n').map(Number).filter((p) => p > 0);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no such namespace
  }
  try {
    execFileSync('ip', ['netns', 'del', netns], { stdio: 'ignore' });
  } catch {
    // no such namespace
  }
}

/** `ip netns exec <ns> cmd args` as argv (exec keeps the PID: the child's PID is the command's). */
export function inNamespace(host: LabHost, cmd: string, args: readonly string[]): [string, string[]] {
  return ['ip', ['netns', 'exec', host.netns, cmd, ...args]];
}

/** Runs a command inside a host's namespace and waits for it; its stdout. */
export async function execIn(host: LabHost, cmd: string, args: readonly string[]): Promise<string> {
  return (await run(...inNamespace(host, cmd, args))).stdout;
}

/** Drops every packet between `host` and each of `peers` (both directions), inside the host's namespace. */
export async function cutHost(host: LabHost, peers: readonly LabHost[]): Promise<void> {
  for (const p of peers) {
    await execIn(host, 'iptables', ['-A', 'INPUT', '-s', p.ip, '-j', 'DROP']);
    await execIn(host, 'iptables', ['-A', 'OUTPUT', '-d', p.ip, '-j', 'DROP']);
  }
}

/** Drops each packet between the host and its peers with `probability` (both ways): a lossy link, not a cut one. */
export async function lossyHost(host: LabHost, peers: readonly LabHost[], probability: number): Promise<void> {
  const p = String(probability);
  for (const peer of peers) {
    await execIn(host, 'iptables', ['-A', 'INPUT', '-s', peer.ip, '-m', 'statistic', '--mode', 'random', '--probability', p, '-j', 'DROP']);
    await execIn(host, 'iptables', ['-A', 'OUTPUT', '-d', peer.ip, '-m', 'statistic', '--mode', 'random', '--probability', p, '-j', 'DROP']);
  }
}

/** Removes every rule cutHost (or lossyHost) added in the host's namespace. */
export async function healHost(host: LabHost): Promise<void> {
  await execIn(host, 'iptables', ['-F', 'INPUT']);
  await execIn(host, 'iptables', ['-F', 'OUTPUT']);
}

/** A lab's record: the run that owns it and its namespaces. */
interface LabState {
  readonly owner: number;
  readonly namespaces: readonly string[];
}

/** Removes the labs whose owning run is dead (interrupted with SIGKILL, say). */
export function sweepStaleLabs(): void {
  if (!existsSync(STATE_DIR)) return;
  for (const f of readdirSync(STATE_DIR)) {
    const path = join(STATE_DIR, f);
    try {
      const s = JSON.parse(readFileSync(path, 'utf8')) as LabState;
      if (alive(s.owner)) continue;
      for (const ns of s.namespaces) destroyNamespace(ns);
    } catch {
      // unreadable: drop it
    }
    rmSync(path, { force: true });
  }
}

/** A lab of `hosts` plus the client namespace holding the bridge. */
export class Lab {
  readonly client: LabHost;
  readonly hosts: readonly LabHost[];
  private readonly statePath: string;
  private destroyed = false;

  /** `id`: 4 hex digits naming the lab's namespaces and interfaces (interface names are at most 15 characters). */
  private constructor(
    readonly id: string,
    readonly subnet: string,
    names: readonly string[],
  ) {
    this.client = { name: 'client', netns: `wc${id}-client`, ip: `${subnet}.1` };
    this.hosts = names.map((name, i) => ({ name, netns: `wc${id}-${name}`, ip: `${subnet}.${10 + i}` }));
    this.statePath = join(STATE_DIR, `${id}.json`);
  }

  /** Creates the namespaces, the bridge and the veths; every host answers on its address when this resolves. */
  static async create(names: readonly string[]): Promise<Lab> {
    sweepStaleLabs();
    const id = Math.floor(Math.random() * 0xffff).toString(16).padStart(4, '0');
    // A /24 inside 10.213.0.0/16, chosen by the id: two labs at once do not share one.
    const lab = new Lab(id, `10.213.${parseInt(id, 16) % 250}`, names);
    mkdirSync(STATE_DIR, { recursive: true });
    writeFileSync(lab.statePath, JSON.stringify({ owner: process.pid, namespaces: lab.all.map((h) => h.netns) } satisfies LabState));
    try {
      await lab.build();
    } catch (e) {
      lab.destroy();
      throw e;
    }
    return lab;
  }

  /** The client and every host. */
  get all(): readonly LabHost[] {
    return [this.client, ...this.hosts];
  }

  host(name: string): LabHost {
    const h = this.hosts.find((x) => x.name === name);
    if (!h) throw new Error(`no lab host ${name}`);
    return h;
  }

  private async build(): Promise<void> {
    const br = `wc${this.id}br`;
    for (const h of this.all) {
      await ip('netns', 'add', h.netns);
      await ip('-n', h.netns, 'link', 'set', 'lo', 'up');
    }
    await ip('-n', this.client.netns, 'link', 'add', br, 'type', 'bridge');
    await ip('-n', this.client.netns, 'addr', 'add', `${this.client.ip}/24`, 'dev', br);
    await ip('-n', this.client.netns, 'link', 'set', br, 'up');
    for (const [i, h] of this.hosts.entries()) {
      const outer = `wc${this.id}v${i}`;
      // Created in the client namespace; one end moves into the host's and is named eth0 there.
      await ip('-n', this.client.netns, 'link', 'add', outer, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', h.netns);
      await ip('-n', this.client.netns, 'link', 'set', outer, 'master', br);
      await ip('-n', this.client.netns, 'link', 'set', outer, 'up');
      await ip('-n', h.netns, 'addr', 'add', `${h.ip}/24`, 'dev', 'eth0');
      await ip('-n', h.netns, 'link', 'set', 'eth0', 'up');
    }
  }

  /** Kills what still runs in the namespaces (by PID) and deletes them; idempotent. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const h of this.all) destroyNamespace(h.netns);
    rmSync(this.statePath, { force: true });
  }
}
