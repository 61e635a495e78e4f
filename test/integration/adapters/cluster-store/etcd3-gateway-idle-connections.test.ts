/**
 * etcd never closes an idle client connection: every socket a burst of reads opened (readers
 * piling up during an outage, answered at once when it ends) would stay open for good unless
 * the client trims its idle pool.
 */
import { expect } from 'chai';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { startTcpRelay } from '../../../support/tcp-relay.js';

describe('Etcd3GatewayKeyValue idle connections (real etcd)', function () {
  this.timeout(60_000);
  let etcd: EtcdServer;

  before(async () => {
    etcd = await startEtcd();
  });

  after(async () => {
    await etcd?.cleanup();
  });

  it('a burst of 40 concurrent reads leaves at most 4 idle connections open', async () => {
    const relay = await startTcpRelay(etcd.host);
    const kv = new Etcd3GatewayKeyValue({ hosts: [relay.host], prefix: '/itest-idle/', retryTimeoutMs: 5000 });
    try {
      await Promise.all(Array.from({ length: 40 }, () => kv.readAllAt()));
      const peak = relay.open();
      await new Promise((r) => setTimeout(r, 300));
      console.log(`      connections: ${peak} after the burst, ${relay.open()} once idle`);
      expect(peak, 'the burst used many connections at once').to.be.greaterThan(4);
      expect(relay.open()).to.be.at.most(4);
    } finally {
      await kv.close();
      await relay.close();
    }
  });
});
