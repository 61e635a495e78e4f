import { decide } from '../../domain/cluster/ha/decide.js';
import { backsOff, failureLogged, jobFailuresAfter, jobRetryDelayMs, nextFailureCount } from '../../domain/cluster/ha/retry-backoff.js';
import { nextLoggedRepeat } from '../../domain/cluster/rules/repeat-log.js';
import { WardenError } from '../../domain/errors.js';
import { NO_COMMANDS, type Action, type Decision, type FailsafeConfirmation, type PendingCommands, type TickInput } from '../../domain/cluster/ha/decision.js';
import type { AgentMetricsSink } from '../../ports/agent-metrics.js';
import type { PeerApi } from '../../ports/peer-api.js';
import { ActionRunner, describe, firstLongAction, isDatabaseAction, type Renewal, type RunContext, type RunnerPorts } from './action-runner.js';
import type { AgentMemory } from './agent-memory.js';
import { RepeatedFailures } from './repeated-failures.js';
import { RenewalPace } from './renewal-pace.js';
import { failsafeWindowProblem, safetyMarginProblem } from '../../domain/cluster/ha/fence-window.js';
import { failureLine } from './failure-line.js';
import type { ClusterObserver } from './cluster-observer.js';
import type { CommandInbox } from './command-inbox.js';
import type { JobRunner } from './job-runner.js';
import type { LeaderLease } from './leader-lease.js';
import type { LocalObserver } from './local-observer.js';
import { memberRecord } from './member-record.js';
import { answersFor, failsafeRound, gatherPeerStatuses, peerTargets, type EarlyPeers } from './peer-queries.js';
import type { SettingsKeeper } from './settings-keeper.js';
import type { SnapshotPublisher } from './snapshot-publisher.js';
import type { EventReporter } from './event-reporter.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { LocalFacts } from '../../domain/cluster/model/facts.js';
import { explainMembers } from '../../domain/cluster/rules/eligibility-explanation.js';

/** Actions a healthy node repeats every tick: logged at debug level only. */
const ROUTINE = new Set(['refreshLeader', 'writeStatus', 'kickWatchdog', 'remember']);

/** A slot upkeep that only moves slots forward: routine under write load, every loop (logged at debug, as the runbooks say). */
function slotsAdvancedOnly(a: Action): boolean {
  return a.type === 'syncSlots' && a.plan.drop.length === 0 && a.plan.create.length === 0;
}

/** What the fence-window check reports under (RepeatedFailures). */
const FENCE_WINDOW_TOO_SHORT = 'the fencer would stop this node as a healthy primary';
const FAILSAFE_WINDOW_TOO_SHORT = 'the fencer would stop this node as a primary failsafe mode keeps';

/** Ports of one tick. */
export interface TickPorts extends RunnerPorts {
  readonly peers: PeerApi;
  readonly metrics: AgentMetricsSink | null;
}

/** The agent's parts a tick works with; each keeps its own state. */
export interface TickParts {
  readonly settings: SettingsKeeper;
  readonly cluster: ClusterObserver;
  readonly local: LocalObserver;
  readonly memory: AgentMemory;
  readonly lease: LeaderLease;
  readonly inbox: CommandInbox;
  readonly jobs: JobRunner;
  readonly snapshot: SnapshotPublisher;
  /** The primary whose failsafe ping this node last confirmed, when, and the ttl then; null when none. */
  readonly failsafeConfirmed: () => FailsafeConfirmation | null;
  /** A promotion (or start as primary) failed or timed out and the server has not been down since: it may still complete. */
  readonly promotionMayComplete?: () => boolean;
  /** Hears decisions, jobs and views (events, callbacks, durations); null: nobody listens. */
  readonly reporter?: EventReporter | null;
  /** A fencer guards this node's lease (absent: none, as with `fencer.enabled: false`). */
  readonly fencerOn?: () => boolean;
}

/** Bounds on what a tick asks other members. */
export interface TickOptions {
  readonly peerTimeoutMs: number;
  readonly failsafeTimeoutMs: number;
}

/** Result of a tick: the decision, and whether to decide again at once (the lock was lost). */
export interface TickOutcome {
  readonly decision: Decision;
  readonly retick: boolean;
}

