import { inject, injectable, optional } from 'inversify';
import type { HistoryLine } from '../../domain/cluster/model/cluster.js';
import type { Decision } from '../../domain/cluster/ha/decision.js';
import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import { ScheduleError, restartScheduleFrom, scheduleRestart } from '../../domain/cluster/rules/schedule.js';
import { ValidationError } from '../../domain/errors.js';
import type { ActionResult, AgentControl, RestartRequest } from '../../ports/agent-control.js';
import { AgentMetricsSink } from '../../ports/agent-metrics.js';
import { Clock } from '../../ports/clock.js';
import { Database } from '../../ports/database.js';
import { ClusterStore, type ClusterChange } from '../../ports/cluster-store.js';
import { Logger } from '../../ports/logger.js';
import { PeerApi } from '../../ports/peer-api.js';
import { Watchdog } from '../../ports/watchdog.js';
import { describe } from './action-runner.js';
import { HaTicker } from './ha-tick.js';
import { AgentSettingsSource, HaLoopOptions } from './tokens.js';

/** Changes that wake the loop at once (the leader key: see onClusterChange). */
const WAKING_KINDS = new Set<ClusterChange['kind']>(['failover', 'config', 'initialize', 'sync', 'resync']);

/** Reason given to an aborted sleep. */
const WAKE_REASON = 'wake';

/** Least time between the starts of two ticks woken by events (a lost lock re-ticks at once). */
const MIN_TICK_SPACING_MS = 50;

/** Fast re-ticks in a row after a lost lock, before falling back to loop_wait. */
const MAX_RETICKS = 3;

/**
 * The agent's HA loop (spec §10, design "Flow of one agent tick"): runs decide() every
 * loop_wait, at once when the DCS watch reports a change or an API command arrives, and
 * again at once when a tick finds the lock lost. Long database actions run as one
 * background job at a time while ticks go on (a leader keeps refreshing its key during a
 * restart). Implements AgentControl for the REST API, which reads the snapshot without
 * waiting on the loop.
 */
