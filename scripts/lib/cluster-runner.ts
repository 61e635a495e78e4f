import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { etcdMembers, fencerSocketPath, nodeConfigPath, nodeHost, nodeYaml, type ClusterLayout, type EtcdMemberLayout, type NodeLayout } from './cluster-layout.js';
import { isAlive, spawnDetached, stopPid, waitFor } from './processes.js';
import { launcherNodeFlags } from '../../src/app/agent/launcher-flags.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** The etcd server the clusters run on (`ETCD_BIN`, e.g. another release from scripts/fetch-etcd.sh; default `etcd` on PATH). */
const ETCD_BIN = process.env['ETCD_BIN'] || 'etcd';

/**
 * The V8 flags of bin/warden.js's shebang (`#!/usr/bin/env -S node <flags>`), which
 * `node bin/warden.js` would skip (docs/performance.md): read from the launcher, so agents the
 * runner starts always run with the flags an installed agent runs with.
 */
export const AGENT_NODE_FLAGS: readonly string[] = launcherNodeFlags(join(repoRoot, 'bin/warden.js'));

/** PIDs of what the runner started, kept in `<dir>/state.json` so `down` stops exactly those. */
interface RunnerState {
  /** etcd members by name. */
  etcd: Record<string, number>;
  agents: Record<string, number>;
}

/** A member row of GET /cluster, as far as the runner reads it. */
export interface ClusterMemberRow {
  readonly name: string;
  readonly role: string;
  readonly state: string;
  readonly lag?: number | string;
  readonly replication_state?: string;
  readonly [k: string]: unknown;
}

/** Starts, stops and inspects one local cluster (one etcd, one agent per node). */
export class ClusterRunner {
  /** `agentLauncher`: the `warden` launcher to run (default the checkout's bin/warden.js; benchmarks pass a compiled copy's). */
  constructor(
    readonly layout: ClusterLayout,
    private readonly agentLauncher: string = join(repoRoot, 'bin/warden.js'),
  ) {}

  private get statePath(): string {
    return join(this.layout.dir, 'state.json');
  }

  private readState(): RunnerState {
    if (!existsSync(this.statePath)) return { etcd: {}, agents: {} };
    const s = JSON.parse(readFileSync(this.statePath, 'utf8')) as Partial<RunnerState>;
    return { etcd: typeof s.etcd === 'object' && s.etcd !== null ? s.etcd : {}, agents: s.agents ?? {} };
  }

  private writeState(s: RunnerState): void {
    writeFileSync(this.statePath, JSON.stringify(s, null, 2));
  }

  /** The agents' URLs by name. */
  apiUrl(name: string): string {
    const n = this.node(name);
    return `http://${nodeHost(n)}:${n.apiPort}`;
  }

  /** `cmd args`, run inside `netns` when one is given (`ip netns exec` keeps the PID). */
  private static inNetns(netns: string | undefined, cmd: string, args: readonly string[]): [string, string[]] {
    return netns ? ['ip', ['netns', 'exec', netns, cmd, ...args]] : [cmd, [...args]];
  }

