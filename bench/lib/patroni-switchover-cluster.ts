/** Patroni on the switchover benchmark's layout: nodes it starts, stops and switches over through its REST API. */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { isAlive, spawnDetached, stopPid, waitFor } from '../../scripts/lib/processes.js';
import { e2eRunner } from '../../test/e2e/e2e-cluster.js';
import { benchFailed, onCleanup } from './cleanup.js';
import { progress } from './report.js';

/** Debian's Patroni (3.0.2 on this machine). */
export const PATRONI_BIN = '/usr/bin/patroni';

/** What the benchmarks read of a member: Patroni's GET /patroni, in the fields Warden's /node shares with it. */
export interface MemberView {
  readonly role: string;
  readonly state: string;
  readonly xlog?: { readonly location?: number; readonly received_location?: number; readonly replayed_location?: number };
  readonly replication_state?: string;
}

/**
 * A Patroni cluster side by side with Warden's benchmark clusters: the same layout (etcd on a
 * free port, three members with the same PostgreSQL ports, data folders and passwords), the
 * same dynamic settings, each Patroni started by PID as the `postgres` user (setpriv execs it,
 * so the PID is Patroni's) and stopped by PID. The ClusterRunner is used for etcd and the layout
 * only, so the benchmarks' writers and SQL helpers work on it unchanged.
 */
export class PatroniCluster {
  private readonly pids = new Map<string, number>();
  private stopped: Promise<void> | null = null;

  private constructor(readonly runner: ClusterRunner) {}

  /** Starts etcd and three Patroni members with `dcs` as bootstrap.dcs; waits for a primary and two streaming replicas. */
  static async start(dcs: Readonly<Record<string, unknown>>, scope = 'bench'): Promise<{ cluster: PatroniCluster; primary: string }> {
    if (!existsSync(PATRONI_BIN)) throw new Error(`${PATRONI_BIN} is not installed (Debian package patroni)`);
    const base = await e2eRunner();
    const runner = new ClusterRunner({ ...base.layout, scope, dcs });
    const c = new PatroniCluster(runner);
    onCleanup(() => c.stop());
    runner.prepare(true);
    await runner.startEtcd();
    for (const n of runner.layout.nodes) c.startMember(n.name);
    progress(`patroni cluster starting in ${runner.layout.dir} (etcd :${runner.layout.etcdClientPort}, APIs ${runner.layout.nodes.map((n) => n.apiPort).join(', ')})`);
    const primary = await c.waitHealthy(240_000);
    progress(`patroni cluster healthy, primary ${primary}`);
    return { cluster: c, primary };
  }

  /** The member's Patroni configuration, from the layout's dynamic settings. */
  private config(name: string): string {
    const { layout } = this.runner;
    const n = this.runner.node(name);
    const dcs = layout.dcs as Record<string, unknown>;
    const db = (dcs['db'] ?? {}) as Record<string, unknown>;
    const dir = join(layout.dir, name);
    return stringify({
      scope: layout.scope,
      namespace: layout.namespace,
      name,
      restapi: { listen: `127.0.0.1:${n.apiPort}`, connect_address: `127.0.0.1:${n.apiPort}` },
      etcd3: { hosts: `127.0.0.1:${layout.etcdClientPort}` },
      bootstrap: {
        dcs: {
          ttl: dcs['ttl'],
          loop_wait: dcs['loop_wait'],
          retry_timeout: dcs['retry_timeout'],
          maximum_lag_on_failover: dcs['maximum_lag_on_failover'],
          postgresql: { use_pg_rewind: db['use_pg_rewind'] ?? true, use_slots: db['use_slots'] ?? true, parameters: db['parameters'] ?? {} },
        },
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
        // Same log prefix as Warden's servers, so the benchmark reads both PostgreSQL logs alike.
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

  /** GET /patroni of one member; undefined when it does not answer. */
  async status(name: string): Promise<MemberView | undefined> {
    try {
      const r = await fetch(`${this.runner.apiUrl(name)}/patroni`, { signal: AbortSignal.timeout(2000) });
      return r.ok ? ((await r.json()) as MemberView) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Waits for one running primary and every other member a streaming replica; returns the primary's name. */
  waitHealthy(timeoutMs: number): Promise<string> {
    const names = this.runner.layout.nodes.map((n) => n.name);
    return waitFor(`a Patroni primary and ${names.length - 1} streaming replicas`, timeoutMs, async () => {
      for (const [name, pid] of this.pids) if (!isAlive(pid)) throw new Error(`patroni ${name} exited; see ${this.logFile(name)}`);
      const docs = await Promise.all(names.map(async (n) => [n, await this.status(n)] as const));
      const primaries = docs.filter(([, d]) => (d?.role === 'master' || d?.role === 'primary') && d.state === 'running');
      const replicas = docs.filter(([, d]) => d?.role === 'replica' && d.state === 'running' && (d.replication_state ?? 'streaming') === 'streaming' && d.xlog?.received_location !== undefined);
      return primaries.length === 1 && replicas.length === names.length - 1 ? primaries[0]![0] : undefined;
    }, 500);
  }

  /** Stops every Patroni by PID (each stops its PostgreSQL), then etcd; removes the folder unless kept. */
  stop(): Promise<void> {
    this.stopped ??= this.stopNow();
    return this.stopped;
  }

  private async stopNow(): Promise<void> {
    const pids = [...this.pids.values()];
    this.pids.clear();
    await Promise.all(pids.map((pid) => stopPid(pid, 60_000)));
    await this.runner.down();
    const dir = this.runner.layout.dir;
    if (benchFailed() || process.env['BENCH_KEEP'] === '1') progress(`kept ${dir} (logs in ${dir}/logs)`);
    else rmSync(dir, { recursive: true, force: true });
  }

  /** The postmaster PID of a member (for a forced cleanup). */
  postmasterPid(name: string): number | undefined {
    const f = join(this.runner.layout.dir, name, 'data', 'postmaster.pid');
    if (!existsSync(f)) return undefined;
    const pid = Number(readFileSync(f, 'utf8').split('\n')[0]);
    return pid > 0 && isAlive(pid) ? pid : undefined;
  }
}
