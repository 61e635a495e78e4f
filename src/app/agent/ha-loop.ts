import { inject, injectable, optional } from 'inversify';
import type { Decision, RestartConditions } from '../../domain/cluster/ha/decision.js';
import type { HistoryLine, ScheduledRestart } from '../../domain/cluster/model/cluster.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import type { ActionResult, AgentControl, FailsafePing } from '../../ports/agent-control.js';
import { AgentMetricsSink } from '../../ports/agent-metrics.js';
import { Clock } from '../../ports/clock.js';
import { ClusterStore, type ClusterChange } from '../../ports/cluster-store.js';
import { Database } from '../../ports/database.js';
import { Logger } from '../../ports/logger.js';
import { PeerApi } from '../../ports/peer-api.js';
import { Watchdog } from '../../ports/watchdog.js';
import { Fencer } from '../../ports/fencer.js';
import { DisabledFencer } from '../../adapters/fencer/disabled-fencer.js';
import { stoppedFacts } from '../../domain/cluster/model/facts.js';
import { shutdownPlan } from '../../domain/cluster/ha/shutdown-plan.js';
import { leaderRef, type PositionConfirmation } from '../../domain/cluster/rules/position.js';
import { noStream } from '../../domain/cluster/model/topology-tags.js';
import { beforeStopUntil, describe } from './action-runner.js';
import { AgentMemory } from './agent-memory.js';
import { ClusterObserver } from './cluster-observer.js';
import { CommandInbox } from './command-inbox.js';
import { FailsafeWitness } from './failsafe-witness.js';
import { JobRunner } from './job-runner.js';
import { LeaderLease } from './leader-lease.js';
import { LocalObserver } from './local-observer.js';
import { memberRecord } from './member-record.js';
import { SettingsKeeper } from './settings-keeper.js';
import { SnapshotPublisher } from './snapshot-publisher.js';
import { SnapshotRefresher } from './snapshot-refresher.js';
import { FreshStatus } from './fresh-status.js';
import { TickPipeline } from './tick-pipeline.js';
import { TickScheduler } from './tick-scheduler.js';
import { EventReporter } from './event-reporter.js';
import { PreferredLeader } from './preferred-leader.js';
import { COMMAND_DCS_OPERATIONS, DcsErrorCountingStore, SHUTDOWN_DCS_OPERATIONS } from './dcs-error-counting-store.js';
import { EventLog } from '../../ports/events.js';
import { CallbackRunner } from '../../ports/callbacks.js';
import { HookScripts } from '../../ports/hook-scripts.js';
import { InMemoryEventLog } from '../../adapters/events/in-memory-event-log.js';
import { NoCallbacks } from '../../adapters/callbacks/child-process-callback-runner.js';
import { AgentSettingsSource, HaLoopOptions } from './tokens.js';
import { callbacksEndWithin, SHUTDOWN_CALLBACK_GRACE_MS } from './shutdown-callback-grace.js';
import type { Problem } from '../../domain/errors.js';

/** Changes that wake the loop at once (the leader key: see onClusterChange). */
const WAKING_KINDS = new Set<ClusterChange['kind']>(['failover', 'config', 'initialize', 'sync', 'resync']);

/**
 * The agent's HA loop, put together from parts with one job each (design "Flow of one agent
 * tick"): the TickScheduler decides when to tick, the TickPipeline runs a tick (observe,
 * decide, act), the CommandInbox holds what operators asked, the JobRunner runs the long
 * database actions in the background, the LeaderLease keeps the lock's deadline, and the
 * SnapshotPublisher holds what the REST API answers from (the SnapshotRefresher keeps it
 * fresh between ticks). Implements AgentControl for the
 * operator commands; the API never waits on the loop for a read.
 */
@injectable()
export class HaLoop implements AgentControl {
  private readonly settings: SettingsKeeper;
  private readonly memory = new AgentMemory();
  private readonly lease = new LeaderLease();
  private readonly inbox: CommandInbox;
  private readonly jobs: JobRunner;
  private readonly cluster: ClusterObserver;
  private readonly local: LocalObserver;
  private readonly failsafe: FailsafeWitness;
  private readonly publisher: SnapshotPublisher;
  private readonly pipeline: TickPipeline;
  private readonly scheduler: TickScheduler;
  private readonly refresher: SnapshotRefresher;
  private readonly fresh: FreshStatus;
  private readonly reporter: EventReporter;
  private readonly preferred: PreferredLeader;
  private readonly callbacks: CallbackRunner;
  /** The store as the shutdown uses it: its failed calls are counted as `shutdown_*`. */
  private readonly shutdownStore: ClusterStore;
  /** The agent's event stream (`GET /events`). */
  readonly events: EventLog;
  private unwatch: (() => void) | null = null;
  /** The fencer guards a deadline of this node's lock. */
  private fenceGuarded = false;
  /** A promotion (or start as primary) failed or timed out, and the server has not been down since: it may still complete. */
  private writeMayComplete = false;
  /** The leader key's holder as the watch last reported it (undefined before the first event). */
  private watchedLeader: string | null | undefined = undefined;
  /** When the watch last came back after missing changes (null: it has missed none since the last view read). */
  private watchResyncedAt: number | null = null;

