import { resolveConfig, type DynamicConfig } from '../domain/cluster/config/config.js';
import type { Cluster, Member } from '../domain/cluster/model/cluster.js';
import type { NodeStatus } from '../domain/cluster/model/status.js';
import {
  candidatesToProbe,
  checkEligibleCandidate,
  checkManualRequest,
  ManualFailoverError,
  manualFailoverOutcome,
  type ManualAction,
  type ManualFailoverPlan,
} from '../domain/cluster/rules/manual-failover.js';
import { explainMembers, explanationText, likelyWinner, type CandidateExplanation } from '../domain/cluster/rules/eligibility-explanation.js';
import { scheduleSwitchover, switchoverScheduleFromKey } from '../domain/cluster/rules/schedule.js';
import { DEFAULT_CONFIG } from '../domain/cluster/config/config.js';
import { DcsUnavailableError } from '../domain/errors.js';
import { DEFAULT_POLL_INTERVAL_MS, type CommandDeps } from './command-deps.js';
import { CommandError } from './command-error.js';
import { OutcomeWatch } from './outcome-watch.js';

/** A switchover or failover request as an operator gives it (absent fields null). */
export interface ManualFailoverInput {
  readonly leader: string | null;
  readonly candidate: string | null;
  /** ISO 8601 with a time zone; null: now. */
  readonly scheduledAt: string | null;
  /** Check everything and say who would be promoted, changing nothing. */
  readonly dryRun?: boolean;
}

/** What came of an accepted request. */
export type ManualFailoverResult =
  | { readonly kind: 'scheduled'; readonly message: string; readonly scheduledAt: string }
  | { readonly kind: 'done'; readonly message: string; readonly leader: string }
  | {
      readonly kind: 'dry_run';
      readonly message: string;
      /** Who would be promoted (null: any eligible member may win the race after the leader steps down). */
      readonly candidate: string | null;
      readonly members: readonly CandidateExplanation[];
    };

/** What a refusal of an immediate request carries besides its code: every member and why it is or is not eligible. */
export interface RefusalDetails {
  readonly members: readonly CandidateExplanation[];
}

const title = (action: ManualAction) => action[0]!.toUpperCase() + action.slice(1);

/** Asks each member for its status (this node answers from its own snapshot); null when unreachable. */
async function probe(deps: CommandDeps, members: readonly Member[]): Promise<Map<string, NodeStatus | null>> {
  const self = deps.agent?.snapshot() ?? null;
  const timeout = deps.options?.peerTimeoutMs ?? 2000;
  const entries = await Promise.all(
    members.map(async (m): Promise<[string, NodeStatus | null]> => {
      if (self !== null && m.name === self.node.name) return [m.name, self.status];
      if (!m.apiUrl) return [m.name, null];
      return [m.name, await deps.peers.fetchStatus(m.apiUrl, timeout)];
    }),
  );
  return new Map(entries);
}

/**
 * A refusal of step 6 with every member explained: the members are asked for their status
 * (those already asked are not asked again) and judged by the rules of this request.
 */
async function explainedRefusal(deps: CommandDeps, plan: ManualFailoverPlan, cluster: Cluster, config: DynamicConfig, err: ManualFailoverError, asked: Map<string, NodeStatus | null>): Promise<ManualFailoverError> {
  const missing = cluster.members.filter((m) => !asked.has(m.name));
  const statuses = new Map([...asked, ...(await probe(deps, missing))]);
  const members = explainMembers(plan.action, cluster, config, statuses);
  const details: RefusalDetails = { members };
  return new ManualFailoverError(err.code, `${err.message}. Members: ${explanationText(members)}`, details);
}

/**
 * Waits until the request's outcome is known or `2*max(10, loop_wait)` seconds pass. The
 * outcome is always judged on a read made after the request was written: at once when the
 * watch reports a change, and every poll interval in case the watch missed it.
 */
async function awaitOutcome(deps: CommandDeps, watch: OutcomeWatch, plan: ManualFailoverPlan, previousLeader: string | null, loopWait: number): Promise<ManualFailoverResult> {
  const { clock, store } = deps;
  const interval = deps.options?.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const deadline = clock.now() + 2 * Math.max(10, loopWait) * 1000;
  let last: Cluster | null = null;
  while (clock.now() < deadline) {
    await watch.sleep(clock, Math.min(interval, Math.max(0, deadline - clock.now())));
    let cluster: Cluster;
    try {
      cluster = await store.read();
    } catch (err) {
      if (err instanceof DcsUnavailableError) continue;
      throw err;
    }
    last = cluster;
    const outcome = manualFailoverOutcome(plan, previousLeader, cluster);
    if (outcome.done) return { kind: 'done', message: outcome.message, leader: outcome.leader };
    if (outcome.failed) throw new CommandError(`${plan.action}_failed`, `${title(plan.action)} failed`);
  }
  // The usual reason in pause: the leader's agent is stopped, and its lock has not run out yet.
  const holder = last?.leader?.name ?? null;
  const requestStands = last?.failover !== null && last?.failover !== undefined;
  // The lock can run out just before the deadline: then the race it opens is still on when the request stops waiting.
  const why = !requestStands
    ? ''
    : holder !== null && holder === previousLeader
      ? `: ${holder} still holds the leader lock and has not handed it over; if its agent is stopped, the request is carried out once that lock runs out (within ttl)`
      : holder === null
        ? ': the leader lock has run out and no member holds it yet; the request stands and decides the race that has begun (wardenctl list shows its outcome)'
        : '';
  throw new CommandError(`${plan.action}_status_unknown`, `${title(plan.action)} status unknown${why}`);
}

