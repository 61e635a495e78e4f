import { WardenError } from '../../errors.js';
import type { Cluster, Member } from '../model/cluster.js';
import type { DynamicConfig } from '../config/config.js';
import { eligibility, type ElectionContext } from './eligibility.js';
import { parseScheduleTime, SWITCHOVER_SCHEDULE_ERROR_CODES } from './schedule.js';
import type { NodeStatus } from '../model/status.js';

/** The endpoints that receive a request (`POST /switchover`, `POST /failover`). */
export const MANUAL_ACTIONS = ['switchover', 'failover'] as const;
/** The endpoint that received the request. */
export type ManualAction = (typeof MANUAL_ACTIONS)[number];

/**
 * A refused switchover or failover request; `code` is stable and decides the HTTP status
 * (400 unless noted, 412 for a cluster that does not allow it, 503 without a leader).
 */
export class ManualFailoverError extends WardenError<ManualFailoverErrorCode> {}

/** Why a switchover or failover request was refused: every code of ManualFailoverError. */
export const MANUAL_FAILOVER_ERROR_CODES = [
  'missing_candidate',
  'missing_leader',
  'failover_cannot_be_scheduled',
  'schedule_while_paused',
  'paused_without_candidate',
  'same_leader_and_candidate',
  'leader_mismatch',
  'candidate_not_member',
  'candidate_not_sync_standby',
  'no_sync_standby',
  'no_candidates',
  'no_eligible_candidate',
  'no_leader',
] as const;
/** Why a switchover or failover request was refused. */
export type ManualFailoverErrorCode = (typeof MANUAL_FAILOVER_ERROR_CODES)[number];

/**
 * Every code a switchover or failover request can be refused with (what
 * `svc_refused_operations_total` counts as `reason`): the checks' own (ManualFailoverError),
 * a malformed `scheduled_at` (ValidationError of parseScheduleTime) and, for a scheduled
 * switchover, the schedule's (ScheduleError of scheduleSwitchover).
 */
export const MANUAL_REQUEST_REFUSAL_CODES: readonly ManualRequestRefusalCode[] = [...new Set([...MANUAL_FAILOVER_ERROR_CODES, ...SWITCHOVER_SCHEDULE_ERROR_CODES])];
/** One of MANUAL_REQUEST_REFUSAL_CODES. */
export type ManualRequestRefusalCode = ManualFailoverErrorCode | (typeof SWITCHOVER_SCHEDULE_ERROR_CODES)[number];

/** A `POST /switchover` or `POST /failover` body, as received (absent fields null). */
export interface ManualFailoverRequest {
  readonly action: ManualAction;
  readonly leader: string | null;
  readonly candidate: string | null;
  readonly scheduledAt: string | null;
}

/** A request that passed steps 1-5: what to do, as which action (a failover naming a leader is a switchover). */
export interface ManualFailoverPlan {
  readonly action: ManualAction;
  readonly leader: string | null;
  readonly candidate: string | null;
  /** The timestamp as the operator wrote it; null for an immediate request. */
  readonly scheduledAt: string | null;
}

const fail = (code: ManualFailoverErrorCode, message: string): never => {
  throw new ManualFailoverError(code, message);
};

/**
 * The API's first five checks, in order, on the request alone (no cluster view needed beyond the
 * pause flag): missing fields, scheduling rules, pause without a candidate, failover with
 * a leader handled as a switchover, leader equal to candidate. Throws ManualFailoverError,
 * or a ValidationError from parseScheduleTime (`timezone_required` 400, `invalid_schedule`
 * and `schedule_in_past` 422).
 */
export function checkManualRequest(req: ManualFailoverRequest, paused: boolean, now: number): ManualFailoverPlan {
  const leader = req.leader || null;
  const candidate = req.candidate || null;
  // An empty scheduled_at is a malformed time (422), not "now": a script with an unset variable must not switch over at once.
  const scheduledAt = req.scheduledAt ?? null;
  // 1
  if (req.action === 'failover' && !candidate) fail('missing_candidate', 'candidate: failover could be performed only to a specific candidate');
  if (req.action === 'switchover' && !leader) fail('missing_leader', 'leader: switchover could be performed only from a specific leader');
  // 2
  if (scheduledAt !== null) {
    if (req.action === 'failover') fail('failover_cannot_be_scheduled', "scheduled_at: failover can't be scheduled");
    if (paused) fail('schedule_while_paused', "scheduled_at: can't schedule switchover in the paused state");
    parseScheduleTime(scheduledAt, now, 'scheduled_at');
  }
  // 3
  if (paused && !candidate) fail('paused_without_candidate', 'candidate: switchover is possible only to a specific candidate in a paused state');
  // 4
  const action: ManualAction = req.action === 'failover' && leader ? 'switchover' : req.action;
  // 5
  if (leader !== null && leader === candidate) fail('same_leader_and_candidate', 'switchover target and source are the same');
  return { action, leader, candidate, scheduledAt };
}

