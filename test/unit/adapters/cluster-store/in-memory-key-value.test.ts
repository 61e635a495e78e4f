import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryKeyValue, InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { keyValueContract } from '../../../contract/key-value-contract.js';

keyValueContract('InMemoryKeyValue with a FakeClock', async () => {
  const clock = new FakeClock();
  const store = new InMemoryKeyValueSpace(clock);
  const clients: InMemoryKeyValue[] = [];
  return {
    ttlSeconds: 30,
    async client(id) {
      const c = new InMemoryKeyValue(store, { clientId: id, prefix: '/service/contract/' });
      clients.push(c);
      return c;
    },
    async elapse(ms) {
      await clock.advance(ms);
      store.expireLeases();
    },
    async setStoreReachable(up) {
      store.setReachable(up);
    },
    async cleanup() {
      await Promise.all(clients.map((c) => c.close()));
    },
  };
});

describe('InMemoryKeyValue specifics', () => {
  let clock: FakeClock;
  let store: InMemoryKeyValueSpace;
  beforeEach(() => {
    clock = new FakeClock(0);
    store = new InMemoryKeyValueSpace(clock);
  });

  it('without a leader (no quorum) reads are answered, writes and keep-alives are not, and no lease expires; a new leader grants every lease its full TTL', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    await a.keepAlive(30);
    await a.create('leader', 'a', { leased: true });
    store.setWritable(false);
    expect((await a.readAll()).get('leader')?.value).to.equal('a');
    for (const [op, call] of [
      ['keepAlive', () => a.keepAlive(30)],
      ['put', () => a.put('config', '{}')],
      ['create', () => a.create('sync', '{}')],
      ['delete', () => a.delete('leader')],
    ] as const) {
      const error = await (call as () => Promise<unknown>)().then(() => null, (e: unknown) => e);
      expect(error, op).to.be.instanceOf(DcsUnavailableError);
      expect((error as Error).message, op).to.match(/no leader/);
    }
    await clock.advance(60_000);
    store.expireLeases();
    expect((await a.readAll()).get('leader')?.value, 'no lease expires without a leader').to.equal('a');
    store.setWritable(true);
    await clock.advance(29_000);
    store.expireLeases();
    expect((await a.readAll()).get('leader')?.value, 'a full TTL from the new leader').to.equal('a');
    await clock.advance(2_000);
    store.expireLeases();
    expect((await a.readAll()).has('leader')).to.equal(false);
  });

  it('a partitioned client fails while the others keep working, and its lease is not renewed', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    const b = new InMemoryKeyValue(store, { clientId: 'b' });
    await a.keepAlive(30);
    await a.create('leader', 'a', { leased: true });
    a.setReachable(false);
    try {
      await a.keepAlive(30);
      expect.fail('keepAlive should reject');
    } catch (e) {
      expect(e).to.be.instanceOf(DcsUnavailableError);
      expect((e as Error).message).to.contain('partitioned');
    }
    expect((await b.readAll()).get('leader')?.value).to.equal('a');
    await clock.advance(30000);
    expect((await b.readAll()).has('leader')).to.equal(false);
    a.setReachable(true);
    expect(await a.keepAlive(30)).to.equal(false);
  });

  it('a partitioned client gets no watch events; healed, its watch reconnects (reporting the gap) and gets them again', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    const b = new InMemoryKeyValue(store, { clientId: 'b' });
    const seen: string[] = [];
    b.watch((k) => seen.push(k));
    b.setReachable(false);
    await a.put('x', '1');
    await Promise.resolve();
    expect(seen).to.deep.equal([]);
    expect(await b.progress()).to.equal(null);
    b.setReachable(true);
    await a.put('y', '1');
    await Promise.resolve();
    expect(seen).to.deep.equal(['', 'y']);
    expect(await b.progress()).to.equal(store.currentRevision);
  });

  it('a healed client that saw nothing go missing reconnects quietly', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    const b = new InMemoryKeyValue(store, { clientId: 'b' });
    const seen: string[] = [];
    b.watch((k) => seen.push(k));
    b.setReachable(false);
    b.setReachable(true);
    await a.put('y', '1');
    await Promise.resolve();
    expect(seen).to.deep.equal(['y']);
  });

  it('watch events carry the revision of the change and the lease of the key', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    const seen: [string, string | null, string, string | null][] = [];
    a.watch((k, v, info) => seen.push([k, v, info.revision, info.lease]));
    await a.keepAlive(30);
    await a.put('members/a', '{}', { leased: true });
    await a.put('config', '{}');
    await a.delete('config');
    await Promise.resolve();
    const lease = a.currentLease();
    expect(lease).to.be.a('string');
    expect(seen).to.deep.equal([
      ['members/a', '{}', '1', lease],
      ['config', '{}', '2', null],
      ['config', null, '3', null],
    ]);
    expect(a.writtenRevision()).to.equal('3');
    expect((await a.readAllAt()).revision).to.equal('3');
    expect((await a.readAll()).get('members/a')!.lease).to.equal(lease);
  });

  it('lease expiry is exact: alive at ttl - 1 ms, gone at ttl', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    await a.keepAlive(20);
    await a.put('members/a', '{}', { leased: true });
    await clock.advance(19999);
    expect((await a.readAll()).has('members/a')).to.equal(true);
    await clock.advance(1);
    expect((await a.readAll()).has('members/a')).to.equal(false);
  });

  it('expireLeases notifies watchers without any other access', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    const seen: string[] = [];
    a.watch((k) => seen.push(k));
    await a.keepAlive(30);
    await a.put('leader', 'a', { leased: true });
    await clock.advance(30000);
    seen.length = 0;
    store.expireLeases();
    await Promise.resolve();
    expect(seen).to.deep.equal(['leader']);
    expect(store.leaseCount).to.equal(0);
  });

  it('rejects after the configured delay of the clock while unreachable', async () => {
    store.unavailableDelayMs = 2000;
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    store.setReachable(false);
    let settled: unknown = 'pending';
    const p = a.readAll().then(
      () => 'resolved',
      (e) => e,
    );
    void p.then((v) => (settled = v));
    await clock.advance(1999);
    expect(settled).to.equal('pending');
    await clock.advance(1);
    expect(settled).to.be.instanceOf(DcsUnavailableError);
  });

  it('keys are scoped by prefix: two clusters share a store without seeing each other', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a', prefix: '/service/one/' });
    const b = new InMemoryKeyValue(store, { clientId: 'b', prefix: '/service/two/' });
    await a.put('leader', 'a');
    expect((await b.readAll()).size).to.equal(0);
    expect(store.allKeys()).to.deep.equal(['/service/one/leader']);
    expect(store.peek('/service/one/leader')).to.deep.include({ value: 'a', leased: false });
  });

  it('a leased write without a live lease gets a fresh lease with the last TTL', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    await a.keepAlive(20);
    await clock.advance(20000);
    await a.put('members/a', '{}', { leased: true });
    expect(store.peek('members/a')?.leased).to.equal(true);
    expect(await a.keepAlive(20)).to.equal(true);
    await clock.advance(19999);
    expect((await a.readAll()).has('members/a')).to.equal(true);
  });

  it('renewLeasesOnRecovery mimics etcd: leases survive an outage longer than their ttl', async () => {
    const etcdLike = new InMemoryKeyValueSpace(clock, { renewLeasesOnRecovery: true });
    const a = new InMemoryKeyValue(etcdLike, { clientId: 'a' });
    await a.keepAlive(30);
    await a.put('leader', 'a', { leased: true });
    etcdLike.setReachable(false);
    await clock.advance(60000);
    etcdLike.setReachable(true);
    expect((await a.readAll()).has('leader')).to.equal(true);
    await clock.advance(30000);
    expect((await a.readAll()).has('leader')).to.equal(false);
  });

  it('a closed client rejects and its watches stop', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    await a.close();
    try {
      await a.readAll();
      expect.fail('should reject');
    } catch (e) {
      expect(e).to.be.instanceOf(DcsUnavailableError);
    }
  });

  it('revisions grow monotonically across keys', async () => {
    const a = new InMemoryKeyValue(store, { clientId: 'a' });
    await a.put('x', '1');
    await a.put('y', '1');
    const all = await a.readAll();
    expect(Number(all.get('y')!.revision)).to.be.greaterThan(Number(all.get('x')!.revision));
    expect(store.currentRevision).to.equal(all.get('y')!.revision);
  });
});
