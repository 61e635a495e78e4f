import { expect } from 'chai';
import { SimCluster } from '../../../../sim/sim-cluster.js';
import { healthyCluster, loopWaitMs, primaryName, ttlMs } from './helpers.js';

describe('HA scenarios: watchdog', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('watchdog required but unusable: the node never leads, not even at bootstrap', async () => {
    sim = new SimCluster({ names: ['node1', 'node2'], nodes: { node1: { watchdogMode: 'required', watchdogUsable: false } } });
    sim.startAll(['node1']);
    await sim.advance(3 * ttlMs(sim));
    expect(sim.view().initialize).to.equal(null);
    sim.startAll();
    await sim.until(() => primaryName(sim) === 'node2', 60_000, 'node2 to bootstrap');
    await sim.until(() => sim.node('node1').db.isStreaming, 60_000, 'node1 to clone node2');
    sim.node('node2').crash();
    await sim.advance(4 * ttlMs(sim));
    expect(sim.leaderKey()).to.equal(null);
    expect(sim.node('node1').loop.snapshot().status.watchdog_failed).to.equal(true);
  });

  it('watchdog required and usable: armed before promotion, kicked every loop, disarmed on demote', async () => {
    const nodes = { node1: { watchdogMode: 'required' as const }, node2: { watchdogMode: 'required' as const } };
    sim = await healthyCluster({ names: ['node1', 'node2'], nodes });
    const wd1 = sim.node('node1').watchdog;
    expect(wd1.isActive).to.equal(true);
    expect(wd1.timeoutSeconds).to.equal(25);
    const kicks = wd1.keepalives;
    await sim.advance(3 * loopWaitMs(sim));
    expect(wd1.keepalives).to.be.greaterThan(kicks);
    expect(sim.node('node2').watchdog.isActive).to.equal(false);
    // The device breaks: the leader may not keep leading.
    wd1.setFailing(true);
    await sim.until(() => primaryName(sim) === 'node2', 2 * ttlMs(sim), 'node2 to take over');
    expect(wd1.isActive).to.equal(false);
    expect(wd1.hasFired).to.equal(false);
    expect(sim.node('node2').watchdog.isActive).to.equal(true);
  });
});
