import { LONG_ACTIONS, type Action, type AgentCommandErrorCode, type Decision, type SlotPlan } from '../../domain/cluster/ha/decision.js';
import { retryDelayMs } from '../../domain/cluster/ha/retry-backoff.js';
import { historyAfterPromotion, historyFromServer } from '../../domain/cluster/model/history.js';
import { WardenError } from '../../domain/errors.js';
import type { DcsOperation } from '../../adapters/metrics/dcs-operations.js';
import type { AgentMetricsSink } from '../../ports/agent-metrics.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import type { Clock } from '../../ports/clock.js';
import type { Database } from '../../ports/database.js';
import type { HookScripts } from '../../ports/hook-scripts.js';
import type { Logger } from '../../ports/logger.js';
import type { Watchdog } from '../../ports/watchdog.js';
import type { AgentMemory } from './agent-memory.js';
import type { CommandInbox } from './command-inbox.js';
import type { LeaderLease } from './leader-lease.js';
import type { RenewalPace } from './renewal-pace.js';
import { RepeatedFailures } from './repeated-failures.js';

/** The ports the runner acts through. */
export interface RunnerPorts {
  readonly store: ClusterStore;
  readonly db: Database;
  readonly watchdog: Watchdog;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The operator's blocking scripts (`db.pre_promote`, `bootstrap.post_bootstrap`); absent: none. */
  readonly hooks?: HookScripts;
  /** Counts the store calls that failed (svc_dcs_errors_total); absent or null: not counted. */
  readonly metrics?: Pick<AgentMetricsSink, 'dcsError'> | null;
}

/** The agent's state the actions change. */
export interface RunnerState {
  readonly lease: LeaderLease;
  readonly memory: AgentMemory;
  readonly inbox: CommandInbox;
}

/** Per-run facts the actions need. */
export interface RunContext {
  readonly me: string;
  readonly ttlSeconds: number;
  /** loop_wait, for the pause a failing slot upkeep announces. */
  readonly loopWaitSeconds?: number;
  /** The renewal this tick sent at its start: a refreshLeader takes its outcome instead of renewing again. */
  readonly renewed?: Renewal;
  /** `watchdog.safety_margin` (s): how long before the lock's deadline the fencer stops PostgreSQL (absent: renewals are not paced). */
  readonly safetyMarginSeconds?: number;
}

/** How a renewal of the leader lock went: renewed, found the key no longer ours, or failed (the store did not answer). */
export type Renewal = { readonly outcome: 'renewed' } | { readonly outcome: 'lost' } | { readonly outcome: 'failed'; readonly error: unknown };

/** How a sequence ended. */
export interface SequenceOutcome {
  /** Every action ran and succeeded. */
  readonly completed: boolean;
  /** Index (in the decision's actions) of the action that stopped the sequence. */
  readonly stoppedAt: number | null;
  readonly error: unknown;
}

/** The database actions; they must never run while a background job runs. */
const DATABASE_ACTIONS = new Set<Action['type']>([...LONG_ACTIONS, 'configure', 'setSynchronousStandbyNames', 'syncSlots', 'terminateSessions']);

/** An action met a failed condition (a lost race, a changed key). */
class ConditionFailed extends WardenError<'condition_failed'> {
  constructor(action: Action['type'], why: string) {
    super('condition_failed', `${action}: ${why}`);
  }
}

/** True for a database action. */
export function isDatabaseAction(a: Action): boolean {
  return DATABASE_ACTIONS.has(a.type);
}

/** Index of the first long action (from there a sequence runs as a background job), or -1. */
export function firstLongAction(actions: readonly Action[]): number {
  return actions.findIndex((a) => LONG_ACTIONS.has(a.type));
}

/** What the log says of a failed action. */
function failedLine(a: Action): string {
  return `${a.type} did not succeed`;
}

/** The command error code of a failure of any kind. */
function commandCode(error: unknown): AgentCommandErrorCode {
  return error instanceof WardenError && typeof error.code === 'string' ? (error.code as AgentCommandErrorCode) : 'action_failed';
}

/**
 * Applies a Decision's actions through the ports, in order, stopping at the first one that
 * fails (throws, or meets a failed condition such as a lost race). Lock grants go to the
 * LeaderLease; waiting commands are answered through the inbox, with the failure when the
 * sequence stopped before their answer.
 */
