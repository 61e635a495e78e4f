import { expect } from 'chai';
import { failoverToJson } from '../../../../../src/adapters/cluster-store/codec.js';
import { FakeDatabase } from '../../../../../src/adapters/database/fake-database.js';
import { SimCluster, type SimNode } from '../../../../sim/sim-cluster.js';
import { REMOTE_CONN_URL } from '../../../../sim/simulation.js';
import { loopWaitMs, ttlMs } from './helpers.js';

const CONFIG = { ttl: 30, loop_wait: 10, retry_timeout: 10, standby_cluster: { host: 'remote', port: 5432 } };

/** The holder of the key running in recovery from the remote, or null. */
function standbyLeader(sim: SimCluster): SimNode | null {
  const l = [...sim.nodes.values()].filter((n) => n.believesLeader() && n.db.isInRecovery && n.db.upstreamConnUrl === REMOTE_CONN_URL);
  return l.length === 1 ? l[0]! : null;
}

/** A 3-node standby cluster of a remote primary, every member caught up; nobody writable. */
async function standbyCluster(): Promise<{ sim: SimCluster; remote: FakeDatabase; promoted: () => void }> {
  let promoted = false;
  const sim = new SimCluster({ names: ['node1', 'node2', 'node3'], config: CONFIG });
  const remote = new FakeDatabase({ name: 'remote', connUrl: REMOTE_CONN_URL, network: sim.network, clock: sim.clock });
  await remote.initdb();
  await remote.start({ upstream: null, timeoutMs: 1000 });
  await remote.write(1024);
  sim.checks.push(() => {
    const w = sim.writable();
    if (!promoted && w.length) throw new Error(`${w.map((n) => n.name).join(', ')} writable in a standby cluster`);
  });
  sim.startAll(['node1']);
  await sim.until(() => standbyLeader(sim)?.name === 'node1', 60_000, 'node1 to become the standby leader');
  sim.startAll();
  await sim.until(() => ['node2', 'node3'].every((n) => sim.node(n).db.isStreaming && sim.node(n).db.upstreamConnUrl === sim.node('node1').db.connUrl), 120_000, 'the replicas to cascade');
  return { sim, remote, promoted: () => (promoted = true) };
}

describe('HA scenarios: a standby cluster', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('bootstraps from the remote (the initialize key gets its system identifier); the remote\'s writes reach every member', async () => {
    const s = await standbyCluster();
    sim = s.sim;
    expect(sim.view().initialize).to.equal(s.remote.systemIdentifier);
    await s.remote.write(2048);
    await sim.until(() => [...sim.nodes.values()].every((n) => n.db.lsn === s.remote.lsn), 3 * loopWaitMs(sim), 'every member caught up');
    expect(sim.node('node1').loop.snapshot().status.role).to.equal('standby_leader');
    expect(sim.node('node2').loop.snapshot().status.role).to.equal('replica');
  });

  it('the standby leader\'s machine dies: another member becomes the standby leader and follows the remote, the other cascades from it', async () => {
    const s = await standbyCluster();
    sim = s.sim;
    sim.node('node1').crash();
    await sim.until(() => standbyLeader(sim) !== null && standbyLeader(sim)!.name !== 'node1', ttlMs(sim) + 3 * loopWaitMs(sim), 'a new standby leader');
    const leader = standbyLeader(sim)!;
    const other = leader.name === 'node2' ? 'node3' : 'node2';
    await sim.until(() => sim.node(other).db.isStreaming && sim.node(other).db.upstreamConnUrl === leader.db.connUrl, 3 * loopWaitMs(sim), `${other} to cascade from ${leader.name}`);
    await s.remote.write(1024);
    await sim.until(() => sim.node(other).db.lsn === s.remote.lsn, 2 * loopWaitMs(sim), 'the remote\'s write to reach the cascade');
  });

  it('a switchover moves the standby-leader role; nothing is promoted', async () => {
    const s = await standbyCluster();
    sim = s.sim;
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: 'node3', scheduledAt: null }));
    await sim.until(() => standbyLeader(sim)?.name === 'node3', 4 * loopWaitMs(sim), 'node3 the standby leader');
    await sim.until(() => sim.node('node1').db.isStreaming && sim.node('node1').db.upstreamConnUrl === sim.node('node3').db.connUrl, 4 * loopWaitMs(sim), 'node1 to cascade from node3');
    expect(sim.node('node3').db.timeline).to.equal(s.remote.timeline);
  });

  it('promote-cluster (standby_cluster removed): the standby leader promotes, its replicas follow it on the new timeline', async () => {
    const s = await standbyCluster();
    sim = s.sim;
    s.promoted();
    const { standby_cluster: _removed, ...primaryConfig } = CONFIG;
    await sim.putKey('config', JSON.stringify(primaryConfig));
    await sim.until(() => sim.primary()?.name === 'node1', 3 * loopWaitMs(sim), 'node1 to promote');
    expect(sim.node('node1').db.timeline).to.equal(2);
    await sim.node('node1').db.write(1024);
    await sim.until(() => ['node2', 'node3'].every((n) => sim.node(n).db.isStreaming && sim.node(n).db.timeline === 2), 4 * loopWaitMs(sim), 'the replicas on timeline 2');
  });
});
