import { observeFacts } from '../../domain/cluster/ha/observation.js';
import { stoppedFacts, type LocalFacts } from '../../domain/cluster/model/facts.js';
import type { LeaderRef } from '../../domain/cluster/rules/position.js';
import type { Clock } from '../../ports/clock.js';
import type { Database } from '../../ports/database.js';
import type { AgentMemory } from './agent-memory.js';

/**
 * Observes the local PostgreSQL server: each probe is taken in (what the loop learns from it
 * alone goes to memory, see observeFacts) and the facts as decide() sees them are kept.
 */
export class LocalObserver {
  private latest: LocalFacts = stoppedFacts('stopped', false);

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly memory: AgentMemory,
    /** The current leader, to confirm this replica's WAL position against. */
    private readonly leader: () => LeaderRef | null = () => null,
    /** Hears every new set of facts. */
    private readonly observed: () => void = () => {},
    /** This node gets WAL from the archive only (tagged nostream). */
    private readonly archiveOnly: () => boolean = () => false,
  ) {}

  /** The facts of the latest probe. */
  get facts(): LocalFacts {
    return this.latest;
  }

  /**
   * Probes the server now (never throws: a dead server gives stopped or crashed facts). With
   * `alongside` (a cluster read that must not fail), the probe runs while it does, and the facts
   * are judged against the leader as that read shows it.
   */
  async observe(alongside?: Promise<void>): Promise<LocalFacts> {
    const [probed] = await Promise.all([this.db.probe(), alongside]);
    const { facts, patch } = this.judge(probed);
    if (Object.keys(patch).length) this.memory.remember(patch);
    this.latest = facts;
    this.observed();
    return facts;
  }

  /**
   * Probes the server now and judges what it shows as observe() does, but keeps nothing: the
   * facts the loop decides on, and its memory, change only in observe(). Never throws.
   */
  async peek(): Promise<LocalFacts> {
    return this.judge(await this.db.probe()).facts;
  }

  /** What a probe shows, judged against memory and the leader as they are now. */
  private judge(probed: LocalFacts): ReturnType<typeof observeFacts> {
    return observeFacts(probed, this.memory.memory, this.clock.now(), this.leader(), { archiveOnly: this.archiveOnly() });
  }
}
