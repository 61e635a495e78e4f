import { expect } from 'chai';
import { failoverToJson } from '../../../../../src/adapters/cluster-store/codec.js';
import type { SimCluster } from '../../../../sim/sim-cluster.js';
import { healthyCluster, leaseRevokedWhileWriting, loopWaitMs, primaryName, ttlMs, write } from './helpers.js';

/**
 * A 3-node cluster led by node1 where node3 holds 20 writes node2 lacks (node2 stopped receiving
 * them), and the member keys show it; node2 receives again (from nobody new until a leader).
 */
async function node3Ahead(): Promise<SimCluster> {
  const sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 10 * 1024 * 1024 } });
  sim.node('node2').db.setReplicationPaused(true);
  await write(sim.node('node1'), 20);
  sim.network.replicate();
  await sim.advance(2 * loopWaitMs(sim));
  return sim;
}

describe('HA scenarios: automatic failover', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('kill the primary: its key expires after ttl and a replica promotes', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    await write(sim.node('node1'), 5);
    const killedAt = sim.clock.now();
    sim.node('node1').crash();
    const took = await sim.until(() => sim.primary() !== null, 3 * ttlMs(sim), 'a new primary');
    const winner = sim.primary()!;
    expect(winner.name).to.be.oneOf(['node2', 'node3']);
    expect(sim.leaderKey()).to.equal(winner.name);
    // Not before the old key's lease ran out, and within ttl + loop_wait (+ promotion) after it.
    expect(sim.clock.now() - killedAt).to.be.greaterThan(ttlMs(sim) - loopWaitMs(sim));
    expect(took).to.be.at.most(ttlMs(sim) + loopWaitMs(sim) + 2000);
    expect(winner.db.timeline).to.equal(2);
    const history = sim.view().history!.lines;
    expect(history).to.have.length(1);
    expect(history[0]![0]).to.equal(1);
    expect(history[0]![4]).to.equal(winner.name);
    const other = winner.name === 'node2' ? sim.node('node3') : sim.node('node2');
    await sim.until(() => other.db.isStreaming && other.db.upstreamConnUrl === winner.db.connUrl, 3 * loopWaitMs(sim), 'the other replica to follow');
  });

  it('5 nodes: kill the primary and a replica at once; one of the three left promotes, the rest follow', async () => {
    sim = await healthyCluster({ names: ['n1', 'n2', 'n3', 'n4', 'n5'] });
    sim.node('n1').crash();
    sim.node('n2').crash();
    await sim.until(() => sim.primary() !== null, 3 * ttlMs(sim), 'a new primary');
    const winner = sim.primary()!;
    expect(winner.name).to.be.oneOf(['n3', 'n4', 'n5']);
    await sim.until(
      () => ['n3', 'n4', 'n5'].filter((n) => n !== winner.name).every((n) => sim.node(n).db.isStreaming),
      3 * loopWaitMs(sim),
      'the others to follow',
    );
    // The old primary comes back, is rewound or recloned onto the new timeline, and streams.
    sim.node('n1').startAgent();
    await sim.until(() => sim.node('n1').db.isStreaming && sim.node('n1').db.timeline === winner.db.timeline, 6 * loopWaitMs(sim), 'n1 to rejoin');
    expect(sim.writable().map((n) => n.name)).to.deep.equal([winner.name]);
  });

  it("the leader's lease revoked while clients write on: the primary takes its key back, no replica counted ahead of it", async () => {
    // The primary's own WAL position is probed after the replicas answer: probed before, it lags what they received since.
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 20, loop_wait: 2, retry_timeout: 3 } });
    await leaseRevokedWhileWriting(sim, 'node1');
  });

  it('the most advanced replica wins the race', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 10 * 1024 * 1024 } });
    // node2 stops receiving WAL; node3 gets everything.
    sim.node('node2').db.setReplicationPaused(true);
    await write(sim.node('node1'), 20);
    sim.network.replicate();
    expect(sim.node('node3').db.lsn!).to.be.greaterThan(sim.node('node2').db.lsn!);
    sim.node('node1').crash();
    await sim.until(() => sim.primary() !== null, 3 * ttlMs(sim), 'a new primary');
    expect(primaryName(sim)).to.equal('node3');
  });

  it('the most advanced replica cut off from the DCS (answering the others) is not waited for until its member key expires: the next one takes its WAL and takes over within moments of the lock', async () => {
    // Found exploring failovers: the others left the race to node3 ("node3 is ahead") until its member key expired, a second ttl.
    sim = await node3Ahead();
    sim.node('node2').db.setReplicationPaused(false);
    const at = sim.clock.now();
    sim.node('node1').crash();
    // node3 loses the DCS a moment before the lock runs out: the others' first look still finds it well.
    await sim.until(() => sim.leaderKey() === null || sim.clock.now() - at > ttlMs(sim) - 1000, 2 * ttlMs(sim), 'the lock about to run out');
    sim.node('node3').setDcsLink(false);
    await sim.until(() => sim.primary() !== null, 3 * ttlMs(sim), 'a new primary');
    expect(primaryName(sim)).to.equal('node2');
    expect(sim.clock.now() - at).to.be.below(ttlMs(sim) + 5000);
    // Asynchronous mode would allow the loss; node2 streamed what node3 alone held first.
    expect(sim.network.lostAcknowledgedWrites(sim.node('node2').db)).to.deep.equal([]);
  });

  it('the most advanced replica wins the race even cut off from the other nodes (it still reaches the DCS)', async () => {
    sim = await node3Ahead();
    sim.node('node3').setCutOff(true);
    sim.node('node2').db.setReplicationPaused(false);
    sim.node('node1').crash();
    await sim.until(() => sim.primary() !== null, 3 * ttlMs(sim), 'a new primary');
    expect(primaryName(sim)).to.equal('node3');
    expect(sim.network.lostAcknowledgedWrites(sim.node('node3').db)).to.deep.equal([]);
  });

  it('a node tagged nofailover never wins, even when it is the only replica left', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], nodes: { node2: { tags: { nofailover: true } } } });
    sim.node('node3').crash();
    sim.node('node1').crash();
    await sim.advance(4 * ttlMs(sim));
    expect(sim.primary()).to.equal(null);
    expect(sim.leaderKey()).to.equal(null);
    expect(sim.node('node2').db.isWritable).to.equal(false);
    // With node3 back, node3 wins and node2 follows it.
    sim.node('node3').startAgent();
    await sim.until(() => primaryName(sim) === 'node3', 3 * ttlMs(sim), 'node3 to lead');
  });

  it('lag above maximum_lag_on_failover never wins an automatic race, but may win a manual failover with no leader', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 4096 } });
    sim.node('node2').db.setReplicationPaused(true);
    await write(sim.node('node1'), 20); // 20 kB ahead of node2
    await sim.advance(2 * loopWaitMs(sim)); // the status key carries the leader's optime
    sim.node('node3').crash();
    sim.node('node1').crash();
    await sim.advance(4 * ttlMs(sim));
    expect(sim.leaderKey(), 'automatic race with a lagging candidate').to.equal(null);
    expect(sim.node('node2').db.isWritable).to.equal(false);
    await sim.putKey('failover', failoverToJson({ leader: null, member: 'node2', scheduledAt: null }));
    await sim.until(() => primaryName(sim) === 'node2', 2 * loopWaitMs(sim) + 5000, 'node2 to take over by manual failover');
    expect(sim.view().failover, 'the failover key is cleared').to.equal(null);
  });
});
