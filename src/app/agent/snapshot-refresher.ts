import type { Clock } from '../../ports/clock.js';

/**
 * Keeps the published snapshot fresh between ticks: every `intervalMs` it probes the local
 * server and republishes, so `/node` and the health checks show WAL positions at most that old
 * even with a long loop_wait (peers judge a candidate's lag from them). Read-only: it never
 * acts on what it sees; deciding stays with the tick.
 */
export class SnapshotRefresher {
  private running = false;
  private done: Promise<void> | null = null;
  private readonly stopper = new AbortController();

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly refresh: () => Promise<void>,
  ) {}

  /** Starts refreshing (no-op with an interval of 0). */
  start(): void {
    if (this.running || this.intervalMs <= 0) return;
    this.running = true;
    this.done = this.loop();
  }

  /** Stops; resolves once a refresh in progress ended. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopper.abort('stop');
    await this.done;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await this.clock.sleep(this.intervalMs, this.stopper.signal);
      if (!this.running) break;
      try {
        await this.refresh();
      } catch {
        // The next tick reports what is wrong; a refresh only keeps reads fresh.
      }
    }
  }
}