  constructor(
    @inject(ClusterStore) private readonly store: ClusterStore,
    @inject(Database) private readonly db: Database,
    @inject(Clock) private readonly clock: Clock,
    @inject(Watchdog) private readonly watchdog: Watchdog,
    @inject(Logger) private readonly logger: Logger,
    @inject(PeerApi) peers: PeerApi,
    @inject(AgentSettingsSource) settings: AgentSettingsSource,
    @inject(HaLoopOptions) @optional() options?: HaLoopOptions,
    @inject(AgentMetricsSink) @optional() metrics?: AgentMetricsSink,
    @inject(Fencer) @optional() private readonly fencer: Fencer = new DisabledFencer(),
    @inject(EventLog) @optional() events?: EventLog,
    @inject(CallbackRunner) @optional() callbacks?: CallbackRunner,
    @inject(HookScripts) @optional() hooks?: HookScripts,
  ) {
    this.events = events ?? new InMemoryEventLog({ member: settings.current().node.name, clock, logger: null, capacity: 1000 });
    this.callbacks = callbacks ?? new NoCallbacks();
    this.shutdownStore = new DcsErrorCountingStore(store, metrics ?? null, SHUTDOWN_DCS_OPERATIONS);
    this.reporter = new EventReporter({
      events: this.events,
      callbacks: this.callbacks,
      metrics: metrics ?? null,
      clock,
      me: () => this.settings.current.node.name,
    });
    this.fencer.onFenced?.((r) =>
      this.reporter.fenced(`the fencer stopped PostgreSQL: ${r.reason}${r.stopped ? '' : ' (the stop could not be confirmed)'}`, r.durationMs, r.at),
    );
    this.lease.onChange = (deadline) => {
      this.reporter.leaseChanged(deadline);
      if (deadline === null) {
        // The health checks stop answering as leader now, before the key can move to another
        // member, not at the next publication of the snapshot.
        this.publisher.publish();
        return this.unguardWhenSafe();
      }
      this.fenceGuarded = true;
      this.fencer.guard(deadline);
    };
    this.settings = new SettingsKeeper(settings, logger);
    this.inbox = new CommandInbox(() => this.wake());
    // A failed job is retried at the normal pace, not at once (a fast failure would spin).
    this.jobs = new JobRunner(clock, (_name, completed, mayWrite) => {
      // A promotion that timed out goes on inside PostgreSQL: the server may still become writable.
      if (mayWrite && !completed) this.writeMayComplete = true;
      if (completed) this.wake();
    });
    this.cluster = new ClusterObserver(store, clock, logger, this.memory, metrics ?? null, () => this.settings.current.local.bootstrapDcs);
    this.local = new LocalObserver(db, clock, this.memory, () => leaderRef(this.cluster.cluster), () => this.unguardWhenSafe(), () => noStream(this.settings.current.node.tags));
    this.failsafe = new FailsafeWitness(() => this.settings.current.node.name, this.cluster, this.local, clock);
    this.publisher = new SnapshotPublisher({
      now: () => clock.now(),
      settings: () => this.settings.current,
      facts: () => this.local.facts,
      cluster: () => this.cluster.current,
      lockDeadline: () => this.lease.deadline,
      jobName: () => this.jobs.name,
      failsafeAcceptedAt: () => this.failsafe.acceptedAt,
      watchdogUsable: () => this.memory.watchdogUsable,
      scheduledRestart: () => this.memory.memory.scheduledRestart,
      positionConfirmed: () => this.trustedPosition(),
      fencer: () => this.fencer.status(),
    });
    this.pipeline = new TickPipeline(
      { store, db, watchdog, clock, logger, peers, metrics: metrics ?? null, ...(hooks ? { hooks } : {}) },
      {
        settings: this.settings,
        cluster: this.cluster,
        local: this.local,
        memory: this.memory,
        lease: this.lease,
        inbox: this.inbox,
        jobs: this.jobs,
        snapshot: this.publisher,
        failsafeConfirmed: () => this.failsafe.confirmation(),
        promotionMayComplete: () => this.writeMayComplete,
        reporter: this.reporter,
        fencerOn: () => this.fencer.status().state !== 'off',
      },
      { peerTimeoutMs: options?.peerTimeoutMs ?? 2000, failsafeTimeoutMs: options?.failsafeTimeoutMs ?? 2000 },
    );
    this.publisher.onPublish = (snap) => this.reporter.snapshotPublished(snap, this.jobs.name);
    // The switchover it asks for runs the operator's command: its DCS calls are counted as the API's.
    this.preferred = new PreferredLeader({ store: new DcsErrorCountingStore(store, metrics ?? null, COMMAND_DCS_OPERATIONS), clock, logger, peers, agent: this, events: this.events, metrics: metrics ?? null }, () => this.settings.current.node.name);
    this.scheduler = new TickScheduler(clock, () => this.cluster.current.config.loop_wait * 1000, async () => {
      const { decision, retick } = await this.pipeline.run();
      const view = this.cluster.current;
      this.preferred.check(view.reachable ? view.cluster : null, view.config, this.lease.deadline !== null, this.settings.current.node.tags);
      return { wakeAt: decision.wakeAt, retick };
    });
    this.fresh = new FreshStatus(() => this.local.peek(), (facts) => this.publisher.preview(facts).status);
    this.refresher = new SnapshotRefresher(clock, options?.snapshotRefreshMs ?? 1000, () =>
      this.scheduler.runExclusive(async () => {
        await this.local.observe();
        this.publisher.publish();
      }),
    );
  }

