import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { clusterStoreContract } from '../../../contract/cluster-store-contract.js';

for (const watchedCopy of [true, false]) {
  clusterStoreContract(`InMemoryClusterStore with a FakeClock${watchedCopy ? ', reading from a watched copy' : ', range reads only'}`, async () => {
    const clock = new FakeClock();
    const space = new InMemoryKeyValueSpace(clock);
    const clients: InMemoryClusterStore[] = [];
    return {
      ttlSeconds: 30,
      watchedCopy,
      async client(id) {
        const c = new InMemoryClusterStore(space, { clientId: id, prefix: '/service/contract/', watchedCopy });
        clients.push(c);
        return c;
      },
      async elapse(ms) {
        await clock.advance(ms);
        space.expireLeases();
      },
      now: () => clock.now(),
      async setStoreReachable(up) {
        space.setReachable(up);
      },
      async cleanup() {
        await Promise.all(clients.map((c) => c.close()));
      },
    };
  });
}
