import type { LocalFacts } from '../../domain/cluster/model/facts.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';

/**
 * Answers "where is your WAL now?" for the leader race. A published status may be a loop old,
 * and a replica may have received commits since, acknowledged to clients: a racer that
 * compared itself with it could promote without them. Each answer comes from a probe that
 * started after the request arrived; requests arriving while one runs share the next, so a
 * burst costs at most two probes at a time.
 */
export class FreshStatus {
  /** The probe in flight, and the last request number that arrived before it started. */
  private running: { readonly covers: number; readonly facts: Promise<LocalFacts> } | null = null;
  private queued: Promise<LocalFacts> | null = null;
  private sequence = 0;

  constructor(
    private readonly peek: () => Promise<LocalFacts>,
    private readonly build: (facts: LocalFacts) => NodeStatus,
  ) {}

  /**
   * The status document with this node's server probed after the call; null when the probe
   * failed (the agent is going away): an answer from an older probe would defeat the purpose.
   * Never throws.
   */
  async current(): Promise<NodeStatus | null> {
    try {
      return this.build(await this.probeAfter(++this.sequence));
    } catch {
      return null;
    }
  }

  private probeAfter(arrival: number): Promise<LocalFacts> {
    if (this.running === null) return this.start(arrival);
    if (this.running.covers >= arrival) return this.running.facts;
    // The probe in flight began before this request: wait for it, then take the next one (shared by every request waiting).
    return (this.queued ??= this.running.facts.then(
      () => this.start(this.sequence),
      () => this.start(this.sequence),
    ));
  }

  private start(arrivalsCovered: number): Promise<LocalFacts> {
    this.queued = null;
    const facts = this.peek().finally(() => {
      if (this.running?.facts === facts) this.running = null;
    });
    this.running = { covers: arrivalsCovered, facts };
    return facts;
  }
}