/**
 * One HA tick, as a pipeline: observe (settings when a reload was asked, the cluster, the
 * local server, the watchdog), decide (gathering the peers' status or a failsafe round when
 * decide() asks), publish (snapshot, member record), act (the quick actions inline, the long
 * ones as a background job). Ticks must not overlap (the scheduler runs one at a time).
 */
export class TickPipeline {
  private readonly runner: ActionRunner;
  private last: Decision | null = null;
  /** The peers' status documents gathered by this tick's decide(), if any. */
  private gathered: ReadonlyMap<string, NodeStatus | null> | null = null;
  /** The leader key vanished: the next tick asks the peers while it reads the cluster and probes. */
  private peersWanted = false;
  /** Peers asked at the start of this tick. */
  private early: EarlyPeers | null = null;
  /** The lock's renewal sent at the start of this tick (see renewFirst), and the ttl it asked for; null when none. */
  private renewing: { readonly ttlSeconds: number; readonly outcome: Promise<Renewal> } | null = null;

  /** Failures repeated every loop (the member key not written): said once, reminded rarely. */
  private readonly failures: RepeatedFailures;

  constructor(
    private readonly ports: TickPorts,
    private readonly parts: TickParts,
    private readonly options: TickOptions,
  ) {
    this.failures = new RepeatedFailures(ports.logger, ports.clock);
    this.runner = new ActionRunner(ports, parts, () => this.afterJobStep(), new RenewalPace(this.failures));
  }

  /** The last decision made, or null before the first tick. */
  get lastDecision(): Decision | null {
    return this.last;
  }

  /**
   * The watch saw the leader key vanish: the tick it wakes will race, and a race needs the
   * peers' state, so they are asked at the start of that tick, alongside the cluster read and
   * the local probe, instead of after them.
   */
  leaderKeyGone(): void {
    this.peersWanted = true;
  }

  /** Runs one tick. Never throws: a failure is logged and the next tick tries again. */
  async run(): Promise<TickOutcome> {
    const { clock, logger } = this.ports;
    const { settings, cluster, local, inbox, snapshot, lease } = this.parts;
    // A tick woken by a watch event starts in the turn that decoded it: its first part (the peers
    // asked, the renewal, the probe and the read sent) goes on a turn of its own.
    if (clock.turn) await clock.turn();
    const started = clock.now();
    lease.beginTick();
    try {
      if (inbox.takeReload() && (await settings.reload())) cluster.settingsChanged();
      this.askPeersEarly();
      const overdue = this.renewalOverdue();
      this.renewing = overdue ? null : this.renewFirst();
      // The DCS read and the local probe at once: a tick woken by the leader key's change acts sooner.
      await local.observe(overdue ? undefined : cluster.observe());
      // The probe's answer was parsed in this turn of the event loop: the rest of the tick goes
      // on in two later turns (the view published and the decision; then the actions), so that
      // health checks and watch events never wait behind the whole of it.
      if (clock.turn) await clock.turn();
      const reporter = this.parts.reporter ?? null;
      if (reporter && cluster.current.reachable && cluster.current.cluster) reporter.clusterObserved(cluster.current.cluster, lease.deadline !== null);
      // What the health checks answer follows the view now, not after a decision that may wait on peers.
      snapshot.publish();
      this.checkFenceWindow();
      await this.checkWatchdog();
      const commands = inbox.pending();
      this.gathered = null;
      const d = await this.decide(this.input(commands));
      reporter?.decided(d.message);
      inbox.settle(commands, d);
      const types = d.actions.map((a) => a.type);
      // The same decision again (its actions failed, or did not take effect yet) was said last tick: its failures say why.
      const again = this.last !== null && this.last.message === d.message && this.last.actions.map((a) => a.type).join() === types.join();
      if (!again && d.actions.some((a) => !ROUTINE.has(a.type) && !slotsAdvancedOnly(a))) logger.info(d.message, { actions: types });
      else logger.debug(d.message, { actions: types });
      this.reportWaiting(d);
      this.last = d;
      snapshot.decided(d.publish);
      snapshot.publish();
      const appliedBefore = this.parts.memory.memory.appliedParameters;
      if (clock.turn) await clock.turn();
      if (d.actions[0]?.type === 'acquireLeader') {
        // A race won: the key and the promotion first (the member record the others follow by does not change with them).
        await this.act(d, await this.renewed());
        await this.publishMember();
      } else if (d.actions[0]?.type === 'forgetLock') {
        // A demotion cuts the sessions first: publishing the member record may wait retry_timeout for a DCS that
        // does not answer, while the server still takes writes and the lock runs out.
        await this.act(d, await this.renewed());
        await this.publishMember();
      } else if (d.actions[0]?.type === 'extendLockByFailsafe') {
        // Failsafe: the extension first, and the member record beside the renewal it retries, not before it. Each may
        // wait retry_timeout for an etcd that takes no writes; one after the other, and before the extension, they
        // left the fencer's deadline (ttl - safety_margin after the last round) no time for the next round.
        await Promise.all([this.publishMember(), this.renewed().then((r) => this.act(d, r))]);
      } else if (d.actions.every((a) => ROUTINE.has(a.type))) {
        // A healthy node's loop (renewal, status, watchdog): the member record and the status key at once, so that
        // over a slow DCS link the loop, and the renewals it paces, take one round trip less.
        await Promise.all([this.publishMember(), this.renewed().then((r) => this.act(d, r))]);
      } else {
        // Before the actions: a leader's renewal wakes the replicas, which must then see its current member record.
        // The member record shares the lease the renewal sent at the tick's start keeps alive: it waits for that one.
        await this.publishMember();
        await this.act(d, await this.renewed());
      }
      if (reporter) this.report(reporter, appliedBefore);
      this.early = null;
      snapshot.loopFinished();
      this.ports.metrics?.loopCompleted((clock.now() - started) / 1000);
      return { decision: d, retick: lease.lost };
    } catch (error) {
      this.early = null;
      // The lease must not change under the next tick.
      await this.renewed();
      logger.error('HA tick failed', { error: describe(error) });
      snapshot.publish();
      return { decision: this.last ?? decide(this.input(NO_COMMANDS)), retick: false };
    }
  }

