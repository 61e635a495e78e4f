import { rmSync } from 'node:fs';
import { demoLayout, type ClusterLayout } from '../../scripts/lib/cluster-layout.js';
import { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { e2eFolders, e2eRunner } from '../../test/e2e/e2e-cluster.js';
import { benchFailed, onCleanup } from './cleanup.js';
import { progress } from './report.js';

/** The dynamic config of the demo cluster (ttl 20, loop_wait 2, retry_timeout 5). */
export const DEMO_DCS: Readonly<Record<string, unknown>> = demoLayout({}).dcs;

/** Default timings: ttl 30, loop_wait 10, retry_timeout 10. */
export const DEFAULT_DCS: Readonly<Record<string, unknown>> = { ...DEMO_DCS, ttl: 30, loop_wait: 10, retry_timeout: 10 };

/** A running benchmark cluster and the node that came up as primary. */
export interface BenchCluster {
  readonly runner: ClusterRunner;
  readonly primary: string;
  /** Stops the cluster by PID and removes its folder (also done at the end of the benchmark). */
  stop(): Promise<void>;
}

/**
 * Starts a real 3-node cluster (etcd, three agents, three PostgreSQL 15 servers) on free
 * loopback ports in a fresh temp folder, with `dcs` as bootstrap.dcs, and waits until it has
 * a primary and two streaming replicas. It is stopped by PID when the benchmark ends, fails
 * or is interrupted; its folder is removed unless the benchmark failed or BENCH_KEEP=1 is
 * set (then its logs stay for a look).
 */
export async function startBenchCluster(
  dcs: Readonly<Record<string, unknown>>,
  scope = 'bench',
  opts: { readonly walSegsizeMb?: number; readonly agentNodeArgs?: readonly string[] } = {},
): Promise<BenchCluster> {
  const base = await e2eRunner();
  const initdb: ClusterLayout['initdb'] = opts.walSegsizeMb ? [{ encoding: 'UTF8' }, 'data-checksums', { 'wal-segsize': String(opts.walSegsizeMb) }] : undefined;
  const runner = new ClusterRunner({ ...base.layout, scope, dcs, ...(initdb ? { initdb } : {}), ...(opts.agentNodeArgs ? { agentNodeArgs: opts.agentNodeArgs } : {}) });
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      progress(`stopping the cluster in ${runner.layout.dir}`);
      await runner.down();
      if (benchFailed() || process.env['BENCH_KEEP'] === '1') progress(`kept ${runner.layout.dir} (logs in ${runner.layout.dir}/logs)`);
      else for (const f of e2eFolders(runner.layout)) rmSync(f, { recursive: true, force: true });
    })());
  onCleanup(stop);
  runner.prepare(true);
  await runner.startEtcd();
  for (const n of runner.layout.nodes) runner.startAgent(n.name);
  progress(`cluster starting in ${runner.layout.dir} (etcd :${runner.layout.etcdClientPort}, APIs ${runner.layout.nodes.map((n) => n.apiPort).join(', ')}; dcs ${JSON.stringify({ ttl: dcs['ttl'], loop_wait: dcs['loop_wait'], retry_timeout: dcs['retry_timeout'] })})`);
  const primary = await runner.waitHealthy(240_000);
  progress(`cluster healthy, primary ${primary}`);
  return { runner, primary, stop };
}

/** The other members of the cluster. */
export function othersOf(runner: ClusterRunner, name: string): string[] {
  return runner.layout.nodes.map((n) => n.name).filter((n) => n !== name);
}

/** The DCS key of the leader lock */
export function leaderKey(runner: ClusterRunner): string {
  return `${runner.layout.namespace}/${runner.layout.scope}/leader`;
}
