import { expect } from 'chai';
import { failoverToJson } from '../../../../../src/adapters/cluster-store/codec.js';
import { DcsUnavailableError } from '../../../../../src/domain/errors.js';
import type { SimCluster } from '../../../../sim/sim-cluster.js';
import { healthyCluster, loopWaitMs, primaryName, ttlMs, write } from './helpers.js';

describe('HA scenarios: DCS outages and failsafe mode', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('a primary cut from the DCS longer than ttl demotes (before its lock deadline), and a replica takes over', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    const cutAt = sim.clock.now();
    sim.node('node1').setDcsLink(false);
    await sim.until(() => !sim.node('node1').db.isWritable, ttlMs(sim), 'node1 to stop accepting writes');
    expect(sim.clock.now() - cutAt).to.be.at.most(loopWaitMs(sim) + 1000);
    expect(sim.node('node1').believesLeader()).to.equal(false);
    await sim.until(() => ['node2', 'node3'].includes(primaryName(sim) ?? ''), 2 * ttlMs(sim), 'a replica to take over');
    sim.node('node1').setDcsLink(true);
    await sim.until(() => sim.node('node1').db.isStreaming, 4 * loopWaitMs(sim), 'node1 to follow the new leader');
  });

  it('a primary whose DCS link breaks right after a tick read the cluster (every call then fails only after retry_timeout) stops writing on its own before its lock deadline', async () => {
    // loop_wait + 2 * retry_timeout = 28 s <= ttl 30 s: the documented budget, with 2 s to spare.
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 8, retry_timeout: 10 }, dcsFailDelayMs: 10_000 });
    const n1 = sim.node('node1');
    // The agent alone: the fencer (deadline - safety_margin) would hide a late demotion.
    n1.fencer!.die();
    const publish = n1.dcs.publishMember.bind(n1.dcs);
    let deadline: number | null = null;
    // The link breaks between the tick's read (it succeeded) and its first write: the member record, then the renewal, each wait retry_timeout.
    n1.dcs.publishMember = async (...args: Parameters<typeof publish>) => {
      if (deadline === null) {
        deadline = n1.loop.lockHeldUntil();
        n1.setDcsLink(false);
      }
      return publish(...args);
    };
    await sim.until(() => deadline !== null && !n1.db.isWritable, 3 * ttlMs(sim), 'node1 to stop accepting writes');
    expect(deadline).to.be.a('number');
    expect(sim.clock.now(), 'node1 stopped writing before its lock deadline').to.be.at.most(deadline!);
  });

  it('a primary on a slow but working DCS link (2 s each way) keeps its lock and its server: its fencer never stops it', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10 } });
    const n1 = sim.node('node1');
    n1.dcs.client.oneWayDelayMs = 2000;
    const writes = (async () => {
      for (let i = 0; i < 300 && n1.db.isWritable; i++) {
        await write(n1);
        await sim.clock.sleep(1000);
      }
    })();
    await sim.advance(5 * 60_000);
    await writes;
    expect(n1.fencer!.fenced, 'times the fencer stopped the primary').to.equal(0);
    expect(primaryName(sim)).to.equal('node1');
  });

  it('a primary cut from the DCS rejoins the new leader and passes the read-only health checks once it streams, though its watch missed the leader change', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    sim.node('node1').setDcsLink(false);
    await sim.until(() => ['node2', 'node3'].includes(primaryName(sim) ?? ''), 3 * ttlMs(sim), 'a replica to take over');
    sim.node('node1').setDcsLink(true);
    await sim.until(() => sim.node('node1').db.isStreaming, 4 * loopWaitMs(sim), 'node1 to follow the new leader');
    await sim.until(() => sim.node('node1').loop.snapshot().status.position_unconfirmed === undefined, 3 * loopWaitMs(sim), 'node1 to confirm its position against the new leader');
  });

  it('the whole DCS down without failsafe mode: the primary demotes; when it is back, a primary again within ttl + loop_wait', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'] });
    sim.store.setReachable(false);
    await sim.advance(ttlMs(sim) + loopWaitMs(sim));
    expect(sim.writable()).to.deep.equal([]);
    sim.store.setReachable(true);
    const took = await sim.until(() => sim.primary() !== null, ttlMs(sim) + loopWaitMs(sim), 'a primary after the DCS came back');
    expect(took).to.be.at.most(ttlMs(sim) + loopWaitMs(sim));
  });

  it('failsafe mode, DCS down, every member answers POST /failsafe: the primary stays primary', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: true } });
    expect(Object.keys(sim.view().failsafe ?? {}).sort()).to.deep.equal(['node1', 'node2', 'node3']);
    sim.store.setReachable(false);
    await sim.advance(3 * ttlMs(sim));
    expect(primaryName(sim)).to.equal('node1');
    expect(sim.node('node1').loop.snapshot().status.failsafe_mode_is_active).to.equal(true);
    expect(sim.node('node2').db.isStreaming).to.equal(true);
  });

  it('failsafe mode, etcd answering reads but no writes (a member that lost its quorum): the extension is not held up by the member record, so the fencer never stops the primary', async () => {
    // ttl - safety_margin = 15 s between two failsafe rounds; every write waits retry_timeout (5 s) and fails.
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 20, loop_wait: 2, retry_timeout: 5, failsafe_mode: true } });
    const n1 = sim.node('node1');
    const unanswered = async (): Promise<never> => {
      await sim.clock.sleep(5000);
      throw new DcsUnavailableError('etcd lease keep-alive: no answer within 5000 ms');
    };
    const publish = n1.dcs.publishMember.bind(n1.dcs);
    n1.dcs.renewLeader = unanswered;
    n1.dcs.writeStatus = unanswered;
    // The record keeps its lease (and with it the leader key) alive, as a leaderless etcd member never expires a lease.
    n1.dcs.publishMember = async (...args: Parameters<typeof publish>) => {
      await sim.clock.sleep(5000);
      await publish(...args);
      throw new DcsUnavailableError('etcd /v3/kv/put failed: no answer within 5000 ms');
    };
    // The fencer stops the server safety_margin (5 s) before the lock's deadline: each round must extend the lock well before.
    let closest = Infinity;
    for (let t = 0; t < 3 * ttlMs(sim); t += 250) {
      await sim.advance(250);
      const until = n1.loop.lockHeldUntil();
      if (until !== null) closest = Math.min(closest, until - sim.clock.now());
    }
    expect(closest, 'least time left on the lock before a failsafe round extended it (ms)').to.be.above(5000 + 3000);
    expect(n1.fencer!.fenced, 'times the fencer stopped the primary').to.equal(0);
    expect(primaryName(sim)).to.equal('node1');
    expect(n1.loop.snapshot().status.failsafe_mode_is_active).to.equal(true);
  });

  it('failsafe mode with the default timings, every etcd call timing out: the first round comes before the fencer stops the primary (the read does not wait retry_timeout twice)', async () => {
    // ttl 30 - safety_margin 5 = 25 s after the last renewal; the first failing tick starts loop_wait (10 s) after it.
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: true }, dcsFailDelayMs: 10_000 });
    const n1 = sim.node('node1');
    sim.store.setReachable(false);
    let closest = Infinity;
    for (let t = 0; t < 3 * ttlMs(sim); t += 250) {
      await sim.advance(250);
      const until = n1.loop.lockHeldUntil();
      if (until !== null) closest = Math.min(closest, until - sim.clock.now());
    }
    expect(closest, 'least time left on the lock before a failsafe round extended it (ms)').to.be.above(5000);
    expect(n1.fencer!.fenced, 'times the fencer stopped the primary').to.equal(0);
    expect(primaryName(sim)).to.equal('node1');
  });

  it('failsafe mode turned off as etcd comes back, every lease expired: no member promotes while the primary they confirmed still writes', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: true } });
    sim.store.setReachable(false);
    await sim.advance(45_000);
    expect(primaryName(sim)).to.equal('node1');
    // Back with every lease run out (no leader key, no member key), and the operator turns failsafe mode off at once.
    sim.store.setReachable(true);
    expect(await sim.putKey('config', JSON.stringify({ ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: false }))).to.equal(true);
    for (let t = 0; t < 60_000; t += 250) {
      await sim.advance(250);
      const writable = [...sim.nodes.values()].filter((n) => n.db.isWritable).map((n) => n.name);
      expect(writable.length, `writable at once: ${writable.join(', ')}`).to.be.at.most(1);
    }
    expect(primaryName(sim)).to.not.equal(null);
  });

  it('failsafe mode, only the primary cut from the DCS: a replica that finds it still answering as primary after its lock ran out asks again within moments, so it takes over within moments of its stop, not a loop later', async () => {
    // Found exploring failovers: the primary demoted 50 ms after a replica's look, and the replica waited loop_wait (10 s).
    // ttl not a multiple of loop_wait: the key runs out (waking the replicas) half a loop away from the primary's failsafe rounds.
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 25, loop_wait: 10, retry_timeout: 5, failsafe_mode: true } });
    await write(sim.node('node1'), 5);
    sim.node('node1').setDcsLink(false);
    // The members see the key gone while node1 still writes under failsafe; it stops at its next round.
    await sim.until(() => sim.leaderKey() === null && sim.node('node1').db.isWritable, 3 * ttlMs(sim), 'the key gone, node1 still writing');
    await sim.until(() => !sim.node('node1').db.isWritable, 3 * ttlMs(sim), 'node1 to stop writing');
    const stopped = sim.clock.now();
    await sim.until(() => primaryName(sim) !== null && primaryName(sim) !== 'node1', 3 * ttlMs(sim), 'a new primary');
    expect(sim.clock.now() - stopped).to.be.below(1500);
    expect(sim.network.lostAcknowledgedWrites(sim.primary()!.db)).to.deep.equal([]);
  });

  it('failsafe mode, DCS down, one member silent: the primary demotes', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: true } });
    sim.store.setReachable(false);
    await sim.advance(ttlMs(sim));
    expect(primaryName(sim)).to.equal('node1');
    sim.node('node3').killAgent();
    await sim.until(() => !sim.node('node1').db.isWritable, 2 * loopWaitMs(sim), 'node1 to demote');
    expect(sim.node('node1').believesLeader()).to.equal(false);
  });

  it('failsafe mode does not keep a primary that alone lost the DCS: once its key expires the others refuse and it demotes', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: true } });
    sim.node('node1').setDcsLink(false);
    await sim.until(() => !sim.node('node1').db.isWritable, ttlMs(sim) + 2 * loopWaitMs(sim), 'node1 to demote');
    await sim.until(() => ['node2', 'node3'].includes(primaryName(sim) ?? ''), 2 * ttlMs(sim), 'a replica to take over');
  });

  it('failsafe mode: a confirmation of the last round binds no race once another member held the key (the old primary, unreachable after a switchover, held the next failover for the rest of its ttl)', async () => {
    sim = await healthyCluster({ names: ['node1', 'node2', 'node3'], config: { ttl: 30, loop_wait: 2, retry_timeout: 10, failsafe_mode: true } });
    sim.store.setReachable(false);
    await sim.advance(20_000);
    expect(primaryName(sim)).to.equal('node1');
    sim.store.setReachable(true);
    const backAt = sim.clock.now();
    await sim.until(() => sim.node('node1').loop.snapshot().status.failsafe_mode_is_active !== true, 3 * loopWaitMs(sim), 'node1 to leave failsafe mode');
    await sim.putKey('failover', failoverToJson({ leader: 'node1', member: 'node2', scheduledAt: null }));
    await sim.until(() => primaryName(sim) === 'node2', 3 * loopWaitMs(sim), 'node2 to lead');
    // node1, which node3 confirmed in the last failsafe round, and then node2 are lost: node3 alone is left to take over.
    sim.node('node1').killAgent();
    sim.node('node2').killAgent();
    await sim.until(() => primaryName(sim) === 'node3', ttlMs(sim), 'node3 to lead');
    // Its confirmation of node1 bound it until the last round's start + ttl, at least 20 s after the outage ended.
    expect(sim.clock.now() - backAt, 'node3 writable after the outage ended').to.be.below(15_000);
  });
});
