import { EMPTY_CLUSTER, type Cluster } from '../../domain/cluster/model/cluster.js';
import { DEFAULT_CONFIG, resolveConfig, type DynamicConfig } from '../../domain/cluster/config/config.js';
import { decide } from '../../domain/cluster/ha/decide.js';
import { NO_COMMANDS, type Decision, type PendingCommands, type RestartConditions, type TickInput } from '../../domain/cluster/ha/decision.js';
import { stoppedFacts, type LocalFacts } from '../../domain/cluster/model/facts.js';
import { observeFacts } from '../../domain/cluster/ha/observation.js';
import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import type { AgentMetricsSink } from '../../ports/agent-metrics.js';
import type { PeerApi } from '../../ports/peer-api.js';
import { ActionRunner, describe, firstLongAction, isDatabaseAction, type RunnerPorts } from './action-runner.js';
import { LoopState } from './loop-state.js';
import { memberRecord } from './member-record.js';
import { nodeSnapshot } from './node-snapshot.js';
import { failsafeRound, gatherPeerStatuses, peerTargets } from './peer-queries.js';
import type { AgentSettings, AgentSettingsSource } from './tokens.js';

/** Actions a healthy node repeats every tick: logged at debug level only. */
const ROUTINE = new Set(['refreshLeader', 'writeStatus', 'kickWatchdog', 'remember']);

/** Ports of one tick. */
export interface TickPorts extends RunnerPorts {
  readonly peers: PeerApi;
  readonly metrics: AgentMetricsSink | null;
}

/** A background database job. */
export interface Job {
  readonly name: string;
  readonly startedAt: number;
  /** The action running now. */
  step: string;
  readonly done: Promise<void>;
}

/** Result of a tick: the decision, and whether it must be re-run at once (the lock was lost). */
export interface TickResult {
  readonly decision: Decision;
  readonly retick: boolean;
}

/**
 * One HA tick and the state it carries from tick to tick: read the DCS, probe the
 * database, decide (gathering peers or a failsafe round when asked), apply the inline
 * actions, hand the long ones to a background job, publish the member key and the
 * snapshot. Ticks must not overlap (HaLoop serializes them); a job runs alongside them.
 */
export class HaTicker {
  readonly state = new LoopState();
  private readonly runner: ActionRunner;
  settings: AgentSettings;
  cluster: Cluster | null = null;
  clusterReadAt: number | null = null;
  dcsReachable = false;
  config: DynamicConfig = DEFAULT_CONFIG;
  facts: LocalFacts = stoppedFacts('stopped', false);
  job: Job | null = null;
  restartCommand: { readonly id: number; readonly conditions: RestartConditions } | null = null;
  reinitializeCommand: { readonly id: number; readonly force: boolean; readonly fromLeader: boolean } | null = null;
  reloadRequested = false;
  failsafeAcceptedAt: number | null = null;
  lastDecision: Decision | null = null;
  /** When the last tick finished (epoch ms). */
  private lastTickAt: number;
  snapshot: NodeSnapshot;
  private lastLeader: string | null | undefined = undefined;
  private resolvedFrom: unknown = null;

  constructor(
    private readonly ports: TickPorts,
    private readonly settingsSource: AgentSettingsSource,
    private readonly options: { readonly peerTimeoutMs: number; readonly failsafeTimeoutMs: number },
    private readonly onJobDone: () => void,
  ) {
    this.runner = new ActionRunner(ports, this.state, () => this.refreshSnapshot());
    this.settings = settingsSource.current();
    this.config = resolveConfig(this.settings.local.bootstrapDcs);
    this.lastTickAt = ports.clock.now();
    this.snapshot = this.buildSnapshot(null);
  }

