import { expect } from 'chai';
import { SimCluster } from '../../../../sim/sim-cluster.js';

describe('HA scenarios: bootstrap', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('3 nodes: one wins the initialize race, initdb, leads; the others clone it and stream', async () => {
    sim = new SimCluster({ names: ['node1', 'node2', 'node3'], verboseLogs: true });
    sim.startAll();
    await sim.until(() => sim.primary() !== null, 60_000, 'a primary');
    const leader = sim.primary()!;
    expect(sim.leaderKey()).to.equal(leader.name);
    await sim.until(() => [...sim.nodes.values()].filter((n) => n.db.isStreaming).length === 2, 60_000, 'two streaming replicas');
    const view = sim.view();
    expect(view.initialize).to.equal(leader.db.systemIdentifier);
    expect(view.config?.value).to.deep.include({ ttl: 30, loop_wait: 10 });
    expect(view.members.map((m) => m.name)).to.deep.equal(['node1', 'node2', 'node3']);
    for (const n of sim.nodes.values()) expect(n.db.systemIdentifier).to.equal(leader.db.systemIdentifier);
  });
});

describe('HA scenarios: a node that waits says for what, once per change', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('nofailover on an empty cluster: /node and the log say it waits for another member to bootstrap; once one does, it clones it', async () => {
    sim = new SimCluster({ names: ['node1', 'node2'], verboseLogs: true, nodes: { node1: { tags: { nofailover: true } } } });
    sim.node('node1').startAgent();
    await sim.advance(60_000);
    const n1 = sim.node('node1');
    expect(n1.loop.snapshot().status.waiting_for).to.equal('another member to bootstrap the cluster: this one is tagged nofailover and never creates it');
    const said = n1.logger.lines.filter((l) => l.level !== 'debug' && l.msg.startsWith('waiting for another member to bootstrap'));
    expect(said).to.have.length(1);
    sim.node('node2').startAgent();
    await sim.until(() => n1.db.isStreaming, 120_000, 'node1 streaming from node2');
    expect(n1.loop.snapshot().status).to.not.have.property('waiting_for');
  });
});
