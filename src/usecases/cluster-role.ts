import { mergePatch, type RawConfig, type StandbyClusterConfig } from '../domain/cluster/config/config.js';
import type { CommandDeps } from './command-deps.js';
import { CommandError } from './command-error.js';
import { replaceConfig } from './replace-config.js';

/** What a cluster replicates from once it is a standby cluster (the `standby_cluster` setting). */
export type StandbyClusterInput = StandbyClusterConfig;

/** The cluster's stored configuration with its revision, refusing a cluster without a leader (nobody would act on the change). */
async function readForRoleChange(deps: Pick<CommandDeps, 'store'>): Promise<{ value: RawConfig; revision: string | null; leader: string }> {
  const cluster = await deps.store.read();
  const leader = cluster.leader?.name ?? null;
  if (leader === null) throw new CommandError('no_leader', 'the cluster has no leader: nobody would carry the change out');
  return { value: cluster.config?.value ?? {}, revision: cluster.config?.revision ?? null, leader };
}

/** What promoteCluster and demoteCluster changed. */
export interface ClusterRoleChange {
  /** The whole new dynamic configuration. */
  readonly config: RawConfig;
  /** The leader that carries the change out (promotes, or becomes the standby leader). */
  readonly leader: string;
}

/**
 * Promotes a standby cluster (wardenctl promote-cluster): removes `standby_cluster` from the
 * dynamic configuration with a compare-and-set; the standby leader then promotes (a new
 * timeline) and the replicas follow it. Throws CommandError `not_standby_cluster` for a
 * primary cluster, `no_leader`, `config_conflict`; DcsUnavailableError.
 */
export async function promoteCluster(deps: Pick<CommandDeps, 'store' | 'agent'>): Promise<ClusterRoleChange> {
  const stored = await readForRoleChange(deps);
  if (stored.value['standby_cluster'] === undefined || stored.value['standby_cluster'] === null) {
    throw new CommandError('not_standby_cluster', 'the cluster is not a standby cluster (no standby_cluster in its configuration): nothing to promote');
  }
  const config = await replaceConfig(deps, { config: mergePatch(stored.value, { standby_cluster: null }), ifRevision: stored.revision });
  return { config, leader: stored.leader };
}

/**
 * Turns a primary cluster into a standby cluster of another (wardenctl demote-cluster): sets
 * `standby_cluster` (validated like any configuration: host or restore_command needed) with
 * a compare-and-set; the primary then stops, is rewound from the remote when its WAL went
 * past the remote's branch point, and runs as the standby leader. Throws CommandError
 * `already_standby_cluster`, `no_leader`, `config_conflict`; ValidationError `invalid_config`;
 * DcsUnavailableError.
 */
export async function demoteCluster(deps: Pick<CommandDeps, 'store' | 'agent'>, standby: StandbyClusterInput): Promise<ClusterRoleChange> {
  const stored = await readForRoleChange(deps);
  const current = stored.value['standby_cluster'];
  if (current !== undefined && current !== null) {
    throw new CommandError('already_standby_cluster', 'the cluster is already a standby cluster: change standby_cluster with edit-config, or promote it first');
  }
  const settings = Object.fromEntries(Object.entries(standby).filter(([, v]) => v !== undefined));
  const config = await replaceConfig(deps, { config: { ...stored.value, standby_cluster: settings }, ifRevision: stored.revision });
  return { config, leader: stored.leader };
}