  /** Runs one tick. Never throws: a failure is logged and the next tick tries again. */
  async tick(): Promise<TickResult> {
    const { clock, logger } = this.ports;
    const started = clock.now();
    this.state.lockLostAt = null;
    try {
      await this.reloadSettings();
      await this.readDcs();
      this.facts = this.absorb(await this.ports.db.probe());
      await this.checkWatchdog();
      const commands = this.commands();
      const d = await this.decide(this.input(commands));
      this.settleCommands(commands, d);
      const types = d.actions.map((a) => a.type);
      if (types.some((t) => !ROUTINE.has(t))) logger.info(d.message, { actions: types });
      else logger.debug(d.message, { actions: types });
      this.lastDecision = d;
      this.snapshot = this.buildSnapshot(d);
      // Before the actions: a leader's refresh wakes the replicas, which must then see its current member key.
      await this.publishMember();
      await this.execute(d);
      this.lastTickAt = clock.now();
      this.snapshot = this.buildSnapshot(d);
      this.ports.metrics?.loopCompleted((clock.now() - started) / 1000);
      return { decision: d, retick: this.state.lockLostAt !== null };
    } catch (error) {
      logger.error('HA tick failed', { error: describe(error) });
      this.snapshot = this.buildSnapshot(this.lastDecision);
      return { decision: this.lastDecision ?? decide(this.input(NO_COMMANDS)), retick: false };
    }
  }

  /** Re-probes and republishes the snapshot (after each step of a job: peers then see the server as it is). */
  private async refreshSnapshot(): Promise<void> {
    try {
      this.facts = this.absorb(await this.ports.db.probe());
      this.snapshot = this.buildSnapshot(this.lastDecision);
    } catch (error) {
      this.ports.logger.warn('probe after a database action failed', { error: describe(error) });
    }
  }

  private async reloadSettings(): Promise<void> {
    if (!this.reloadRequested) return;
    this.reloadRequested = false;
    try {
      this.settings = await this.settingsSource.reload();
      this.ports.logger.info('local configuration reloaded');
    } catch (error) {
      this.ports.logger.error('reload of the local configuration failed; keeping the previous one', { error: describe(error) });
    }
  }

  private async readDcs(): Promise<void> {
    const { store, clock, metrics } = this.ports;
    try {
      const cluster = await store.read();
      this.cluster = cluster;
      this.clusterReadAt = clock.now();
      this.dcsReachable = true;
      const seen = this.state.memory.initializeSeen;
      if (cluster.initialize === '' && cluster.initializeRevision !== null) {
        if (seen?.revision !== cluster.initializeRevision) this.state.remember({ initializeSeen: { revision: cluster.initializeRevision, since: clock.now() } });
      } else if (seen) {
        this.state.remember({ initializeSeen: null });
      }
      const leader = cluster.leader?.name ?? null;
      if (leader !== this.lastLeader) {
        if (this.lastLeader !== undefined) metrics?.leaderChanged(leader);
        this.lastLeader = leader;
      }
    } catch (error) {
      this.dcsReachable = false;
      metrics?.dcsError('read');
      this.ports.logger.warn('DCS is not accessible', { error: describe(error) });
    }
    const raw = this.cluster?.config?.value ?? this.settings.local.bootstrapDcs;
    if (raw !== this.resolvedFrom) {
      this.config = resolveConfig(raw);
      this.resolvedFrom = raw;
      this.ports.store.setRetryTimeout(this.config.retry_timeout);
    }
  }

  /** Takes a fresh probe in: what the loop learns from it alone (see observeFacts), and the facts as decide() sees them. */
  private absorb(probed: LocalFacts): LocalFacts {
    const { facts, patch } = observeFacts(probed, this.state.memory, this.ports.clock.now());
    if (Object.keys(patch).length) this.state.remember(patch);
    return facts;
  }

  private async checkWatchdog(): Promise<void> {
    const w = this.ports.watchdog;
    if (this.settings.node.watchdogMode === 'off' || w.isActive) return;
    this.state.watchdogUsable = await w.isUsable();
  }

  private commands(): PendingCommands {
    return { restart: this.restartCommand, reinitialize: this.reinitializeCommand };
  }

  private input(commands: PendingCommands): TickInput {
    return {
      now: this.ports.clock.now(),
      node: this.settings.node,
      local: this.settings.local,
      config: this.config,
      cluster: this.cluster ?? EMPTY_CLUSTER,
      dcsReachable: this.dcsReachable,
      facts: this.facts,
      lockDeadline: this.state.lockDeadline,
      peers: null,
      failsafeConfirmed: null,
      watchdog: { active: this.ports.watchdog.isActive, usable: this.state.watchdogUsable },
      job: this.job ? { name: this.job.name, startedAt: this.job.startedAt, step: this.job.step } : null,
      commands,
      memory: this.state.memory,
    };
  }