/** Highest timeline the cluster is known to have reached: the leader's, else one past the last history entry. */
export function clusterTimeline(cluster: Cluster): number | null {
  const leader = cluster.members.find((m) => m.name === cluster.leader?.name);
  if (leader?.timeline != null) return leader.timeline;
  const last = cluster.history?.lines.at(-1);
  return last ? last[0] + 1 : null;
}

function inSyncKey(cluster: Cluster, name: string): boolean {
  return cluster.sync?.syncStandby.includes(name) === true;
}

/**
 * Step 6, first half: the members whose REST API must be asked for their status before
 * deciding, or a refusal that needs no probe (no leader for a switchover 503; leader
 * mismatch, candidate not a member, not in the sync key, nobody to switch to: 412).
 */
export function candidatesToProbe(plan: ManualFailoverPlan, cluster: Cluster, config: DynamicConfig): Member[] {
  const leaderName = cluster.leader?.name ?? null;
  if (plan.action === 'switchover' && leaderName === null) fail('no_leader', `${plan.action} is not possible: the cluster has no leader`);
  if (plan.leader !== null && plan.leader !== leaderName) {
    fail('leader_mismatch', `leader name does not match: ${JSON.stringify(plan.leader)} is not the current leader (${leaderName === null ? 'none' : JSON.stringify(leaderName)})`);
  }
  const syncMode = config.synchronous_mode !== false;
  if (plan.candidate !== null) {
    if (plan.action === 'switchover' && syncMode && !inSyncKey(cluster, plan.candidate)) {
      fail('candidate_not_sync_standby', `candidate ${JSON.stringify(plan.candidate)} is not a synchronous standby (synchronous members: ${cluster.sync?.syncStandby.join(', ') || 'none'})`);
    }
    const member = cluster.members.find((m) => m.name === plan.candidate);
    if (!member) fail('candidate_not_member', `candidate ${JSON.stringify(plan.candidate)} does not exist (members: ${cluster.members.map((m) => m.name).join(', ') || 'none'})`);
    return [member!];
  }
  if (syncMode) {
    const members = cluster.members.filter((m) => inSyncKey(cluster, m.name) && m.name !== leaderName);
    if (!members.length) fail('no_sync_standby', `${plan.action} is not possible: can not find a synchronous standby`);
    return members;
  }
  const members = cluster.members.filter((m) => m.name !== leaderName && m.apiUrl);
  if (!members.length) fail('no_candidates', `${plan.action} is not possible: the cluster has no members except the leader`);
  return members;
}

/**
 * Step 6, second half: at least one probed member must pass the healthy-standby rules for
 * this kind of request (`statuses`: name -> its /node document, null when unreachable).
 * Throws ManualFailoverError `no_eligible_candidate` (412) with every member's reasons.
 */
export function checkEligibleCandidate(
  plan: ManualFailoverPlan,
  cluster: Cluster,
  config: DynamicConfig,
  probed: readonly Member[],
  statuses: ReadonlyMap<string, NodeStatus | null>,
): void {
  const ctx: ElectionContext = {
    kind: plan.action,
    clusterHasLeader: cluster.leader !== null,
    config,
    clusterTimeline: clusterTimeline(cluster),
    leaderOptime: cluster.status?.optime ?? cluster.members.find((m) => m.name === cluster.leader?.name)?.xlogLocation ?? null,
    sync: cluster.sync,
  };
  const verdicts = probed.map((m) => eligibility({ name: m.name, status: statuses.get(m.name) ?? null, tags: m.tags }, ctx));
  if (verdicts.some((v) => v.eligible)) return;
  fail('no_eligible_candidate', `${plan.action} is not possible: no good candidates have been found (${verdicts.map((v) => v.detail).join('; ')})`);
}

/** Outcome of a request the API waited for, from the cluster view after it was written. */
export type ManualFailoverOutcome =
  | { readonly done: true; readonly leader: string; readonly message: string }
  | { readonly done: false; readonly failed: boolean };

/**
 * Reads the outcome of an immediate request from a fresh cluster view: a new leader means
 * done (naming a different one than asked when the race chose it); the failover key gone
 * without a new leader means it failed; otherwise it is still running.
 */
export function manualFailoverOutcome(plan: ManualFailoverPlan, previousLeader: string | null, cluster: Cluster): ManualFailoverOutcome {
  const now = cluster.leader?.name ?? null;
  const past = plan.action === 'switchover' ? 'switched' : 'failed';
  if (now !== null && now !== previousLeader) {
    if (plan.candidate === null || plan.candidate === now) return { done: true, leader: now, message: `Successfully ${past} over to "${now}"` };
    const title = past[0]!.toUpperCase() + past.slice(1);
    return { done: true, leader: now, message: `${title} over to "${now}" instead of "${plan.candidate}"` };
  }
  // A failover to the node that already leads completes when the key is consumed.
  if (now !== null && now === plan.candidate && cluster.failover === null) {
    return { done: true, leader: now, message: `Successfully ${past} over to "${now}"` };
  }
  return { done: false, failed: cluster.failover === null };
}