  /** Starts the loop (and the cluster watch). Returns at once. */
  start(): void {
    if (this.unwatch) return;
    this.unwatch = this.store.watch((change) => this.onClusterChange(change));
    this.scheduler.start();
    this.refresher.start();
  }

  /**
   * Stops the loop. With `releaseLeader` (default true) a held leader lock is released
   * after PostgreSQL has been stopped cleanly (`stopDatabase`, default true), so no other
   * member promotes while this one still writes; the member record then says `stopped` until
   * its lease runs out.
   *
   * With `leaveRunningInPause`, a paused cluster's member keeps its server running, so the
   * agent can be restarted or upgraded without an outage: a replica as it is; the leader only
   * once its lock is renewed a last time and the fencer guards it without the agent (it stops
   * the server before the lock runs out unless this node's agent starts again and renews it).
   * A primary that does not hold the lock is stopped as usual: nothing would guard it. A leader
   * whose server does not stop keeps its lock (handed to the fencer when it can take it), so
   * nobody promotes while that server may still take writes. Returns whether the server was
   * (or may have been) left running.
   *
   * A server this shutdown stops gets its on_stop callback, once; one left running gets none.
   * The exit waits for that callback SHUTDOWN_CALLBACK_GRACE_MS at most.
   */
  async stop(opts: { readonly releaseLeader?: boolean; readonly stopDatabase?: boolean; readonly leaveRunningInPause?: boolean } = {}): Promise<'stopped' | 'left_running'> {
    this.unwatch?.();
    this.unwatch = null;
    await this.refresher.stop();
    await this.scheduler.stop();
    await this.jobs.idle();
    // What follows (the key released, PostgreSQL stopped) is said as the agent's shutdown, not the last tick's decision.
    this.reporter.decided('the agent is shutting down');
    if (opts.leaveRunningInPause === true && (await this.leaveRunning())) {
      this.reporter.agentStopping(false);
      return 'left_running';
    }
    const stopDatabase = opts.stopDatabase ?? true;
    const serverStopped = stopDatabase && (await this.stopDatabase());
    // Told here, not by a publication: the snapshot refresher is over, and what is published
    // from now on (the lock given up) holds the facts from before the stop. on_stop starts
    // as soon as the server is down, before the key is released, as in Patroni.
    const onStop = this.reporter.agentStopping(serverStopped);
    if (stopDatabase && !serverStopped && this.lease.deadline !== null) {
      // Released, the lock could go to another member while this server still takes writes.
      const guarded = await this.fencer.handover();
      this.logger.error(`PostgreSQL did not stop: the leader lock is not released; ${guarded ? 'the fencer stops PostgreSQL before the lock runs out' : 'it runs out with its lease'}`);
      return 'left_running';
    }
    await this.watchdog.disable();
    if (opts.releaseLeader ?? true) {
      try {
        if (this.lease.deadline !== null) await this.shutdownStore.releaseLeader(this.settings.current.node.name);
        if (opts.stopDatabase ?? true) await this.publishStopped();
        else await this.shutdownStore.leave();
      } catch (error) {
        this.logger.warn('could not release the leader key or mark this member stopped on shutdown (both expire with the lease)', { error: describe(error) });
      }
    }
    this.lease.forget();
    // Only once the key is gone: a slow script never holds back the failover.
    if (onStop && !(await callbacksEndWithin(this.callbacks, this.clock, SHUTDOWN_CALLBACK_GRACE_MS))) {
      this.logger.info(`the on_stop callback still runs after ${SHUTDOWN_CALLBACK_GRACE_MS / 1000} s: the agent exits, the callback goes on without it`);
    }
    return 'stopped';
  }

