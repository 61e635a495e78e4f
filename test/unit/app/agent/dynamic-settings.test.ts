import { expect } from 'chai';
import type { SimCluster } from '../../../sim/sim-cluster.js';
import { healthyCluster } from './scenarios/helpers.js';

describe('HaLoop: dynamic ttl, loop_wait and retry_timeout apply on the next tick', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('a config change reaches the tick interval, the lock deadline and the store timeout without a restart', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const leader = sim.node('node1');
    const replica = sim.node('node2');
    const timeouts: number[] = [];
    const store = leader.dcs;
    const apply = store.setRetryTimeout.bind(store);
    store.setRetryTimeout = (seconds: number) => {
      timeouts.push(seconds);
      apply(seconds);
    };
    expect(leader.loop.lockHeldUntil()! - sim.clock.now()).to.be.at.most(30_000);

    await sim.putKey('config', JSON.stringify({ ttl: 40, loop_wait: 2, retry_timeout: 5 }));
    await sim.advance(1_000);
    expect(timeouts, 'the store got the new retry_timeout').to.deep.equal([5]);
    // The leader renews for the new ttl at the tick the change woke.
    expect(leader.loop.lockHeldUntil()! - sim.clock.now()).to.be.within(38_000, 40_000);

    // The replica now ticks every 2 s instead of every 10 s.
    const seen: number[] = [];
    for (let i = 0; i < 24; i++) {
      await sim.advance(250);
      const at = replica.loop.snapshot().lastLoopAt;
      if (seen.at(-1) !== at) seen.push(at);
    }
    const gaps = seen.slice(1).map((t, i) => t - seen[i]!);
    expect(gaps.length).to.be.at.least(2);
    for (const g of gaps) expect(g).to.be.within(1_500, 2_500);
  });
});