  /** After the actions: a reload of changed parameters (on_reload), and a leaderless cluster nobody can lead. */
  private report(reporter: EventReporter, appliedBefore: string | null): void {
    const { memory, cluster, settings, snapshot } = this.parts;
    const applied = memory.memory.appliedParameters;
    if (appliedBefore !== null && applied !== appliedBefore) reporter.reloaded();
    const view = cluster.current.cluster;
    if (!view || view.leader !== null || !view.initialize || this.gathered === null) {
      reporter.leaderless(null, false);
      return;
    }
    const me = settings.current.node.name;
    const statuses = new Map(this.gathered);
    statuses.set(me, snapshot.current.status);
    const answered = [...statuses].filter(([, s]) => s !== null).map(([n]) => n).sort();
    reporter.leaderless(explainMembers('automatic', view, cluster.current.config, statuses), answered[0] === me);
  }

  /**
   * Says once per change what the node waits for, and that its data directory waits for an
   * operator (a repeated decision with no actions is otherwise logged at debug level only).
   */
  private reportWaiting(d: Decision): void {
    const { logger } = this.ports;
    const before = this.last?.publish;
    const required = d.publish.reinitializeRequired ?? null;
    if (required !== (before?.reinitializeRequired ?? null)) {
      if (required !== null) logger.warn(`out of service: ${required}`);
      else if (before?.reinitializeRequired) logger.info('the data directory no longer needs to be rebuilt by an operator');
    }
    // A backed-off retry was logged when the job failed.
    const waiting = d.publish.backoff ? null : (d.publish.waitingFor ?? null);
    if (waiting !== null && waiting !== (before?.waitingFor ?? null)) logger.info(`waiting for ${waiting}`);
  }

  /** Re-probes and republishes after each step of a job: peers then see the server as it is. */
  private async afterJobStep(): Promise<void> {
    try {
      await this.parts.local.observe();
      // As in a tick: the probe's answer was parsed in this turn, the snapshot is built in the next.
      if (this.ports.clock.turn) await this.ports.clock.turn();
      this.parts.snapshot.publish();
    } catch (error) {
      this.ports.logger.warn('probe after a database action failed', { error: describe(error) });
    }
  }