  /** Stops the server for the agent's shutdown: fast, then immediate when that fails; false when it may still run. */
  private async stopDatabase(): Promise<boolean> {
    for (const mode of ['fast', 'immediate'] as const) {
      try {
        const until = beforeStopUntil(this.lease.deadline, this.settings.current.local.watchdogSafetyMargin);
        await this.db.stop(mode, undefined, until === null ? {} : { beforeStopUntil: until });
        return true;
      } catch (error) {
        this.logger.error(`could not stop the database (${mode})`, { error: describe(error) });
      }
    }
    return false;
  }

  /**
   * The shutdown of a paused cluster's member: leaves its server running when that is safe,
   * and says so; false when the server must be stopped as usual. The lease is neither revoked
   * nor forgotten: the leader key (and the member record) stay until it runs out, and the next
   * agent for this node moves them onto its own lease.
   */
  private async leaveRunning(): Promise<boolean> {
    await this.cluster.observe();
    const view = this.cluster.current;
    const facts = await this.local.peek();
    const me = this.settings.current.node.name;
    // The key may still name this member before this agent renewed it (stopped right after it started): its first tick would renew it too.
    const holdsLock = this.lease.deadline !== null || (view.reachable && view.cluster?.leader?.name === me);
    const plan = shutdownPlan({ paused: view.reachable && view.config.pause, running: facts.running, inRecovery: facts.inRecovery, holdsLock });
    const stopAnyway = (why: string, fields?: Record<string, unknown>) => {
      this.logger.warn(`maintenance mode: stopping PostgreSQL anyway: ${why}`, fields);
      return false;
    };
    if (plan.kind === 'stop') return plan.why === null ? false : stopAnyway(plan.why);
    if (plan.kind === 'leave') {
      await this.fencer.detach();
      this.logger.info('maintenance mode: leaving PostgreSQL running as a replica; the member key expires with its lease unless the agent starts again');
      return true;
    }
    try {
      const lock = await this.shutdownStore.renewLeader(me, view.config.ttl);
      if (lock === null) return stopAnyway("the leader lock is no longer this member's");
      this.lease.granted(lock.deadline);
    } catch (error) {
      return stopAnyway('the leader lock could not be renewed for the handover', { error: describe(error) });
    }
    if (!(await this.fencer.handover())) {
      const f = this.fencer.status();
      return stopAnyway(`a primary is left running only under the fencer's guard, and the fencer ${f.state === 'off' ? 'is off' : `did not take the lock over${f.reason ? ` (${f.reason})` : ''}`}`);
    }
    const now = this.clock.now();
    const deadline = this.lease.deadline ?? now;
    const left = Math.max(0, Math.round((deadline - now) / 1000 - (this.settings.current.local.watchdogSafetyMargin ?? 0)));
    this.logger.warn(
      `maintenance mode: leaving PostgreSQL running as the primary, with the leader lock; the fencer stops it in ${left} s unless this node's agent starts again and renews the lock`,
      { lock_deadline: new Date(deadline).toISOString() },
    );
    return true;
  }

  /**
   * The member record says `stopped` and stays until the lease runs out (ttl), instead of
   * vanishing at once: operators listing the cluster see the member they stopped, with its
   * state, and the agent's next start replaces the record.
   */
  private async publishStopped(): Promise<void> {
    const last = this.publisher.current.status;
    const status = { ...last, role: last.role === 'primary' || last.role === 'standby_leader' ? ('demoted' as const) : last.role };
    const record = memberRecord(this.settings.current.node, stoppedFacts('stopped', true), status, { scheduledRestart: null });
    await this.shutdownStore.publishMember(this.settings.current.node.name, record, this.cluster.current.config.ttl);
  }

  /** Runs one tick now (after any tick in progress) and returns its decision. For tests and tools. */
  async tickOnce(): Promise<Decision> {
    return (await this.scheduler.runExclusive(() => this.pipeline.run())).decision;
  }

  /** Epoch ms until which this node holds the leader lock, or null. */
  lockHeldUntil(): number | null {
    return this.lease.deadline;
  }

