import { expect } from 'chai';
import { SimCluster } from '../../../../sim/sim-cluster.js';
import { healthyCluster, loopWaitMs, ttlMs, write } from './helpers.js';

describe('HA scenarios: topology tags', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('a cascading replica streams from its member through a slot there, falls back to the leader while that member is down, and returns', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], nodes: { node3: { tags: { replicatefrom: 'node2' } } } });
    const [n1, n2, n3] = ['node1', 'node2', 'node3'].map((n) => sim.node(n));
    await sim.until(() => n3.db.isStreaming && n3.db.upstreamConnUrl === n2!.db.connUrl, 3 * loopWaitMs(sim), 'node3 cascading from node2');
    await sim.until(() => n2!.db.slots.has('node3') && n2!.db.slotActive('node3'), 3 * loopWaitMs(sim), 'node3 streaming through its slot on node2');
    // The leader keeps a slot for node3 too (idle, moved along with node3's position), for a fallback.
    expect(n1!.db.slots.has('node3')).to.equal(true);
    await write(n1!, 3);
    sim.network.replicate();
    expect(n3!.db.lsn).to.equal(n1!.db.lsn);
    // The machine dies: its member key says nothing new until it expires, then node3 falls back.
    n2!.crash();
    await sim.until(() => n3!.db.isStreaming && n3!.db.upstreamConnUrl === n1!.db.connUrl, ttlMs(sim) + 3 * loopWaitMs(sim), 'node3 on the leader');
    n2!.startAgent();
    await sim.until(() => n2!.db.isStreaming, 6 * loopWaitMs(sim), 'node2 back');
    await sim.until(() => n3!.db.upstreamConnUrl === n2!.db.connUrl && n3!.db.isStreaming, 4 * loopWaitMs(sim), 'node3 back on node2');
  });

  it('clonefrom: a new member copies the tagged replica, not the primary, then streams from the primary', async () => {
    sim = new SimCluster({ names: ['node1', 'node2', 'node3'], nodes: { node2: { tags: { clonefrom: true } } }, verboseLogs: true });
    sim.startAll(['node1']);
    await sim.until(() => sim.primary()?.name === 'node1', 60_000, 'node1 to bootstrap');
    sim.startAll(['node2']);
    await sim.until(() => sim.node('node2').db.isStreaming, 120_000, 'node2 streaming');
    await sim.advance(2 * loopWaitMs(sim));
    await write(sim.node('node1'), 3);
    sim.startAll(['node3']);
    const n3 = sim.node('node3');
    await sim.until(() => n3.db.isStreaming, 120_000, 'node3 streaming');
    expect(n3.logger.find('creating a replica from node2 (tagged clonefrom)')).to.not.be.empty;
    expect(n3.db.upstreamConnUrl).to.equal(sim.node('node1').db.connUrl);
    sim.network.replicate();
    expect(n3.db.lsn).to.equal(sim.node('node1').db.lsn);
  });

  it('failover_priority: among equally good replicas the higher one wins; 0 never leads, even alone', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], nodes: { node2: { tags: { failover_priority: 0 } }, node3: { tags: { failover_priority: 5 } } } });
    await write(sim.node('node1'), 3);
    sim.network.replicate();
    sim.node('node1').crash();
    await sim.until(() => sim.primary() !== null, 3 * ttlMs(sim), 'a new primary');
    expect(sim.primary()!.name).to.equal('node3');
    sim.node('node3').crash();
    await sim.advance(3 * ttlMs(sim));
    expect(sim.primary()).to.equal(null);
    expect(sim.leaderKey()).to.equal(null);
    expect(sim.node('node2').db.isInRecovery).to.equal(true);
  });

  it('member_slots_ttl: the leader keeps a departed member\'s slot for that long, then drops it', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, member_slots_ttl: 120 } });
    const leader = sim.node('node1');
    expect([...leader.db.slots.keys()].sort()).to.deep.equal(['node2', 'node3']);
    sim.node('node3').crash();
    // Its member key lives ttl after the crash; then the slot lives member_slots_ttl.
    await sim.advance(ttlMs(sim) + 100_000);
    expect(leader.db.slots.has('node3'), 'kept within member_slots_ttl').to.equal(true);
    expect(sim.view().status?.retainSlots).to.include('node3');
    await sim.until(() => !leader.db.slots.has('node3'), 60_000, 'the slot dropped');
    expect(sim.view().status?.retainSlots).to.deep.equal(['node2']);
    // node2 kept one for node3 as well, and drops it with the leader's retained list.
    await sim.until(() => !sim.node('node2').db.slots.has('node3'), 3 * loopWaitMs(sim), 'node2 drops it too');
  });
});
