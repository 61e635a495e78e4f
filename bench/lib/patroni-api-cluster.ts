import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { isAlive, sleep, stopPid, waitFor } from '../../scripts/lib/processes.js';
import { startEtcd, type EtcdServer } from '../../test/support/etcd-server.js';
import { freePorts } from '../../test/support/free-port.js';
import { benchFailed, onCleanup } from './cleanup.js';
import { progress } from './report.js';

/** Debian's Patroni (package patroni). */
export const PATRONI = '/usr/bin/patroni';

/** True when Patroni is installed. */
export function patroniInstalled(): boolean {
  return existsSync(PATRONI);
}

/** One Patroni member. */
export interface PatroniNode {
  readonly name: string;
  readonly apiUrl: string;
  readonly pgPort: number;
  /** PID of the patroni process (python), not of PostgreSQL. */
  pid: number;
}

/** A running 3-node Patroni cluster with its own etcd. */
export interface PatroniCluster {
  readonly nodes: readonly PatroniNode[];
  readonly etcd: EtcdServer;
  readonly dir: string;
  /** Waits for one primary and every other member answering as a replica; returns the primary's name. */
  waitHealthy(timeoutMs: number): Promise<string>;
  /** POST /switchover on the leader; resolves with the HTTP status. */
  switchover(leader: string, candidate: string): Promise<number>;
  stop(): Promise<void>;
}

function postgresIds(): { uid: number; gid: number } {
  return { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) };
}

/**
 * Starts a 3-node Patroni cluster on PostgreSQL 15 beside a fresh etcd, on free loopback
 * ports, with the dynamic settings the Warden benchmark cluster uses (ttl 20, loop_wait 2,
 * retry_timeout 5). Patroni runs as the `postgres` user (PostgreSQL refuses root); each
 * process is stopped by PID when the benchmark ends.
 */
export async function startPatroniCluster(dcs: Readonly<Record<string, unknown>>): Promise<PatroniCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-patroni-'));
  chmodSync(dir, 0o755);
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? postgresIds() : undefined;
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const etcd = await startEtcd();
  const ports = await freePorts(6);
  const nodes: PatroniNode[] = [0, 1, 2].map((i) => ({ name: `p${i + 1}`, apiUrl: `http://127.0.0.1:${ports[i]}`, pgPort: ports[3 + i]!, pid: 0 }));
  for (const [i, n] of nodes.entries()) {
    const nodeDir = join(dir, n.name);
    mkdirSync(nodeDir, { recursive: true, mode: 0o700 });
    if (ids) chownSync(nodeDir, ids.uid, ids.gid);
    const cfg = {
      scope: 'bench',
      namespace: '/patroni-bench/',
      name: n.name,
      restapi: { listen: `127.0.0.1:${ports[i]}`, connect_address: `127.0.0.1:${ports[i]}` },
      etcd3: { hosts: etcd.host },
      bootstrap: {
        dcs: {
          ttl: dcs['ttl'],
          loop_wait: dcs['loop_wait'],
          retry_timeout: dcs['retry_timeout'],
          maximum_lag_on_failover: dcs['maximum_lag_on_failover'] ?? 1048576,
          postgresql: { use_pg_rewind: true, use_slots: true, parameters: { max_connections: 100 } },
        },
        initdb: [{ encoding: 'UTF8' }, 'data-checksums'],
      },
      postgresql: {
        listen: `127.0.0.1:${n.pgPort}`,
        connect_address: `127.0.0.1:${n.pgPort}`,
        data_dir: join(nodeDir, 'data'),
        bin_dir: '/usr/lib/postgresql/15/bin',
        pgpass: join(nodeDir, 'pgpass'),
        authentication: {
          superuser: { username: 'postgres', password: 'bench-su' },
          replication: { username: 'replicator', password: 'bench-rep' },
          rewind: { username: 'postgres', password: 'bench-su' },
        },
        parameters: { unix_socket_directories: nodeDir },
        pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 md5', 'host replication replicator 127.0.0.1/32 md5'],
      },
      tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
    };
    const file = join(nodeDir, 'patroni.yml');
    writeFileSync(file, stringify(cfg));
    if (ids) chownSync(file, ids.uid, ids.gid);
  }
  const logFile = (n: PatroniNode) => join(dir, `${n.name}.log`);
  const start = (n: PatroniNode) => {
    const fd = openSync(logFile(n), 'a');
    if (ids) chownSync(logFile(n), ids.uid, ids.gid);
    try {
      // Spawned with postgres's uid and gid directly (no su/runuser in between), so the PID is patroni's own.
      const child = spawn(PATRONI, [join(dir, n.name, 'patroni.yml')], {
        detached: true,
        stdio: ['ignore', fd, fd],
        cwd: join(dir, n.name),
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(dir, n.name), LANG: 'C.UTF-8' },
        ...(ids ? { uid: ids.uid, gid: ids.gid } : {}),
      });
      if (child.pid === undefined) throw new Error('could not start patroni');
      child.unref();
      n.pid = child.pid;
    } finally {
      closeSync(fd);
    }
  };
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      progress(`stopping the Patroni cluster in ${dir}`);
      // Patroni stops its PostgreSQL on SIGTERM.
      await Promise.all(nodes.map((n) => (n.pid ? stopPid(n.pid, 60_000) : undefined)));
      for (const n of nodes) {
        const pidFile = join(dir, n.name, 'data', 'postmaster.pid');
        if (!existsSync(pidFile)) continue;
        const pm = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (pm > 0 && isAlive(pm)) await stopPid(pm, 30_000, 'SIGINT');
      }
      await etcd.cleanup();
      if (benchFailed() || process.env['BENCH_KEEP'] === '1') progress(`kept ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    })());
  onCleanup(stop);
  start(nodes[0]!);
  // The first member bootstraps alone; the others then clone it.
  await sleep(3000);
  for (const n of nodes.slice(1)) start(n);
  progress(`Patroni cluster starting in ${dir} (etcd ${etcd.host}, APIs ${nodes.map((n) => n.apiUrl.split(':').pop()).join(', ')})`);

  const code = async (url: string) => {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      return r.status;
    } catch {
      return 0;
    }
  };
  return {
    nodes,
    etcd,
    dir,
    stop,
    waitHealthy: (timeoutMs) =>
      waitFor('a Patroni primary and two replicas', timeoutMs, async () => {
        for (const n of nodes) if (!isAlive(n.pid)) throw new Error(`patroni ${n.name} exited; see ${logFile(n)}`);
        const roles = await Promise.all(nodes.map(async (n) => [n.name, await code(`${n.apiUrl}/primary`), await code(`${n.apiUrl}/replica`)] as const));
        const primaries = roles.filter(([, p]) => p === 200);
        const replicas = roles.filter(([, , r]) => r === 200);
        return primaries.length === 1 && replicas.length === nodes.length - 1 ? primaries[0]![0] : undefined;
      }, 500),
    switchover: async (leader, candidate) => {
      const n = nodes.find((x) => x.name === leader)!;
      const r = await fetch(`${n.apiUrl}/switchover`, { method: 'POST', body: JSON.stringify({ leader, candidate }), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(60_000) });
      await r.arrayBuffer();
      return r.status;
    },
  };
}
