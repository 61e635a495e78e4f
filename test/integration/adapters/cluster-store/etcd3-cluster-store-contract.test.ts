import { SystemClock } from '../../../../src/adapters/clock/system-clock.js';
import { Etcd3ClusterStore } from '../../../../src/adapters/cluster-store/etcd3-cluster-store.js';
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

clusterStoreContract('Etcd3ClusterStore against a real etcd', async () => {
  const etcd = server!;
  if (!etcd.pid) await etcd.restart();
  const prefix = clusterPrefix('/warden-store-contract', `run${++run}`);
  const clock = new SystemClock();
  const clients: Etcd3ClusterStore[] = [];
  return {
    ttlSeconds: TTL_SECONDS,
    async client() {
      const c = new Etcd3ClusterStore({ hosts: [etcd.host], prefix, retryTimeoutMs: RETRY_TIMEOUT_MS, clock, logger: new NullLogger() });
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
