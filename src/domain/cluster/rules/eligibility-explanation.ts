import type { Cluster } from '../model/cluster.js';
import type { DynamicConfig } from '../config/config.js';
import { canLead, failoverPriority, noLeadReason } from '../model/topology-tags.js';
import type { NodeStatus } from '../model/status.js';
import { candidateLag, eligibility, statusWalPosition, type CandidateInfo, type ElectionContext, type ElectionKind, type IneligibleReason } from './eligibility.js';
import { clusterTimeline } from './manual-failover.js';

/**
 * One reason a member cannot be promoted, with the figures behind it. `not_running` refines
 * the rules' `unreachable` (the API answered, the database did not); `leader` marks the
 * member that holds the leader key (it is not a candidate of its own switchover).
 */
export interface EligibilityReason {
  readonly code: IneligibleReason | 'not_running' | 'leader';
  readonly detail: string;
  readonly lag_bytes?: number | null;
  readonly maximum_lag_on_failover?: number;
  readonly timeline?: number | null;
  readonly cluster_timeline?: number;
  readonly synchronous_members?: readonly string[];
}

/** Why one member is or is not eligible for promotion, as operators read it in refusals, dry runs and `/node`. */
export interface CandidateExplanation {
  readonly name: string;
  readonly eligible: boolean;
  /** Empty when eligible. */
  readonly reasons: readonly EligibilityReason[];
  /** Bytes behind the leader's last known position; null when unknown. */
  readonly lag_bytes: number | null;
  readonly timeline: number | null;
  /** Most advanced WAL position the member reported; null when unknown. */
  readonly wal_position: number | null;
  /** Its failover_priority tag (0: never leads); among members with as much WAL, the higher leads. */
  readonly failover_priority: number;
}

function syncMembers(ctx: ElectionContext): readonly string[] {
  return ctx.sync?.syncStandby ?? [];
}

/**
 * The verdict of the healthy-standby rules (`eligibility`, unchanged) for one candidate,
 * explained reason by reason with the figures an operator needs: the lag and the limit, the
 * timelines, the synchronous members. The verdict is always the rules' own.
 */
export function explainCandidate(c: CandidateInfo, ctx: ElectionContext): CandidateExplanation {
  const verdict = eligibility(c, ctx);
  const status = c.status !== null && c.status.xlog !== undefined ? c.status : null;
  const lag = status === null ? null : candidateLag(status, ctx.leaderOptime);
  const lagBytes = lag === null || lag === Infinity ? null : lag;
  const timeline = status?.timeline ?? null;
  const reasons: EligibilityReason[] = verdict.reasons.map((code): EligibilityReason => {
    switch (code) {
      case 'unreachable':
        return c.status === null
          ? { code, detail: 'its REST API did not answer' }
          : { code: 'not_running', detail: `its database is not running (state ${c.status.state})` };
      case 'dcs_unreachable':
        return { code, detail: 'its agent cannot reach the DCS (it cannot take the leader key)' };
      case 'nofailover':
        return { code, detail: noLeadReason(c.tags) };
      case 'watchdog_failed':
        return { code, detail: 'its watchdog is required but not working' };
      case 'lag_exceeded':
        return {
          code,
          detail: lagBytes === null ? 'it reports no WAL position to compare with the leader' : `lag ${lagBytes} bytes exceeds maximum_lag_on_failover ${ctx.config.maximum_lag_on_failover} bytes`,
          lag_bytes: lagBytes,
          maximum_lag_on_failover: ctx.config.maximum_lag_on_failover,
        };
      case 'timeline_behind':
        return {
          code,
          detail: `timeline ${timeline ?? 'unknown'} is below the cluster timeline ${ctx.clusterTimeline ?? '?'}`,
          timeline,
          ...(ctx.clusterTimeline !== null ? { cluster_timeline: ctx.clusterTimeline } : {}),
        };
      case 'not_synchronous': {
        const last = ctx.sync?.leader ?? null;
        // A key naming its primary and no standby: commits were acknowledged without one, and only that primary holds them all.
        const alone = syncMembers(ctx).length === 0 && last !== null && last !== c.name && ctx.kind === 'automatic';
        return {
          code,
          detail: alone
            ? `not in the synchronous set: the sync key names no standby, so only ${last} is known to hold every acknowledged commit (start it again, or fail over by hand accepting the loss of what only it holds)`
            : `not in the synchronous set (synchronous members: ${syncMembers(ctx).join(', ') || 'none'})`,
          synchronous_members: [...syncMembers(ctx)],
        };
      }
    }
  });
  return Object.freeze({
    name: c.name,
    eligible: verdict.eligible,
    reasons: Object.freeze(reasons),
    lag_bytes: lagBytes,
    timeline,
    wal_position: status === null ? null : statusWalPosition(status),
    failover_priority: failoverPriority(c.tags),
  });
}

