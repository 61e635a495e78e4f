import { expect } from 'chai';
import { failoverToJson } from '../../../../../src/adapters/cluster-store/codec.js';
import { checkHealth } from '../../../../../src/domain/cluster/rules/health.js';
import type { SimCluster } from '../../../../sim/sim-cluster.js';
import { healthyCluster, loopWaitMs, primaryName, write } from './helpers.js';

describe('HA scenarios: manual switchover', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('switchover with a candidate: the leader demotes gracefully, the candidate wins, the key is cleaned, no write is lost', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    await write(sim.node('node1'), 10);
    const acked = sim.network.acknowledgedWrites.length;
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: 'node3', scheduledAt: null }));
    await sim.until(() => primaryName(sim) === 'node3', 3 * loopWaitMs(sim), 'node3 to lead');
    expect(sim.network.lostAcknowledgedWrites(sim.node('node3').db)).to.deep.equal([]);
    expect(acked).to.equal(sim.network.acknowledgedWrites.length);
    await sim.until(() => sim.view().failover === null, 2 * loopWaitMs(sim), 'the failover key to be cleaned');
    await sim.until(() => sim.node('node1').db.isStreaming && sim.node('node2').db.isStreaming, 3 * loopWaitMs(sim), 'both to follow node3');
    expect(sim.node('node1').db.upstreamConnUrl).to.equal(sim.node('node3').db.connUrl);
  });

  it("the old leader answers /primary with 503 from the start of its demotion, hands its shutdown position over, and the candidate promotes once it holds it", async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    await write(sim.node('node1'), 10);
    const n1 = sim.node('node1');
    n1.db.setDelay('checkpoint', 2000);
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: 'node3', scheduledAt: null }));
    await sim.until(() => n1.loop.jobInProgress === 'demote', 2 * loopWaitMs(sim), 'node1 to begin its demotion');
    const last = n1.db.lsn!;
    const snap = n1.loop.snapshot();
    expect(snap.status.state).to.equal('stopping');
    expect(checkHealth('primary', snap, {}, sim.clock.now())).to.equal(503);
    expect(checkHealth('leader', snap, {}, sim.clock.now())).to.equal(200);
    expect(sim.leaderKey(), 'the key stays until the server is down').to.equal('node1');
    expect(n1.db.isWritable, 'and the server takes writes until then').to.equal(true);
    await sim.until(() => primaryName(sim) === 'node3', 3 * loopWaitMs(sim), 'node3 to lead');
    expect(sim.node('node3').db.lastPromoteOptions).to.deep.include({ walAtLeast: last });
    expect(sim.network.lostAcknowledgedWrites(sim.node('node3').db)).to.deep.equal([]);
  });

  it('5 nodes: switchover to a named candidate; every other member follows it', async () => {
    sim = await healthyCluster({ names: ['n1', 'n2', 'n3', 'n4', 'n5'] });
    await sim.putKey('failover', failoverToJson({ leader: 'n1', member: 'n4', scheduledAt: null }));
    await sim.until(() => primaryName(sim) === 'n4', 3 * loopWaitMs(sim), 'n4 to lead');
    const url = sim.node('n4').db.connUrl;
    await sim.until(() => ['n1', 'n2', 'n3', 'n5'].every((n) => sim.node(n).db.isStreaming && sim.node(n).db.upstreamConnUrl === url), 4 * loopWaitMs(sim), 'all to follow n4');
  });

  it('switchover without a candidate: the leader steps down and another member wins', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: null, scheduledAt: null }));
    await sim.until(() => ['node2', 'node3'].includes(primaryName(sim) ?? ''), 3 * loopWaitMs(sim), 'another member to lead');
    await sim.until(() => sim.view().failover === null, 2 * loopWaitMs(sim), 'the failover key to be cleaned');
    await sim.advance(3 * loopWaitMs(sim));
    expect(primaryName(sim)).to.be.oneOf(['node2', 'node3']);
  });

  it('switchover to an ineligible candidate (nofailover) is refused: the key is cleared, the leader stays', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], nodes: { node2: { tags: { nofailover: true } } } });
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: 'node2', scheduledAt: null }));
    await sim.until(() => sim.view().failover === null, 2 * loopWaitMs(sim), 'the failover key to be cleared');
    expect(primaryName(sim)).to.equal('node1');
    expect(sim.node('node1').db.terminatedSessions).to.equal(0);
  });

  it('scheduled switchover: nothing happens before time T, the candidate leads right after it', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    const at = sim.clock.now() + 60_000;
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: 'node2', scheduledAt: new Date(at).toISOString() }));
    await sim.until(() => sim.clock.now() >= at - 1000, 120_000, 'just before T');
    expect(primaryName(sim)).to.equal('node1');
    expect(sim.view().failover?.member).to.equal('node2');
    const took = await sim.until(() => primaryName(sim) === 'node2', 30_000, 'node2 to lead after T');
    expect(sim.clock.now() - at).to.be.lessThan(loopWaitMs(sim));
    expect(took).to.be.greaterThan(0);
    await sim.until(() => sim.view().failover === null, 2 * loopWaitMs(sim), 'the failover key to be cleaned');
  });

  it('in pause, a switchover without candidate is refused (key cleared, leader stays) while one with a candidate runs', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    await sim.putKey('config', JSON.stringify({ ttl: 30, loop_wait: 10, retry_timeout: 10, pause: true }));
    await sim.advance(2 * loopWaitMs(sim));
    expect(sim.node('node1').loop.snapshot().status.pause).to.equal(true);
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: null, scheduledAt: null }));
    await sim.until(() => sim.view().failover === null, 2 * loopWaitMs(sim), 'the failover key to be cleared');
    await sim.advance(2 * loopWaitMs(sim));
    expect(primaryName(sim)).to.equal('node1');
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: 'node3', scheduledAt: null }));
    await sim.until(() => primaryName(sim) === 'node3', 3 * loopWaitMs(sim), 'node3 to lead');
  });
});
