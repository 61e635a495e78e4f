import type { PublishHints } from '../../domain/cluster/ha/decision.js';
import type { ScheduledRestart } from '../../domain/cluster/model/cluster.js';
import type { LocalFacts } from '../../domain/cluster/model/facts.js';
import type { PositionConfirmation } from '../../domain/cluster/rules/position.js';
import type { FencerStatus } from '../../ports/fencer.js';
import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import type { ClusterObservation } from './cluster-observer.js';
import { nodeSnapshot } from './node-snapshot.js';
import type { AgentSettings } from './tokens.js';

/** Where the snapshot's parts come from, read at each publication. */
export interface SnapshotSources {
  now(): number;
  settings(): AgentSettings;
  facts(): LocalFacts;
  cluster(): ClusterObservation;
  lockDeadline(): number | null;
  jobName(): string | null;
  failsafeAcceptedAt(): number | null;
  watchdogUsable(): boolean;
  scheduledRestart(): ScheduledRestart | null;
  positionConfirmed(): PositionConfirmation | null;
  fencer(): FencerStatus;
}

/**
 * Holds the NodeSnapshot the REST API answers from, and builds a new one whenever the agent's
 * state changed: after each tick, after each step of a job, after the API wrote something it
 * must read back. Readers get an immutable object and never wait.
 */
export class SnapshotPublisher {
  private snap: NodeSnapshot;
  private lastLoopAt: number;
  private hints: PublishHints = { failsafeActive: false };
  /** Hears every published snapshot (the event reporter); must return at once. */
  onPublish: (snap: NodeSnapshot) => void = () => {};

  constructor(private readonly sources: SnapshotSources) {
    this.lastLoopAt = sources.now();
    this.snap = this.build();
  }

  /** The latest published snapshot. */
  get current(): NodeSnapshot {
    return this.snap;
  }

  /** Publishes a snapshot of the current state. */
  publish(): NodeSnapshot {
    this.snap = this.build();
    this.onPublish(this.snap);
    return this.snap;
  }

  /** A snapshot of the current state with `facts` in place of the loop's, not published. */
  preview(facts: LocalFacts): NodeSnapshot {
    return this.build(facts);
  }

  /** A decision was made: what it says for the status (failsafe kept this primary alive, an operator's rebuild is required, what the node waits for). */
  decided(hints: PublishHints): void {
    this.hints = hints;
  }

  /** A tick finished: the liveness clock moves on. */
  loopFinished(): void {
    this.lastLoopAt = this.sources.now();
    this.publish();
  }

  private build(facts?: LocalFacts): NodeSnapshot {
    const s = this.sources;
    const view = s.cluster();
    return nodeSnapshot({
      now: s.now(),
      lastLoopAt: this.lastLoopAt,
      facts: facts ?? s.facts(),
      settings: s.settings(),
      config: view.config,
      cluster: view.cluster,
      clusterReadAt: view.readAt,
      dcsReachable: view.reachable,
      lockDeadline: s.lockDeadline(),
      jobName: s.jobName(),
      failsafeAcceptedAt: s.failsafeAcceptedAt(),
      failsafeActive: this.hints.failsafeActive,
      reinitializeRequired: this.hints.reinitializeRequired ?? null,
      waitingFor: this.hints.waitingFor ?? null,
      silentPrimary: this.hints.silentPrimary === true,
      watchdogUsable: s.watchdogUsable(),
      scheduledRestart: s.scheduledRestart(),
      positionConfirmed: s.positionConfirmed(),
      fencer: s.fencer(),
    });
  }
}
