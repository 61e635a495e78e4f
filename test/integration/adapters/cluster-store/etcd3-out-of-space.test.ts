/**
 * etcd past its storage quota (the NOSPACE alarm): it takes no writes and grants no lease until
 * an operator frees space and disarms the alarm. A leader lock already held is still renewed
 * (the primary keeps running); every refused write says what the operator must do.
 */
import { expect } from 'chai';
import { SystemClock } from '../../../../src/adapters/clock/system-clock.js';
import { Etcd3GatewayClusterStore } from '../../../../src/adapters/cluster-store/etcd3-gateway-cluster-store.js';
import { clusterPrefix } from '../../../../src/adapters/cluster-store/keys.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { etcdctl, fillEtcdToQuota, freeEtcdSpace, startEtcd, type EtcdServer } from '../../../support/etcd-server.js';

const QUOTA_BYTES = 16 * 1024 * 1024;

describe('Etcd3GatewayClusterStore: etcd out of space (real etcd with a small quota)', function () {
  this.timeout(90_000);
  let etcd: EtcdServer;
  const stores: Etcd3GatewayClusterStore[] = [];
  // As the agent runs it: renewals are keep-alives confirmed by the watched copy (no write).
  const store = () => {
    const s = new Etcd3GatewayClusterStore({ clock: new SystemClock(), logger: new MemoryLogger(), hosts: [etcd.host], prefix: clusterPrefix('/service', 'nospace'), retryTimeoutMs: 3000, watchedCopy: true });
    stores.push(s);
    return s;
  };
  before(async () => {
    etcd = await startEtcd({ extraArgs: ['--quota-backend-bytes', String(QUOTA_BYTES)] });
  });
  after(async () => {
    for (const s of stores) await s.close();
    await etcd?.cleanup();
  });

  it('a held lock is still renewed; writes and new locks are refused with what to do; freed and disarmed, all works again', async () => {
    const leader = store();
    const other = store();
    expect(await leader.acquireLeader('a', 10)).to.not.equal(null);
    await leader.read();
    expect(await leader.renewLeader('a', 10)).to.not.equal(null);
    // Fill etcd outside the cluster's keys until it refuses.
    const full = await fillEtcdToQuota(etcd.endpoint, '/filler/');
    expect(full, 'etcd reached its quota').to.equal(true);
    expect(await etcdctl(etcd.endpoint, ['alarm', 'list'])).to.match(/NOSPACE/);

    expect(await leader.renewLeader('a', 10), 'the lock held is renewed').to.not.equal(null);
    const refused = await leader.writeStatus({ optime: 1, slots: {} }).then(() => null, (e: unknown) => e);
    expect(refused).to.be.instanceOf(DcsUnavailableError);
    expect((refused as Error).message).to.match(/database space exceeded.*storage quota.*etcdctl alarm disarm/);
    expect(await leader.releaseLeader('a'), 'a release (a delete) still works').to.equal(true);
    const noLock = await other.acquireLeader('b', 10).then(() => null, (e: unknown) => e);
    expect(noLock, 'no new lock under the alarm').to.be.instanceOf(DcsUnavailableError);
    expect((noLock as Error).message).to.match(/^etcd lease grant failed: .*etcdctl alarm disarm/);

    await freeEtcdSpace(etcd.endpoint, '/filler/');
    expect(await other.acquireLeader('b', 10)).to.not.equal(null);
    await other.writeStatus({ optime: 2, slots: {} });
  });
});
