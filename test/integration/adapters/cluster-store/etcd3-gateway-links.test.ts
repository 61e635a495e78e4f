/**
 * The gateway client against a real etcd through a TCP relay, where the link itself is the
 * subject. etcd never closes an idle client connection: every socket a burst of reads opened
 * (readers piling up during an outage, answered at once when it ends) would stay open for good
 * unless the client trims its idle pool. And a slow but working link (1.5 s each way) is not a
 * dead one: the watch stream must become live and answer progress requests there, instead of
 * being reopened at every request and leaving every read to a range read.
 */
import { expect } from 'chai';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { etcdForSuite } from '../../../support/etcd-server.js';
import { startTcpRelay } from '../../../support/tcp-relay.js';

describe('Etcd3GatewayKeyValue through a TCP relay (real etcd)', function () {
  this.timeout(90_000);
  const etcd = etcdForSuite();

  it('a burst of 40 concurrent reads leaves at most 4 idle connections open', async () => {
    const relay = await startTcpRelay(etcd().host);
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

  it('with 1.5 s each way the watch becomes live and answers progress requests without being reopened', async () => {
    const relay = await startTcpRelay(etcd().host, { delayMs: 1500 });
    const kv = new Etcd3GatewayKeyValue({ hosts: [relay.host], prefix: '/itest-slow/', retryTimeoutMs: 5000 });
    const off = kv.watch(() => {});
    try {
      expect(await kv.whenWatching(20_000), 'the watch became live').to.equal(true);
      // The member's version is asked once the watch is up, on a connection of its own.
      for (let i = 0; i < 200 && kv.progressTrust().why === null && !kv.progressTrust().trusted; i++) await new Promise((r) => setTimeout(r, 100));
      const before = relay.opened();
      const started = Date.now();
      const answers: (string | null)[] = [];
      for (let i = 0; i < 3; i++) answers.push(await kv.progress());
      console.log(`      3 progress answers in ${Date.now() - started} ms; connections opened meanwhile: ${relay.opened() - before}`);
      expect(answers.every((a) => a !== null), `answers ${JSON.stringify(answers)}`).to.equal(true);
      expect(kv.watching()).to.equal(true);
      expect(relay.opened() - before, 'connections opened while the watch answered').to.equal(0);
    } finally {
      off();
      await kv.close();
      await relay.close();
    }
  });
});