  /**
   * The cluster's ttl and loop_wait (changed in the DCS since this agent started) may leave the
   * fencer (or the watchdog device) a window no longer than loop_wait with this node's
   * safety_margin: it would stop this node's PostgreSQL as a healthy primary; in failsafe mode,
   * a window no longer than a failsafe round. Said once, reminded rarely, and once when mended.
   */
  private checkFenceWindow(): void {
    const { settings, cluster } = this.parts;
    if (!this.fencesOnDeadline()) return;
    const { ttl, loop_wait: loopWait, retry_timeout: retryTimeout, failsafe_mode: failsafe } = cluster.current.config;
    const margin = settings.current.local.watchdogSafetyMargin;
    const problem = safetyMarginProblem(ttl, loopWait, margin);
    if (problem === null) this.failures.succeeded(FENCE_WINDOW_TOO_SHORT, 'watchdog.safety_margin fits ttl and loop_wait again');
    else this.failures.failed(FENCE_WINDOW_TOO_SHORT, `watchdog.safety_margin: ${problem}`);
    const rounds = failsafe ? failsafeWindowProblem(ttl, loopWait, retryTimeout, margin) : null;
    if (rounds === null) this.failures.succeeded(FAILSAFE_WINDOW_TOO_SHORT, 'watchdog.safety_margin fits the failsafe rounds again (or failsafe mode is off)');
    else this.failures.failed(FAILSAFE_WINDOW_TOO_SHORT, `watchdog.safety_margin: ${rounds}`);
  }

  /** A fencer or a watchdog device stops this node's PostgreSQL on the lock's deadline (minus safety_margin). */
  private fencesOnDeadline(): boolean {
    return (this.parts.fencerOn?.() ?? false) || this.parts.settings.current.node.watchdogMode !== 'off';
  }

  private async checkWatchdog(): Promise<void> {
    const w = this.ports.watchdog;
    if (this.parts.settings.current.node.watchdogMode === 'off' || w.isActive) return;
    this.parts.memory.watchdogUsable = await w.isUsable();
  }

  private input(commands: PendingCommands): TickInput {
    const { settings, cluster, local, memory, lease, jobs } = this.parts;
    const view = cluster.current;
    return {
      now: this.ports.clock.now(),
      node: settings.current.node,
      local: settings.current.local,
      config: view.config,
      cluster: cluster.cluster,
      dcsReachable: view.reachable,
      facts: local.facts,
      lockDeadline: lease.deadline,
      lockRenewalFailingSince: lease.renewalFailingSince,
      promotionMayComplete: this.parts.promotionMayComplete?.() ?? false,
      peers: null,
      failsafeConfirmed: null,
      failsafeConfirmedOther: this.parts.failsafeConfirmed(),
      watchdog: { active: this.ports.watchdog.isActive, usable: memory.watchdogUsable },
      job: jobs.current,
      commands,
      memory: memory.memory,
    };
  }

  /** decide(), gathering what it asks for (at most once each). */
  private async decide(input: TickInput): Promise<Decision> {
    const { peers, clock } = this.ports;
    let current = input;
    let d = decide(current);
    for (let round = 0; round < 2 && d.need !== null; round++) {
      if (d.need === 'peers' && current.peers === null) {
        const targets = peerTargets(current.cluster, current.node.name, this.parts.cluster.formerLeader);
        const early = this.early;
        this.early = null;
        const [statuses, facts] = await this.peersAndFacts(current.facts, targets, early);
        this.gathered = statuses;
        current = { ...current, now: clock.now(), peers: statuses, facts, memory: this.parts.memory.memory };
      } else if (d.need === 'failsafe' && current.failsafeConfirmed === null) {
        this.parts.lease.failsafeRoundStarted(clock.now());
        const ok = await failsafeRound(peers, current.cluster.failsafe ?? {}, current.node.name, this.options.failsafeTimeoutMs);
        current = { ...current, now: clock.now(), failsafeConfirmed: ok };
      } else {
        break;
      }
      d = decide(current);
    }
    return d.need === null ? d : { ...d, message: `${d.message} (could not gather ${d.need})`, need: null };
  }

