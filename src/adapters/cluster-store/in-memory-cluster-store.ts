import type { Logger } from '../../ports/logger.js';
import { NullLogger } from '../logger/null-logger.js';
import { InMemoryKeyValue, type InMemoryKeyValueSpace } from './in-memory-key-value.js';
import { KeyValueClusterStore } from './key-value-cluster-store.js';

/** Options of one agent's in-memory cluster store. */
export interface InMemoryClusterStoreOptions {
  /** Name of the agent or tool using this client (diagnostics only). */
  readonly clientId: string;
  /** Cluster prefix; default '' (the space holds one cluster). */
  readonly prefix?: string;
  /** Where malformed values are reported; default: nowhere. */
  readonly logger?: Logger;
  /** Read from a copy kept current by a watch, as an agent on etcd does (default true); false: every read a range read, as wardenctl does. */
  readonly watchedCopy?: boolean;
}

/**
 * The ClusterStore port in memory, with etcd's semantics (leases on the space's clock,
 * transactions, watches): one per simulated agent, all on one shared space, as agents share
 * one etcd. `setReachable(false)` cuts this agent off the store.
 */
export class InMemoryClusterStore extends KeyValueClusterStore {
  /** The key-value client underneath (tests write raw values through it). */
  readonly client: InMemoryKeyValue;

  constructor(space: InMemoryKeyValueSpace, opts: InMemoryClusterStoreOptions) {
    const client = new InMemoryKeyValue(space, { clientId: opts.clientId, ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}) });
    super(client, space.clock, opts.logger ?? new NullLogger(), { watchedCopy: opts.watchedCopy ?? true });
    this.client = client;
  }

  /** Whether this client reaches the store (its own link). */
  get reachable(): boolean {
    return this.client.reachable;
  }

  /** Cuts this client off the store (false) or heals it (true). */
  setReachable(up: boolean): void {
    this.client.setReachable(up);
  }
}
