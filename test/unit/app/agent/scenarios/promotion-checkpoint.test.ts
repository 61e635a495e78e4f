import { expect } from 'chai';
import { MemoryLogger } from '../../../../../src/adapters/logger/memory-logger.js';
import type { SimCluster } from '../../../../sim/sim-cluster.js';
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

describe('HA scenarios: a crashed primary rejoins', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('a primary whose server crashed while its agent was cut from the DCS is rewound before its first start as a replica', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], verboseLogs: true });
    const n1 = sim.node('node1');
    n1.setDcsLink(false);
    n1.db.crash();
    // Blind, the agent would start it read-only: keep it down until the DCS is back.
    n1.db.failNext('start', 1000);
    await sim.until(() => primaryName(sim) === 'node2' || primaryName(sim) === 'node3', 3 * ttlMs(sim), 'a new leader');
    const winner = sim.primary()!;
    const from = (n1.logger as MemoryLogger).lines.length;
    n1.db.clearFaults();
    n1.setDcsLink(true);
    await sim.until(() => n1.db.isStreaming && n1.db.timeline === winner.db.timeline, 6 * loopWaitMs(sim), 'node1 to rejoin');
    const said = (n1.logger as MemoryLogger).lines.slice(from).map((l) => l.msg);
    const rewound = said.findIndex((m) => /was the primary of timeline 1 and the cluster is on timeline 2: rewinding/.test(m));
    expect(rewound, said.join('\n')).to.be.greaterThan(-1);
    expect(said.slice(0, rewound).some((m) => /^starting as a replica/.test(m)), 'no start before the rewind').to.equal(false);
  });
});