@injectable()
export class HaLoop implements AgentControl {
  private readonly ticker: HaTicker;
  private tickChain: Promise<unknown> = Promise.resolve();
  private running = false;
  private loopDone: Promise<void> | null = null;
  private sleeper: AbortController | null = null;
  private wakeRequested = false;
  private unwatch: (() => void) | null = null;
  private nextCommandId = 1;

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
  ) {
    this.ticker = new HaTicker(
      { store, db, watchdog, clock, logger, peers, metrics: metrics ?? null },
      settings,
      { peerTimeoutMs: options?.peerTimeoutMs ?? 2000, failsafeTimeoutMs: options?.failsafeTimeoutMs ?? 2000 },
      () => this.wake(),
    );
  }

  /** Starts the loop (and the DCS watch). Returns at once. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.unwatch = this.store.watch((change) => this.onClusterChange(change));
    this.loopDone = this.run();
  }

  /**
   * Stops the loop. With `releaseLeader` (default true) a held leader key is released
   * after PostgreSQL has been stopped cleanly (`stopDatabase`, default true), so no other
   * member promotes while this one still writes; the lease goes too (member key removed).
   */
  async stop(opts: { readonly releaseLeader?: boolean; readonly stopDatabase?: boolean } = {}): Promise<void> {
    this.running = false;
    this.unwatch?.();
    this.unwatch = null;
    this.wake();
    await this.loopDone;
    await this.tickChain;
    await this.ticker.job?.done;
    const me = this.ticker.settings.node.name;
    if (opts.stopDatabase ?? true) {
      try {
        await this.db.stop('fast');
      } catch (error) {
        this.logger.error('could not stop the database cleanly', { error: describe(error) });
      }
    }
    await this.watchdog.disable();
    if (opts.releaseLeader ?? true) {
      try {
        if (this.ticker.state.lockDeadline !== null) await this.store.releaseLeader(me);
        await this.store.leave();
      } catch (error) {
        this.logger.warn('could not release the leader key / lease on shutdown', { error: describe(error) });
      }
    }
    this.ticker.state.lockDeadline = null;
  }

  /** Runs one tick now (after any tick in progress) and returns its decision. For tests and tools. */
  async tickOnce(): Promise<Decision> {
    return (await this.runTick()).decision;
  }

  /** Epoch ms until which this node holds the leader lock, or null. */
  lockHeldUntil(): number | null {
    return this.ticker.state.lockDeadline;
  }

  /** Name of the background database job in progress, or null. */
  get jobInProgress(): string | null {
    return this.ticker.job?.name ?? null;
  }

  /** Resolves when the current background job (if any) has finished. */
  async jobDone(): Promise<void> {
    await this.ticker.job?.done;
  }

  // ---------------------------------------------------------------- AgentControl

  snapshot(): NodeSnapshot {
    return this.ticker.snapshot;
  }

  wake(): void {
    this.wakeRequested = true;
    // A fixed reason: the default one builds a DOMException (with a stack) on every wake.
    this.sleeper?.abort(WAKE_REASON);
  }

  async restart(req: RestartRequest): Promise<ActionResult & { readonly scheduled?: boolean }> {
    const { schedule, ...conditions } = req;
    if (schedule !== undefined) {
      try {
        const state = restartScheduleFrom(this.ticker.state.memory.scheduledRestart);
        const next = scheduleRestart(state, { ...conditions, schedule }, { paused: this.ticker.config.pause, now: this.clock.now() });
        this.ticker.state.remember({ scheduledRestart: next.kind === 'scheduled' ? next.restart : null });
        this.wake();
        return { ok: true, scheduled: true, message: 'Restart scheduled' };
      } catch (error) {
        return refusal(error);
      }
    }
    if (this.ticker.restartCommand || this.ticker.job) {
      return { ok: false, error: 'action_in_progress', message: `${this.ticker.job?.name ?? 'restart'} already in progress` };
    }
    return this.command((id) => {
      this.ticker.restartCommand = { id, conditions };
    });
  }

  async cancelScheduledRestart(): Promise<boolean> {
    const had = this.ticker.state.memory.scheduledRestart !== null;
    this.ticker.state.remember({ scheduledRestart: null });
    return had;
  }

  async reinitialize(req: { readonly force: boolean; readonly fromLeader: boolean }): Promise<ActionResult> {
    if (this.ticker.reinitializeCommand) return { ok: false, error: 'action_in_progress', message: 'reinitialize already requested' };
    return this.command((id) => {
      this.ticker.reinitializeCommand = { id, force: req.force, fromLeader: req.fromLeader };
    });
  }

  async reload(): Promise<ActionResult> {
    this.ticker.reloadRequested = true;
    this.wake();
    return { ok: true, message: 'reload scheduled' };
  }

  async history(): Promise<readonly HistoryLine[]> {
    const fromDcs = this.ticker.cluster?.history?.lines;
    if (fromDcs && fromDcs.length) return fromDcs;
    return this.db.timelineHistory();
  }

  /**
   * Accepts the failsafe ping of the leader this node last saw in the DCS, unless this node
   * itself runs as primary. A member whose DCS works stops accepting once the key is gone.
   */
  acceptFailsafe(body: { readonly name: string; readonly members: Readonly<Record<string, string>> }): boolean {
    const t = this.ticker;
    const me = t.settings.node.name;
    const primary = t.facts.running && t.facts.inRecovery === false;
    // Only for the leader we last saw: once our (working) DCS shows its key gone or taken, we refuse and it demotes.
    const ok = t.config.failsafe_mode && !primary && t.cluster?.leader?.name === body.name && body.members[me] !== undefined;
    if (ok) t.failsafeAcceptedAt = this.clock.now();
    return ok;
  }

  // ---------------------------------------------------------------- internals

  private command(register: (id: number) => void): Promise<ActionResult> {
    const id = this.nextCommandId++;
    const result = new Promise<ActionResult>((resolve) => this.ticker.state.waiters.set(id, { id, resolve }));
    register(id);
    this.wake();
    return result;
  }

  private onClusterChange(change: ClusterChange): void {
    if (WAKING_KINDS.has(change.kind)) return this.wake();
    if (change.kind !== 'leader') return;
    // The leader's own refresh would otherwise wake it again and again.
    if (this.ticker.state.lockDeadline !== null) return;
    // Every refresh by the leader is an event too: only a new holder (or none) is worth a tick.
    if (change.holder !== (this.ticker.cluster?.leader?.name ?? null)) this.wake();
  }

  private runTick() {
    const next = this.tickChain.then(() => this.ticker.tick());
    this.tickChain = next.catch(() => undefined);
    return next;
  }

  private async run(): Promise<void> {
    let reticks = 0;
    let lastStart = Number.NEGATIVE_INFINITY;
    while (this.running) {
      // Wakes come from other nodes and jobs; spacing their ticks a little bounds any feedback loop.
      const since = this.clock.now() - lastStart;
      if (reticks === 0 && since < MIN_TICK_SPACING_MS) await this.clock.sleep(MIN_TICK_SPACING_MS - since);
      this.wakeRequested = false;
      lastStart = this.clock.now();
      const { decision, retick } = await this.runTick();
      if (!this.running) break;
      let delay = this.ticker.config.loop_wait * 1000;
      if (decision.wakeAt !== null) delay = Math.min(delay, Math.max(0, decision.wakeAt - this.clock.now()));
      if (retick && reticks < MAX_RETICKS) {
        reticks++;
        continue;
      }
      reticks = 0;
      if (this.wakeRequested) continue;
      // One controller serves every sleep until a wake aborts it.
      if (!this.sleeper || this.sleeper.signal.aborted) this.sleeper = new AbortController();
      await this.clock.sleep(delay, this.sleeper.signal);
    }
  }
}

function refusal(error: unknown): ActionResult {
  if (error instanceof ScheduleError || error instanceof ValidationError) return { ok: false, error: error.code, message: error.message };
  return { ok: false, error: 'action_failed', message: describe(error) };
}
