/**
 * Whether a watch stream is live, and who waits for it to be: the bookkeeping the gRPC and
 * the JSON gateway watches share. `up` wakes every waiter; `stop` answers them false, and
 * every later `whenLive` at once.
 */
export class WatchLiveness {
  private live = false;
  private stopped = false;
  private readonly waiters = new Set<(live: boolean) => void>();

  /** Whether the stream is created and not broken since. */
  get isLive(): boolean {
    return this.live;
  }

  /** Whether watching has ended. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** The stream is created: every waiter hears true. */
  up(): void {
    this.live = true;
    for (const w of [...this.waiters]) w(true);
  }

  /** The stream broke or was dropped. */
  down(): void {
    this.live = false;
  }

  /** Watching ends: every waiter hears false. */
  stop(): void {
    this.stopped = true;
    for (const w of [...this.waiters]) w(false);
  }

  /** Resolves true once the stream is live (at once when it is), false after `ms` or when stopped. */
  whenLive(ms: number): Promise<boolean> {
    if (this.live) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (live: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(live);
      };
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(done);
    });
  }
}

/** Runs tasks one at a time, each after the previous one settled (a watch stream has one progress request out at a time). */
export class OneAtATime {
  private chain: Promise<unknown> = Promise.resolve();

  /** Runs `task` once every earlier task has settled. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task);
    this.chain = run.catch(() => null);
    return run;
  }
}
