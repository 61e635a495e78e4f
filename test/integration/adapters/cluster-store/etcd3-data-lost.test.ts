/**
 * etcd losing its data (a wiped data directory, a restore from an older snapshot) while the
 * agents run: its revision starts again from far below what they saw. The watched copy must
 * start afresh, or a stale leader key outranks every change of the new store (no primary, no
 * failover, /cluster naming a leader that does not exist) until the new revisions pass the old.
 */
import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SystemClock } from '../../../../src/adapters/clock/system-clock.js';
import { Etcd3ClusterStore } from '../../../../src/adapters/cluster-store/etcd3-cluster-store.js';
import { Etcd3GatewayClusterStore } from '../../../../src/adapters/cluster-store/etcd3-gateway-cluster-store.js';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import type { KeyValueClusterStore } from '../../../../src/adapters/cluster-store/key-value-cluster-store.js';
import { clusterPrefix } from '../../../../src/adapters/cluster-store/keys.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { etcdForSuite } from '../../../support/etcd-server.js';

const transports = {
  'JSON gateway': (o: ConstructorParameters<typeof Etcd3GatewayClusterStore>[0]) => new Etcd3GatewayClusterStore(o),
  gRPC: (o: ConstructorParameters<typeof Etcd3ClusterStore>[0]) => new Etcd3ClusterStore(o),
};

for (const [name, make] of Object.entries(transports)) {
  describe(`the watched copy when etcd loses its data (${name}, real etcd)`, function () {
    this.timeout(60_000);
    const etcd = etcdForSuite();

    it('a read after etcd came back empty shows the new store, not the keys it lost', async () => {
      const prefix = clusterPrefix('/service', 'lost');
      const raw = new Etcd3GatewayKeyValue({ hosts: [etcd().host], prefix, retryTimeoutMs: 5000 });
      const logger = new MemoryLogger();
      const store: KeyValueClusterStore = make({ hosts: [etcd().host], prefix, retryTimeoutMs: 5000, clock: new SystemClock(), logger, watchedCopy: true });
      try {
        // The copy is read once early, then follows the store's changes to revisions well
        // above what the new store will reach, and above its first read's.
        await store.read();
        for (let i = 0; i < 200; i++) await raw.put(`noise/${i % 5}`, String(i));
        await raw.put('leader', 'node2');
        await raw.put('config', '{"ttl":30}');
        expect((await store.read()).leader?.name).to.equal('node2');
        await etcd().stop();
        await rm(join(etcd().dataDir, 'etcd'), { recursive: true, force: true });
        await etcd().restart();
        // The new store passes the revision of the copy's first read.
        for (let i = 0; i < 20; i++) await raw.put(`noise/${i % 5}`, String(i));
        await raw.put('config', '{"ttl":40}');
        let leader: string | null | undefined = 'node2';
        const until = Date.now() + 20_000;
        while (leader !== null && Date.now() < until) {
          leader = await store.read().then((c) => c.leader?.name ?? null, () => 'unreachable');
          if (leader !== null) await new Promise((r) => setTimeout(r, 200));
        }
        expect(leader, 'the lost leader key is gone from the copy').to.equal(null);
        expect((await store.read()).config?.value['ttl']).to.equal(40);
        expect(logger.messages('warn').some((m) => /revision went back/.test(m))).to.equal(true);
      } finally {
        await store.close();
        await raw.close();
      }
    });
  });
}
