import { expect } from 'chai';
import { InMemoryClusterStore } from '../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValue, InMemoryKeyValueSpace } from '../../../src/adapters/cluster-store/in-memory-key-value.js';
import { MANUAL_REQUEST_REFUSAL_CODES, ManualFailoverError } from '../../../src/domain/cluster/rules/manual-failover.js';
import { ScheduleError } from '../../../src/domain/cluster/rules/schedule.js';
import { ValidationError } from '../../../src/domain/errors.js';
import type { MemberRecord } from '../../../src/ports/cluster-store.js';
import { cancelScheduledRestart } from '../../../src/usecases/cancel-restart.js';
import { cancelScheduledSwitchover } from '../../../src/usecases/cancel-switchover.js';
import type { CommandDeps } from '../../../src/usecases/command-deps.js';
import { CommandError } from '../../../src/usecases/command-error.js';
import { failover } from '../../../src/usecases/failover.js';
import { patchConfig } from '../../../src/usecases/patch-config.js';
import { setPause } from '../../../src/usecases/pause.js';
import { readCluster } from '../../../src/usecases/read-cluster.js';
import { readConfig } from '../../../src/usecases/read-config.js';
import { reinitialize } from '../../../src/usecases/reinitialize.js';
import { replaceConfig } from '../../../src/usecases/replace-config.js';
import { restart } from '../../../src/usecases/restart.js';
import { switchover } from '../../../src/usecases/switchover.js';
import { FakeControl, ListLogger, NOW, primaryFacts, replicaFacts, snapshot, SteppingClock, TablePeers } from '../adapters/http/support.js';

/** A member record of test member `name` (API on its own port). */
function member(name: string, n: number, over: Partial<MemberRecord> = {}): MemberRecord {
  return {
    connUrl: `postgres://127.0.0.1:${15431 + n}/postgres`,
    apiUrl: `http://127.0.0.1:${8007 + n}`,
    state: 'running',
    role: n === 1 ? 'primary' : 'replica',
    version: '0.1.0',
    xlogLocation: 100_000_000,
    receiveLsn: null,
    replayLsn: null,
    replicationState: n === 1 ? null : 'streaming',
    timeline: 1,
    tags: {},
    pendingRestart: false,
    pendingRestartReason: null,
    scheduledRestart: null,
    ...over,
  };
}

/** The fakes of one test: node2's agent in a healthy cluster led by node1, and a second client acting as the other agents. */
async function cluster(opts: { config?: Record<string, unknown> | null; leader?: boolean } = {}) {
  const clock = new SteppingClock(NOW);
  const space = new InMemoryKeyValueSpace(clock);
  const store = new InMemoryClusterStore(space, { clientId: 'node2' });
  const others = new InMemoryClusterStore(space, { clientId: 'others' });
  if (opts.config !== null) await others.writeConfig({ ttl: 30, loop_wait: 10, ...opts.config }, null);
  for (const [name, n] of [['node1', 1], ['node2', 2], ['node3', 3]] as const) await others.publishMember(name, member(name, n), 30);
  if (opts.leader ?? true) await others.acquireLeader('node1', 30);
  await others.writeStatus({ optime: 100_000_000, slots: {} });
  const agent = new FakeControl(snapshot({ facts: replicaFacts({ receivedLocation: 100_000_000, replayedLocation: 100_000_000 }), node: { name: 'node2' } }));
  const peers = new TablePeers();
  peers.statuses.set('http://127.0.0.1:8010', snapshot({ facts: replicaFacts({ replayedLocation: 100_000_000 }), node: { name: 'node3' } }).status);
  const deps: CommandDeps = { store, clock, logger: new ListLogger(), peers, agent, options: { pollIntervalMs: 100, peerTimeoutMs: 100 } };
  return { clock, space, store, others, agent, peers, deps };
}

/** What `p` rejects with. */
async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

