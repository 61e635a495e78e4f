import { expect } from 'chai';
import { TestCluster } from '../../../../src/app/testing/test-cluster.js';

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

  it('names an unknown node', () => {
    cluster = new TestCluster({ names: ['a'] });
    expect(() => cluster.node('x')).to.throw('no node x in the test cluster');
  });
});