  /**
   * The peers' answers (those asked early when they are the same targets) and this node's facts,
   * its WAL position at least as fresh as theirs, or the race would see them ahead of a stale
   * self. A replica's moves only with what it receives: probed alongside (or, asked early, the
   * tick's own probe). A running primary's moves with every commit its replicas receive: probed
   * after they answered.
   */
  private async peersAndFacts(facts: LocalFacts, targets: ReadonlyMap<string, string>, early: EarlyPeers | null): Promise<[Map<string, NodeStatus | null>, LocalFacts]> {
    const asked = await answersFor(early, targets);
    const gather = (): Promise<Map<string, NodeStatus | null>> => gatherPeerStatuses(this.ports.peers, targets, this.options.peerTimeoutMs);
    if (facts.running && facts.inRecovery === false) {
      const statuses = asked ?? (await gather());
      return [statuses, await this.parts.local.observe()];
    }
    if (asked !== null) return [asked, facts];
    return Promise.all([gather(), this.parts.local.observe()]);
  }

  /** Starts asking the peers when the leader key vanished and this node holds no lock (see leaderKeyGone). */
  private askPeersEarly(): void {
    this.early = null;
    if (!this.peersWanted) return;
    this.peersWanted = false;
    const view = this.parts.cluster.current;
    if (this.parts.lease.deadline !== null || view.cluster === null) return;
    const targets = peerTargets(view.cluster, this.parts.settings.current.node.name, this.parts.cluster.formerLeader);
    this.early = { targets, statuses: gatherPeerStatuses(this.ports.peers, targets, this.options.peerTimeoutMs) };
  }

  /**
   * A leader renews its lock at the start of its tick, alongside the read and the probe, when
   * its last tick renewed it and decided to keep leading (that tick's decision holds until this
   * one's) and the last renewal worked: renewals then keep loop_wait's pace however slowly the
   * DCS answers the tick's other calls, and the fencer sees each one in time. During a job as
   * decide() does: a restart keeps the lock, a demotion past its checkpoint does not. This
   * tick's refreshLeader takes its outcome; a decision to step down comes after it.
   */
  private renewFirst(): { readonly ttlSeconds: number; readonly outcome: Promise<Renewal> } | null {
    const { lease, cluster, jobs } = this.parts;
    const last = this.last;
    if (last === null || !lease.heldAt(this.ports.clock.now()) || lease.renewalFailingSince !== null) return null;
    const job = jobs.current;
    if (job !== null && job.name === 'demote' && job.step !== 'checkpoint') return null;
    if (!cluster.current.reachable) return null;
    const types = new Set(last.actions.map((a) => a.type));
    if (!types.has('refreshLeader') || types.has('releaseLeader') || types.has('forgetLock')) return null;
    const ctx = this.runContext();
    return { ttlSeconds: ctx.ttlSeconds, outcome: this.runner.renew(ctx) };
  }

  /** What the runner needs to know of this agent and the cluster's settings, as they are now. */
  private runContext(): RunContext {
    const { settings, cluster } = this.parts;
    return {
      me: settings.current.node.name,
      ttlSeconds: cluster.current.config.ttl,
      loopWaitSeconds: cluster.current.config.loop_wait,
      safetyMarginSeconds: settings.current.local.watchdogSafetyMargin,
    };
  }

  /**
   * The outcome of this tick's early renewal, once it is known; null when none was sent, or
   * when it renewed for a ttl this tick's read changed (the tick's refreshLeader renews anew).
   */
  private async renewed(): Promise<Renewal | null> {
    const r = this.renewing;
    this.renewing = null;
    if (r === null) return null;
    const outcome = await r.outcome;
    return outcome.outcome === 'renewed' && r.ttlSeconds !== this.parts.cluster.current.config.ttl ? null : outcome;
  }

