/** Patroni beside Warden's benchmark clusters: members it starts, checks, switches over and stops by PID. */
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ClusterLayout } from '../../scripts/lib/cluster-layout.js';
import { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { isAlive, spawnDetached, stopPid, waitFor } from '../../scripts/lib/processes.js';
import { e2eFolders, e2eRunner } from '../../test/e2e/e2e-cluster.js';
import { benchFailed, onCleanup } from './cleanup.js';
import { progress } from './report.js';

/** Debian's Patroni (package patroni; 3.0.2 on this machine). */
export const PATRONI_BIN = '/usr/bin/patroni';

/** Whether Patroni is installed here. */
export function patroniInstalled(): boolean {
  return existsSync(PATRONI_BIN);
}

/** The installed Patroni's version line (e.g. "patroni 3.0.2"). */
export function patroniVersion(): string {
  try {
    return execFileSync(PATRONI_BIN, ['--version']).toString().trim();
  } catch {
    return 'patroni (version unknown)';
  }
}

/** What the benchmarks read of a member: Patroni's GET /patroni, in the fields Warden's /node shares with it. */
export interface MemberView {
  readonly role: string;
  readonly state: string;
  readonly xlog?: { readonly location?: number; readonly received_location?: number; readonly replayed_location?: number };
  readonly replication_state?: string;
}

/** How the members log: INFO for benchmarks that read Patroni's log lines, WARNING where many clusters run at once. */
export interface PatroniOptions {
  readonly logLevel?: 'INFO' | 'WARNING';
}

/**
 * A 3-member Patroni cluster on a Warden benchmark layout: the same ports, data folders,
 * passwords and dynamic settings (Warden's `db` section is Patroni's `postgresql` section),
 * each Patroni started as the `postgres` user (setpriv execs it, so the PID is Patroni's) and
 * stopped by PID, with any postmaster it leaves. The ClusterRunner serves for the layout and
 * etcd only, so the benchmarks' writers and SQL helpers work on it unchanged.
 */
export class PatroniCluster {
  private readonly pids = new Map<string, number>();
  private stopped: Promise<void> | null = null;

  private constructor(
    readonly runner: ClusterRunner,
    private readonly opts: PatroniOptions,
  ) {}

  /** Starts a fresh etcd and three members with `dcs` as bootstrap.dcs; waits for a primary and two streaming replicas. */
  static async start(dcs: Readonly<Record<string, unknown>>, scope = 'bench'): Promise<{ cluster: PatroniCluster; primary: string }> {
    const base = await e2eRunner();
    const cluster = PatroniCluster.launch({ ...base.layout, scope, dcs }, {});
    await cluster.runner.startEtcd();
    for (const n of cluster.runner.layout.nodes) cluster.startMember(n.name);
    progress(`patroni cluster starting in ${cluster.runner.layout.dir} (etcd :${cluster.runner.layout.etcdClientPort}, APIs ${cluster.runner.layout.nodes.map((n) => n.apiPort).join(', ')})`);
    const primary = await cluster.waitHealthy(240_000);
    progress(`patroni cluster healthy, primary ${primary}`);
    return { cluster, primary };
  }

  /**
   * Starts three members on `layout` against an etcd (or a relay in front of one) that the
   * caller runs at `layout.etcdClientPort`; does not wait for them.
   */
  static startOn(layout: ClusterLayout, opts: PatroniOptions = {}): PatroniCluster {
    const cluster = PatroniCluster.launch(layout, opts);
    for (const n of layout.nodes) cluster.startMember(n.name);
    progress(`patroni cluster ${layout.scope} starting in ${layout.dir} (etcd :${layout.etcdClientPort})`);
    return cluster;
  }

  private static launch(layout: ClusterLayout, opts: PatroniOptions): PatroniCluster {
    if (!patroniInstalled()) throw new Error(`${PATRONI_BIN} is not installed (Debian package patroni)`);
    const cluster = new PatroniCluster(new ClusterRunner(layout), opts);
    onCleanup(() => cluster.stop());
    cluster.runner.prepare(true);
    return cluster;
  }

  /** The member's Patroni configuration, from the layout's dynamic settings. */
  private config(name: string): string {
    const { layout } = this.runner;
    const n = this.runner.node(name);
    const { db, ...dcs } = layout.dcs as Record<string, unknown> & { db?: Record<string, unknown> };
    const dir = join(layout.dir, name);
    return stringify({
      scope: layout.scope,
      namespace: layout.namespace,
      name,
      restapi: { listen: `127.0.0.1:${n.apiPort}`, connect_address: `127.0.0.1:${n.apiPort}` },
      // use_proxies: talk to the address given (it may be a byte-counting relay), not to the members etcd advertises.
      etcd3: { hosts: [`127.0.0.1:${layout.etcdClientPort}`], use_proxies: true },
      log: { level: this.opts.logLevel ?? 'INFO' },
      bootstrap: {
        dcs: { ...dcs, postgresql: { use_pg_rewind: true, use_slots: true, ...(db ?? {}) } },
        initdb: [{ encoding: 'UTF8' }, 'data-checksums'],
      },
      postgresql: {
        listen: `127.0.0.1:${n.pgPort}`,
        connect_address: `127.0.0.1:${n.pgPort}`,
        data_dir: join(dir, 'data'),
        bin_dir: layout.binDir,
        pgpass: join(dir, 'pgpass'),
        authentication: {
          superuser: { username: 'postgres', password: 'warden-demo-su' },
          replication: { username: 'replicator', password: 'warden-demo-rep' },
        },
        // Same log prefix as Warden's servers, so the benchmarks read both PostgreSQL logs alike.
        parameters: { unix_socket_directories: dir, log_line_prefix: '%m [%p] ', log_timezone: 'UTC', logging_collector: false },
        pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 scram-sha-256', 'host replication replicator 127.0.0.1/32 scram-sha-256'],
      },
      tags: { nofailover: false, noloadbalance: false },
    });
  }

  private startMember(name: string): void {
    const { layout } = this.runner;
    const file = join(layout.dir, `${name}.patroni.yml`);
    writeFileSync(file, this.config(name));
    chmodSync(file, 0o644);
    const root = process.getuid?.() === 0;
    const [cmd, args] = root ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', PATRONI_BIN, file]] : [PATRONI_BIN, [file]];
    // Patroni logs to stderr and PostgreSQL's log goes with it: one file per member.
    const pid = spawnDetached(cmd, args, this.logFile(name), { ...process.env, PATH: `/usr/bin:/bin:${process.env['PATH'] ?? ''}`, HOME: join(layout.dir, name) });
    this.pids.set(name, pid);
  }

  /** The file Patroni and its PostgreSQL log to. */
  logFile(name: string): string {
    return join(this.runner.layout.dir, 'logs', `${name}.log`);
  }

  /** The PID of a member's Patroni process (python), not of its PostgreSQL. */
  pid(name: string): number | undefined {
    return this.pids.get(name);
  }

  /** PIDs of the Patroni processes still running. */
  livePids(): number[] {
    return [...this.pids.values()].filter(isAlive);
  }

  /** GET /patroni of one member; undefined when it does not answer. */
  async status(name: string): Promise<MemberView | undefined> {
    try {
      const r = await fetch(`${this.runner.apiUrl(name)}/patroni`, { signal: AbortSignal.timeout(2000) });
      return r.ok ? ((await r.json()) as MemberView) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The primary's name when there is one running primary and every other member is a streaming replica. */
  async healthyPrimary(): Promise<string | undefined> {
    const names = this.runner.layout.nodes.map((n) => n.name);
    for (const [name, pid] of this.pids) if (!isAlive(pid)) throw new Error(`patroni ${name} exited; see ${this.logFile(name)}`);
    const docs = await Promise.all(names.map(async (n) => [n, await this.status(n)] as const));
    const primaries = docs.filter(([, d]) => (d?.role === 'master' || d?.role === 'primary') && d.state === 'running');
    const replicas = docs.filter(([, d]) => d?.role === 'replica' && d.state === 'running' && (d.replication_state ?? 'streaming') === 'streaming' && d.xlog?.received_location !== undefined);
    return primaries.length === 1 && replicas.length === names.length - 1 ? primaries[0]![0] : undefined;
  }

  /** Waits for one running primary and every other member a streaming replica; returns the primary's name. */
  waitHealthy(timeoutMs: number): Promise<string> {
    return waitFor(`Patroni cluster ${this.runner.layout.scope}: a primary and ${this.runner.layout.nodes.length - 1} streaming replicas`, timeoutMs, () => this.healthyPrimary(), 500);
  }

  /** POST /switchover on the leader's API; resolves with the HTTP status. */
  async switchover(leader: string, candidate: string): Promise<number> {
    const r = await fetch(`${this.runner.apiUrl(leader)}/switchover`, {
      method: 'POST',
      body: JSON.stringify({ leader, candidate }),
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(60_000),
    });
    await r.arrayBuffer();
    return r.status;
  }

  /** Stops every Patroni by PID (each stops its PostgreSQL), any postmaster left, and the etcd it started; removes the folder unless kept. */
  stop(): Promise<void> {
    this.stopped ??= this.stopNow();
    return this.stopped;
  }

  private async stopNow(): Promise<void> {
    const pids = [...this.pids.values()];
    await Promise.all(pids.map((pid) => stopPid(pid, 60_000)));
    await this.runner.down();
    const dir = this.runner.layout.dir;
    if (benchFailed() || process.env['BENCH_KEEP'] === '1') progress(`kept ${dir} (logs in ${dir}/logs)`);
    else for (const f of e2eFolders(this.runner.layout)) rmSync(f, { recursive: true, force: true });
  }
}