/** One sentence per member: `node2: eligible`, `node3: lag 5000 bytes exceeds ...`. */
export function explanationText(explanations: readonly CandidateExplanation[]): string {
  return explanations.map((e) => `${e.name}: ${e.eligible ? 'eligible' : e.reasons.map((r) => r.detail).join('; ')}`).join('; ');
}

/**
 * Among the eligible members, the one a leader race would promote: the latest timeline,
 * then the most WAL, then the highest failover_priority (names break ties, as the race's
 * first answer would); null when none.
 */
export function likelyWinner(explanations: readonly CandidateExplanation[]): CandidateExplanation | null {
  let best: CandidateExplanation | null = null;
  for (const e of explanations) {
    if (!e.eligible) continue;
    if (best === null) {
      best = e;
      continue;
    }
    const [tl, btl] = [e.timeline ?? 0, best.timeline ?? 0];
    const [wal, bwal] = [e.wal_position ?? 0, best.wal_position ?? 0];
    const [prio, bprio] = [e.failover_priority ?? 1, best.failover_priority ?? 1];
    const same = tl === btl && wal === bwal;
    if (tl > btl || (tl === btl && wal > bwal) || (same && prio > bprio) || (same && prio === bprio && e.name < best.name)) best = e;
  }
  return best;
}

/** The election context a request of `kind` is judged in, from the cluster view. */
export function requestContext(kind: ElectionKind, cluster: Cluster, config: DynamicConfig): ElectionContext {
  return {
    kind,
    clusterHasLeader: cluster.leader !== null,
    config,
    clusterTimeline: clusterTimeline(cluster),
    leaderOptime: cluster.status?.optime ?? cluster.members.find((m) => m.name === cluster.leader?.name)?.xlogLocation ?? null,
    sync: cluster.sync,
  };
}

/**
 * Every member of the cluster explained for a request of `kind` (`statuses`: name -> its
 * /node document, null when unreachable; a member not asked counts as unreachable). The
 * leader is listed with the reason `leader` for a switchover, where it is the one stepping down.
 */
export function explainMembers(
  kind: ElectionKind,
  cluster: Cluster,
  config: DynamicConfig,
  statuses: ReadonlyMap<string, NodeStatus | null>,
): CandidateExplanation[] {
  const ctx = requestContext(kind, cluster, config);
  const leader = cluster.leader?.name ?? null;
  return [...cluster.members]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((m) => {
      const status = statuses.get(m.name) ?? null;
      if (m.name === leader && kind === 'switchover') {
        return Object.freeze({
          name: m.name,
          eligible: false,
          reasons: [{ code: 'leader' as const, detail: 'holds the leader key (it is the one stepping down)' }],
          lag_bytes: 0,
          timeline: status?.timeline ?? m.timeline,
          wal_position: status ? statusWalPosition(status) : m.xlogLocation,
          failover_priority: failoverPriority(status?.tags ?? m.tags),
        });
      }
      return explainCandidate({ name: m.name, status, tags: status?.tags ?? m.tags }, ctx);
    });
}

/**
 * Why this node could not be promoted by an automatic failover right now (the reasons its
 * `/node` shows), or null when it could, or when it holds the leader key itself.
 */
export function ownIneligibility(name: string, status: NodeStatus, tags: CandidateInfo['tags'], cluster: Cluster | null, config: DynamicConfig, isLeader: boolean): readonly EligibilityReason[] | null {
  if (isLeader) return null;
  const view = cluster;
  const ctx: ElectionContext = view
    ? requestContext('automatic', view, config)
    : { kind: 'automatic', clusterHasLeader: false, config, clusterTimeline: null, leaderOptime: null, sync: null };
  const e = explainCandidate({ name, status, tags: !canLead(tags) ? tags : (status.tags ?? tags) }, ctx);
  return e.eligible ? null : e.reasons;
}
