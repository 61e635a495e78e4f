import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { Etcd3KeyValue } from './etcd3-key-value.js';
import type { Etcd3KeyValueOptions } from './etcd3-options.js';
import { KeyValueClusterStore } from './key-value-cluster-store.js';

/** Options of the etcd v3 cluster store: the connection, and the clock and log it reports with. */
export interface Etcd3ClusterStoreOptions extends Etcd3KeyValueOptions {
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The ClusterStore port on etcd v3: one lease per agent, transactions, one range read, a prefix watch. */
export class Etcd3ClusterStore extends KeyValueClusterStore {
  constructor(opts: Etcd3ClusterStoreOptions) {
    const { clock, logger, ...connection } = opts;
    super(new Etcd3KeyValue(connection), clock, logger);
  }
}
