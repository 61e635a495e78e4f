import { expect } from 'chai';
import { SimCluster } from '../../../sim/sim-cluster.js';
import { ScheduleError } from '../../../../src/domain/cluster/rules/schedule.js';
import { cancelScheduledRestart } from '../../../../src/usecases/cancel-restart.js';
import { readHistory } from '../../../../src/usecases/read-history.js';
import { reload } from '../../../../src/usecases/reload.js';
import { restart } from '../../../../src/usecases/restart.js';
import { healthyCluster, loopWaitMs, primaryName, ttlMs } from './scenarios/helpers.js';

/** The code of what `fn` throws. */
function thrownCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe('HaLoop: AgentControl, driven through the use cases', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('publishes a snapshot the API reads without waiting, and the member key', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const snap = sim.node('node1').loop.snapshot();
    expect(snap.status.role).to.equal('primary');
    expect(snap.leaderLockExpiresAt).to.be.greaterThan(sim.clock.now());
    expect(snap.cluster?.leader?.name).to.equal('node1');
    const m = sim.view().members.find((x) => x.name === 'node2')!;
    expect(m).to.deep.include({ role: 'replica', state: 'running', apiUrl: 'http://node2:8008', timeline: 1 });
  });

  it('a lock given up shows in the snapshot at once: the health checks stop answering as leader before the key can move', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const loop = sim.node('node1').loop;
    expect(loop.snapshot().leaderLockExpiresAt).to.be.greaterThan(sim.clock.now());
    await loop.stop({ releaseLeader: true, stopDatabase: true });
    expect(loop.snapshot().leaderLockExpiresAt).to.equal(null);
  });

  it('a cluster at rest writes nothing to the DCS: the leader keeps its key by the lease alone', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    await sim.advance(3 * loopWaitMs(sim));
    const revision = sim.store.currentRevision;
    const deadline = sim.node('node1').loop.lockHeldUntil()!;
    await sim.advance(5 * loopWaitMs(sim));
    expect(sim.store.currentRevision, 'no write in five loops').to.equal(revision);
    expect(sim.leaderKey()).to.equal('node1');
    expect(sim.node('node1').loop.lockHeldUntil(), 'the deadline moves on with each keep-alive').to.be.greaterThan(deadline);
  });

  it('a leader whose key another member took acts at once, not at its next loop', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    await sim.advance(loopWaitMs(sim));
    // The key released in node1's name (its fencer does that) and taken by another holder.
    await sim.releaseLeaderOf('node1');
    await sim.putKey('leader', 'node3');
    await sim.advance(Math.min(500, loopWaitMs(sim) / 2));
    expect(sim.node('node1').loop.lockHeldUntil()).to.equal(null);
  });

  it('restart of the primary: answers once done; the key is kept (refreshed) while it runs', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const n1 = sim.node('node1');
    n1.db.setDelay('start', 45_000);
    let result: unknown = null;
    const deps = { agent: n1.loop, clock: sim.clock };
    void restart(deps, {}).then((r) => (result = r));
    await sim.advance(40_000);
    expect(result).to.equal(null);
    expect(sim.leaderKey(), 'key kept past ttl during the restart').to.equal('node1');
    expect(n1.loop.jobInProgress).to.equal('restart');
    expect(await restart(deps, {})).to.deep.include({ ok: false, error: 'action_in_progress' });
    await sim.until(() => result !== null, 20_000, 'the restart to answer');
    expect(result).to.deep.equal({ kind: 'now', ok: true, message: 'restarted successfully' });
    await sim.until(() => primaryName(sim) === 'node1', 2 * loopWaitMs(sim), 'node1 writable again');
  });

  it('restart with unmet conditions is refused; a scheduled restart is recorded, shown, run, and can be cancelled', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const n2 = sim.node('node2');
    const deps = { agent: n2.loop, clock: sim.clock };
    const refused = restart(deps, { role: 'primary' });
    await sim.advance(loopWaitMs(sim));
    expect(await refused).to.deep.include({ ok: false, error: 'restart_conditions_not_met' });
    const at = new Date(sim.clock.now() + 30_000).toISOString();
    expect(await restart(deps, { schedule: at })).to.deep.include({ kind: 'scheduled' });
    // The node reads its own write at once, before any tick.
    expect(n2.loop.snapshot().status.scheduled_restart).to.deep.equal({ schedule: at });
    let again: unknown;
    await restart(deps, { schedule: at }).catch((e) => (again = e));
    expect(again).to.be.instanceOf(ScheduleError).and.have.property('code', 'already_scheduled');
    await sim.advance(loopWaitMs(sim));
    expect(n2.loop.snapshot().status.scheduled_restart).to.deep.equal({ schedule: at });
    expect(sim.view().members.find((m) => m.name === 'node2')?.scheduledRestart).to.deep.equal({ schedule: at });
    const before = n2.db.state;
    await sim.advance(30_000 + loopWaitMs(sim));
    expect(before).to.equal('running');
    expect(n2.loop.snapshot().status.scheduled_restart).to.equal(undefined);
    expect(thrownCode(() => cancelScheduledRestart({ agent: n2.loop }))).to.equal('not_scheduled');
    expect(await restart(deps, { schedule: new Date(sim.clock.now() + 60_000).toISOString() })).to.deep.include({ kind: 'scheduled' });
    expect(cancelScheduledRestart({ agent: n2.loop })).to.deep.equal({ message: 'scheduled restart deleted' });
    expect(n2.loop.snapshot().status.scheduled_restart).to.equal(undefined);
  });

  it('reinitialize: refused on the leader, runs in the background on a replica', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const onLeader = sim.node('node1').loop.reinitialize({ force: false, fromLeader: false });
    await sim.advance(loopWaitMs(sim));
    expect(await onLeader).to.deep.include({ ok: false, error: 'not_allowed_on_leader' });
    const n2 = sim.node('node2');
    const sysid = n2.db.systemIdentifier;
    const started = n2.loop.reinitialize({ force: false, fromLeader: true });
    await sim.advance(loopWaitMs(sim));
    expect(await started).to.deep.equal({ ok: true, message: 'reinitialize started' });
    await sim.until(() => n2.db.isStreaming, 4 * loopWaitMs(sim), 'node2 streaming again');
    expect(n2.db.systemIdentifier).to.equal(sysid);
  });

  it('reload answers at once; history comes from the DCS key', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    expect(await reload({ agent: sim.node('node1').loop })).to.deep.equal({ message: 'reload scheduled' });
    sim.node('node1').crash();
    await sim.until(() => primaryName(sim) === 'node2', 3 * ttlMs(sim), 'node2 to lead');
    await sim.advance(loopWaitMs(sim));
    const h = await readHistory({ store: sim.node('node2').dcs, agent: sim.node('node2').loop });
    expect(h).to.have.length(1);
    expect(h[0]![4]).to.equal('node2');
  });

  it('stop({releaseLeader}) stops the database, then releases the key: a replica takes over at once', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'] });
    const stopping = sim.node('node1').loop.stop({ releaseLeader: true });
    await sim.advance(1000);
    await stopping;
    sim.node('node1').alive = false;
    expect(sim.node('node1').db.isRunning).to.equal(false);
    // The stopped member stays listed with its state until its lease runs out.
    expect(sim.view().members.map((m) => [m.name, m.state])).to.deep.equal([['node1', 'stopped'], ['node2', 'running']]);
    const took = await sim.until(() => primaryName(sim) === 'node2', ttlMs(sim), 'node2 to lead');
    expect(took).to.be.lessThan(loopWaitMs(sim) + 2000);
    await sim.advance(ttlMs(sim));
    expect(sim.view().members.map((m) => m.name)).to.deep.equal(['node2']);
  });

  it('acceptFailsafe: only for the leader it last saw, only with failsafe mode, never as a primary', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: true } });
    const members = { node1: 'http://node1:8008', node2: 'http://node2:8008' };
    expect(sim.node('node2').loop.acceptFailsafe({ name: 'node1', members })).to.equal(true);
    expect(sim.node('node2').loop.acceptFailsafe({ name: 'node9', members })).to.equal(false);
    expect(sim.node('node1').loop.acceptFailsafe({ name: 'node1', members })).to.equal(false);
  });
});
