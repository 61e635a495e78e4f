import { expect } from 'chai';
import { TestCluster } from '../../../../src/app/testing/test-cluster.js';
import { FakeHookScripts } from '../../../../src/adapters/callbacks/fake-hook-scripts.js';

/** A 3-node TestCluster bootstrapped by `a`, with `b` and `c` streaming from it. */
async function streamingFromA(opts: ConstructorParameters<typeof TestCluster>[0]): Promise<TestCluster> {
  const cluster = new TestCluster(opts);
  cluster.start(['a']);
  await cluster.until(() => cluster.primary() === 'a', 60_000);
  cluster.start();
  await cluster.until(() => cluster.streaming().length === 2, 120_000);
  return cluster;
}

describe('TestCluster (warden/testing)', function () {
  this.timeout(20_000);
  let cluster: TestCluster;
  afterEach(() => cluster?.shutdown());

  it('bootstraps, streams, fails over after a crash, never to a nofailover member', async () => {
    cluster = new TestCluster({ names: ['a', 'b', 'c'], nodes: { c: { tags: { nofailover: true } } } });
    cluster.start(['a']);
    await cluster.until(() => cluster.primary() === 'a', 60_000, 'a to bootstrap');
    cluster.start();
    await cluster.until(() => cluster.streaming().length === 2, 120_000, 'two replicas streaming');
    expect(cluster.leaderKey()).to.equal('a');
    cluster.crash('a');
    const took = await cluster.until(() => cluster.primary() !== null, 120_000, 'a new primary');
    expect(cluster.primary()).to.equal('b');
    // The crashed leader's lock had to run out: about ttl (30 s) of fake time.
    expect(took).to.be.within(20_000, 60_000);
  });

  it('hooks: a policy test of a fencing script (FakeHookScripts): while it refuses its node never writes; once it succeeds the node promotes', async () => {
    const fencing = new FakeHookScripts({ pre_promote: 'fails' });
    cluster = await streamingFromA({ names: ['a', 'b', 'c'], nodes: { b: { hooks: fencing }, c: { tags: { nofailover: true } } } });
    cluster.crash('a');
    await cluster.advance(120_000);
    expect(cluster.primary()).to.equal(null);
    expect(fencing.runs.length).to.be.at.least(2);
    fencing.set('pre_promote', 'succeeds');
    await cluster.until(() => cluster.primary() === 'b', 60_000, 'b to promote');
  });

  it('a clean stop releases the lock at once and leaves the member listed as stopped until its lease runs out', async () => {
    cluster = new TestCluster({ names: ['a', 'b'] });
    cluster.start(['a']);
    await cluster.until(() => cluster.primary() === 'a', 60_000);
    cluster.start(['b']);
    await cluster.until(() => cluster.streaming().length === 1, 120_000);
    const stopping = cluster.stop('a');
    await cluster.advance(1000);
    await stopping;
    expect(cluster.view().members.map((m) => [m.name, m.state])).to.deep.include(['a', 'stopped']);
    const took = await cluster.until(() => cluster.primary() === 'b', 60_000, 'b to lead');
    expect(took).to.be.lessThan(15_000);
    await cluster.advance(31_000);
    expect(cluster.view().members.map((m) => m.name)).to.deep.equal(['b']);
  });

  it('cut: a primary cut off the DCS stops writing and another node leads; healed, it follows', async () => {
    cluster = await streamingFromA({ names: ['a', 'b', 'c'] });
    cluster.cut('a', { dcs: true });
    expect(cluster.node('a').dcsCut).to.equal(true);
    // advance() throws on two writable nodes: the old primary must stop before anyone promotes.
    await cluster.until(() => !cluster.node('a').db.isWritable, 60_000, 'a to stop writing');
    await cluster.until(() => cluster.primary() !== null && cluster.primary() !== 'a', 120_000, 'a new primary');
    cluster.heal('a');
    await cluster.until(() => cluster.streaming().includes('a'), 120_000, 'a to follow the new primary');
  });

  it('cut: with failsafe mode, the primary keeps writing through a DCS outage while every member answers, and stops when one does not', async () => {
    cluster = await streamingFromA({ names: ['a', 'b', 'c'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: true } });
    await cluster.advance(20_000);
    cluster.space.setReachable(false);
    await cluster.advance(60_000);
    expect(cluster.node('a').db.isWritable, 'every member answers: a keeps writing').to.equal(true);
    cluster.cut('c', { peers: true });
    expect(cluster.node('c').peersCut).to.equal(true);
    await cluster.until(() => !cluster.node('a').db.isWritable, 60_000, 'a to stop writing once c does not answer');
  });

  it('cut: a host cut off from the other nodes (agent and database) but not from the DCS; the most advanced replica still wins when the primary dies', async () => {
    cluster = await streamingFromA({ names: ['a', 'b', 'c'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 10 * 1024 * 1024 } });
    cluster.cut('b', { databases: true });
    expect(cluster.node('b').databasesCut).to.equal(true);
    for (let i = 0; i < 5; i++) await cluster.node('a').db.write(4096);
    await cluster.until(() => !cluster.streaming().includes('b'), 60_000, 'b to stop streaming');
    cluster.heal('b');
    await cluster.until(() => cluster.streaming().includes('b') && cluster.node('b').db.lsn === cluster.node('a').db.lsn, 60_000, 'b to catch up');
    // b stops receiving; c gets every write and publishes it; then c's host is cut off from the others.
    cluster.cut('b', { databases: true });
    for (let i = 0; i < 5; i++) await cluster.node('a').db.write(4096);
    await cluster.advance(20_000);
    cluster.cut('c', { peers: true, databases: true });
    cluster.heal('b');
    cluster.crash('a');
    await cluster.until(() => cluster.primary() !== null, 120_000, 'a new primary');
    expect(cluster.primary()).to.equal('c');
  });

  it('cut: a call across a peers cut gets no answer until the caller\'s timeout; a stopped agent refuses at once', async () => {
    cluster = await streamingFromA({ names: ['a', 'b', 'c'] });
    const apiUrl = cluster.node('b').apiUrl;
    const start = cluster.clock.now();
    cluster.cut('b', { peers: true });
    let answered: unknown = 'pending';
    void cluster.peers.fetchStatus(apiUrl, 2000).then((s) => (answered = s));
    await cluster.advance(1900);
    expect(answered).to.equal('pending');
    await cluster.advance(200);
    expect(answered).to.equal(null);
    expect(cluster.clock.now() - start).to.be.at.least(2000);
    cluster.heal('b');
    expect(await cluster.peers.fetchStatus(apiUrl, 2000)).to.have.property('role', 'replica');
    cluster.crash('b');
    expect(await cluster.peers.fetchStatus(apiUrl, 2000)).to.equal(null);
  });

  it('takes a node\'s own file settings: a local parameter reaches its server', async () => {
    cluster = new TestCluster({ names: ['a'], nodes: { a: { local: { parameters: { work_mem: '64MB' } }, loop: { peerTimeoutMs: 100 } } } });
    cluster.start();
    await cluster.until(() => cluster.primary() === 'a', 60_000);
    expect(cluster.node('a').db.parameters['work_mem']).to.equal('64MB');
  });

  it('names an unknown node', () => {
    cluster = new TestCluster({ names: ['a'] });
    expect(() => cluster.node('x')).to.throw('no node x in the test cluster');
  });
});
