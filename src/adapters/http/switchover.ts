import type { Cluster, Member } from '../../domain/cluster/model/cluster.js';
import { resolveConfig } from '../../domain/cluster/config/config.js';
import {
  candidatesToProbe,
  checkEligibleCandidate,
  checkManualRequest,
  manualFailoverOutcome,
  type ManualAction,
  type ManualFailoverPlan,
} from '../../domain/cluster/rules/manual-failover.js';
import { switchoverScheduleFromKey } from '../../domain/cluster/rules/schedule.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import { DcsUnavailableError } from '../../domain/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import { DEFAULT_POLL_INTERVAL_MS, type AgentApiDeps } from './api-deps.js';
import { readCluster } from './cluster-reader.js';
import { HttpError } from './errors.js';
import type { SwitchoverBody } from './schemas.js';

/** A response of an action endpoint: status and JSON body. */
export interface ActionResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const title = (action: ManualAction) => action[0]!.toUpperCase() + action.slice(1);

/** Asks each member for its status (this node answers from its own snapshot); null when unreachable. */
async function probe(deps: AgentApiDeps, members: readonly Member[]): Promise<Map<string, NodeStatus | null>> {
  const self = deps.control.snapshot();
  const timeout = deps.options?.peerTimeoutMs ?? 2000;
  const entries = await Promise.all(
    members.map(async (m): Promise<[string, NodeStatus | null]> => {
      if (m.name === self.node.name) return [m.name, self.status];
      if (!m.apiUrl) return [m.name, null];
      return [m.name, await deps.peers.fetchStatus(m.apiUrl, timeout)];
    }),
  );
  return new Map(entries);
}

/** Changes that can settle a request; a resync is a watch (re)connecting, after which changes may have been missed. */
const OUTCOME_KINDS: ReadonlySet<string> = new Set(['leader', 'failover', 'resync']);

/**
 * Cuts a waiting request's sleep short when the leader or failover key changes, through a
 * DCS watch taken before the failover key is written: the outcome is then read within
 * milliseconds of the change instead of at the next poll.
 */
class OutcomeWake {
  private ctl = new AbortController();
  private readonly unwatch: () => void;

  constructor(store: ClusterStore) {
    this.unwatch = store.watch((change) => {
      if (OUTCOME_KINDS.has(change.kind)) this.ctl.abort();
    });
  }

  /** Sleeps up to `ms`, less when a change arrived meanwhile (or since the last sleep). */
  async sleep(clock: Clock, ms: number): Promise<void> {
    await clock.sleep(ms, this.ctl.signal);
    // A change during the read that follows must cut the next sleep short too.
    if (this.ctl.signal.aborted) this.ctl = new AbortController();
  }

  close(): void {
    this.unwatch();
  }
}

/**
 * Waits until the request's outcome is known or `2*max(10, loop_wait)` seconds pass (spec
 * §7). The outcome is always judged on a DCS read made after the failover key was written:
 * at once when the watch reports a change of the leader or failover key, and every
 * `pollIntervalMs` in case the watch missed it.
 */
async function awaitOutcome(
  deps: AgentApiDeps,
  wake: OutcomeWake,
  plan: ManualFailoverPlan,
  previousLeader: string | null,
  loopWait: number,
): Promise<ActionResponse> {
  const { clock } = deps;
  const interval = deps.options?.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const deadline = clock.now() + 2 * Math.max(10, loopWait) * 1000;
  while (clock.now() < deadline) {
    await wake.sleep(clock, Math.min(interval, Math.max(0, deadline - clock.now())));
    let cluster: Cluster;
    try {
      cluster = (await readCluster(deps.store)).cluster;
    } catch (err) {
      if (err instanceof DcsUnavailableError) continue;
      throw err;
    }
    const outcome = manualFailoverOutcome(plan, previousLeader, cluster);
    if (outcome.done) return { status: 200, body: { message: outcome.message, leader: outcome.leader } };
    if (outcome.failed) return { status: 503, body: { error: `${plan.action}_failed`, message: `${title(plan.action)} failed` } };
  }
  return { status: 503, body: { error: `${plan.action}_status_unknown`, message: `${title(plan.action)} status unknown` } };
}

/**
 * `POST /switchover` and `POST /failover`: the checks of spec §7 in order, then the failover
 * key written with compare-and-set, the loop woken, and either 202 (scheduled) or the
 * outcome awaited. Throws typed errors the error middleware maps (400/412/422/503).
 */
export async function requestManualFailover(deps: AgentApiDeps, action: ManualAction, body: SwitchoverBody): Promise<ActionResponse> {
  const { control, clock, store, logger } = deps;
  // Read the cluster first but report an unreachable DCS only after the request checks, so a
  // malformed request gets its 400 even while the DCS is down.
  let view: { cluster: Cluster } | null = null;
  let dcsError: unknown = null;
  try {
    view = await readCluster(store);
  } catch (err) {
    if (!(err instanceof DcsUnavailableError)) throw err;
    dcsError = err;
  }
  const config = view?.cluster.config ? resolveConfig(view.cluster.config.value) : control.snapshot().config;
  const plan = checkManualRequest(
    { action, leader: body.leader ?? null, candidate: body.candidate ?? null, scheduledAt: body.scheduled_at ?? null },
    config.pause,
    clock.now(),
  );
  if (view === null) throw dcsError;
  const { cluster } = view;
  logger.info(`received ${action} request`, { leader: plan.leader, candidate: plan.candidate, scheduled_at: plan.scheduledAt, as: plan.action });
  if (plan.scheduledAt === null) {
    const probed = candidatesToProbe(plan, cluster, config);
    checkEligibleCandidate(plan, cluster, config, probed, await probe(deps, probed));
  }
  // Watch before writing, so no change after the write can slip past the wait.
  const wake = plan.scheduledAt === null ? new OutcomeWake(store) : null;
  try {
    const written = await store.writeFailover({ leader: plan.leader, member: plan.candidate, scheduledAt: plan.scheduledAt }, cluster.failoverRevision);
    if (!written) throw new HttpError(503, 'dcs_write_failed', 'failed to write the failover key into the DCS: it was changed meanwhile');
    control.wake();
    if (wake === null) {
      return { status: 202, body: { message: `${title(plan.action)} scheduled`, scheduled_at: plan.scheduledAt } };
    }
    return await awaitOutcome(deps, wake, plan, cluster.leader?.name ?? null, config.loop_wait);
  } finally {
    wake?.close();
  }
}

/** `DELETE /switchover`: removes a scheduled switchover (writes `{}` with compare-and-set); 404 when none is scheduled. */
export async function cancelScheduledSwitchover(deps: AgentApiDeps): Promise<ActionResponse> {
  const { cluster } = await readCluster(deps.store);
  if (switchoverScheduleFromKey(cluster.failover).kind === 'none') {
    return { status: 404, body: { error: 'not_scheduled', message: 'no switchover is scheduled' } };
  }
  const written = await deps.store.writeFailover(null, cluster.failover!.revision);
  if (!written) throw new HttpError(503, 'dcs_write_failed', 'failed to delete the scheduled switchover: the failover key was changed meanwhile');
  deps.control.wake();
  return { status: 200, body: { message: 'scheduled switchover deleted' } };
}