export class ActionRunner {
  constructor(
    private readonly ports: RunnerPorts,
    private readonly state: RunnerState,
    /** Called after every long action but a checkpoint (success or not), so the published snapshot follows the server; must not throw. */
    private readonly afterLongAction: () => Promise<void> = async () => {},
    /** Hears when the lock was taken and renewed (it says when renewals come late); null: nobody. */
    private readonly pace: RenewalPace | null = null,
  ) {
    this.failures = new RepeatedFailures(ports.logger, ports.clock);
  }

  /** Actions that fail loop after loop (a key etcd will not take) say why once, not every loop. */
  private readonly failures: RepeatedFailures;

  /**
   * The revision of the empty initialize key each running bootstrap created: its rollback drops
   * that claim and no other. Another member's claim, made since (its bootstrap started after this
   * one's lock went, or while this one's script ran), is that member's bootstrap under way.
   */
  private readonly claims = new WeakMap<Decision, string>();

  /**
   * Runs `decision.actions[from..to)`; then the rollback when the failing action is in its
   * range. `onAction` hears each action as it starts. `logFailure` false leaves the failure
   * to the caller's log line (a job says once why it failed).
   */
  async runRange(decision: Decision, from: number, to: number, ctx: RunContext, onAction?: (a: Action) => void, logFailure = true): Promise<SequenceOutcome> {
    const actions = decision.actions;
    for (let i = from; i < to; i++) {
      const action = actions[i]!;
      onAction?.(action);
      try {
        try {
          await this.apply(action, ctx, decision);
          this.failures.succeeded(failedLine(action), `${action.type} succeeds again`);
        } finally {
          // A checkpoint changes nothing the snapshot shows (a switchover's shutdown follows it at once). After a
          // stop the snapshot must show it before anything else happens: a switchover's candidate asks this node,
          // once the key is released, whether it still runs as primary.
          if (LONG_ACTIONS.has(action.type) && action.type !== 'checkpoint') await this.afterLongAction();
        }
      } catch (error) {
        if (logFailure) this.logFailure(action, error);
        this.failRemainingCommands(actions, i, actions.length, error);
        const rb = decision.rollback;
        const code = error instanceof WardenError ? String(error.code) : null;
        if (rb && i >= rb.fromIndex && i < rb.untilIndex && !(code !== null && rb.unless?.includes(code))) {
          const keepData = code !== null && rb.keepDataOn?.includes(code) === true;
          await this.runRollback(keepData ? rb.actions.filter((a) => a.type !== 'removeData') : rb.actions, ctx, decision);
        }
        return { completed: false, stoppedAt: i, error };
      }
    }
    return { completed: true, stoppedAt: null, error: null };
  }

  /**
   * Each step is tried even when one before it failed, except after a failed stop: the server
   * may still run, so its key is kept (no other member takes over beside it) and its data
   * stays; the next ticks deal with it.
   */
  private async runRollback(actions: readonly Action[], ctx: RunContext, decision: Decision): Promise<void> {
    for (const a of actions) {
      try {
        await this.apply(a, ctx, decision);
      } catch (error) {
        this.ports.logger.warn('rollback action failed', { action: a.type, error: describe(error) });
        if (a.type === 'stop') return;
      }
    }
  }

  private logFailure(action: Action, error: unknown): void {
    if (error instanceof ConditionFailed) {
      // It ran (a lost race, a changed key): whatever failed it before is over.
      this.failures.succeeded(failedLine(action), `${action.type} runs again (now: ${describe(error)})`);
      this.ports.logger.info(failedLine(action), { error: describe(error) });
    } else this.failures.failed(failedLine(action), describe(error));
  }

  private failRemainingCommands(actions: readonly Action[], from: number, to: number, error: unknown): void {
    for (let j = from; j < to; j++) {
      const a = actions[j]!;
      if (a.type !== 'resolveCommand' || !a.ok) continue;
      this.state.inbox.resolve(a.id, { ok: false, error: commandCode(error), message: describe(error) });
    }
  }

