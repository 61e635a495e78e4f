import type { Cluster } from '../../domain/cluster/model/cluster.js';
import { ValidationError } from '../../domain/errors.js';
import { demoteCluster, promoteCluster, type StandbyClusterInput } from '../../usecases/cluster-role.js';
import { CommandError } from '../../usecases/command-error.js';
import { confirmOrAbort, readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';

/** Options of `promote-cluster`. */
export interface PromoteClusterOptions {
  readonly force?: boolean;
  /** Return once the change is written, without waiting for the leader to run as primary. */
  readonly noWait?: boolean;
}

/** Options of `demote-cluster`: where the cluster replicates from once it is a standby cluster. */
export interface DemoteClusterOptions {
  readonly host?: string;
  readonly port?: string;
  readonly restoreCommand?: string;
  readonly primarySlotName?: string;
  readonly archiveCleanupCommand?: string;
  readonly recoveryMinApplyDelay?: string;
  /** Comma-separated replica creation methods (for a standby leader rebuilt from the remote). */
  readonly createReplicaMethods?: string;
  readonly force?: boolean;
  readonly noWait?: boolean;
}

/** Poll interval while waiting for the leader's new role. */
export const ROLE_POLL_MS = 1000;

const isStandby = (c: Cluster) => {
  const sc = c.config?.value['standby_cluster'];
  return sc !== undefined && sc !== null;
};

/** How long to wait for the new role: a stop, maybe a rewind, a start, and a loop or two to notice. */
function waitLimitMs(cluster: Cluster): number {
  const num = (k: string, d: number) => {
    const v = Number(cluster.config?.value[k] ?? d);
    return Number.isFinite(v) ? v : d;
  };
  return Math.max(120, 2 * num('ttl', 30) + 2 * num('loop_wait', 10)) * 1000;
}

/** A number when the text is one (so the configuration's validation reports a bad port as such). */
function numberOrText(text: string | undefined): number | string | undefined {
  if (text === undefined) return undefined;
  return /^\d+$/.test(text.trim()) ? Number(text.trim()) : text;
}

/** The use case's refusals as wardenctl errors. */
async function translated<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof ValidationError) throw new CtlError('config_invalid', `invalid standby_cluster, nothing written: ${e.message}`);
    if (e instanceof CommandError) {
      if (e.code === 'config_conflict') throw new CtlError('concurrent_change', 'the configuration was changed by someone else meanwhile; nothing was written (run the command again)');
      if (e.code === 'no_leader' || e.code === 'not_standby_cluster' || e.code === 'already_standby_cluster') throw new CtlError(e.code, e.message);
    }
    throw e;
  }
}

/** Waits until the leader runs with `role` (primary, or standby_leader); returns the leader's record. */
async function waitForRole(ctx: CtlContext, role: 'primary' | 'standby_leader', limitMs: number): Promise<{ name: string; timeline: number | null }> {
  const deadline = ctx.now() + limitMs;
  for (;;) {
    const cluster = await readCluster(ctx);
    const leader = cluster.leader ? cluster.members.find((m) => m.name === cluster.leader!.name) : undefined;
    if (leader && leader.role === role && leader.state === 'running') return { name: leader.name, timeline: leader.timeline };
    if (ctx.signal.aborted) throw new CtlError('interrupted', 'stopped waiting; the change is written (follow it with wardenctl list)');
    if (ctx.now() >= deadline) {
      const now = leader ? `${leader.name} is ${leader.role}, ${leader.state}` : 'the cluster has no leader';
      throw new CtlError('wait_timeout', `the change is written, but after ${Math.round(limitMs / 1000)} s ${now}; follow it with wardenctl list`);
    }
    await ctx.sleep(ROLE_POLL_MS);
  }
}

/**
 * `promote-cluster`: a standby cluster becomes a primary cluster. Removes standby_cluster
 * (the promoteCluster use case, written to the DCS with a compare-and-set), then waits until
 * the leader runs as the writable primary.
 */
export async function promoteClusterCommand(ctx: CtlContext, opts: PromoteClusterOptions = {}): Promise<void> {
  const cluster = await readCluster(ctx);
  if (!isStandby(cluster)) throw new CtlError('not_standby_cluster', `cluster ${ctx.scope} is not a standby cluster: nothing to promote`);
  const leader = cluster.leader?.name;
  if (!leader) throw new CtlError('no_leader', `cluster ${ctx.scope} has no standby leader to promote`);
  await confirmOrAbort(ctx, opts.force, `Promote cluster ${ctx.scope}? Its standby leader ${leader} stops following the remote primary and becomes a writable primary`);
  const change = await translated(() => promoteCluster({ store: ctx.store, agent: null }));
  ctx.out(`Success: standby_cluster removed; ${change.leader} promotes`);
  if (opts.noWait) return;
  const now = await waitForRole(ctx, 'primary', waitLimitMs(cluster));
  ctx.out(`Cluster ${ctx.scope} is a primary cluster: ${now.name} is the primary${now.timeline !== null ? ` (timeline ${now.timeline})` : ''}`);
}

/**
 * `demote-cluster`: a primary cluster becomes a standby cluster of another (host/port, or a
 * WAL archive through restore_command). Sets standby_cluster (the demoteCluster use case),
 * then waits until the leader runs as the standby leader.
 */
export async function demoteClusterCommand(ctx: CtlContext, opts: DemoteClusterOptions): Promise<void> {
  if (opts.host === undefined && opts.restoreCommand === undefined) {
    throw new CtlError('invalid_target', 'demote-cluster needs --host (the remote primary) or --restore-command (a WAL archive), or both');
  }
  const cluster = await readCluster(ctx);
  if (isStandby(cluster)) throw new CtlError('already_standby_cluster', `cluster ${ctx.scope} is already a standby cluster`);
  const leader = cluster.leader?.name;
  if (!leader) throw new CtlError('no_leader', `cluster ${ctx.scope} has no leader to demote`);
  const methods = opts.createReplicaMethods?.split(',').map((m) => m.trim()).filter((m) => m !== '');
  const standby: StandbyClusterInput = {
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    ...(opts.port !== undefined ? { port: numberOrText(opts.port) as number } : {}),
    ...(opts.primarySlotName !== undefined ? { primary_slot_name: opts.primarySlotName } : {}),
    ...(opts.restoreCommand !== undefined ? { restore_command: opts.restoreCommand } : {}),
    ...(opts.archiveCleanupCommand !== undefined ? { archive_cleanup_command: opts.archiveCleanupCommand } : {}),
    ...(opts.recoveryMinApplyDelay !== undefined ? { recovery_min_apply_delay: numberOrText(opts.recoveryMinApplyDelay)! } : {}),
    ...(methods?.length ? { create_replica_methods: methods } : {}),
  };
  const source = opts.host !== undefined ? `${opts.host}:${opts.port ?? 5432}` : 'the WAL archive';
  await confirmOrAbort(ctx, opts.force, `Demote cluster ${ctx.scope} to a standby cluster of ${source}? Its primary ${leader} stops accepting writes (and is rewound if its WAL went past the remote's)`);
  const change = await translated(() => demoteCluster({ store: ctx.store, agent: null }, standby));
  ctx.out(`Success: cluster ${ctx.scope} is set to replicate from ${source}; ${change.leader} becomes the standby leader`);
  if (opts.noWait) return;
  const now = await waitForRole(ctx, 'standby_leader', waitLimitMs(cluster));
  ctx.out(`Cluster ${ctx.scope} is a standby cluster: ${now.name} is the standby leader${now.timeline !== null ? ` (timeline ${now.timeline})` : ''}`);
}
