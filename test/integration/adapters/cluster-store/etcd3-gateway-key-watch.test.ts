/**
 * A watch of one key (the fencer follows the leader key alone): it reports that key's puts and
 * its delete, and nothing of the other keys under the prefix, whose changes would only cost
 * etcd bytes sent to every fencer.
 */
import { expect } from 'chai';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { etcdForSuite } from '../../../support/etcd-server.js';

describe('Etcd3GatewayKeyValue.watchKey (real etcd)', function () {
  this.timeout(30_000);
  const etcd = etcdForSuite();

  it('reports the one key, from its start, and nothing else under the prefix', async () => {
    const kv = new Etcd3GatewayKeyValue({ hosts: [etcd().host], prefix: '/itest-keywatch/', retryTimeoutMs: 5000 });
    const seen: string[] = [];
    let started!: () => void;
    const live = new Promise<void>((r) => (started = r));
    const off = kv.watchKey('leader', (key, value) => {
      if (key === '') return started();
      seen.push(`${key}=${value ?? '(deleted)'}`);
    });
    try {
      await live;
      await kv.put('members/node1', '{}');
      await kv.put('leader', 'node1');
      await kv.put('leaderx', 'not this one');
      await kv.put('status', '{}');
      await kv.delete('leader');
      await kv.put('leader', 'node2');
      const deadline = Date.now() + 5000;
      while (seen.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).to.deep.equal(['leader=node1', 'leader=(deleted)', 'leader=node2']);
    } finally {
      off();
      await kv.close();
    }
  });
});
