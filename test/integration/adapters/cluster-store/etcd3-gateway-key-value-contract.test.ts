import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { clusterPrefix } from '../../../../src/adapters/cluster-store/keys.js';
import { keyValueContract } from '../../../contract/key-value-contract.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';

/** Short enough to keep the suite fast, long enough to stay above etcd's minimum lease TTL (2 s by default). */
const TTL_SECONDS = 2;
const RETRY_TIMEOUT_MS = 2000;

// One real etcd for the whole file; every test gets its own cluster prefix.
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

keyValueContract('Etcd3GatewayKeyValue (JSON gateway) against a real etcd', async () => {
  const etcd = server!;
  // A test that failed while etcd was stopped must not break the next one.
  if (!etcd.pid) await etcd.restart();
  const prefix = clusterPrefix('/warden-gateway-contract', `run${++run}`);
  const clients: Etcd3GatewayKeyValue[] = [];
  return {
    ttlSeconds: TTL_SECONDS,
    unavailableBoundMs: RETRY_TIMEOUT_MS + 500,
    async client() {
      const c = new Etcd3GatewayKeyValue({ hosts: [etcd.host], prefix, retryTimeoutMs: RETRY_TIMEOUT_MS });
      clients.push(c);
      return c;
    },
    elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
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
