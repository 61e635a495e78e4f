import type { FailsafePing } from '../../ports/agent-control.js';
import type { Clock } from '../../ports/clock.js';
import { failsafeConfirmationStands, type FailsafeConfirmation } from '../../domain/cluster/ha/decision.js';
import type { ClusterObserver } from './cluster-observer.js';
import type { LocalObserver } from './local-observer.js';

/**
 * This node's answer to a leader's failsafe pings: while failsafe mode is on and the DCS is
 * out of reach, a primary keeps running only while every member confirms it. A member
 * confirms the leader it last saw in the DCS, unless it runs as primary itself; once its
 * own (working) DCS shows that key gone or taken, it refuses and the old primary demotes.
 */
export class FailsafeWitness {
  private lastAcceptedAt: number | null = null;
  private lastAcceptedFrom: string | null = null;
  private lastAcceptedTtlMs = 0;

  constructor(
    private readonly me: () => string,
    private readonly cluster: ClusterObserver,
    private readonly local: LocalObserver,
    private readonly clock: Clock,
  ) {}

  /** When this node last accepted a ping (epoch ms), or null. */
  get acceptedAt(): number | null {
    return this.lastAcceptedAt;
  }

  /**
   * The primary whose ping this node last accepted, when, and the ttl then; null when none, or
   * once a view read after it shows another member holding the leader key (the confirmation is
   * then forgotten: see failsafeConfirmationStands). Asked every tick, so every view a tick sees counts.
   */
  confirmation(): FailsafeConfirmation | null {
    if (this.lastAcceptedAt === null || this.lastAcceptedFrom === null) return null;
    const confirmed = { name: this.lastAcceptedFrom, at: this.lastAcceptedAt, ttlMs: this.lastAcceptedTtlMs };
    const view = this.cluster.current;
    if (failsafeConfirmationStands(confirmed, { leader: view.cluster?.leader?.name ?? null, readAt: view.readAt })) return confirmed;
    this.lastAcceptedFrom = null;
    return null;
  }

  /** Whether this node confirms `ping`'s sender as the leader. */
  accept(ping: FailsafePing): boolean {
    const facts = this.local.facts;
    const primary = facts.running && facts.inRecovery === false;
    const view = this.cluster.current;
    const ok = view.config.failsafe_mode && !primary && view.cluster?.leader?.name === ping.name && ping.members[this.me()] !== undefined;
    if (ok) {
      this.lastAcceptedAt = this.clock.now();
      this.lastAcceptedFrom = ping.name;
      this.lastAcceptedTtlMs = view.config.ttl * 1000;
    }
    return ok;
  }
}