  node(name: string): NodeLayout {
    const n = this.layout.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node named ${name} (have ${this.layout.nodes.map((x) => x.name).join(', ')})`);
    return n;
  }

  /** True when the state file names a live etcd or agent. */
  isRunning(): boolean {
    const s = this.readState();
    return Object.values(s.etcd).some(isAlive) || Object.values(s.agents).some(isAlive);
  }

  /** Creates the folder tree (PostgreSQL's parts owned by the `postgres` user when we are root). */
  prepare(fresh: boolean): void {
    if (fresh) rmSync(this.layout.dir, { recursive: true, force: true });
    mkdirSync(join(this.layout.dir, 'logs'), { recursive: true });
    const pgUid = process.getuid?.() === 0 ? postgresIds() : undefined;
    for (const n of this.layout.nodes) {
      const nodeDir = join(this.layout.dir, n.name);
      mkdirSync(nodeDir, { recursive: true });
      if (pgUid) chownSync(nodeDir, pgUid.uid, pgUid.gid);
      writeFileSync(nodeConfigPath(this.layout, n.name), nodeYaml(this.layout, n), { mode: 0o600 });
    }
  }

  /** Starts every etcd member that is not running and waits until each answers as healthy (a quorum with a leader). */
  async startEtcd(): Promise<void> {
    const members = etcdMembers(this.layout);
    for (const m of members) this.launchEtcdMember(m, members);
    await Promise.all(members.map((m) => this.waitEtcdMember(m)));
  }

  /** Starts one etcd member again (its data directory makes it rejoin); waits until it answers when the others form a quorum. */
  async startEtcdMember(name: string, wait = true): Promise<void> {
    const members = etcdMembers(this.layout);
    const m = members.find((x) => x.name === name);
    if (!m) throw new Error(`no etcd member ${name}`);
    this.launchEtcdMember(m, members);
    if (wait) await this.waitEtcdMember(m);
  }

  private launchEtcdMember(m: EtcdMemberLayout, all: readonly EtcdMemberLayout[]): void {
    const s = this.readState();
    const running = s.etcd[m.name];
    if (running !== undefined && isAlive(running)) return;
    const { etcdClientPort: cp, etcdPeerPort: pp } = this.layout;
    const pid = spawnDetached(
      ...ClusterRunner.inNetns(m.netns, ETCD_BIN, [
        '--name', m.name,
        '--data-dir', join(this.layout.dir, all.length === 1 ? 'etcd' : `etcd-${m.name}`),
        '--listen-client-urls', `http://${m.host}:${cp}`,
        '--advertise-client-urls', `http://${m.host}:${cp}`,
        '--listen-peer-urls', `http://${m.host}:${pp}`,
        '--initial-advertise-peer-urls', `http://${m.host}:${pp}`,
        '--initial-cluster', all.map((x) => `${x.name}=http://${x.host}:${pp}`).join(','),
        '--initial-cluster-state', 'new',
      ]),
      join(this.layout.dir, 'logs', all.length === 1 ? 'etcd.log' : `etcd-${m.name}.log`),
    );
    s.etcd[m.name] = pid;
    this.writeState(s);
  }

  private async waitEtcdMember(m: EtcdMemberLayout): Promise<void> {
    const pid = this.readState().etcd[m.name]!;
    await waitFor(`etcd member ${m.name} to answer`, 30_000, async () => {
      if (!isAlive(pid)) throw new Error(`etcd exited; see the etcd log under ${join(this.layout.dir, 'logs')}`);
      const r = await fetch(`http://${m.host}:${this.layout.etcdClientPort}/health`, { signal: AbortSignal.timeout(1000) });
      return r.ok ? true : undefined;
    });
  }

  /** Stops every etcd member (by PID) without touching the agents: an outage. */
  async stopEtcd(): Promise<void> {
    // In parallel, then the state file settled once (concurrent read-modify-writes would keep stale PIDs).
    await Promise.all(Object.values(this.readState().etcd).map((pid) => stopPid(pid)));
    this.writeState({ ...this.readState(), etcd: {} });
  }

  /** The PID of a running etcd member, if any. */
  etcdPid(name: string): number | undefined {
    const pid = this.readState().etcd[name];
    return pid !== undefined && isAlive(pid) ? pid : undefined;
  }

  /** Stops one etcd member (by PID). */
  async stopEtcdMember(name: string): Promise<void> {
    const s = this.readState();
    const pid = s.etcd[name];
    if (pid !== undefined) await stopPid(pid);
    const now = this.readState();
    delete now.etcd[name];
    this.writeState(now);
  }

  /** Starts one node's agent (which starts its PostgreSQL). */
  startAgent(name: string): number {
    const s = this.readState();
    const running = s.agents[name];
    if (running !== undefined && isAlive(running)) return running;
    const argv = [...(this.layout.agentNodeArgs ?? AGENT_NODE_FLAGS), this.agentLauncher, '-c', nodeConfigPath(this.layout, name)];
    const pid = spawnDetached(...ClusterRunner.inNetns(this.node(name).netns, process.execPath, argv), join(this.layout.dir, 'logs', `${name}.log`));
    s.agents[name] = pid;
    this.writeState(s);
    return pid;
  }

  /** The PID of a node's running agent, if any. */
  agentPid(name: string): number | undefined {
    const pid = this.readState().agents[name];
    return pid !== undefined && isAlive(pid) ? pid : undefined;
  }

  /** The PID of a node's postmaster (from postmaster.pid), if it runs. */
  postmasterPid(name: string): number | undefined {
    const f = join(this.layout.dir, name, 'data', 'postmaster.pid');
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      // None, or gone while read: a server stopping removes it.
      return undefined;
    }
    const pid = Number(text.split('\n')[0]);
    return pid > 0 && isAlive(pid) ? pid : undefined;
  }

  /** The PID of a node's fencer (from its PID file), if it runs. */
  fencerPid(name: string): number | undefined {
    const f = `${fencerSocketPath(this.layout, name)}.pid`;
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      // None, or gone while read: a fencer leaving removes it.
      return undefined;
    }
    const pid = Number(text.trim());
    return pid > 0 && isAlive(pid) ? pid : undefined;
  }

  /** Stops one node's agent cleanly (SIGTERM: it stops PostgreSQL, and its fencer leaves); whatever is left behind is stopped too. */
  async stopAgent(name: string, timeoutMs = 60_000): Promise<void> {
    await this.terminateAgent(name, timeoutMs);
    const pm = this.postmasterPid(name);
    if (pm !== undefined) await stopPid(pm, 30_000, 'SIGINT');
    const fencer = this.fencerPid(name);
    if (fencer !== undefined) await stopPid(fencer, 10_000);
  }

  /** SIGTERM to a node's agent alone, waiting until it exits: what the agent leaves running (in maintenance mode, PostgreSQL and its fencer) stays. */
  async terminateAgent(name: string, timeoutMs = 60_000): Promise<void> {
    const s = this.readState();
    const pid = s.agents[name];
    if (pid !== undefined) await stopPid(pid, timeoutMs);
    delete s.agents[name];
    this.writeState(s);
  }

  /** kill -9 of a node's agent, fencer and postmaster: an unplanned crash of the whole host. */
  killNode(name: string): void {
    const s = this.readState();
    const pm = this.postmasterPid(name);
    const pid = s.agents[name];
    for (const p of [pid, this.fencerPid(name), pm]) {
      if (p !== undefined && isAlive(p)) process.kill(p, 'SIGKILL');
    }
    delete s.agents[name];
    this.writeState(s);
  }

  /** kill -9 of a node's agent alone: its fencer and PostgreSQL stay (the fencer then stops PostgreSQL). */
  killAgent(name: string): void {
    const s = this.readState();
    const pid = s.agents[name];
    if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL');
    delete s.agents[name];
    this.writeState(s);
  }

  /** Stops every agent, stray postmaster and etcd that this runner started. */
  async down(): Promise<void> {
    // Stop in parallel, then settle the state file once: concurrent read-modify-writes would keep stale PIDs.
    const agents = this.readState().agents;
    await Promise.all(
      Object.values(agents).map((pid) => stopPid(pid, 60_000)),
    );
    this.writeState({ ...this.readState(), agents: {} });
    await Promise.all(this.layout.nodes.map((n) => this.stopAgent(n.name)));
    await this.stopEtcd();
  }

  /** GET /cluster from the first agent that answers. */
  async clusterDocument(): Promise<{ members: ClusterMemberRow[]; [k: string]: unknown } | undefined> {
    for (const n of this.layout.nodes) {
      try {
        const r = await fetch(`${this.apiUrl(n.name)}/cluster`, { signal: AbortSignal.timeout(2000) });
        if (r.ok) return (await r.json()) as { members: ClusterMemberRow[] };
      } catch {
        /* try the next node */
      }
    }
    return undefined;
  }

  /** GET /node of one agent; undefined when it does not answer. */
  async nodeStatus(name: string): Promise<NodeStatusView | undefined> {
    try {
      const r = await fetch(`${this.apiUrl(name)}/node`, { signal: AbortSignal.timeout(2000) });
      return r.ok ? ((await r.json()) as NodeStatusView) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Waits for one running leader (a primary; the standby leader of a standby cluster with
   * `leaderRole` standby_leader) and every other node a streaming replica; returns the leader's name.
   */
  async waitHealthy(timeoutMs: number, names: readonly string[] = this.layout.nodes.map((n) => n.name), leaderRole: 'primary' | 'standby_leader' = 'primary'): Promise<string> {
    const what = leaderRole === 'primary' ? 'a primary' : 'a standby leader';
    let seen = 'no answer yet';
    try {
      return await waitFor(`${what} and ${names.length - 1} streaming replicas`, timeoutMs, async () => {
        const docs = await Promise.all(names.map(async (n) => [n, await this.nodeStatus(n)] as const));
        seen = docs.map(([n, d]) => `${n}: ${d ? `${d.role} ${d.state}${d.replication_state ? ` ${d.replication_state}` : ''}${d['waiting_for'] ? ` (waiting for ${String(d['waiting_for'])})` : ''}` : 'no answer'}`).join('; ');
        const primaries = docs.filter(([, d]) => d?.role === leaderRole && d.state === 'running');
        const replicas = docs.filter(([, d]) => d?.role === 'replica' && d.state === 'running' && d.replication_state === 'streaming');
        return primaries.length === 1 && replicas.length === names.length - 1 ? primaries[0]![0] : undefined;
      }, 500);
    } catch (e) {
      // Says what the nodes looked like last, so a CI log shows which one was stuck and how.
      throw new Error(`${(e as Error).message}; last seen: ${seen}`);
    }
  }
}

/** The fields of the node status document the runner reads. */
export interface NodeStatusView {
  readonly state: string;
  readonly role: string;
  readonly replication_state?: string;
  readonly timeline?: number;
  readonly [k: string]: unknown;
}

/** uid and gid of the postgres user; undefined where there is none. */
export function postgresIds(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}
