import type { EventEmitter } from 'node:events';
import { WatchClient, type ICallable, type IDuplexStream, type IWatchRequest, type IWatchResponse, type Namespace } from 'etcd3';
import type { WatchInfo } from './key-value.js';
import { OneAtATime, WatchLiveness } from './watch-liveness.js';

/**
 * Key passed to the listener for a synthetic wake, each time the watch is (re)established:
 * changes made before that (while connecting, or while disconnected) may not be reported,
 * so the agent should re-read everything.
 */
export const WATCH_LIVE_KEY = '';

/** Pause before opening a watch stream again after it broke or etcd cancelled it. */
const RESUBSCRIBE_DELAY_MS = 200;

/**
 * A Watch client whose streams ask etcd for a member with a raft leader (`hasleader`
 * metadata, as etcd's own Go client sends with WithRequireLeader): a member cut off from the
 * quorum ends them instead of serving an old view as current (and answering progress
 * requests for it). The `etcd3` package has no option for it: its connection pool is wrapped.
 */
export function requireLeaderWatchClient(ns: Namespace): WatchClient {
  const pool = (ns as unknown as { readonly pool: ICallable<unknown> }).pool;
  const callable: ICallable<unknown> = {
    exec: (service, method, params, options) => pool.exec(service, method, params, options),
    markFailed: (resource, error) => pool.markFailed(resource, error),
    callOptionsFactory: pool.callOptionsFactory,
    withConnection: (service, fn) =>
      pool.withConnection(service, (args) => {
        const metadata = args.metadata.clone();
        metadata.set('hasleader', 'true');
        return fn({ ...args, metadata });
      }),
  };
  return new WatchClient(callable);
}

/** The first key after every key that starts with `prefix` (etcd's range_end of a prefix). */
function prefixEnd(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i]! < 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1));
      end[i]! += 1;
      return end;
    }
  }
  return Buffer.from([0]);
}

/**
 * A watch on every key under a prefix, on a gRPC watch stream of its own (the `etcd3`
 * package's raw Watch client, not its watch manager, which cannot ask for progress): each
 * time the stream is created the listener gets a synthetic wake (changes may have been
 * missed before), then every change with its revision and lease. Progress requests go on
 * the same stream: etcd answers once it has sent every change up to its revision. A stream
 * that breaks, that etcd cancels (e.g. its start revision was compacted), or that leaves a
 * progress request unanswered is opened anew.
 */
export class Etcd3PrefixWatch {
  private stream: IDuplexStream<IWatchRequest, IWatchResponse> | null = null;
  private readonly liveness = new WatchLiveness();
  private resubscribe: NodeJS.Timeout | undefined;
  private waiting: ((revision: string | null) => void) | null = null;
  private readonly progressRequests = new OneAtATime();

  constructor(
    private readonly watches: WatchClient,
    private readonly prefix: Buffer,
    private readonly listener: (key: string, value: string | null, info: WatchInfo) => void,
    private readonly progressTimeoutMs: () => number,
  ) {
    void this.open();
  }

  /** Whether the stream is created and not broken since. */
  get isLive(): boolean {
    return this.liveness.isLive;
  }

  /** Resolves true once the stream is live (at once when it is), false after `ms` or when stopped. */
  whenLive(ms: number): Promise<boolean> {
    return this.liveness.whenLive(ms);
  }

  /** Asks etcd for the stream's progress; the revision once every change up to it was reported, null when not live or not answered in time. */
  progress(): Promise<string | null> {
    return this.progressRequests.run(() => this.oneProgress());
  }

  /** Stops watching; waits (at most `ms`) for the stream to close. Never throws. */
  async stop(ms: number): Promise<void> {
    this.liveness.stop();
    clearTimeout(this.resubscribe);
    const s = this.stream;
    this.drop();
    if (!s) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (s as unknown as EventEmitter).once('close', () => resolve())), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  private oneProgress(): Promise<string | null> {
    const s = this.stream;
    if (!this.liveness.isLive || s === null) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        resolve(null);
        // Unanswered: the stream may be dead without either end knowing. Start anew.
        if (this.stream === s) this.broken(s);
      }, this.progressTimeoutMs());
      this.waiting = (revision) => {
        clearTimeout(timer);
        this.waiting = null;
        resolve(revision);
      };
      s.write({ progress_request: {} });
    });
  }

  private async open(): Promise<void> {
    if (this.liveness.isStopped) return;
    let s: IDuplexStream<IWatchRequest, IWatchResponse>;
    try {
      s = await this.watches.watch();
    } catch {
      return this.retry();
    }
    if (this.liveness.isStopped) return close(s);
    this.stream = s;
    s.on('data', (res: IWatchResponse) => this.message(s, res));
    s.on('error', () => this.broken(s));
    s.on('end', () => this.broken(s));
    s.write({ create_request: { key: this.prefix, range_end: prefixEnd(this.prefix) } });
  }

  private message(s: IDuplexStream<IWatchRequest, IWatchResponse>, res: IWatchResponse): void {
    if (this.stream !== s) return;
    if (res.canceled) return this.broken(s);
    if (res.created) {
      this.liveness.up();
      this.emit(WATCH_LIVE_KEY, null, { revision: String(res.header?.revision ?? '0'), lease: null });
      return;
    }
    const events = res.events ?? [];
    for (const ev of events) {
      const deleted = ev.type === 'Delete';
      const key = ev.kv.key.subarray(this.prefix.length).toString();
      const lease = deleted || ev.kv.lease === undefined || String(ev.kv.lease) === '0' ? null : String(ev.kv.lease);
      this.emit(key, deleted ? null : ev.kv.value.toString(), { revision: String(ev.kv.mod_revision), lease });
    }
    // A response without events is a progress notification: every change up to its revision was sent before it.
    if (events.length === 0) this.waiting?.(String(res.header?.revision ?? '0'));
  }

  private emit(key: string, value: string | null, info: WatchInfo): void {
    if (this.liveness.isStopped) return;
    try {
      this.listener(key, value, info);
    } catch {
      // A throwing listener must not break the watch.
    }
  }

  private broken(s: IDuplexStream<IWatchRequest, IWatchResponse>): void {
    if (this.stream !== s) return;
    this.drop();
    this.retry();
  }

  private retry(): void {
    if (this.liveness.isStopped) return;
    clearTimeout(this.resubscribe);
    this.resubscribe = setTimeout(() => void this.open(), RESUBSCRIBE_DELAY_MS);
  }

  private drop(): void {
    const s = this.stream;
    this.stream = null;
    this.liveness.down();
    this.waiting?.(null);
    if (s) close(s);
  }
}

/** Half-closes then cancels a stream; a stream already closed is left alone. */
function close(s: IDuplexStream<IWatchRequest, IWatchResponse>): void {
  (s as unknown as EventEmitter).removeAllListeners('data');
  s.on('error', () => undefined);
  try {
    s.end();
    s.cancel();
  } catch {
    // already closed by an error
  }
}
