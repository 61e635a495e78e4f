import type { SyncState } from '../model/cluster.js';
import type { DynamicConfig } from '../config/config.js';
import type { TagValue } from '../model/node.js';
import { canLead, noLeadReason } from '../model/topology-tags.js';
import type { NodeStatus } from '../model/status.js';

/** Why a leader race runs: the leader is gone (automatic), an operator asked for a switchover, or a manual failover. */
export type ElectionKind = 'automatic' | 'switchover' | 'failover';

/** What the race knows about one candidate. */
export interface CandidateInfo {
  readonly name: string;
  /** its /node document; null = unreachable */
  readonly status: NodeStatus | null;
  readonly tags: Readonly<Record<string, TagValue>>;
}

/** The cluster-wide facts the rules compare a candidate with. */
export interface ElectionContext {
  readonly kind: ElectionKind;
  readonly clusterHasLeader: boolean;
  readonly config: DynamicConfig;
  /** highest known cluster timeline */
  readonly clusterTimeline: number | null;
  /** leader's last WAL position (status key optime) */
  readonly leaderOptime: number | null;
  readonly sync: SyncState | null;
}

/** One failed healthy-standby rule. */
export type IneligibleReason = 'unreachable' | 'dcs_unreachable' | 'nofailover' | 'watchdog_failed' | 'lag_exceeded' | 'timeline_behind' | 'not_synchronous';

/** Verdict on one candidate: every failed rule, and a sentence for logs and 412 bodies. */
export interface Eligibility {
  readonly eligible: boolean;
  readonly reasons: readonly IneligibleReason[];
  readonly detail: string;
}

/** The most advanced WAL position a status document shows (primary: location; replica: max of received and replayed). */
export function statusWalPosition(status: NodeStatus): number | null {
  const x = status.xlog;
  if (!x) return null;
  if ('location' in x) return x.location;
  const known = [x.received_location, x.replayed_location].filter((v): v is number => typeof v === 'number');
  return known.length ? Math.max(...known) : null;
}

/** Bytes the candidate is behind the leader's last optime; null when the leader's position is unknown. */
export function candidateLag(status: NodeStatus, leaderOptime: number | null): number | null {
  if (leaderOptime === null) return null;
  const pos = statusWalPosition(status);
  return pos === null ? Infinity : Math.max(0, leaderOptime - pos);
}

/**
 * Lag and timeline (rules 4 and 5) apply to a switchover on a healthy cluster and to an
 * automatic failover. A manual failover is the operator's explicit choice: with no leader
 * it may lose data by design (the API's documented exception), and with a leader the API names no
 * such check either.
 */
function checksProgress(ctx: ElectionContext): boolean {
  return ctx.kind === 'automatic' || (ctx.kind === 'switchover' && ctx.clusterHasLeader);
}

/** Rule 6: whether synchronous membership is required, and whether this candidate has it. */
function synchronousProblem(name: string, ctx: ElectionContext): string | null {
  if (ctx.config.synchronous_mode === false || ctx.kind === 'failover') return null;
  const members = ctx.sync?.syncStandby ?? [];
  if (ctx.kind === 'switchover') {
    return members.includes(name) ? null : `not listed in the sync key (synchronous members: ${members.join(', ') || 'none'})`;
  }
  // Automatic failover: once a sync key exists, only its members (or the primary it names,
  // coming back) are known to hold every committed transaction.
  if (ctx.sync === null || members.includes(name) || ctx.sync.leader === name) return null;
  return `not a synchronous standby (synchronous members: ${members.join(', ') || 'none'})`;
}

/**
 * The six healthy-standby rules of the seed, plus the member's own word that its agent cannot
 * reach the DCS (it cannot take the key), with the manual-failover exception
 * (`failover` without a leader ignores lag, timeline and sync membership). Every failed
 * rule is reported, not only the first, so an operator sees the whole picture at once.
 */
export function eligibility(c: CandidateInfo, ctx: ElectionContext): Eligibility {
  const reasons: IneligibleReason[] = [];
  const details: string[] = [];
  const fail = (reason: IneligibleReason, detail: string) => {
    reasons.push(reason);
    details.push(detail);
  };
  const status = c.status !== null && c.status.xlog !== undefined ? c.status : null;
  if (status === null) fail('unreachable', c.status === null ? 'its REST API did not answer' : 'its database is not running (no WAL position)');
  // Its agent cannot take the key: waiting for it, or sending it a switchover, would only keep the cluster without a primary.
  if (c.status?.dcs_unreachable === true) fail('dcs_unreachable', 'its agent cannot reach the DCS');
  if (!canLead(c.tags)) fail('nofailover', noLeadReason(c.tags));
  if (c.status?.watchdog_failed === true) fail('watchdog_failed', 'its watchdog is required but not working');
  if (status !== null && checksProgress(ctx)) {
    const lag = candidateLag(status, ctx.leaderOptime);
    const max = ctx.config.maximum_lag_on_failover;
    if (lag !== null && lag > max) {
      fail('lag_exceeded', lag === Infinity ? 'it has no WAL position to compare with the leader' : `lag ${lag} bytes exceeds maximum_lag_on_failover ${max}`);
    }
    if (ctx.config.check_timeline && ctx.clusterTimeline !== null) {
      const tl = status.timeline ?? null;
      if (tl === null || tl < ctx.clusterTimeline) fail('timeline_behind', `timeline ${tl ?? 'unknown'} is below the cluster timeline ${ctx.clusterTimeline}`);
    }
  }
  const sync = synchronousProblem(c.name, ctx);
  if (sync !== null) fail('not_synchronous', sync);
  return Object.freeze({
    eligible: reasons.length === 0,
    reasons: Object.freeze(reasons),
    detail: reasons.length === 0 ? `${c.name} is eligible` : `${c.name} is not eligible: ${details.join('; ')}`,
  });
}
