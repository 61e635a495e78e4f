import { expect } from 'chai';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix } from '../../../../src/adapters/cluster-store/keys.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { freeLoopbackPort, startEtcd, type EtcdServer } from '../../../support/etcd-server.js';

describe('Etcd3KeyValue specifics (real etcd)', function () {
  this.timeout(30_000);
  let server: EtcdServer;
  const clients: Etcd3KeyValue[] = [];
  let run = 0;

  const dcs = (hosts = [server.host], retryTimeoutMs = 2000) => {
    const c = new Etcd3KeyValue({ hosts, prefix: clusterPrefix('/warden-specifics', `run${run}`), retryTimeoutMs });
    clients.push(c);
    return c;
  };

  before(async () => {
    server = await startEtcd();
  });

  beforeEach(() => {
    run++;
  });

  afterEach(async () => {
    server.thaw();
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  after(async () => {
    await server?.cleanup();
  });

  it('skips a dead host in the hosts list', async () => {
    const dead = `127.0.0.1:${await freeLoopbackPort()}`;
    const a = dcs([dead, server.host]);
    for (let i = 0; i < 10; i++) {
      expect(await a.put(`members/m${i}`, '{}')).to.equal(true);
      expect((await a.readAll()).size).to.equal(i + 1);
    }
  });

  it('keys under another prefix are invisible', async () => {
    const a = dcs();
    run++;
    const other = dcs();
    await a.put('leader', 'a');
    expect((await other.readAll()).size).to.equal(0);
    expect(await other.create('leader', 'b')).to.be.a('string');
    expect((await a.readAll()).get('leader')?.value).to.equal('a');
  });

  it('a leased write after the lease expired puts the key on a new lease', async () => {
    const a = dcs();
    const b = dcs();
    expect(await a.keepAlive(2)).to.equal(false);
    await a.put('members/a', '{}', { leased: true });
    await new Promise((r) => setTimeout(r, 3000));
    expect((await b.readAll()).has('members/a'), 'expired with the old lease').to.equal(false);
    expect(await a.put('members/a', '{"again":true}', { leased: true })).to.equal(true);
    expect(await a.keepAlive(2), 'the new lease is the one kept alive').to.equal(true);
    await a.revokeLease();
    expect((await b.readAll()).has('members/a'), 'the key was on the new lease').to.equal(false);
  });

  it('setRetryTimeout bounds later calls', async () => {
    const a = dcs();
    await a.readAll();
    a.setRetryTimeout(400);
    server.freeze();
    const started = Date.now();
    const error = await a.readAll().then(
      () => undefined,
      (e: unknown) => e,
    );
    const took = Date.now() - started;
    expect(error).to.be.instanceOf(DcsUnavailableError);
    expect(took).to.be.within(350, 900);
  });

  it('calls after close() reject with DcsUnavailableError at once', async () => {
    const a = dcs();
    await a.close();
    const error = await a.readAll().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(DcsUnavailableError);
    expect(a.watch(() => undefined)).to.be.a('function');
  });
});
