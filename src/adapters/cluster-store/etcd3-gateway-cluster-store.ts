import type { Clock } from '../../ports/clock.js';
import type { ClusterChange } from '../../ports/cluster-store.js';
import type { Logger } from '../../ports/logger.js';
import type { Etcd3Credentials } from './etcd3-endpoints.js';
import { Etcd3GatewayKeyValue, type CredentialsReloaded, type Etcd3GatewayKeyValueOptions } from './etcd3-gateway-key-value.js';
import { changeOf, KeyValueClusterStore } from './key-value-cluster-store.js';
import { ClusterKey } from './keys.js';

/** Options of the cluster store on etcd's JSON gateway: the connection, the clock and log, and whether to keep a watched copy. */
export interface Etcd3GatewayClusterStoreOptions extends Etcd3GatewayKeyValueOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Read from a copy kept current by one watch (an agent); see KeyValueClusterStore. */
  readonly watchedCopy?: boolean;
}

/**
 * The ClusterStore port on etcd v3 through its JSON gateway (HTTP, no gRPC): one lease per
 * agent, transactions, a prefix watch with progress requests, range reads only to resync.
 */
export class Etcd3GatewayClusterStore extends KeyValueClusterStore {
  private readonly gateway: Etcd3GatewayKeyValue;

  constructor(opts: Etcd3GatewayClusterStoreOptions) {
    const { clock, logger, watchedCopy, ...connection } = opts;
    const gateway = new Etcd3GatewayKeyValue({ ...connection, logger });
    super(gateway, clock, logger, { watchedCopy: watchedCopy ?? false });
    this.gateway = gateway;
  }

  /**
   * Watches the leader key alone: `leader` changes (holder null: deleted) and `resync` when the
   * watch (re)connected and changes may have been missed. Returns the unsubscribe.
   */
  watchLeader(listener: (change: ClusterChange) => void): () => void {
    return this.gateway.watchKey(ClusterKey.leader, (key, value) => {
      const change = changeOf(key, value);
      if (change !== null) listener(change);
    });
  }

  /** Takes renewed TLS files and a changed etcd user (see Etcd3GatewayKeyValue.reloadCredentials). Throws with the ones in force kept. */
  reloadCredentials(c: Etcd3Credentials): CredentialsReloaded {
    return this.gateway.reloadCredentials(c);
  }
}
