import { expect } from 'chai';
import { failoverToJson } from '../../../../../src/adapters/cluster-store/codec.js';
import { FakeHookScripts } from '../../../../../src/adapters/callbacks/fake-hook-scripts.js';
import type { SimCluster } from '../../../../sim/sim-cluster.js';
import { healthyCluster, loopWaitMs, primaryName, ttlMs, write } from './helpers.js';

describe("HA scenarios: the operator's pre_promote fencing script", () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('a failing script keeps its node from promoting (the key goes back); retries back off; a succeeding one promotes', async () => {
    const hooks = new FakeHookScripts({ pre_promote: 'fails' });
    // node3 may not lead: node2 is the only candidate.
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], nodes: { node2: { hooks }, node3: { tags: { nofailover: true } } } });
    await write(sim.node('node1'), 5);
    sim.node('node1').crash();
    const everWritable: string[] = [];
    const watch = () => {
      for (const n of sim.writable()) if (n.name !== 'node1' && !everWritable.includes(n.name)) everWritable.push(n.name);
      return false;
    };
    await sim.until(() => hooks.runs.length >= 1, 3 * ttlMs(sim), 'the first pre_promote run').catch(() => undefined);
    expect(hooks.runs.length).to.be.at.least(1);
    // Two minutes of refusals: nobody writes, the key is not held for long, and the attempts space out (10, 20, then every ttl: 30 s).
    const firstRunAt = sim.clock.now();
    await sim.until(watch, 120_000, 'never').catch(() => undefined);
    expect(everWritable).to.deep.equal([]);
    expect(sim.leaderKey()).to.equal(null);
    expect(hooks.runs.length).to.be.within(4, 7);
    expect(sim.node('node2').logger.find('the pre_promote script exited with code 1: not promoting')).to.not.be.empty;
    expect(sim.clock.now() - firstRunAt).to.be.at.least(120_000);
    // The operator fixes the fencing: the next attempt promotes, with every acknowledged write.
    hooks.set('pre_promote', 'succeeds');
    await sim.until(() => primaryName(sim) === 'node2', ttlMs(sim) + 2 * loopWaitMs(sim), 'node2 to promote');
    expect(sim.node('node2').db.timeline).to.equal(2);
  });

  it('a failing script on the node that won the race hands the failover to the next candidate, which first takes the WAL it lacked from it', async () => {
    const hooks = new FakeHookScripts({ pre_promote: 'fails' });
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], nodes: { node2: { hooks } } });
    // node2 is ahead: it wins the race, and its script refuses. node3 follows node2 while node2 holds the key, catches up, and takes over.
    sim.node('node3').db.setReplicationPaused(true);
    await write(sim.node('node1'), 2);
    sim.network.replicate();
    sim.node('node3').db.setReplicationPaused(false);
    const acknowledged = sim.network.acknowledgedWrites.length;
    sim.node('node1').crash();
    await sim.until(() => sim.primary() !== null, 4 * ttlMs(sim) + 4 * loopWaitMs(sim), 'a new primary');
    expect(primaryName(sim)).to.equal('node3');
    expect(hooks.runs.length).to.be.at.least(1);
    expect(acknowledged).to.be.greaterThan(0);
    expect(sim.network.lostAcknowledgedWrites(sim.node('node3').db)).to.deep.equal([]);
    await sim.until(() => sim.node('node2').db.isStreaming && sim.node('node2').db.upstreamConnUrl === sim.node('node3').db.connUrl, 4 * loopWaitMs(sim), 'node2 to follow node3');
  });

  it("a refusing script leaves the node's server running: its fencer stops guarding the lock it gave back (the server never promoted)", async () => {
    // Found by a test that samples the race every second: the fencer kept guarding the deadline of the
    // lock taken for the refused promotion and stopped this healthy replica there; a less advanced member then won.
    const hooks = new FakeHookScripts({ pre_promote: 'fails' });
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], nodes: { node2: { hooks }, node3: { tags: { nofailover: true } } } });
    sim.node('node1').crash();
    await sim.until(() => hooks.runs.length >= 1, 3 * ttlMs(sim), 'the first pre_promote run');
    const n2 = sim.node('node2');
    let stopped = false;
    await sim.until(() => ((stopped ||= !n2.db.isRunning), false), 3 * ttlMs(sim), 'never').catch(() => undefined);
    expect(hooks.runs.length).to.be.at.least(2);
    expect(stopped, 'node2 stopped').to.equal(false);
    expect(n2.fencer!.fenced).to.equal(0);
    expect(n2.fencer!.status().state).to.equal('idle');
  });

  it('the refusing member is the most advanced: nobody promotes on their own; a manual failover to another member does', async () => {
    const hooks = new FakeHookScripts({ pre_promote: 'fails' });
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 10 * 1024 * 1024 }, nodes: { node2: { hooks } } });
    sim.node('node3').db.setReplicationPaused(true);
    await write(sim.node('node1'), 20);
    sim.network.replicate();
    expect(sim.node('node2').db.lsn!).to.be.greaterThan(sim.node('node3').db.lsn!);
    sim.node('node1').crash();
    await sim.advance(3 * ttlMs(sim));
    expect(sim.primary()).to.equal(null);
    expect(hooks.runs.length).to.be.at.least(1);
    await sim.putKey('failover', failoverToJson({ leader: null, member: 'node3', scheduledAt: null }));
    await sim.until(() => primaryName(sim) === 'node3', 4 * loopWaitMs(sim), 'node3 to lead');
  });

  it('a succeeding script runs once per promotion, switchovers included', async () => {
    const hooks = new FakeHookScripts({ pre_promote: 'succeeds' });
    sim = await healthyCluster({ names: ['node1', 'node2'], nodes: { node2: { hooks } } });
    expect(hooks.runs).to.deep.equal([]);
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: 'node2', scheduledAt: null }));
    await sim.until(() => primaryName(sim) === 'node2', 4 * loopWaitMs(sim), 'node2 to lead');
    expect(hooks.runs).to.deep.equal(['pre_promote']);
  });
});
