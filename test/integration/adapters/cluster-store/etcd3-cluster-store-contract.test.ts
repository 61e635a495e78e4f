import { SystemClock } from '../../../../src/adapters/clock/system-clock.js';
import { Etcd3ClusterStore } from '../../../../src/adapters/cluster-store/etcd3-cluster-store.js';
import { Etcd3GatewayClusterStore } from '../../../../src/adapters/cluster-store/etcd3-gateway-cluster-store.js';
import type { KeyValueClusterStore } from '../../../../src/adapters/cluster-store/key-value-cluster-store.js';
import { clusterPrefix } from '../../../../src/adapters/cluster-store/keys.js';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';
import { clusterStoreContract } from '../../../contract/cluster-store-contract.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';

/** Above etcd's minimum lease TTL, short enough to keep the expiry test quick. */
const TTL_SECONDS = 2;
const RETRY_TIMEOUT_MS = 2000;

let server: EtcdServer | undefined;
let run = 0;

before(async function () {
  this.timeout(30_000);
  server = await startEtcd();
});

after(async function () {
  this.timeout(15_000);
  await server?.cleanup();
});

const transports = {
  'Etcd3ClusterStore (gRPC)': (opts: ConstructorParameters<typeof Etcd3ClusterStore>[0]) => new Etcd3ClusterStore(opts),
  'Etcd3GatewayClusterStore (JSON gateway)': (opts: ConstructorParameters<typeof Etcd3GatewayClusterStore>[0]) => new Etcd3GatewayClusterStore(opts),
};

for (const [name, make] of Object.entries(transports)) {
  for (const watchedCopy of [true, false]) {
    clusterStoreContract(`${name} against a real etcd${watchedCopy ? ', reading from a watched copy' : ', range reads only'}`, async () => {
      const etcd = server!;
      if (!etcd.pid) await etcd.restart();
      const prefix = clusterPrefix('/warden-store-contract', `run${++run}`);
      const clock = new SystemClock();
      const clients: KeyValueClusterStore[] = [];
      return {
        ttlSeconds: TTL_SECONDS,
        watchedCopy,
        async client() {
          const c = make({ hosts: [etcd.host], prefix, retryTimeoutMs: RETRY_TIMEOUT_MS, clock, logger: new NullLogger(), watchedCopy });
          clients.push(c);
          return c;
        },
        elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        now: () => clock.now(),
        async setStoreReachable(up) {
          if (up) await etcd.restart();
          else await etcd.stop();
        },
        async cleanup() {
          await Promise.all(clients.map((c) => c.close()));
          if (!etcd.pid) await etcd.restart();
        },
      };
    });
  }
}
