/**
 * A slow but working link to etcd (1.5 s each way) is not a dead one: the watch stream must
 * become live and answer progress requests there, instead of being reopened at every request
 * and leaving every read to a range read.
 */
import { expect } from 'chai';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { startTcpRelay } from '../../../support/tcp-relay.js';

describe('Etcd3GatewayKeyValue over a slow link (real etcd)', function () {
  this.timeout(90_000);
  let etcd: EtcdServer;

  before(async () => {
    etcd = await startEtcd();
  });

  after(async () => {
    await etcd?.cleanup();
  });

  it('with 1.5 s each way the watch becomes live and answers progress requests without being reopened', async () => {
    const relay = await startTcpRelay(etcd.host, { delayMs: 1500 });
    const kv = new Etcd3GatewayKeyValue({ hosts: [relay.host], prefix: '/itest-slow/', retryTimeoutMs: 5000 });
    const off = kv.watch(() => {});
    try {
      expect(await kv.whenWatching(20_000), 'the watch became live').to.equal(true);
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