  /** decide(), gathering what it asks for (at most once each). */
  private async decide(input: TickInput): Promise<Decision> {
    const { peers, clock } = this.ports;
    let current = input;
    let d = decide(current);
    for (let round = 0; round < 2 && d.need !== null; round++) {
      if (d.need === 'peers' && current.peers === null) {
        const targets = peerTargets(current.cluster, current.node.name, current.config.failsafe_mode);
        const statuses = await gatherPeerStatuses(peers, targets, this.options.peerTimeoutMs);
        // Our own position must be as fresh as the peers' answers, or we would see them ahead of a stale us.
        this.facts = this.absorb(await this.ports.db.probe());
        current = { ...current, now: clock.now(), peers: statuses, facts: this.facts, memory: this.state.memory };
      } else if (d.need === 'failsafe' && current.failsafeConfirmed === null) {
        this.state.failsafeRoundStartedAt = clock.now();
        const ok = await failsafeRound(peers, current.cluster.failsafe ?? {}, current.node.name, this.options.failsafeTimeoutMs);
        current = { ...current, now: clock.now(), failsafeConfirmed: ok };
      } else {
        break;
      }
      d = decide(current);
    }
    return d.need === null ? d : { ...d, message: `${d.message} (could not gather ${d.need})`, need: null };
  }

  /** Commands the decision did not answer are answered now: the loop could not act on them. */
  private settleCommands(commands: PendingCommands, d: Decision): void {
    const answered = new Set(d.actions.flatMap((a) => (a.type === 'resolveCommand' ? [a.id] : [])));
    for (const cmd of [commands.restart, commands.reinitialize]) {
      if (!cmd) continue;
      if (this.restartCommand?.id === cmd.id) this.restartCommand = null;
      if (this.reinitializeCommand?.id === cmd.id) this.reinitializeCommand = null;
      if (!answered.has(cmd.id)) this.state.resolveCommand(cmd.id, { ok: false, error: 'not_possible_now', message: d.message });
    }
  }

  /** Inline part now; from the first long action on, a background job (only one at a time). */
  private async execute(d: Decision): Promise<void> {
    const ctx = { me: this.settings.node.name, ttlSeconds: this.config.ttl };
    const split = firstLongAction(d.actions);
    const inlineEnd = split < 0 ? d.actions.length : split;
    if (this.job && d.actions.some(isDatabaseAction)) {
      this.ports.logger.error('refusing database actions while a job runs', { job: this.job.name });
      return;
    }
    const out = await this.runner.runRange(d, 0, inlineEnd, ctx);
    if (!out.completed || split < 0) return;
    const name = d.job ?? d.actions[split]!.type;
    const job: { step: string } = { step: d.actions[split]!.type };
    const done = this.runner
      .runRange(d, split, d.actions.length, ctx, (a) => (job.step = a.type))
      .then((o) => {
        if (!o.completed) this.ports.logger.warn(`${name} did not complete`, { error: describe(o.error) });
        return o.completed;
      })
      .then((completed) => {
        this.job = null;
        // A failed job is retried at the normal pace, not at once (a fast failure would spin).
        if (completed) this.onJobDone();
      });
    this.job = Object.assign(job, { name, startedAt: this.ports.clock.now(), done });
  }

  private async publishMember(): Promise<void> {
    if (!this.dcsReachable) return;
    const memory = this.state.memory;
    const record = memberRecord(this.settings.node, this.facts, this.snapshot.status, memory.scheduledRestart, memory.checkpointAfterPromote);
    try {
      await this.ports.store.publishMember(this.settings.node.name, record, this.config.ttl);
    } catch (error) {
      this.ports.logger.warn('could not publish the member key', { error: describe(error) });
      this.ports.metrics?.dcsError('write');
    }
  }

  /** The snapshot the API reads. */
  buildSnapshot(d: Decision | null): NodeSnapshot {
    return nodeSnapshot({
      now: this.ports.clock.now(),
      lastLoopAt: this.lastTickAt,
      facts: this.facts,
      settings: this.settings,
      config: this.config,
      cluster: this.cluster,
      clusterReadAt: this.clusterReadAt,
      dcsReachable: this.dcsReachable,
      lockDeadline: this.state.lockDeadline,
      jobName: this.job?.name ?? null,
      failsafeAcceptedAt: this.failsafeAcceptedAt,
      failsafeActive: d?.publish.failsafeActive ?? false,
      watchdogUsable: this.state.watchdogUsable,
      scheduledRestart: this.state.memory.scheduledRestart,
    });
  }
}
