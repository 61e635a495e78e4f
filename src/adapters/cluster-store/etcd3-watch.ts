import type { IKeyValue, Namespace, Watcher } from 'etcd3';

/**
 * Key passed to the listener for a synthetic wake, each time the watch is (re)established:
 * changes made before that (while connecting, or while disconnected) may not be reported,
 * so the agent should re-read everything.
 */
export const WATCH_LIVE_KEY = '';

/** Delay before re-creating a watch that etcd cancelled (e.g. its start revision was compacted). */
const RESUBSCRIBE_DELAY_MS = 200;

/**
 * A watch on every key of a namespace that outlives disconnects: the package's watch
 * manager reconnects the stream and resumes from the last revision seen; a watch that
 * etcd cancels is created anew. The listener gets a synthetic wake whenever the watch
 * becomes live (first time included: a watch starts at the revision etcd has when it is
 * created, not when watch() was called).
 */
export class Etcd3PrefixWatch {
  private watcher: Watcher | null = null;
  private resubscribe: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly ns: Namespace,
    private readonly listener: (key: string, value: string | null) => void,
  ) {
    this.subscribe();
  }

  /** Stops watching; waits (at most `ms`) for etcd to confirm the cancel. Never throws. */
  async stop(ms: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.resubscribe);
    const w = this.watcher;
    this.watcher = null;
    if (!w) return;
    w.removeAllListeners('put').removeAllListeners('delete').removeAllListeners('connected');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      w.cancel().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }

  private subscribe(): void {
    if (this.stopped) return;
    const w = this.ns.watch().prefix('').watcher();
    this.watcher = w;
    w.on('put', (kv: IKeyValue) => this.emit(kv.key.toString(), kv.value.toString()));
    w.on('delete', (kv: IKeyValue) => this.emit(kv.key.toString(), null));
    w.on('connected', () => this.emit(WATCH_LIVE_KEY, null));
    // etcd cancelled this watch for good: start a new one from the current revision.
    w.on('error', () => {
      if (this.watcher !== w) return;
      this.watcher = null;
      w.removeAllListeners();
      w.on('error', () => undefined);
      this.resubscribe = setTimeout(() => this.subscribe(), RESUBSCRIBE_DELAY_MS);
    });
  }

  private emit(key: string, value: string | null): void {
    if (this.stopped) return;
    try {
      this.listener(key, value);
    } catch {
      // A throwing listener must not break the watch.
    }
  }
}
