import { performance } from 'node:perf_hooks';
import { Etcd3, type Watcher } from 'etcd3';

/** One change of the leader key, stamped with `performance.now()` when the watch delivered it. */
export interface LeaderEvent {
  readonly at: number;
  readonly kind: 'put' | 'delete';
  /** The member name written (put only). */
  readonly value?: string;
}

/**
 * Watches the leader key in etcd and records every put and delete. A lease expiry shows up
 * as a delete: the moment "the key disappears from etcd" of the failover goal.
 */
export class LeaderWatch {
  readonly events: LeaderEvent[] = [];
  private constructor(
    private readonly client: Etcd3,
    private readonly watcher: Watcher,
  ) {}

  /** Starts watching `key` on the etcd at `127.0.0.1:port`. */
  static async start(port: number, key: string): Promise<LeaderWatch> {
    const client = new Etcd3({ hosts: `http://127.0.0.1:${port}` });
    const watcher = await client.watch().key(key).create();
    const w = new LeaderWatch(client, watcher);
    watcher.on('put', (kv) => w.events.push({ at: performance.now(), kind: 'put', value: kv.value.toString() }));
    watcher.on('delete', () => w.events.push({ at: performance.now(), kind: 'delete' }));
    return w;
  }

  /** The first event of `kind` after `since` (and, for puts, naming `value` when given). */
  firstAfter(since: number, kind: LeaderEvent['kind'], value?: string): LeaderEvent | undefined {
    return this.events.find((e) => e.at >= since && e.kind === kind && (value === undefined || e.value === value));
  }

  /** Stops the watch and closes the client. */
  async close(): Promise<void> {
    await this.watcher.cancel().catch(() => undefined);
    this.client.close();
  }
}