  /**
   * Slot upkeep is never worth stopping a sequence for: a failure is remembered (decide()
   * retries it with growing pauses) and logged when its reason changes, once.
   */
  private async syncSlots(plan: SlotPlan, ctx: RunContext): Promise<void> {
    const { memory } = this.state;
    const before = memory.memory.slotsFailure;
    try {
      await this.ports.db.syncSlots(plan);
      if (before !== null) {
        this.ports.logger.info(`replication slots in sync again after ${before.count} failed attempt${before.count > 1 ? 's' : ''}`);
        memory.remember({ slotsFailure: null });
      }
    } catch (error) {
      const text = describe(error).split('\n')[0]!.slice(0, 500);
      const count = (before?.count ?? 0) + 1;
      memory.remember({ slotsFailure: { job: 'slots', count, lastAt: this.ports.clock.now(), error: text } });
      const next = Math.round(retryDelayMs(count, (ctx.loopWaitSeconds ?? 10) * 1000) / 1000);
      if (before?.error !== text) this.ports.logger.warn(`replication slots not in sync (next attempt in ${next} s, then with growing pauses): ${text}`);
    }
  }

  /** Renews the leader lock, telling the lease how it went; never throws. */
  async renew(ctx: RunContext): Promise<Renewal> {
    const { lease } = this.state;
    // A renewal that fails has been failing since it was sent: one that waited retry_timeout for an answer
    // already used up that much of the lock (decide() steps down once renewals fail for retry_timeout).
    const sentAt = this.ports.clock.now();
    const mark = lease.mark();
    let lock;
    try {
      lock = await this.dcs('renew_leader', () => this.ports.store.renewLeader(ctx.me, ctx.ttlSeconds));
    } catch (error) {
      lease.renewalFailed(sentAt);
      return { outcome: 'failed', error };
    }
    if (lock === null) {
      lease.forget();
      lease.markLost();
      return { outcome: 'lost' };
    }
    // A renewal sent alongside a job (the tick's first one) must not bring back a lock the job gave up meanwhile.
    lease.renewedSince(mark, lock.deadline);
    if (ctx.safetyMarginSeconds !== undefined) this.pace?.renewed(sentAt, this.ports.clock.now(), ctx.ttlSeconds, ctx.safetyMarginSeconds);
    return { outcome: 'renewed' };
  }

  /**
   * A server becomes writable only while this node holds the lock at that very moment: an
   * agent stalled in the middle of a tick (frozen, a suspended machine, a clock that jumped)
   * resumes with a decision and a renewal made before the stall, while the lock may have run
   * out and another member taken it.
   */
  private mustHoldLock(action: Action['type']): void {
    if (this.state.lease.heldAt(this.ports.clock.now())) return;
    this.state.lease.markLost();
    throw new ConditionFailed(action, 'the leader lock ran out before this could run (the agent stalled, or its clock jumped)');
  }

