import { expect } from 'chai';
import { failoverToJson } from '../../../../../src/adapters/cluster-store/codec.js';
import type { SimCluster, SimNode } from '../../../../sim/sim-cluster.js';
import { healthyCluster, loopWaitMs, primaryName, ttlMs, write } from './helpers.js';

const PAUSED = JSON.stringify({ ttl: 30, loop_wait: 10, retry_timeout: 10, pause: true });
const RESUMED = JSON.stringify({ ttl: 30, loop_wait: 10, retry_timeout: 10 });
/** The simulated nodes' `watchdog.safety_margin`. */
const MARGIN_MS = 5000;

async function pausedCluster(): Promise<SimCluster> {
  const sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
  await sim.putKey('config', PAUSED);
  await sim.advance(2 * loopWaitMs(sim));
  expect(sim.node('node1').loop.snapshot().status.pause).to.equal(true);
  return sim;
}

/** Stops the node's agent cleanly (SIGTERM) and waits until its shutdown is done. */
async function stopAgent(sim: SimCluster, node: SimNode): Promise<void> {
  node.stopAgent();
  await sim.until(() => !node.alive, 10_000, `${node.name}'s agent to stop`);
}

describe('scenario: stopping an agent in maintenance mode leaves PostgreSQL running', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it("the primary keeps running with its leader key; the next agent takes it over without a restart", async () => {
    sim = await pausedCluster();
    const n1 = sim.node('node1');
    const startedAt = n1.db.runningSince;
    await stopAgent(sim, n1);
    expect(n1.db.isWritable, 'the primary still takes writes').to.equal(true);
    expect(sim.leaderKey(), 'the leader key stays').to.equal('node1');
    await write(n1, 3);
    // Well inside ttl - safety_margin: an upgrade of the agent.
    await sim.advance(10_000);
    n1.startAgent();
    await sim.until(() => primaryName(sim) === 'node1', 2 * loopWaitMs(sim), 'node1 to lead again');
    await sim.advance(3 * ttlMs(sim));
    expect(primaryName(sim)).to.equal('node1');
    expect(n1.db.runningSince, 'never restarted').to.equal(startedAt);
    expect(n1.fencer?.fenced).to.equal(0);
  });

  it('an agent stopped again right after it started still hands the lock over', async () => {
    sim = await pausedCluster();
    const n1 = sim.node('node1');
    const since = n1.db.runningSince;
    await stopAgent(sim, n1);
    n1.startAgent();
    await stopAgent(sim, n1);
    expect(n1.db.isWritable).to.equal(true);
    expect(sim.leaderKey()).to.equal('node1');
    n1.startAgent();
    await sim.until(() => primaryName(sim) === 'node1', 2 * loopWaitMs(sim), 'node1 to lead again');
    await sim.advance(2 * ttlMs(sim));
    expect(n1.db.runningSince, 'never restarted').to.equal(since);
  });

  it('if no agent comes back, the fencer stops the primary before its lock runs out; after resume a replica leads', async () => {
    sim = await pausedCluster();
    const n1 = sim.node('node1');
    await stopAgent(sim, n1);
    const deadlineAt = sim.clock.now() + ttlMs(sim);
    await sim.until(() => !n1.db.isRunning, ttlMs(sim), "the fencer to stop node1's server");
    expect(sim.clock.now(), 'stopped before the lock can move').to.be.lessThan(deadlineAt - MARGIN_MS + 2000);
    expect(n1.fencer?.fenced).to.equal(1);
    // In pause nobody takes the key over.
    await sim.advance(2 * ttlMs(sim));
    expect(sim.writable()).to.have.length(0);
    await sim.putKey('config', RESUMED);
    await sim.until(() => primaryName(sim) === 'node2' || primaryName(sim) === 'node3', 3 * ttlMs(sim), 'a replica to lead');
  });

  it('a manual failover to a replica while the old primary runs without its agent promotes only once that primary is stopped', async () => {
    sim = await pausedCluster();
    const n1 = sim.node('node1');
    await stopAgent(sim, n1);
    await sim.putKey('failover', failoverToJson({ leader: null, member: 'node2', scheduledAt: null }));
    // sim.advance checks after every step that no two servers take writes.
    await sim.until(() => primaryName(sim) === 'node2', 3 * ttlMs(sim), 'node2 to lead');
    expect(n1.db.isRunning).to.equal(false);
  });

  it("a replica keeps streaming; its next agent goes on with it", async () => {
    sim = await pausedCluster();
    const n2 = sim.node('node2');
    const startedAt = n2.db.runningSince;
    await stopAgent(sim, n2);
    expect(n2.db.isRunning).to.equal(true);
    expect(n2.db.isStreaming).to.equal(true);
    n2.startAgent();
    await sim.advance(3 * loopWaitMs(sim));
    expect(n2.db.isStreaming).to.equal(true);
    expect(n2.db.runningSince).to.equal(startedAt);
    expect(primaryName(sim)).to.equal('node1');
  });

  it('without a fencer to guard its lock, the primary is stopped and its key released as usual', async () => {
    sim = await pausedCluster();
    const n1 = sim.node('node1');
    n1.fencer?.die();
    await stopAgent(sim, n1);
    expect(n1.db.isRunning).to.equal(false);
    expect(sim.leaderKey()).to.equal(null);
  });

  it('a clean stop whose server does not stop keeps the leader lock: the fencer stops the server before the lock can move', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const n1 = sim.node('node1');
    // The fast stop and the immediate one after it both fail.
    n1.db.failNext('stop', 2);
    await stopAgent(sim, n1);
    expect(n1.db.isWritable).to.equal(true);
    expect(sim.leaderKey(), 'not released while the server may take writes').to.equal('node1');
    // sim.advance checks after every step that no two servers take writes.
    await sim.until(() => primaryName(sim) === 'node2', 3 * ttlMs(sim), 'node2 to lead');
    expect(n1.fencer?.fenced).to.equal(1);
  });

  it('outside maintenance mode, the agent stops its server and releases the key', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const n1 = sim.node('node1');
    await stopAgent(sim, n1);
    expect(n1.db.isRunning).to.equal(false);
    await sim.until(() => primaryName(sim) === 'node2', ttlMs(sim), 'node2 to lead');
  });
});
