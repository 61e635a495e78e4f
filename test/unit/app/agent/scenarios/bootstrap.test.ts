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
