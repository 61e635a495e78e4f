import { expect } from 'chai';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import type { KeyValueStore } from '../../../../src/adapters/cluster-store/key-value.js';
import { stopByPid, threeMembersEachTest } from '../../../support/etcd-three-members.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const adapters: Record<string, (hosts: string[]) => KeyValueStore> = {
  'Etcd3KeyValue (gRPC)': (hosts) => new Etcd3KeyValue({ hosts, prefix: '/service/quorum/', retryTimeoutMs: 2000 }),
  'Etcd3GatewayKeyValue (JSON gateway)': (hosts) => new Etcd3GatewayKeyValue({ hosts, prefix: '/service/quorum/', retryTimeoutMs: 2000 }),
};

describe('a watch on an etcd member cut off from its quorum (real 3-member etcd)', function () {
  this.timeout(60_000);
  const etcd = threeMembersEachTest();

  for (const [name, make] of Object.entries(adapters)) {
    it(`${name}: the stream asks for a leader, so it ends and confirms nothing once the member has none`, async () => {
      const e = etcd();
      // Only the member that will be cut off: nowhere else to go.
      const kv = make([e.hosts[0]!]);
      try {
        kv.watch(() => {});
        expect(await kv.whenWatching(5000)).to.equal(true);
        await kv.put('config', '{}');
        expect(await kv.progress()).to.be.a('string');
        const cut = Date.now();
        await Promise.all([stopByPid(e.procs[1]!), stopByPid(e.procs[2]!)]);
        while (kv.watching() && Date.now() - cut < 15_000) await sleep(100);
        const tookMs = Date.now() - cut;
        console.log(`      ${name}: the watch ended ${tookMs} ms after the member lost its quorum`);
        expect(kv.watching(), 'the stream of a member without a leader ends').to.equal(false);
        expect(tookMs).to.be.below(15_000);
        expect(await kv.progress()).to.equal(null);
        await sleep(1000);
        expect(kv.watching(), 'and is not opened again on that member').to.equal(false);
      } finally {
        await kv.close();
      }
    });
  }
});
