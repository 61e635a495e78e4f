import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { Etcd3KeyValue } from './etcd3-key-value.js';
import type { Etcd3KeyValueOptions } from './etcd3-options.js';
import { KeyValueClusterStore } from './key-value-cluster-store.js';

/** Options of the etcd v3 cluster store: the connection, and the clock and log it reports with. */
export interface Etcd3ClusterStoreOptions extends Etcd3KeyValueOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Read from a copy kept current by one watch (an agent); see KeyValueClusterStore. */
  readonly watchedCopy?: boolean;
}

/** The ClusterStore port on etcd v3 over gRPC: one lease per agent, transactions, a prefix watch with progress requests, range reads. */
export class Etcd3ClusterStore extends KeyValueClusterStore {
  constructor(opts: Etcd3ClusterStoreOptions) {
    const { clock, logger, watchedCopy, ...connection } = opts;
    super(new Etcd3KeyValue(connection), clock, logger, { watchedCopy: watchedCopy ?? false });
  }
}