  /**
   * A store call, its failure counted under `operation` and thrown on. A lost compare-and-set
   * (another member holds the key, the key changed meanwhile) is an answer (null or false),
   * not a failure: it is not counted.
   */
  private async dcs<T>(operation: DcsOperation, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      this.ports.metrics?.dcsError(operation);
      throw error;
    }
  }

  private async apply(a: Action, ctx: RunContext, decision: Decision): Promise<void> {
    const { store, db, watchdog } = this.ports;
    const { lease, memory, inbox } = this.state;
    switch (a.type) {
      case 'acquireLeader': {
        const sentAt = this.ports.clock.now();
        const lock = await this.dcs('acquire_leader', () => store.acquireLeader(ctx.me, ctx.ttlSeconds));
        if (lock === null) throw new ConditionFailed(a.type, 'another member holds the leader key');
        lease.granted(lock.deadline);
        this.pace?.acquired(sentAt);
        return;
      }
      case 'refreshLeader': {
        const r = ctx.renewed ?? (await this.renew(ctx));
        if (r.outcome === 'failed') throw r.error;
        if (r.outcome === 'lost') throw new ConditionFailed(a.type, 'the leader key is no longer ours');
        // The tick's early renewal may have been answered before the agent stalled for longer than the lock lasts.
        this.mustHoldLock(a.type);
        return;
      }
      case 'releaseLeader':
        lease.forget();
        await this.dcs('release_leader', () => store.releaseLeader(ctx.me));
        return;
      case 'forgetLock':
        lease.forget();
        return;
      case 'extendLockByFailsafe':
        lease.extendByFailsafe(ctx.ttlSeconds);
        return;
      case 'createInitialize': {
        // An empty value claims the bootstrap; a system identifier registers data this node already holds
        // (in place of an abandoned claim when `replacing` names its revision).
        const replacing = a.replacing;
        if (replacing !== undefined) {
          if (!(await this.dcs('replace_initialize', () => store.replaceInitialize(a.value, replacing)))) throw new ConditionFailed(a.type, 'another member initializes the cluster');
          return;
        }
        const revision = await this.dcs('claim_initialize', () => store.claimInitialize(a.value));
        if (revision === null) throw new ConditionFailed(a.type, 'another member initializes the cluster');
        if (a.value === '') this.claims.set(decision, revision);
        return;
      }
      case 'writeInitialize': {
        // A bootstrapper that stalled past its lock may find its claim dropped and another cluster registered.
        this.mustHoldLock(a.type);
        const facts = await db.probe();
        if (!facts.systemIdentifier) throw new WardenError('initialize_failed', 'the new cluster has no system identifier');
        const systemIdentifier = facts.systemIdentifier;
        if (!(await this.dcs('complete_initialize', () => store.completeInitialize(systemIdentifier)))) throw new ConditionFailed(a.type, 'the initialize key holds no claim to complete any more (another member registered a cluster, or dropped an abandoned claim)');
        return;
      }
      case 'deleteInitialize': {
        const revision = a.revision ?? this.claims.get(decision);
        if (revision !== undefined) await this.dcs('abandon_initialize', () => store.abandonInitialize(revision));
        return;
      }
      case 'writeConfig':
        await this.dcs('write_config', () => store.writeConfig(a.value, null));
        return;
      case 'recordPromotion': {
        const lines = historyAfterPromotion(a.previous, await db.timelineHistory(), a, a.maxLines);
        if (lines) await this.dcs('write_history', () => store.writeHistory(lines));
        return;
      }
      case 'syncHistory': {
        const lines = historyFromServer(a.previous, await db.timelineHistory(), a.maxLines);
        if (lines) await this.dcs('write_history', () => store.writeHistory(lines));
        return;
      }
      case 'writeStatus':
        await this.dcs('write_status', () => store.writeStatus({ optime: a.optime, slots: a.slots, ...(a.retainSlots ? { retainSlots: a.retainSlots } : {}) }));
        return;
      case 'writeFinalPosition': {
        try {
          const lsn = await db.shutdownCheckpoint();
          if (lsn !== null) await this.dcs('write_status', () => store.writeStatus({ optime: lsn, slots: {} }));
          else this.ports.logger.warn('the server did not shut down cleanly: no final position for the candidate to check');
        } catch (error) {
          this.ports.logger.warn('could not write the final WAL position; releasing the leader key anyway', { error: describe(error) });
        }
        return;
      }
      case 'writeSync': {
        const sync = { leader: a.leader, syncStandby: a.syncStandby, quorum: a.quorum, ...(a.promoting ? { promoting: a.promoting } : {}) };
        if (!(await this.dcs('write_sync', () => store.writeSync(sync, a.ifRevision === '0' ? null : a.ifRevision)))) throw new ConditionFailed(a.type, 'the sync key changed meanwhile');
        return;
      }
      case 'deleteSync':
        await this.dcs('clear_sync', () => store.clearSync());
        return;
      case 'writeFailsafe':
        await this.dcs('write_failsafe', () => store.writeFailsafe(a.members));
        return;
      case 'clearFailover':
        this.ports.logger.info('clearing the failover key', { reason: a.reason });
        await this.dcs('write_failover', () => store.writeFailover(null, a.revision));
        return;
      case 'initdb':
        return db.initdb(a.unfinished ? { unfinished: true } : {});
      case 'start':
        if (!a.standby) this.mustHoldLock(a.type);
        return db.start({ upstream: a.upstream, standby: a.standby, ...(a.slotName ? { slotName: a.slotName } : {}), timeoutMs: a.timeoutMs });
      case 'stop': {
        const until = beforeStopUntil(lease.deadline, ctx.safetyMarginSeconds);
        return db.stop(a.mode, a.timeoutMs, { ...(a.untilShutdownCheckpoint ? { untilShutdownCheckpoint: true } : {}), ...(until === null ? {} : { beforeStopUntil: until }) });
      }
      case 'restart':
        // A primary's restart brings it back writable: only under the lock, as a start as primary.
        if (memory.memory.lastRole === 'primary') this.mustHoldLock(a.type);
        return db.restart(a.timeoutMs);
      case 'promote':
        this.mustHoldLock(a.type);
        return db.promote(a.timeoutMs, {
          ...(a.walAtLeast === undefined ? {} : { walAtLeast: a.walAtLeast, catchUpMs: a.catchUpMs ?? 0 }),
          // Load balancers see the new primary as soon as it takes writes, not after the files are rewritten.
          onWritable: () => void this.afterLongAction(),
        });
      case 'prePromote': {
        const outcome = (await this.ports.hooks?.run('pre_promote')) ?? { ran: false };
        if (outcome.ran && !outcome.ok) throw new WardenError('pre_promote_failed', `the pre_promote script ${outcome.why}: not promoting, the leader key goes back`);
        return;
      }
      case 'postBootstrap': {
        this.mustHoldLock(a.type);
        const outcome = (await this.ports.hooks?.run('post_bootstrap')) ?? { ran: false };
        if (outcome.ran && !outcome.ok) throw new WardenError('post_bootstrap_failed', `the post_bootstrap script ${outcome.why}: the new cluster is not registered and its data directory is removed`);
        return;
      }
      case 'clearBootstrapMark':
        return db.clearBootstrapMark();
      case 'follow':
        return db.follow(a.upstream, { ...(a.slotName ? { slotName: a.slotName } : {}), timeoutMs: a.timeoutMs });
      case 'rewind':
        return db.rewind(a.source);
      case 'createReplica':
        return db.createReplica(a.source, { ...(a.methods ? { methods: a.methods } : {}), ...(a.replacing ? { replacing: true } : {}) });
      case 'removeData':
        return db.removeDataDirectory();
      case 'checkpoint':
        return db.checkpoint();
      case 'configure':
        await db.configure(a.parameters, a.local);
        memory.remember({ appliedParameters: a.key });
        return;
      case 'setSynchronousStandbyNames': {
        await db.setSynchronousStandbyNames(a.value);
        this.ports.logger.info('synchronous_standby_names set', { value: a.value });
        // Every commit acknowledged before now is at or below this position.
        const after = await db.probe();
        memory.remember({ ssn: { value: a.value, lsn: after.walLocation ?? 0 } });
        return;
      }
      case 'syncSlots':
        return this.syncSlots(a.plan, ctx);
      case 'copyLogicalSlots':
        return db.copyLogicalSlots(a.source, a.names, a.timeoutMs);
      case 'terminateSessions':
        return db.terminateClientSessions();
      case 'armWatchdog': {
        const ok = await watchdog.activate(a.timeoutSeconds);
        memory.watchdogUsable = ok;
        if (!ok && a.required) throw new WardenError('watchdog_failed', 'the watchdog is required but could not be armed');
        if (!ok) this.ports.logger.warn('the watchdog could not be armed; continuing without it (mode automatic)');
        return;
      }
      case 'kickWatchdog': {
        const ok = await watchdog.keepalive();
        if (!ok && a.required) {
          memory.watchdogUsable = false;
          lease.markLost();
          throw new WardenError('watchdog_failed', 'the watchdog is required but its keepalive failed');
        }
        if (!ok) this.ports.logger.warn('watchdog keepalive failed');
        return;
      }
      case 'disarmWatchdog':
        return watchdog.disable();
      case 'remember':
        memory.remember(a.patch);
        return;
      case 'resolveCommand':
        inbox.resolve(a.id, a.ok ? { ok: true, message: a.message } : { ok: false, error: a.error ?? 'action_failed', message: a.message });
        return;
    }
  }
}

/** Time the shutdown of a server may take after its before_stop script, before a lock's deadline (ms). */
const SHUTDOWN_ALLOWANCE_MS = 2000;

/**
 * Until when a stop may wait for the operator's before_stop script (epoch ms): for a lock
 * holder, the moment its fencer (or watchdog) would stop the server (`safetyMarginSeconds`
 * before the deadline, default 5 s) less the time a shutdown takes; null without the lock.
 */
export function beforeStopUntil(lockDeadline: number | null, safetyMarginSeconds: number | undefined): number | null {
  return lockDeadline === null ? null : lockDeadline - (safetyMarginSeconds ?? 5) * 1000 - SHUTDOWN_ALLOWANCE_MS;
}

/** A short text for an error of any kind. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