  /** The quick part now; from the first long action on, a background job (only one at a time). */
  private async act(d: Decision, renewed: Renewal | null = null): Promise<void> {
    const { jobs } = this.parts;
    const ctx = this.runContext();
    const split = firstLongAction(d.actions);
    const inlineEnd = split < 0 ? d.actions.length : split;
    if (jobs.name !== null && d.actions.some(isDatabaseAction)) {
      this.ports.logger.error('refusing database actions while a job runs', { job: jobs.name });
      return;
    }
    const out = await this.runner.runRange(d, 0, inlineEnd, renewed === null ? ctx : { ...ctx, renewed });
    if (!out.completed || split < 0) return;
    const name = d.job ?? d.actions[split]!.type;
    const long = d.actions.slice(split);
    const reporter = this.parts.reporter ?? null;
    reporter?.jobStarted(name);
    jobs.start(name, d.actions[split]!.type, async (step) => {
      const o = await this.runner.runRange(
        d,
        split,
        d.actions.length,
        ctx,
        (a) => {
          step(a.type, mayMakeWritable(a));
          reporter?.actionStarted(a.type);
        },
        false,
      );
      const error = o.completed ? null : `${d.actions[o.stoppedAt ?? split]!.type}: ${describe(o.error)}`;
      this.jobEnded(name, error, o.error instanceof WardenError ? String(o.error.code) : null);
      reporter?.jobEnded(name, o.completed, error);
      return o.completed;
    });
  }

  /**
   * Remembers a job's failures in a row (decide() backs off repeated ones) and says why it
   * failed and when the next attempt comes: at every attempt of a job that backs off, spaced
   * out for one retried at the loop's pace.
   */
  private jobEnded(name: string, error: string | null, code: string | null = null): void {
    const { memory, cluster } = this.parts;
    const { logger, clock } = this.ports;
    const prev = memory.memory.jobFailures.find((f) => f.job === name);
    if (error === null) {
      if (prev !== undefined) {
        logger.info(`${name} succeeded after ${prev.count} failed attempt${prev.count > 1 ? 's' : ''}`);
        memory.remember({ jobFailures: jobFailuresAfter(memory.memory.jobFailures, name, null, clock.now()) });
      }
      return;
    }
    const line = failureLine(error);
    const count = nextFailureCount(memory.memory.jobFailures, name, clock.now());
    memory.remember({ jobFailures: jobFailuresAfter(memory.memory.jobFailures, name, line, clock.now(), code) });
    if (!failureLogged(name, count, prev !== undefined && prev.error !== line, code)) return;
    const next = backsOff(name, code)
      ? `; next attempt in ${Math.round(jobRetryDelayMs(code, count, cluster.current.config.loop_wait * 1000, cluster.current.config.ttl * 1000) / 1000)} s`
      : `; retried every loop, this error logged again at attempt ${nextLoggedRepeat(count)}`;
    logger.warn(`${name} failed (attempt ${count})${next}: ${error}`);
  }

  private async publishMember(): Promise<void> {
    const { cluster, settings, local, memory, snapshot } = this.parts;
    if (!cluster.current.reachable) return;
    const m = memory.memory;
    const record = memberRecord(settings.current.node, local.facts, snapshot.current.status, {
      scheduledRestart: m.scheduledRestart,
      checkpointAfterPromote: m.checkpointAfterPromote,
      safetyMargin: this.fencesOnDeadline() ? settings.current.local.watchdogSafetyMargin : null,
    });
    try {
      await this.ports.store.publishMember(settings.current.node.name, record, cluster.current.config.ttl);
      this.failures.succeeded('could not publish the member key', 'the member key is published again');
    } catch (error) {
      this.failures.failed('could not publish the member key', describe(error));
      this.ports.metrics?.dcsError('publish_member');
    }
  }

  /**
   * A primary holding the lock whose renewals have failed for retry_timeout does not read the
   * cluster first (a read may wait retry_timeout more, past the lock's deadline): it decides on
   * its last view, and decide() steps down (or asks failsafe). Past the deadline, or once the
   * last read failed, it reads again: only a read can show the DCS back.
   */
  private renewalOverdue(): boolean {
    const { lease, cluster, local } = this.parts;
    const since = lease.renewalFailingSince;
    const now = this.ports.clock.now();
    if (since === null || !lease.heldAt(now) || !cluster.current.reachable) return false;
    return local.facts.running && local.facts.inRecovery === false && now - since >= cluster.current.config.retry_timeout * 1000;
  }
}

/** An action that can leave the server accepting writes: a promotion, a restart (of a primary), a start as primary. */
function mayMakeWritable(a: Action): boolean {
  return a.type === 'promote' || a.type === 'restart' || (a.type === 'start' && a.upstream === null && !a.standby);
}