/**
 * A switchover or failover, checked in the documented order (the request alone, then the
 * cluster and the candidates' health), then written as a request with compare-and-set and
 * the agent woken; a scheduled one returns at once, an immediate one when its outcome shows.
 * Throws ManualFailoverError, ScheduleError or ValidationError for a refused request,
 * CommandError when writing or carrying it out failed, DcsUnavailableError.
 */
export async function runManualFailover(deps: CommandDeps, action: ManualAction, input: ManualFailoverInput): Promise<ManualFailoverResult> {
  const { clock, store, logger, agent, events } = deps;
  const startedAt = clock.now();
  // Read first but report an unreachable store only after the request checks, so a malformed
  // request gets its 400 even while the store is down.
  let cluster: Cluster | null = null;
  let storeError: unknown = null;
  try {
    cluster = await store.read();
  } catch (err) {
    if (!(err instanceof DcsUnavailableError)) throw err;
    storeError = err;
  }
  // An unreadable stored configuration is not an empty one: the agent's, which keeps the last it could read, decides.
  const config: DynamicConfig = cluster?.config && !cluster.config.unreadable ? resolveConfig(cluster.config.value) : (agent?.snapshot().config ?? DEFAULT_CONFIG);
  const dryRun = input.dryRun === true;
  const refused = (kind: ManualAction, err: unknown): unknown => {
    if (!dryRun && err instanceof Error && 'code' in err) {
      const code = String((err as { code: unknown }).code);
      deps.metrics?.operationRefused(kind, code);
      events?.emit(`${kind}_refused`, (err as Error).message, { code, ...(input.leader ? { leader: input.leader } : {}), ...(input.candidate ? { candidate: input.candidate } : {}) });
    }
    return err;
  };
  let plan: ManualFailoverPlan;
  try {
    plan = checkManualRequest({ action, leader: input.leader, candidate: input.candidate, scheduledAt: input.scheduledAt }, config.pause, clock.now());
  } catch (err) {
    throw refused(action, err);
  }
  if (cluster === null) throw storeError;
  logger.info(`received ${action} request${dryRun ? ' (dry run)' : ''}`, { leader: plan.leader, candidate: plan.candidate, scheduled_at: plan.scheduledAt, as: plan.action });
  if (plan.scheduledAt === null) {
    const asked = new Map<string, NodeStatus | null>();
    let winner: string | null = null;
    try {
      const probed = candidatesToProbe(plan, cluster, config);
      for (const [k, v] of await probe(deps, probed)) asked.set(k, v);
      checkEligibleCandidate(plan, cluster, config, probed, asked);
      if (dryRun) winner = plan.candidate ?? likelyWinner(explainMembers(plan.action, cluster, config, asked).filter((e) => probed.some((m) => m.name === e.name)))?.name ?? null;
    } catch (err) {
      throw refused(plan.action, err instanceof ManualFailoverError ? await explainedRefusal(deps, plan, cluster, config, err, asked) : err);
    }
    if (dryRun) {
      const all = explainMembers(plan.action, cluster, config, new Map([...asked, ...(await probe(deps, cluster.members.filter((m) => !asked.has(m.name))))]));
      const who = winner ?? plan.candidate;
      return {
        kind: 'dry_run',
        message: who ? `${title(plan.action)} would promote "${who}"` : `${title(plan.action)} would let the eligible members race`,
        candidate: who,
        members: all,
      };
    }
  } else {
    // One scheduled switchover at a time: a second must not silently replace the first.
    try {
      scheduleSwitchover(switchoverScheduleFromKey(cluster.failover), { leader: plan.leader ?? '', candidate: plan.candidate, scheduledAt: plan.scheduledAt }, { paused: config.pause, now: clock.now() });
    } catch (err) {
      throw refused(plan.action, err);
    }
    if (dryRun) {
      return { kind: 'dry_run', message: `${title(plan.action)} would be scheduled at ${plan.scheduledAt}`, candidate: plan.candidate, members: [] };
    }
  }
  // Watch before writing, so no change after the write can slip past the wait.
  const watch = plan.scheduledAt === null ? new OutcomeWatch(store) : null;
  try {
    const request = { leader: plan.leader, member: plan.candidate, scheduledAt: plan.scheduledAt };
    if (!(await store.writeFailover(request, cluster.failoverRevision))) {
      throw new CommandError('dcs_write_failed', 'failed to write the failover key into the DCS: it was changed meanwhile');
    }
    events?.emit(`${plan.action}_requested`, requestReason(plan), {
      ...(plan.leader ? { leader: plan.leader } : {}),
      ...(plan.candidate ? { candidate: plan.candidate } : {}),
      ...(plan.scheduledAt ? { scheduled_at: plan.scheduledAt } : {}),
    });
    agent?.wake();
    if (watch === null) {
      await agent?.refreshView().catch(() => undefined);
      return { kind: 'scheduled', message: `${title(plan.action)} scheduled`, scheduledAt: plan.scheduledAt! };
    }
    try {
      return await awaitOutcome(deps, watch, plan, cluster.leader?.name ?? null, config.loop_wait);
    } catch (err) {
      if (err instanceof CommandError) events?.emit(`${plan.action}_failed`, err.message, { code: err.code, duration_ms: clock.now() - startedAt });
      throw err;
    }
  } finally {
    watch?.close();
  }
}

/** The sentence of a `*_requested` event. */
function requestReason(plan: ManualFailoverPlan): string {
  const to = plan.candidate ? ` to ${plan.candidate}` : ' to the healthiest member';
  const from = plan.leader ? ` from ${plan.leader}` : '';
  const when = plan.scheduledAt ? ` scheduled at ${plan.scheduledAt}` : '';
  return `an operator asked for a ${plan.action}${from}${to}${when}`;
}
