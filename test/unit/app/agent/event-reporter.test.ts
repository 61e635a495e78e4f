import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryEventLog } from '../../../../src/adapters/events/in-memory-event-log.js';
import { stoppedFacts } from '../../../../src/domain/cluster/model/facts.js';
import type { AgentMetricsSink, MeasuredOperation } from '../../../../src/ports/agent-metrics.js';
import type { CallbackAction, CallbackRunner } from '../../../../src/ports/callbacks.js';
import { changedKeys, EventReporter } from '../../../../src/app/agent/event-reporter.js';
import { clusterView, primaryFacts, replicaFacts, snapshot } from '../../domain/cluster/fixtures.js';
import { member } from '../../domain/cluster/ha/fixtures.js';

class Calls implements CallbackRunner {
  readonly calls: string[] = [];
  run(action: CallbackAction, role: string): void {
    this.calls.push(`${action} ${role}`);
  }
  async idle(): Promise<void> {}
}

class Durations implements AgentMetricsSink {
  readonly seen: [MeasuredOperation, number][] = [];
  loopCompleted(): void {}
  dcsError(): void {}
  leaderChanged(): void {}
  operationRefused(): void {}
  callbackFailed(): void {}
  operationDuration(op: MeasuredOperation, s: number): void {
    this.seen.push([op, s]);
  }
}

function setup() {
  const clock = new FakeClock(Date.UTC(2030, 0, 1));
  const events = new InMemoryEventLog({ member: 'node2', clock, logger: null, capacity: 100 });
  const callbacks = new Calls();
  const metrics = new Durations();
  const reporter = new EventReporter({ events, callbacks, metrics, clock, me: () => 'node2' });
  const types = () => events.since(null).map((e) => e.type);
  return { clock, events, callbacks, metrics, reporter, types };
}

const replica = snapshot({ facts: replicaFacts(), node: { name: 'node2' } });
const primary = snapshot({ facts: primaryFacts(), node: { name: 'node2' }, leader: true });
const stopped = snapshot({ facts: stoppedFacts('stopped', true), node: { name: 'node2' } });

