import { expect } from 'chai';
import type { SimCluster } from '../../sim/sim-cluster.js';
import { healthyCluster, loopWaitMs, primaryName, ttlMs } from './helpers.js';

describe('HA scenarios: the checkpoint after a promotion', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('the new leader is writable first, publishes checkpoint_after_promote false until its CHECKPOINT is done, then true', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const n2 = sim.node('node2');
    n2.db.setDelay('checkpoint', 8000);
    sim.node('node1').crash();
    await sim.until(() => primaryName(sim) === 'node2', 3 * ttlMs(sim), 'node2 to lead');
    await sim.until(() => sim.view().members.find((m) => m.name === 'node2')?.checkpointAfterPromote === false, loopWaitMs(sim), 'the pending checkpoint in the member key');
    expect(n2.db.isWritable).to.equal(true);
    expect(n2.loop.jobInProgress).to.equal('checkpoint');
    await sim.until(() => sim.view().members.find((m) => m.name === 'node2')?.checkpointAfterPromote === true, 8000 + 2 * loopWaitMs(sim), 'the checkpoint to be published as done');
    expect(sim.leaderKey()).to.equal('node2');
  });
});