  /** Name of the background database job in progress, or null. */
  get jobInProgress(): string | null {
    return this.jobs.name;
  }

  /** Resolves when the current background job (if any) has finished. */
  async jobDone(): Promise<void> {
    await this.jobs.idle();
  }

  // ---------------------------------------------------------------- AgentControl

  snapshot(): NodeSnapshot {
    return this.publisher.current;
  }

  freshStatus(): Promise<NodeStatus | null> {
    return this.fresh.current();
  }

  wake(): void {
    this.scheduler.wake();
  }

  async refreshView(): Promise<void> {
    await this.cluster.refresh();
    this.publisher.publish();
  }

  restartNow(conditions: RestartConditions): Promise<ActionResult> {
    return this.inbox.submitRestart(conditions, this.jobs.name);
  }

  scheduledRestart(): ScheduledRestart | null {
    return this.memory.memory.scheduledRestart;
  }

  setScheduledRestart(restart: ScheduledRestart | null): void {
    this.memory.remember({ scheduledRestart: restart });
    this.publisher.publish();
    this.wake();
  }

  reinitialize(opts: { readonly force: boolean; readonly fromLeader: boolean }): Promise<ActionResult> {
    return this.inbox.submitReinitialize(opts.force, opts.fromLeader);
  }

  requestReload(): void {
    this.inbox.requestReload();
  }

  checkLocalConfig(): Promise<readonly Problem[]> {
    return this.settings.check();
  }

  localHistory(): Promise<readonly HistoryLine[]> {
    return this.db.timelineHistory();
  }

  acceptFailsafe(ping: FailsafePing): boolean {
    return this.failsafe.accept(ping);
  }

  // ---------------------------------------------------------------- internals

  /**
   * The fencer keeps guarding the last lock deadline until this node's PostgreSQL is known
   * not to accept writes, and will not: a demotion whose stop fails or hangs, or a promotion
   * that completes after the lock is gone, is still fenced in time.
   */
  private unguardWhenSafe(): void {
    const f = this.local.facts;
    if (!f.running) this.writeMayComplete = false;
    if (!this.fenceGuarded || this.lease.deadline !== null) return;
    // A promotion (or a start as primary) in flight, or one that timed out, can make the server writable any moment now.
    if (this.jobs.mayWrite || this.writeMayComplete) return;
    if (f.running && f.inRecovery === false) return;
    this.fenceGuarded = false;
    this.fencer.unguard();
  }

  /**
   * This replica's proof that its WAL is a prefix of the leader's, as the health checks see
   * it: void the moment the watch reports another holder of the leader key, before the next
   * tick (which may wait on peers) reads the view. The new leader may lack WAL this node has.
   */
  private trustedPosition(): PositionConfirmation | null {
    const confirmed = this.memory.memory.positionConfirmed;
    if (this.watchResyncedAt !== null) {
      // The watch missed what changed while it was down: no proof until a view read since then says who holds the key.
      const view = this.cluster.current;
      if (view.readAt === null || view.readAt < this.watchResyncedAt) return null;
      this.watchedLeader = view.cluster?.leader?.name ?? null;
      this.watchResyncedAt = null;
    }
    const holder = this.watchedLeader;
    return confirmed !== null && holder !== undefined && holder !== null && holder !== confirmed.leader ? null : confirmed;
  }

  private onClusterChange(change: ClusterChange): void {
    if (change.kind === 'resync') {
      this.watchResyncedAt = this.clock.now();
      this.publisher.publish();
    }
    if (WAKING_KINDS.has(change.kind)) return this.wake();
    // A member (re)joining needs its replication slot on the leader before its server streams: the leader acts now, not a loop_wait later.
    if (change.kind === 'member') {
      if (this.lease.deadline !== null && !this.cluster.cluster.members.some((m) => m.name === change.name)) this.wake();
      return;
    }
    if (change.kind !== 'leader') return;
    this.reporter.leaderKeyHolder(change.holder);
    if (change.holder !== this.watchedLeader) {
      this.watchedLeader = change.holder;
      this.publisher.publish();
    }
    // The holder of the lock acts at once only when the key is no longer its own.
    if (this.lease.deadline !== null) {
      if (change.holder !== this.settings.current.node.name) this.wake();
      return;
    }
    // A renewal that moves the key to a new lease is an event too: only a new holder (or none) is worth a tick.
    if (change.holder !== (this.cluster.current.cluster?.leader?.name ?? null)) {
      if (change.holder === null) this.pipeline.leaderKeyGone();
      this.wake();
    }
  }
}
