import type { Cluster, ScheduledRestart } from '../../domain/cluster/model/cluster.js';
import type { DynamicConfig } from '../../domain/cluster/config/config.js';
import type { LocalFacts } from '../../domain/cluster/model/facts.js';
import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import { buildStatus, clusterViewStale } from '../../domain/cluster/model/status.js';
import type { FencerStatus } from '../../ports/fencer.js';
import { leaderRef, unconfirmedPosition, type PositionConfirmation } from '../../domain/cluster/rules/position.js';
import type { AgentSettings } from './tokens.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import { ownIneligibility } from '../../domain/cluster/rules/eligibility-explanation.js';

/**
 * The status with `not_eligible` (why an automatic failover could not promote this node now)
 * before `svc`, which stays last; unchanged when the node is eligible or holds the lock.
 */
function withEligibility(status: NodeStatus, i: SnapshotInput, isLeader: boolean): NodeStatus {
  if (i.cluster === null) return status;
  const reasons = ownIneligibility(i.settings.node.name, status, i.settings.node.tags, i.cluster, i.config, isLeader);
  if (reasons === null) return status;
  const { svc, ...rest } = status;
  return Object.freeze({ ...rest, not_eligible: reasons, svc }) as NodeStatus;
}

/** What the published snapshot is made of. */
export interface SnapshotInput {
  readonly now: number;
  /** When the HA loop last finished a tick (a job's progress does not count). */
  readonly lastLoopAt: number;
  readonly facts: LocalFacts;
  readonly settings: AgentSettings;
  readonly config: DynamicConfig;
  readonly cluster: Cluster | null;
  readonly clusterReadAt: number | null;
  readonly dcsReachable: boolean;
  readonly lockDeadline: number | null;
  readonly jobName: string | null;
  readonly failsafeAcceptedAt: number | null;
  /** The decision kept this primary alive by a failsafe round. */
  readonly failsafeActive: boolean;
  /** The last decision: the data directory waits for an operator's rebuild (why and the command); null otherwise. */
  readonly reinitializeRequired?: string | null;
  /** The last decision: what the node waits for; null otherwise. */
  readonly waitingFor?: string | null;
  /** The last decision: the server runs without answering and was last seen as a primary. */
  readonly silentPrimary?: boolean;
  readonly watchdogUsable: boolean;
  readonly scheduledRestart: ScheduledRestart | null;
  /** This replica's proof that its WAL is a prefix of the leader's; null when it has none. */
  readonly positionConfirmed?: PositionConfirmation | null;
  /** The fencer's state. */
  readonly fencer?: FencerStatus;
}

/**
 * The NodeSnapshot the REST API answers from: the status document plus what health checks
 * need (lock expiry, last loop, DCS view age). A replica shows failsafe as active while it
 * has accepted a leader's failsafe ping within a ttl and has no DCS itself.
 */
export function nodeSnapshot(input: SnapshotInput): NodeSnapshot {
  const running = input.facts.running;
  const demotingJob = input.jobName === 'demote' || input.jobName === 'demote cluster';
  const transitionalRole = !running && input.jobName === 'promote' ? 'promoted' : !running && demotingJob ? 'demoted' : undefined;
  const standbyCluster = input.config.standby_cluster !== null;
  const isLeader = input.lockDeadline !== null && input.now < input.lockDeadline;
  // A leader demoting its running primary (the checkpoint before a switchover's shutdown, then
  // the shutdown) is already stopping: load balancers checking /primary take it out at once,
  // while it keeps the key and its clients' sessions until the server stops.
  const stopping = running && input.facts.inRecovery === false && input.jobName === 'demote' && isLeader;
  const i: SnapshotInput = stopping ? { ...input, facts: { ...input.facts, state: 'stopping' } } : input;
  const unconfirmed = unconfirmedPosition(i.facts, i.positionConfirmed ?? null, i.cluster ? leaderRef(i.cluster) : null, isLeader);
  const acceptedRecently = i.failsafeAcceptedAt !== null && i.now - i.failsafeAcceptedAt < i.config.ttl * 1000;
  const built = buildStatus({
    facts: i.facts,
    node: i.settings.node,
    config: i.config,
    cluster: i.cluster,
    isLeader,
    standbyCluster,
    dcsLastSeen: i.clusterReadAt === null ? null : Math.floor(i.clusterReadAt / 1000),
    clusterViewStale: clusterViewStale(i.clusterReadAt, i.now, i.config.ttl),
    dcsUnreachable: !i.dcsReachable,
    failsafeActive: i.failsafeActive || (!i.dcsReachable && acceptedRecently),
    watchdogFailed: i.settings.node.watchdogMode === 'required' && !i.watchdogUsable,
    scheduledRestart: i.scheduledRestart,
    positionUnconfirmed: unconfirmed,
    reinitializeRequired: i.reinitializeRequired ?? null,
    waitingFor: i.waitingFor ?? null,
    silentPrimary: i.silentPrimary === true,
    ...(i.fencer ? { fencer: i.fencer } : {}),
    ...(transitionalRole ? { transitionalRole } : {}),
  });
  const status = withEligibility(built, i, isLeader);
  return Object.freeze({
    status,
    facts: i.facts,
    node: i.settings.node,
    config: i.config,
    cluster: i.cluster,
    clusterReadAt: i.clusterReadAt,
    leaderLockExpiresAt: i.lockDeadline,
    lastLoopAt: i.lastLoopAt,
    standbyCluster,
  });
}
