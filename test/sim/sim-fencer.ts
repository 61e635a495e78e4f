import type { FakeClock } from '../../src/adapters/clock/fake-clock.js';
import type { FakeDatabase } from '../../src/adapters/database/fake-database.js';
import type { StoppedServer } from '../../src/domain/cluster/ha/promotion-undo.js';
import type { Fencer, FencerStatus } from '../../src/ports/fencer.js';

/** How often the simulated fencer looks at the lease (the real one: every 100 ms; the margin is 5 s). */
const CHECK_MS = 1000;

/**
 * The fencer of one simulated machine, modelled on the real one: a process of its own (it runs
 * while the agent is frozen), that stops the database when the lease deadline minus the safety
 * margin passes without renewal, and at once when the agent dies (releasing the lock it held).
 * It dies with the machine.
 */
export class SimFencer implements Fencer {
  private deadline: number | null = null;
  private running = true;
  /** It fenced and no new lock was reported since: a primary coming back is stopped again. */
  private fencedState = false;
  /** Times it stopped the database. */
  fenced = 0;

  constructor(
    private readonly clock: FakeClock,
    private readonly db: FakeDatabase,
    private readonly safetyMarginMs: number,
    /**
     * After it stopped the server of a lock holder: puts back the sync key of a promotion that
     * never happened (see undoUnfinishedPromotion), then, for a dead agent, releases its lock.
     */
    private readonly afterFence: (server: StoppedServer, release: boolean) => Promise<void>,
  ) {
    void this.loop();
  }

  async attach(): Promise<boolean> {
    return true;
  }

  guard(deadline: number): void {
    this.deadline = deadline;
    this.fencedState = false;
  }

  unguard(): void {
    this.deadline = null;
  }

  async detach(): Promise<void> {
    this.deadline = null;
  }

  async handover(): Promise<boolean> {
    return this.running && this.deadline !== null;
  }

  status(): FencerStatus {
    return { state: this.deadline === null ? 'idle' : 'guarding', reason: null };
  }

  /** The agent process died: stop the database at once (held read-only when it was the primary's); release the lock it held. */
  agentDied(): void {
    if (!this.running) return;
    const held = this.deadline !== null;
    this.stop(held || this.db.isWritable);
    if (held) void this.afterFence(this.stoppedServer(), true);
  }

  /** The machine dies: the fencer with it. */
  die(): void {
    this.running = false;
  }

  /** What pg_control and pg_wal would say of the stopped server. */
  private stoppedServer(): StoppedServer {
    return { inRecovery: this.db.ranInRecovery, timeline: this.db.timeline ?? 1 };
  }

  /** Stops the database; `hold`: first leaves it read-only for a start the agent did not decide (as PgFence). */
  private stop(hold: boolean): void {
    this.deadline = null;
    this.fencedState = true;
    if (hold) this.db.holdReadOnly();
    if (this.db.isRunning) {
      this.db.crash();
      this.fenced++;
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await this.clock.sleep(CHECK_MS);
      if (this.running && this.deadline !== null && this.clock.now() >= this.deadline - this.safetyMarginMs) {
        this.stop(true);
        void this.afterFence(this.stoppedServer(), false);
      }
      else if (this.running && this.deadline === null && this.fencedState && this.db.isWritable) this.stop(true);
    }
  }
}
