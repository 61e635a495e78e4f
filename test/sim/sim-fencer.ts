import type { FakeClock } from '../../src/adapters/clock/fake-clock.js';
import type { FakeDatabase } from '../../src/adapters/database/fake-database.js';
import type { StoppedServer } from '../../src/domain/cluster/ha/promotion-undo.js';
import type { Fencer, FencerStatus } from '../../src/ports/fencer.js';

/** How often the simulated fencer looks at the lease (the real one: every 100 ms; the margin is 5 s). */
const CHECK_MS = 1000;

/**
 * How long the leader key may show another holder or none while a lock is guarded before the
 * database is stopped (the real fencer: 500 ms, a quarter of the 2 s the race waits for a former
 * leader that does not answer; the simulated race waits 500 ms).
 */
const KEY_LOST_GRACE_MS = 125;

/**
 * The fencer of one simulated machine, modelled on the real one: a process of its own (it runs
 * while the agent is frozen), that stops the database when the lease deadline minus the safety
 * margin passes without renewal, and at once when the agent dies (releasing the lock it held),
 * and when the leader key it watches stops naming its member while it guards a lock and the
 * agent does nothing about it (a lease revoked before its time under a frozen agent).
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
    /** Its member's name, and who the leader key names now as this machine sees the DCS (undefined: cut off). */
    private readonly member: string = '',
    private readonly leaderNow: () => string | null | undefined = () => undefined,
    /** Subscribes to the leader key's changes (null: deleted) as this machine's link to the DCS delivers them. */
    watchLeader?: (listener: (holder: string | null) => void) => () => void,
  ) {
    this.unwatch = watchLeader?.((holder) => this.leaderKeyChanged(holder)) ?? null;
    void this.loop();
  }

  private readonly unwatch: (() => void) | null;

  /** A change of the leader key seen while a lock is guarded: one that leaves it not this member's stops the database after the grace, unless the agent took it back. */
  private leaderKeyChanged(holder: string | null): void {
    if (!this.running || this.deadline === null || holder === this.member) return;
    void this.clock.sleep(KEY_LOST_GRACE_MS).then(() => {
      if (!this.running || this.deadline === null) return;
      const now = this.leaderNow();
      if (now === undefined || now === this.member) return;
      this.stop(true);
      void this.afterFence(this.stoppedServer(), false);
    });
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
    this.unwatch?.();
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