describe('use cases: operator commands over the fakes', () => {
  describe('switchover and failover', () => {
    it('a switchover writes the request, wakes the agent, and answers when the candidate leads', async () => {
      const c = await cluster();
      c.agent.onWake = async () => {
        const request = (await c.others.read()).failover;
        expect(request).to.deep.include({ leader: 'node1', member: 'node3', scheduledAt: null });
        await c.others.releaseLeader('node1');
        await c.others.acquireLeader('node3', 30);
        await c.others.writeFailover(null, request!.revision);
      };
      const result = await switchover(c.deps, { leader: 'node1', candidate: 'node3', scheduledAt: null });
      expect(result).to.deep.equal({ kind: 'done', message: 'Successfully switched over to "node3"', leader: 'node3' });
      expect(c.agent.wakes).to.equal(1);
    });

    it('refused before anything is written: leader mismatch 412 code, candidate that is not a member', async () => {
      const c = await cluster();
      const e = await rejection(switchover(c.deps, { leader: 'node3', candidate: 'node2', scheduledAt: null }));
      expect(e).to.be.instanceOf(ManualFailoverError);
      expect(e.code).to.equal('leader_mismatch');
      expect((await rejection(switchover(c.deps, { leader: 'node1', candidate: 'node9', scheduledAt: null }))).code).to.equal('candidate_not_member');
      expect((await c.others.read()).failoverRevision).to.equal(null);
    });

    it('a request nobody carries out ends as status unknown after 2*max(10, loop_wait) s', async () => {
      const c = await cluster();
      const e = await rejection(switchover(c.deps, { leader: 'node1', candidate: 'node3', scheduledAt: null }));
      expect(e).to.be.instanceOf(CommandError);
      expect(e.code).to.equal('switchover_status_unknown');
      expect(c.clock.now() - NOW).to.be.within(20_000, 21_000);
      // The leader never handed its lock over (its agent stopped, say): the message says what is pending.
      expect(e.message).to.match(/^Switchover status unknown: node1 still holds the leader lock and has not handed it over; if its agent is stopped, the request is carried out once that lock runs out/);
    });

    it('status unknown just after the leader lock ran out says the request stands', async () => {
      const c = await cluster();
      c.agent.onWake = async () => {
        await c.others.releaseLeader('node1');
      };
      const e = await rejection(failover(c.deps, { leader: null, candidate: 'node3', scheduledAt: null }));
      expect(e.code).to.equal('failover_status_unknown');
      expect(e.message).to.equal('Failover status unknown: the leader lock has run out and no member holds it yet; the request stands and decides the race that has begun (wardenctl list shows its outcome)');
    });

    it('a scheduled switchover: written, shown at once, one at a time, and cancelled', async () => {
      const c = await cluster();
      const at = new Date(NOW + 3_600_000).toISOString();
      expect(await switchover(c.deps, { leader: 'node1', candidate: 'node3', scheduledAt: at })).to.deep.equal({ kind: 'scheduled', message: 'Switchover scheduled', scheduledAt: at });
      expect(c.agent.refreshes).to.equal(1);
      expect((await readCluster(c.deps)).failover).to.deep.include({ leader: 'node1', member: 'node3', scheduledAt: at });
      const again = await rejection(switchover(c.deps, { leader: 'node1', candidate: 'node2', scheduledAt: at }));
      expect(again).to.be.instanceOf(ScheduleError);
      expect(again.code).to.equal('already_scheduled');
      expect(await cancelScheduledSwitchover(c.deps)).to.deep.equal({ message: 'scheduled switchover deleted' });
      expect((await readCluster(c.deps)).failover).to.equal(null);
      expect((await rejection(cancelScheduledSwitchover(c.deps))).code).to.equal('not_scheduled');
    });

    it('a failover without a leader promotes the named candidate, whatever its lag', async () => {
      const c = await cluster({ leader: false });
      c.peers.statuses.set('http://127.0.0.1:8010', snapshot({ facts: replicaFacts({ replayedLocation: 1 }), node: { name: 'node3' } }).status);
      c.agent.onWake = async () => {
        await c.others.acquireLeader('node3', 30);
      };
      expect(await failover(c.deps, { leader: null, candidate: 'node3', scheduledAt: null })).to.deep.include({ kind: 'done', leader: 'node3' });
    });

    it('a switchover without a leader is 503 no_leader; a failover naming the leader is a switchover', async () => {
      const noLeader = await cluster({ leader: false });
      expect((await rejection(switchover(noLeader.deps, { leader: 'node1', candidate: 'node3', scheduledAt: null }))).code).to.equal('no_leader');
      const c = await cluster();
      const e = await rejection(failover(c.deps, { leader: 'node2', candidate: 'node3', scheduledAt: null }));
      expect(e.code).to.equal('leader_mismatch');
    });

    it('every refusal is counted under a reason of the known set (svc_refused_operations_total starts them at 0)', async () => {
      const counted: [string, string][] = [];
      const metrics = { operationRefused: (operation: string, reason: string) => void counted.push([operation, reason]) };
      const refuse = async (c: Awaited<ReturnType<typeof cluster>>, run: typeof switchover, input: Parameters<typeof switchover>[1]) => {
        const before = counted.length;
        const e = await rejection(run({ ...c.deps, metrics }, input));
        expect(counted.slice(before), e.message).to.have.length(1);
        expect(counted.at(-1)![1], e.message).to.equal(e.code);
        return e.code;
      };
      const past = new Date(NOW - 60_000).toISOString();
      const later = new Date(NOW + 3_600_000).toISOString();
      const c = await cluster();
      const reasons = [
        await refuse(c, switchover, { leader: null, candidate: 'node3', scheduledAt: null }),
        await refuse(c, failover, { leader: null, candidate: null, scheduledAt: null }),
        await refuse(c, failover, { leader: null, candidate: 'node3', scheduledAt: later }),
        await refuse(c, switchover, { leader: 'node1', candidate: 'node3', scheduledAt: '2030-01-02T03:04:05' }),
        await refuse(c, switchover, { leader: 'node1', candidate: 'node3', scheduledAt: 'tomorrow' }),
        await refuse(c, switchover, { leader: 'node1', candidate: 'node3', scheduledAt: past }),
        await refuse(c, failover, { leader: 'node3', candidate: 'node3', scheduledAt: null }),
        await refuse(c, switchover, { leader: 'node2', candidate: 'node3', scheduledAt: null }),
        await refuse(c, failover, { leader: null, candidate: 'node9', scheduledAt: null }),
        await refuse(await cluster({ leader: false }), switchover, { leader: 'node1', candidate: null, scheduledAt: null }),
        await refuse(await cluster({ config: { pause: true } }), switchover, { leader: 'node1', candidate: null, scheduledAt: null }),
        await refuse(await cluster({ config: { pause: true } }), switchover, { leader: 'node1', candidate: 'node3', scheduledAt: later }),
        await refuse(await cluster({ config: { synchronous_mode: true } }), switchover, { leader: 'node1', candidate: null, scheduledAt: null }),
        await refuse(await cluster({ config: { synchronous_mode: true } }), switchover, { leader: 'node1', candidate: 'node3', scheduledAt: null }),
      ];
      c.peers.statuses.delete('http://127.0.0.1:8010');
      reasons.push(await refuse(c, switchover, { leader: 'node1', candidate: 'node3', scheduledAt: null }));
      await switchover(c.deps, { leader: 'node1', candidate: 'node3', scheduledAt: later });
      reasons.push(await refuse(c, switchover, { leader: 'node1', candidate: 'node2', scheduledAt: later }));
      expect(reasons).to.deep.equal([
        'missing_leader',
        'missing_candidate',
        'failover_cannot_be_scheduled',
        'timezone_required',
        'invalid_schedule',
        'schedule_in_past',
        'same_leader_and_candidate',
        'leader_mismatch',
        'candidate_not_member',
        'no_leader',
        'paused_without_candidate',
        'schedule_while_paused',
        'no_sync_standby',
        'candidate_not_sync_standby',
        'no_eligible_candidate',
        'already_scheduled',
      ]);
      for (const [operation, reason] of counted) {
        expect(['switchover', 'failover']).to.include(operation);
        expect(MANUAL_REQUEST_REFUSAL_CODES).to.include(reason);
      }
    });
  });

  describe('configuration', () => {
    it('patch merges, null removes, the agent applies it at once and reads it back', async () => {
      const c = await cluster({ config: { maximum_lag_on_failover: 1024 } });
      const next = await patchConfig(c.deps, { loop_wait: 5, maximum_lag_on_failover: null, db: { parameters: { work_mem: '8MB' } } });
      expect(next).to.deep.equal({ ttl: 30, loop_wait: 5, db: { parameters: { work_mem: '8MB' } } });
      expect((await readConfig(c.deps)).value).to.deep.equal(next);
      expect([c.agent.wakes, c.agent.refreshes]).to.deep.equal([1, 1]);
    });

    it('a patch before the bootstrap stored the configuration is refused (503), so the bootstrap settings are not lost', async () => {
      const c = await cluster({ config: null });
      const e = await rejection(patchConfig(c.deps, { pause: true }));
      expect(e.code).to.equal('config_not_stored');
      expect((await c.store.read()).config).to.equal(null);
      expect(c.agent.wakes).to.equal(0);
      // What the bootstrap then writes (only where nothing is stored) goes in whole.
      expect(await c.others.writeConfig({ ttl: 20, loop_wait: 2, retry_timeout: 5 }, null)).to.equal(true);
      expect(await patchConfig(c.deps, { pause: true })).to.deep.equal({ ttl: 20, loop_wait: 2, retry_timeout: 5, pause: true });
    });

    it('a patch of a stored configuration that cannot be read is refused (409): merged into its empty reading it would turn synchronous mode off; a PUT replaces it', async () => {
      const c = await cluster({ config: { synchronous_mode: true } });
      await new InMemoryKeyValue(c.space, { clientId: 'operator' }).put('config', '{"synchronous_mode": true, "ttl": 30,');
      for (const attempt of [patchConfig(c.deps, { loop_wait: 5 }), setPause(c.deps, true)]) {
        const e = await rejection(attempt);
        expect(e.code).to.equal('config_unreadable');
      }
      expect((await c.store.read()).config).to.include({ unreadable: true });
      const read = await c.store.read();
      await replaceConfig(c.deps, { config: { ttl: 30, loop_wait: 10, synchronous_mode: true }, ifRevision: read.config!.revision }, read);
      expect(await patchConfig(c.deps, { loop_wait: 5 })).to.deep.equal({ ttl: 30, loop_wait: 5, synchronous_mode: true });
    });

    it('an invalid result is refused with every problem, and nothing is written', async () => {
      const c = await cluster();
      const e = await rejection(patchConfig(c.deps, { ttl: 5, loop_wait: 'soon' }));
      expect(e).to.be.instanceOf(ValidationError);
      expect(e.code).to.equal('invalid_config');
      expect((e as ValidationError).problems.map((p) => p.path)).to.include.members(['ttl', 'loop_wait']);
      expect((await readConfig(c.deps)).value).to.deep.equal({ ttl: 30, loop_wait: 10 });
    });

    it('timings that would have a member fence its healthy primary are refused, naming it; others go through', async () => {
      const c = await cluster({ config: { retry_timeout: 5 } });
      await c.others.publishMember('node1', member('node1', 1, { safetyMargin: 5 }), 30);
      await c.others.publishMember('node3', member('node3', 3, { safetyMargin: 15 }), 30);
      // ttl 30 - loop_wait 10 = 20: margins 5 and 15 fit. ttl 25: 25 - 15 = 10, node3's fencer would fire between renewals.
      const e = await rejection(patchConfig(c.deps, { ttl: 25 }));
      expect(e).to.be.instanceOf(ValidationError);
      expect(e.code).to.equal('invalid_config');
      expect((e as ValidationError).problems).to.have.length(1);
      expect(e.message).to.include("member node3's watchdog.safety_margin").and.include('lower watchdog.safety_margin or raise ttl');
      expect((await readConfig(c.deps)).value).to.deep.equal({ ttl: 30, loop_wait: 10, retry_timeout: 5 });
      // Raising loop_wait to 15 makes the window 30 - 15 = 15 seconds, no longer than the loop of 15: refused too.
      expect((await rejection(patchConfig(c.deps, { loop_wait: 15 }))).code).to.equal('invalid_config');
      // node2 publishes no margin (no fencer, no watchdog): never in the way. A change that keeps the timings goes through.
      expect(await patchConfig(c.deps, { ttl: 26, loop_wait: 10 })).to.deep.include({ ttl: 26 });
      expect(await patchConfig(c.deps, { maximum_lag_on_failover: 1024 })).to.deep.include({ maximum_lag_on_failover: 1024 });
    });

    it('timings that already did not fit a member do not block other changes', async () => {
      const c = await cluster({ config: { retry_timeout: 5 } });
      await c.others.publishMember('node3', member('node3', 3, { safetyMargin: 25 }), 30);
      expect(await patchConfig(c.deps, { ttl: 29 })).to.deep.include({ ttl: 29 });
    });

    it('a replace based on a stale revision is a conflict; pause and resume are patches', async () => {
      const c = await cluster();
      const stored = await readConfig(c.deps);
      await patchConfig(c.deps, { loop_wait: 5 });
      expect((await rejection(replaceConfig(c.deps, { config: { ttl: 40 }, ifRevision: stored.revision }))).code).to.equal('config_conflict');
      expect(await setPause(c.deps, true)).to.deep.include({ pause: true });
      expect(await setPause(c.deps, false)).to.not.have.property('pause');
    });
  });

  describe('restart and reinitialize', () => {
    it('a restart now goes to the agent; a scheduled one is recorded, refused twice, and cancelled', async () => {
      const c = await cluster();
      const deps = { agent: c.agent, clock: c.clock };
      expect(await restart(deps, { role: 'replica' })).to.deep.equal({ kind: 'now', ok: true, message: 'restarted successfully' });
      expect(c.agent.restarts).to.deep.equal([{ role: 'replica' }]);
      const at = new Date(NOW + 60_000).toISOString();
      expect(await restart(deps, { schedule: at, restart_pending: true })).to.deep.include({ kind: 'scheduled' });
      expect(c.agent.scheduled).to.deep.equal({ restart_pending: true, schedule: at });
      expect((await rejection(restart(deps, { schedule: at }))).code).to.equal('already_scheduled');
      expect(cancelScheduledRestart(deps)).to.deep.equal({ message: 'scheduled restart deleted' });
      expect(c.agent.scheduled).to.equal(null);
    });

    it('reinitialize is refused on the leader and without one, and passed on otherwise', async () => {
      const c = await cluster();
      const deps = { agent: c.agent, clock: c.clock };
      expect(await reinitialize(deps, { force: false, fromLeader: true })).to.deep.equal({ ok: true, message: 'reinitialize started' });
      c.agent.snap = snapshot({ facts: primaryFacts(), node: { name: 'node2' }, leader: true });
      expect((await rejection(reinitialize(deps, { force: true, fromLeader: false }))).code).to.equal('is_leader');
    });
  });

  it('reading the cluster: a view up to ttl old answers while the store is out of reach', async () => {
    const c = await cluster();
    await readCluster(c.deps);
    c.store.setReachable(false);
    await c.clock.sleep(25_000);
    expect((await readCluster(c.deps)).leader?.name).to.equal('node1');
    await c.clock.sleep(10_000);
    expect((await rejection(readCluster(c.deps))).code).to.equal('dcs_unavailable');
  });
});