describe('app/agent: EventReporter', () => {
  it('a switchover to this node: lock, promotion, role change, completion with the durations, on_role_change', () => {
    const { clock, reporter, callbacks, metrics, types, events } = setup();
    reporter.snapshotPublished(replica, null);
    reporter.clusterObserved({ ...clusterView({ leader: 'node1' }), failover: { leader: 'node1', member: 'node2', scheduledAt: null, revision: '9' } }, false);
    clock.set(clock.now() + 300);
    reporter.leaderKeyHolder(null);
    reporter.decided('switchover to this node: taking the leader key');
    reporter.leaseChanged(clock.now() + 20_000);
    reporter.jobStarted('promote');
    reporter.actionStarted('promote');
    clock.set(clock.now() + 200);
    reporter.jobEnded('promote', true, null);
    reporter.snapshotPublished(primary, null);
    expect(types()).to.deep.equal(['leader_acquired', 'promote_started', 'promote_finished', 'switchover_completed', 'role_changed']);
    const done = events.since(null).find((e) => e.type === 'switchover_completed')!;
    expect(done.data).to.deep.equal({ from: 'node1', to: 'node2', duration_ms: 500 });
    expect(metrics.seen).to.deep.equal([
      ['promote', 0.2],
      ['switchover', 0.5],
    ]);
    // The replica first seen running (the agent took it over) is announced: on_start.
    expect(callbacks.calls).to.deep.equal(['on_start replica', 'on_role_change primary']);
  });

  it('an automatic failover is measured from the leader key gone', () => {
    const { clock, reporter, metrics, events } = setup();
    reporter.snapshotPublished(replica, null);
    reporter.leaderKeyHolder('node1');
    reporter.leaderKeyHolder(null);
    clock.set(clock.now() + 1500);
    reporter.actionStarted('promote');
    reporter.jobEnded('promote', true, null);
    const done = events.since(null).find((e) => e.type === 'failover_completed')!;
    expect(done.data).to.deep.include({ from: 'node1', automatic: true, duration_ms: 1500 });
    expect(done.reason).to.match(/^automatic failover from node1 to /);
    expect(metrics.seen.map(([op]) => op)).to.deep.equal(['promote', 'failover']);
  });

  it('a node that takes its own leader key again and promotes did not fail over', () => {
    const { clock, reporter, metrics, events } = setup();
    reporter.snapshotPublished(replica, null);
    reporter.leaderKeyHolder('node2');
    reporter.leaderKeyHolder(null);
    clock.set(clock.now() + 1500);
    reporter.actionStarted('promote');
    reporter.jobEnded('promote', true, null);
    expect(events.since(null).map((e) => e.type)).not.to.include('failover_completed');
    expect(metrics.seen.map(([op]) => op)).to.deep.equal(['promote']);
  });

  it('demote job: started/finished with its duration; the stop inside it calls no on_stop, the new role calls on_role_change', () => {
    const { clock, reporter, callbacks, types } = setup();
    reporter.snapshotPublished(primary, null);
    reporter.jobStarted('demote');
    reporter.snapshotPublished(stopped, 'demote');
    clock.set(clock.now() + 800);
    reporter.snapshotPublished(replica, 'demote');
    reporter.jobEnded('demote', true, null);
    expect(types()).to.deep.equal(['demote_started', 'role_changed', 'demote_finished']);
    expect(callbacks.calls).to.deep.equal(['on_start primary', 'on_role_change replica']);
  });

  it('start, stop, restart and reload callbacks', () => {
    const { reporter, callbacks } = setup();
    reporter.snapshotPublished(stopped, null);
    reporter.snapshotPublished(replica, null);
    reporter.snapshotPublished(stopped, null);
    reporter.snapshotPublished(replica, null);
    reporter.jobStarted('restart');
    reporter.snapshotPublished(stopped, 'restart');
    reporter.snapshotPublished(replica, 'restart');
    reporter.jobEnded('restart', true, null);
    reporter.reloaded();
    expect(callbacks.calls).to.deep.equal(['on_start replica', 'on_stop replica', 'on_start replica', 'on_restart replica', 'on_reload replica']);
  });

  describe('callbacks as Patroni calls them', () => {
    const uninitialized = snapshot({ facts: stoppedFacts('stopped', false), node: { name: 'node2' } });
    const unfinished = snapshot({ facts: { ...primaryFacts(), bootstrapUnfinished: true }, node: { name: 'node2' }, leader: true });

    it('a server the agent finds running is announced once: on_start with its role', () => {
      const { reporter, callbacks } = setup();
      reporter.snapshotPublished(replica, null);
      reporter.snapshotPublished(replica, null);
      reporter.snapshotPublished(replica, null);
      expect(callbacks.calls).to.deep.equal(['on_start replica']);
    });

    it("a server found stopped is announced by the agent's own start only: no second on_start", () => {
      const { reporter, callbacks } = setup();
      reporter.snapshotPublished(stopped, null);
      reporter.jobStarted('start');
      reporter.actionStarted('start');
      reporter.snapshotPublished(replica, 'start');
      reporter.jobEnded('start', true, null);
      reporter.snapshotPublished(replica, null);
      expect(callbacks.calls).to.deep.equal(['on_start replica']);
    });

    it('a bootstrap calls nothing while it runs (the custom bootstrap recovery and promotion included); completed, one on_start with the role it ended in', () => {
      const { reporter, callbacks } = setup();
      reporter.snapshotPublished(uninitialized, null);
      reporter.jobStarted('bootstrap');
      reporter.actionStarted('initdb');
      reporter.snapshotPublished(stopped, 'bootstrap');
      reporter.actionStarted('start');
      reporter.snapshotPublished(replica, 'bootstrap');
      reporter.snapshotPublished(stopped, 'bootstrap');
      reporter.snapshotPublished(unfinished, 'bootstrap');
      reporter.reloaded();
      reporter.snapshotPublished(primary, 'bootstrap');
      expect(callbacks.calls, 'nothing before the bootstrap completed').to.deep.equal([]);
      reporter.jobEnded('bootstrap', true, null);
      reporter.snapshotPublished(primary, null);
      reporter.snapshotPublished(primary, null);
      expect(callbacks.calls).to.deep.equal(['on_start primary']);
    });

    it('a bootstrap rolled back calls nothing, its stop included', () => {
      const { reporter, callbacks } = setup();
      reporter.snapshotPublished(uninitialized, null);
      reporter.jobStarted('bootstrap');
      reporter.snapshotPublished(unfinished, 'bootstrap');
      reporter.snapshotPublished(uninitialized, 'bootstrap');
      reporter.jobEnded('bootstrap', false, 'postBootstrap: the post_bootstrap script exited with code 1');
      reporter.snapshotPublished(uninitialized, null);
      expect(callbacks.calls).to.deep.equal([]);
    });

    it('a bootstrap interrupted by the agent is no running server to announce: its undo calls nothing', () => {
      const { reporter, callbacks } = setup();
      reporter.snapshotPublished(unfinished, null);
      reporter.jobStarted('bootstrap');
      reporter.snapshotPublished(uninitialized, 'bootstrap');
      reporter.jobEnded('bootstrap', true, null);
      reporter.snapshotPublished(uninitialized, null);
      expect(callbacks.calls).to.deep.equal([]);
    });

    it('a shutdown that stops the server: one on_stop with the role it had, nothing from the stale publications after it', () => {
      const { reporter, callbacks } = setup();
      reporter.snapshotPublished(primary, null);
      expect(reporter.agentStopping(true)).to.equal(true);
      // The lock given up republishes the last facts (still running).
      reporter.snapshotPublished(primary, null);
      reporter.reloaded();
      expect(reporter.agentStopping(true)).to.equal(false);
      expect(callbacks.calls).to.deep.equal(['on_start primary', 'on_stop primary']);
    });

    it('a shutdown that leaves the server running (maintenance mode, or a stop that failed) calls nothing', () => {
      const { reporter, callbacks } = setup();
      reporter.snapshotPublished(replica, null);
      expect(reporter.agentStopping(false)).to.equal(false);
      reporter.snapshotPublished(stopped, null);
      expect(callbacks.calls).to.deep.equal(['on_start replica']);
    });

    it('a shutdown calls no on_stop for a server never announced: already stopped, or in a bootstrap', () => {
      const down = setup();
      down.reporter.snapshotPublished(replica, null);
      down.reporter.snapshotPublished(stopped, null);
      expect(down.reporter.agentStopping(true)).to.equal(false);
      expect(down.callbacks.calls).to.deep.equal(['on_start replica', 'on_stop replica']);
      const bootstrapping = setup();
      bootstrapping.reporter.snapshotPublished(uninitialized, null);
      bootstrapping.reporter.jobStarted('bootstrap');
      bootstrapping.reporter.snapshotPublished(primary, 'bootstrap');
      bootstrapping.reporter.jobEnded('bootstrap', true, null);
      expect(bootstrapping.reporter.agentStopping(true)).to.equal(false);
      expect(bootstrapping.callbacks.calls).to.deep.equal([]);
    });
  });

  it('cluster events come from the leader only: members joined and left, pause, changed configuration keys', () => {
    const { reporter, events } = setup();
    const base = { ...clusterView({ leader: 'node2' }), members: [member('node1'), member('node2')], config: { value: { ttl: 30 }, revision: '1' } };
    reporter.clusterObserved(base, true);
    reporter.clusterObserved({ ...base, members: [member('node2'), member('node3')], config: { value: { ttl: 40, pause: true, db: { parameters: { work_mem: '8MB' } } }, revision: '2' } }, true);
    expect(events.since(null).map((e) => `${e.type}: ${e.reason}`)).to.deep.equal([
      'member_joined: node3 joined the cluster',
      'member_left: node1 left the cluster (its member key is gone)',
      'paused: maintenance mode on: automatic failover is off',
      'config_changed: dynamic configuration changed: db.parameters.work_mem, ttl',
    ]);
    const quiet = setup();
    quiet.reporter.clusterObserved(base, false);
    quiet.reporter.clusterObserved({ ...base, members: [] }, false);
    expect(quiet.types()).to.deep.equal([]);
  });

  it('a leaderless cluster nobody can lead is reported once per set of reasons', () => {
    const { reporter, types } = setup();
    const e = { name: 'node1', eligible: false, reasons: [{ code: 'nofailover' as const, detail: 'tagged nofailover' }], lag_bytes: 0, timeline: 1, wal_position: 1, failover_priority: 1 };
    reporter.leaderless([e], true);
    reporter.leaderless([e], true);
    reporter.leaderless([{ ...e, eligible: true, reasons: [] }], true);
    reporter.leaderless([e], false);
    expect(types()).to.deep.equal(['no_candidate']);
  });

  it('a leaderless cluster without a single member key says so, not an empty list of reasons', () => {
    const { reporter, events } = setup();
    reporter.leaderless([], true);
    expect(events.since(null).map((e) => e.reason)).to.deep.equal(['the cluster has no leader and no member can be promoted: no member has its member key in etcd (the agents cannot write them: see their logs)']);
  });

  it('changedKeys lists the paths that differ', () => {
    expect(changedKeys({ a: 1, b: { c: 1, d: 2 } }, { a: 1, b: { c: 2 }, e: [1] })).to.deep.equal(['b.c', 'b.d', 'e']);
  });
});
