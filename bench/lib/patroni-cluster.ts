import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { isAlive, spawnDetached, stopPid, waitFor } from '../../scripts/lib/processes.js';
import { freePorts } from '../../test/support/free-port.js';

/** Where Debian's patroni package puts its command. */
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

/** A running 3-node Patroni cluster started by the benchmark. */
export interface PatroniCluster {
  readonly scope: string;
  readonly dir: string;
  /** PIDs of the three Patroni processes. */
  readonly pids: () => number[];
  /** Waits for one primary and two running replicas (their REST API's /primary and /replica checks). */
  waitHealthy(timeoutMs: number): Promise<void>;
  /** Whether it has one primary and two running replicas right now. */
  healthy(): Promise<boolean>;
  /** The REST API URL of each node. */
  readonly apiUrls: readonly string[];
  /** Stops every Patroni (which stops its PostgreSQL) and any postmaster left, by PID. */
  stop(): Promise<void>;
}

function postgresIds(): { uid: number; gid: number } | undefined {
  try {
    return {
      uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
      gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
    };
  } catch {
    return undefined;
  }
}

async function status(url: string): Promise<number> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

/**
 * Starts a 3-node Patroni cluster (scope `scope`) in `dir` against the etcd v3 at
 * `127.0.0.1:etcdPort`, with `dcs` as bootstrap.dcs, PostgreSQL 15 from `binDir`. As root,
 * Patroni runs as the `postgres` user through setpriv (which execs it: the PID is Patroni's).
 */
export async function startPatroniCluster(opts: {
  readonly scope: string;
  readonly dir: string;
  readonly etcdPort: number;
  readonly dcs: Readonly<Record<string, unknown>>;
  readonly binDir: string;
}): Promise<PatroniCluster> {
  const { scope, dir } = opts;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const ids = process.getuid?.() === 0 ? postgresIds() : undefined;
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const ports = await freePorts(6);
  const nodes = [0, 1, 2].map((i) => ({ name: `node${i + 1}`, api: ports[i]!, pg: ports[3 + i]! }));
  const pids: Record<string, number> = {};
  const { postgresql: pgDcs, db, ...dcsRest } = opts.dcs as Record<string, unknown> & { postgresql?: unknown; db?: unknown };
  for (const n of nodes) {
    const nodeDir = join(dir, n.name);
    mkdirSync(nodeDir, { recursive: true });
    if (ids) chownSync(nodeDir, ids.uid, ids.gid);
    const cfg = {
      scope,
      namespace: '/service/',
      name: n.name,
      restapi: { listen: `127.0.0.1:${n.api}`, connect_address: `127.0.0.1:${n.api}` },
      // use_proxies: talk to the host given (the benchmark's byte-counting relay), not to the members etcd advertises.
      etcd3: { hosts: [`127.0.0.1:${opts.etcdPort}`], use_proxies: true },
      log: { level: 'WARNING', dir: join(dir, 'logs', n.name) },
      bootstrap: {
        // Warden's `db` section is Patroni's `postgresql` section.
        dcs: { ...dcsRest, postgresql: pgDcs ?? db ?? {} },
        initdb: [{ encoding: 'UTF8' }, 'data-checksums'],
        pg_hba: ['local all all trust', 'host replication replicator 127.0.0.1/32 md5', 'host all all 127.0.0.1/32 md5'],
      },
      postgresql: {
        listen: `127.0.0.1:${n.pg}`,
        connect_address: `127.0.0.1:${n.pg}`,
        data_dir: join(nodeDir, 'data'),
        bin_dir: opts.binDir,
        pgpass: join(nodeDir, 'pgpass'),
        authentication: {
          superuser: { username: 'postgres', password: 'bench-su' },
          replication: { username: 'replicator', password: 'bench-rep' },
        },
        parameters: { unix_socket_directories: nodeDir },
      },
      tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
    };
    mkdirSync(join(dir, 'logs', n.name), { recursive: true });
    if (ids) chownSync(join(dir, 'logs', n.name), ids.uid, ids.gid);
    const file = join(dir, `${n.name}.yml`);
    writeFileSync(file, stringify(cfg));
    const [cmd, args] = ids
      ? ['setpriv', ['--reuid', String(ids.uid), '--regid', String(ids.gid), '--init-groups', PATRONI_BIN, file]]
      : [PATRONI_BIN, [file]];
    pids[n.name] = spawnDetached(cmd, args, join(dir, 'logs', `${n.name}.out`), { ...process.env, HOME: nodeDir });
  }
  const healthy = async () => {
    const codes = await Promise.all(nodes.map(async (n) => [await status(`http://127.0.0.1:${n.api}/primary`), await status(`http://127.0.0.1:${n.api}/replica`)] as const));
    return codes.filter(([p]) => p === 200).length === 1 && codes.filter(([, r]) => r === 200).length === 2;
  };
  const postmasterPid = (name: string) => {
    const f = join(dir, name, 'data', 'postmaster.pid');
    if (!existsSync(f)) return undefined;
    const pid = Number(readFileSync(f, 'utf8').split('\n')[0]);
    return pid > 0 && isAlive(pid) ? pid : undefined;
  };
  return {
    scope,
    dir,
    apiUrls: nodes.map((n) => `http://127.0.0.1:${n.api}`),
    pids: () => Object.values(pids).filter(isAlive),
    healthy,
    waitHealthy: (timeoutMs) => waitFor(`Patroni cluster ${scope}: a primary and two replicas`, timeoutMs, async () => ((await healthy()) ? true : undefined), 500).then(() => undefined),
    async stop() {
      await Promise.all(Object.values(pids).map((pid) => stopPid(pid, 60_000)));
      await Promise.all(
        nodes.map(async (n) => {
          const pm = postmasterPid(n.name);
          if (pm !== undefined) await stopPid(pm, 30_000, 'SIGINT');
        }),
      );
    },
  };
}
