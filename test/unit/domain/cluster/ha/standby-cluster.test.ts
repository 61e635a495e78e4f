import { expect } from 'chai';
import { decide } from '../../../../../src/domain/cluster/ha/decide.js';
import { EMPTY_MEMORY, type Action, type TickInput } from '../../../../../src/domain/cluster/ha/decision.js';
import { desiredParameters } from '../../../../../src/domain/cluster/ha/maintenance.js';
import { remoteUpstream } from '../../../../../src/domain/cluster/ha/standby-cluster.js';
import { restartpointRetryMs } from '../../../../../src/domain/cluster/ha/standby-leader.js';
import { myStatus, tickContext } from '../../../../../src/domain/cluster/ha/tick-context.js';
import { EMPTY_CLUSTER } from '../../../../../src/domain/cluster/model/cluster.js';
import { stoppedFacts } from '../../../../../src/domain/cluster/model/facts.js';
import { cluster, failover, input, leaderInput, member, NOW, peerStatus, primaryFacts, replicaFacts, types } from './fixtures.js';

const REMOTE = 'postgres://10.0.0.9:5433/postgres';
const SC = { standby_cluster: { host: '10.0.0.9', port: 5433, primary_slot_name: 'dc2' } };
/** A standby cluster led by node1 (its member key says standby_leader). */
const standbyCluster = (leader: string | null = 'node1') =>
  cluster(leader, {
    config: { value: SC, revision: '2' },
    members: ['node1', 'node2', 'node3'].map((n) => member(n, n === leader ? { role: 'standby_leader' } : {})),
  });

/** The physical slots a standby leader keeps for node2 and node3, as its server reports them. */
const REPLICA_SLOTS = ['node2', 'node3'].map((name) => ({ name, type: 'physical' as const, database: null, plugin: null, active: true, restartLsn: 7000, confirmedFlushLsn: null, hasXmin: false }));

/** node1, the standby leader: holds the key, runs in recovery streaming from the remote. */
function standbyLeader(over: Partial<TickInput> & { readonly raw?: Record<string, unknown> } = {}): TickInput {
  return leaderInput({
    raw: SC,
    cluster: standbyCluster(),
    facts: replicaFacts(7000, null, { upstreamConnUrl: REMOTE, upstreamSlotName: 'dc2', replicationState: 'streaming', slots: REPLICA_SLOTS }),
    memory: { ...EMPTY_MEMORY, appliedParameters: '{}', lastRole: 'replica' },
    ...over,
  });
}

const action = <T extends Action['type']>(d: { actions: readonly Action[] }, type: T) => d.actions.find((a) => a.type === type) as Extract<Action, { type: T }>;

describe('decide(): a standby cluster', () => {
  describe('the standby leader', () => {
    it('refreshes the key first and publishes its received position as the optime; never promotes nor arms the watchdog', () => {
      const d = decide(standbyLeader({ node: { ...leaderInput().node, watchdogMode: 'automatic' } }));
      expect(types(d)).to.deep.equal(['refreshLeader', 'writeStatus']);
      expect(action(d, 'writeStatus').optime).to.equal(7000);
      expect(d.job).to.equal(null);
      expect(d.message).to.match(/the standby leader with the lock, following remote 10\.0\.0\.9:5433/);
      // A watchdog left armed (after a demotion) is disarmed: a standby leader cannot write.
      expect(types(decide(standbyLeader({ watchdog: { active: true, usable: true } })))).to.include('disarmWatchdog');
    });

    it("a restart with role standby_leader runs on it; one with role replica is refused (it is no replica of its cluster)", () => {
      const asked = decide(standbyLeader({ commands: { restart: { id: 7, conditions: { role: 'standby_leader' } }, reinitialize: null } }));
      expect(asked.job).to.equal('restart');
      expect(asked.actions.at(-1)).to.deep.include({ type: 'resolveCommand', id: 7, ok: true });
      const refused = decide(standbyLeader({ commands: { restart: { id: 7, conditions: { role: 'replica' } }, reinitialize: null } }));
      expect(refused.job).to.equal(null);
      expect(action(refused, 'resolveCommand')).to.deep.include({ ok: false, error: 'restart_conditions_not_met', message: "restart conditions are not satisfied: the node's role is standby_leader, not replica" });
    });

    it('points its server at the remote when standby_cluster names another host or slot, also in pause', () => {
      const d = decide(standbyLeader({ facts: replicaFacts(7000, 'elsewhere') }));
      expect(d.job).to.equal('follow');
      expect(action(d, 'follow')).to.deep.include({ upstream: { name: 'remote 10.0.0.9:5433', connUrl: REMOTE }, slotName: 'dc2' });
      expect(types(d)[0]).to.equal('refreshLeader');
      const slot = decide(standbyLeader({ facts: replicaFacts(7000, null, { upstreamConnUrl: REMOTE, upstreamSlotName: null }) }));
      expect(slot.job).to.equal('follow');
      expect(decide(standbyLeader({ raw: { ...SC, pause: true }, facts: replicaFacts(7000, 'elsewhere') })).job).to.equal('follow');
    });

    it('an archive-only standby cluster follows nobody: restore_command feeds it', () => {
      const raw = { standby_cluster: { restore_command: 'cp /archive/%f %p' } };
      const archive = standbyLeader({ raw, facts: replicaFacts(7000, null, { upstreamConnUrl: null }) });
      expect(decide(archive).job).to.equal(null);
      const d = decide({ ...archive, facts: replicaFacts(7000, 'node3') });
      expect(action(d, 'follow')).to.deep.include({ upstream: null });
    });

    it('keeps its replicas\' slots (on a standby: physical ones)', () => {
      const d = decide(standbyLeader({ facts: replicaFacts(7000, null, { upstreamConnUrl: REMOTE, upstreamSlotName: 'dc2', replicationState: 'streaming', slots: [] }) }));
      expect(action(d, 'syncSlots').plan.create.map((s) => s.name)).to.deep.equal(['node2', 'node3']);
      const permanent = decide(standbyLeader({ raw: { ...SC, slots: { cdc: { type: 'logical', database: 'postgres', plugin: 'pgoutput' }, archiver: { type: 'physical' } } } }));
      expect(action(permanent, 'syncSlots').plan.create.map((s) => s.name)).to.deep.equal(['archiver']);
    });

    it('publishes the timeline history its server fetched once the remote switched timelines', () => {
      const d = decide(standbyLeader({ facts: replicaFacts(7000, null, { upstreamConnUrl: REMOTE, upstreamSlotName: 'dc2', timeline: 3, checkpointTimeline: 3 }) }));
      expect(action(d, 'syncHistory')).to.deep.include({ previous: [], maxLines: 0 });
      const known = standbyCluster();
      const done = decide(standbyLeader({ cluster: { ...known, history: { lines: [[1, 100, 'x', null, null], [2, 200, 'y', null, null]], revision: '3' } }, facts: replicaFacts(7000, null, { upstreamConnUrl: REMOTE, upstreamSlotName: 'dc2', timeline: 3 }) }));
      expect(types(done)).to.not.include('syncHistory');
    });

    it('makes a restartpoint on the remote\'s new timeline (a pg_rewind source must show it) and says so until it shows, asking again at most every restartpointRetryMs', () => {
      const facts = replicaFacts(7000, null, { upstreamConnUrl: REMOTE, upstreamSlotName: 'dc2', timeline: 2, checkpointTimeline: 1, slots: REPLICA_SLOTS });
      const history = { lines: [[1, 100, 'x', null, null] as const], revision: '3' };
      const base = standbyLeader({ facts, cluster: { ...standbyCluster(), history } });
      const d = decide(base);
      expect(d.job).to.equal('checkpoint');
      expect(types(d)).to.deep.equal(['refreshLeader', 'writeStatus', 'remember', 'remember', 'checkpoint']);
      expect(d.actions.filter((a) => a.type === 'remember').map((a) => (a as Extract<Action, { type: 'remember' }>).patch)).to.deep.equal([{ checkpointAfterPromote: false }, { restartpointAt: NOW }]);
      const waiting = decide({ ...base, memory: { ...base.memory, checkpointAfterPromote: false, restartpointAt: NOW - 1000 } });
      expect(waiting.job).to.equal(null);
      expect(waiting.wakeAt).to.equal(NOW - 1000 + restartpointRetryMs(tickContext(base)));
      expect(decide({ ...base, memory: { ...base.memory, checkpointAfterPromote: false, restartpointAt: NOW - 60_000 } }).job).to.equal('checkpoint');
      const ready = decide({ ...base, facts: { ...facts, checkpointTimeline: 2 }, memory: { ...base.memory, checkpointAfterPromote: false } });
      expect(action(ready, 'remember').patch).to.deep.equal({ checkpointAfterPromote: null });
    });

    it('steps down for a requested switchover like a primary (a graceful stop, then the key goes)', () => {
      const d = decide({ ...standbyLeader({ cluster: { ...standbyCluster(), failover: failover('node1', 'node2') } }), peers: new Map([['node2', peerStatus('replica', 7000)], ['node3', peerStatus('replica', 7000)]]) });
      expect(d.job).to.equal('demote');
      expect(types(d)).to.include.members(['checkpoint', 'stop', 'releaseLeader']);
    });

    it('reports its role as standby_leader', () => {
      expect(myStatus(tickContext(standbyLeader())).role).to.equal('standby_leader');
      expect(myStatus(tickContext({ ...standbyLeader(), config: leaderInput().config })).role).to.equal('replica');
    });

    it('its server stopped: starts it following the remote (paused: keeps the key, starts nothing)', () => {
      const facts = { ...stoppedFacts('stopped', true), timeline: 1 };
      const d = decide(standbyLeader({ facts }));
      expect(d.job).to.equal('start');
      expect(types(d)).to.deep.equal(['refreshLeader', 'remember', 'start']);
      expect(action(d, 'start')).to.deep.include({ upstream: { name: 'remote 10.0.0.9:5433', connUrl: REMOTE }, standby: true, slotName: 'dc2' });
      expect(types(decide(standbyLeader({ facts, raw: { ...SC, pause: true } })))).to.deep.equal(['refreshLeader']);
    });
  });

  describe('demote-cluster: the primary of a cluster that became a standby cluster', () => {
    const primary = (over: Partial<TickInput> & { readonly raw?: Record<string, unknown> } = {}) =>
      leaderInput({ raw: SC, cluster: cluster('node1', { config: { value: SC, revision: '3' } }), ...over, memory: { ...leaderInput().memory, primaryOnTimeline: 1, ...over.memory } });

    it('keeps the key, stops fast, is rewound from the remote, and starts as the standby leader', () => {
      const d = decide(primary());
      expect(d.job).to.equal('demote cluster');
      expect(types(d)).to.deep.equal(['refreshLeader', 'stop', 'disarmWatchdog', 'remember', 'rewind', 'start']);
      expect(action(d, 'stop').mode).to.equal('fast');
      expect(types(d)).to.not.include('releaseLeader');
      expect(action(d, 'rewind').source.connUrl).to.equal(REMOTE);
      expect(action(d, 'start')).to.deep.include({ standby: true, slotName: 'dc2' });
      expect(d.rollback).to.deep.include({ fromIndex: 4, untilIndex: 5 });
      expect(d.rollback!.actions).to.deep.equal([{ type: 'remember', patch: { rewindFailedOnTimeline: 1 } }]);
    });

    it('without pg_rewind (db.use_pg_rewind off, or an archive-only standby cluster) starts as it is', () => {
      expect(types(decide(primary({ raw: { ...SC, db: { use_pg_rewind: false } } })))).to.not.include('rewind');
      const raw = { standby_cluster: { restore_command: 'cp /a/%f %p' } };
      expect(types(decide(primary({ raw, cluster: cluster('node1', { config: { value: raw, revision: '3' } }) })))).to.not.include('rewind');
    });

    it('paused: stays the primary holding the key', () => {
      expect(decide(primary({ raw: { ...SC, pause: true } })).job).to.equal(null);
    });

    it('a stopped former primary is rewound before it starts; after a failed rewind it waits for the operator, or is rebuilt from the remote with the opt-in', () => {
      const facts = { ...stoppedFacts('stopped', true), timeline: 1 };
      const stopped = primary({ facts, memory: { ...EMPTY_MEMORY, appliedParameters: '{}', primaryOnTimeline: 1 } });
      expect(types(decide(stopped))).to.deep.equal(['refreshLeader', 'remember', 'rewind', 'start']);
      const failed = { ...stopped, memory: { ...stopped.memory, rewindFailedOnTimeline: 1 } };
      const wait = decide(failed);
      expect(types(wait)).to.deep.equal(['refreshLeader', 'remember']);
      expect(wait.publish.reinitializeRequired).to.match(/pg_rewind from remote 10\.0\.0\.9:5433 failed on timeline 1.*remove_data_directory_on_rewind_failure/);
      const optIn = { ...SC, standby_cluster: { ...SC.standby_cluster, create_replica_methods: ['pgbackrest', 'basebackup'] }, db: { remove_data_directory_on_rewind_failure: true } };
      const rebuild = decide({ ...failed, config: input({ raw: optIn }).config });
      expect(rebuild.job).to.equal('reinitialize');
      expect(action(rebuild, 'createReplica')).to.deep.equal({ type: 'createReplica', source: { name: 'remote 10.0.0.9:5433', connUrl: REMOTE }, methods: ['pgbackrest', 'basebackup'], replacing: true });
    });
  });

  describe('the leader race', () => {
    const race = (over: Partial<TickInput> & { readonly raw?: Record<string, unknown> } = {}) =>
      input({ raw: SC, cluster: standbyCluster(null), peers: new Map([['node1', null], ['node3', peerStatus('replica', 5000)]]), ...over });

    it('the winner takes the key and points its server at the remote: never a promotion', () => {
      const d = decide(race());
      expect(types(d)).to.deep.equal(['acquireLeader', 'remember', 'follow']);
      expect(d.job).to.equal('follow');
      expect(action(d, 'follow')).to.deep.include({ upstream: { name: 'remote 10.0.0.9:5433', connUrl: REMOTE }, slotName: 'dc2' });
      expect(types(d)).to.not.include('promote');
    });

    it('clears the failover key that led here; one already following the remote only takes the key', () => {
      const d = decide(race({ cluster: { ...standbyCluster(null), failover: failover(null, 'node2') } }));
      expect(types(d)).to.deep.equal(['acquireLeader', 'clearFailover', 'remember', 'follow']);
      expect(types(decide(race({ facts: replicaFacts(5000, null, { upstreamConnUrl: REMOTE }) })))).to.deep.equal(['acquireLeader', 'remember']);
    });

    it('the same eligibility rules, lag measured against the optime the standby leader published; a stale sync key does not count', () => {
      const lagging = race({ cluster: { ...standbyCluster(null), status: { optime: 50_000_000, slots: {}, revision: '5' } } });
      expect(types(decide(lagging))).to.deep.equal([]);
      const sync = { leader: 'node1', syncStandby: ['node3'], quorum: 0, revision: '8' };
      expect(decide(race({ raw: { ...SC, synchronous_mode: true }, cluster: { ...standbyCluster(null), sync } })).job).to.equal('follow');
    });

    it('paused: a running primary does not take the free key of a standby cluster', () => {
      expect(types(decide(input({ raw: { ...SC, pause: true }, cluster: standbyCluster(null), facts: primaryFacts() })))).to.deep.equal([]);
    });
  });

  describe('the replicas', () => {
    it('cascade from the standby leader', () => {
      const d = decide(input({ raw: SC, cluster: standbyCluster(), facts: replicaFacts(5000, 'elsewhere') }));
      expect(action(d, 'follow').upstream).to.deep.equal({ name: 'node1', connUrl: 'postgres://node1:5432/postgres' });
    });

    it('a diverged one is rewound from the standby leader (a pg_rewind source once it shows the cluster timeline)', () => {
      const sc = standbyCluster();
      const leader = member('node1', { role: 'standby_leader', timeline: 2 });
      const view = { ...sc, members: [leader, ...sc.members.slice(1)], history: { lines: [[1, 100, 'x', null, null] as const], revision: '4' } };
      const base = input({ raw: SC, cluster: view, facts: replicaFacts(5000, 'node1') });
      expect(decide(base).need).to.equal('peers');
      const peers = new Map([['node1', peerStatus('replica', 9000, { role: 'standby_leader', timeline: 2 })], ['node3', null]]);
      const d = decide({ ...base, peers });
      expect(d.job).to.equal('rewind');
      expect(action(d, 'rewind').source.name).to.equal('node1');
      const notReady = { ...view, members: [{ ...leader, checkpointAfterPromote: false }, ...sc.members.slice(1)] };
      expect(decide({ ...base, cluster: notReady, peers }).message).to.match(/has not finished its checkpoint/);
    });

    it('an empty one is created from the standby leader', () => {
      const d = decide(input({ raw: SC, cluster: standbyCluster(), facts: stoppedFacts('stopped', false) }));
      expect(action(d, 'createReplica').source).to.deep.equal({ name: 'node1', connUrl: 'postgres://node1:5432/postgres' });
    });

    it('an empty one in a leaderless standby cluster where no member runs copies the remote itself (without the remote\'s slot); otherwise it waits', () => {
      const nobody = { ...standbyCluster(null), members: ['node1', 'node3'].map((n) => member(n, { state: 'crashed' })) };
      const d = decide(input({ raw: SC, cluster: nobody, facts: stoppedFacts('stopped', false) }));
      expect(d.job).to.equal('create replica');
      expect(action(d, 'createReplica').source).to.deep.equal({ name: 'remote 10.0.0.9:5433', connUrl: REMOTE });
      expect(action(d, 'start')).to.deep.include({ upstream: { name: 'remote 10.0.0.9:5433', connUrl: REMOTE }, standby: true });
      expect(action(d, 'start').slotName).to.equal(undefined);
      const someoneRuns = decide(input({ raw: SC, cluster: standbyCluster(null), facts: stoppedFacts('stopped', false) }));
      expect(someoneRuns.publish.waitingFor).to.equal('a leader to create a replica from');
      expect(decide(input({ raw: {}, cluster: { ...nobody, config: { value: {}, revision: '1' } }, facts: stoppedFacts('stopped', false) })).publish.waitingFor).to.equal('a leader to create a replica from');
    });
  });

  describe('promote-cluster', () => {
    it('once standby_cluster is gone, the standby leader promotes and records the new timeline', () => {
      const d = decide(standbyLeader({ raw: {}, cluster: { ...standbyCluster(), config: { value: {}, revision: '5' } } }));
      expect(d.job).to.equal('promote');
      expect(types(d)).to.include.members(['refreshLeader', 'promote', 'recordPromotion']);
    });
  });

  describe('bootstrap', () => {
    const empty = (raw: Record<string, unknown>) => input({ raw, cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false), local: { ...input().local, bootstrapDcs: raw } });

    it('copies the remote instead of running initdb, then takes the key and starts as the standby leader; the initialize key gets the copy\'s system identifier', () => {
      const d = decide(empty(SC));
      expect(d.job).to.equal('bootstrap');
      expect(types(d)).to.deep.equal(['createInitialize', 'remember', 'configure', 'createReplica', 'acquireLeader', 'start', 'writeInitialize', 'writeConfig', 'remember']);
      expect(types(d)).to.not.include('initdb');
      expect(action(d, 'createReplica')).to.deep.equal({ type: 'createReplica', source: { name: 'remote 10.0.0.9:5433', connUrl: REMOTE } });
      expect(action(d, 'start')).to.deep.include({ standby: true, slotName: 'dc2' });
      expect(d.rollback!.actions.map((a) => a.type)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader', 'removeData', 'deleteInitialize']);
      expect(d.rollback!.untilIndex, 'undone up to the start only').to.equal(types(d).indexOf('start') + 1);
    });

    it('the standby leader finishes what a failed bootstrap left: the initialize key and the configuration', () => {
      const d = decide(standbyLeader({ cluster: { ...standbyCluster(), initialize: '', config: null } }));
      expect(types(d)).to.include.members(['writeInitialize', 'writeConfig']);
    });

    it('an archive-only standby cluster is created by the create_replica_methods that need no server', () => {
      const raw = { standby_cluster: { restore_command: 'cp /a/%f %p', create_replica_methods: ['restore'] } };
      expect(action(decide(empty(raw)), 'createReplica')).to.deep.equal({ type: 'createReplica', source: null, methods: ['restore'] });
    });

    it('the other members wait while the first one copies the remote (creating replica counts as bootstrapping)', () => {
      const copying = { ...EMPTY_CLUSTER, initialize: '', initializeRevision: '1', config: null, members: [member('node1', { state: 'creating replica' })] };
      const d = decide(input({ raw: SC, cluster: copying, facts: stoppedFacts('stopped', false), memory: { ...EMPTY_MEMORY, initializeSeen: { revision: '1', since: NOW - 120_000 } } }));
      expect(types(d)).to.deep.equal([]);
      expect(d.publish.waitingFor).to.match(/finish bootstrapping/);
    });
  });

  describe('recovery settings', () => {
    it('restore_command and archive_cleanup_command on every member, recovery_min_apply_delay on the standby leader only, over the local recovery_conf', () => {
      const raw = { standby_cluster: { host: 'h', restore_command: 'cp /a/%f %p', archive_cleanup_command: 'pg_archivecleanup /a %r', recovery_min_apply_delay: '5min' }, db: { parameters: { work_mem: '8MB' } } };
      const local = { ...input().local, recoveryConf: { restore_command: 'local', recovery_min_apply_delay: 1000 }, parameters: { shared_buffers: '256MB' } };
      const replica = desiredParameters(tickContext(input({ raw, local })));
      expect(replica).to.deep.equal({ restore_command: 'cp /a/%f %p', archive_cleanup_command: 'pg_archivecleanup /a %r', recovery_min_apply_delay: 1000, work_mem: '8MB', shared_buffers: '256MB' });
      const leader = desiredParameters(tickContext(leaderInput({ raw, local })));
      expect(leader['recovery_min_apply_delay']).to.equal('5min');
      expect(desiredParameters(tickContext(input({ local })))).to.deep.equal({ restore_command: 'local', recovery_min_apply_delay: 1000, shared_buffers: '256MB' });
    });
  });

  it('remoteUpstream: host and port (5432 by default, IPv6 in brackets); none for an archive', () => {
    expect(remoteUpstream({ host: 'dc1.example' })).to.deep.equal({ name: 'remote dc1.example:5432', connUrl: 'postgres://dc1.example:5432/postgres' });
    expect(remoteUpstream({ host: '::1', port: 6432 })!.connUrl).to.equal('postgres://[::1]:6432/postgres');
    expect(remoteUpstream({ restore_command: 'x' })).to.equal(null);
  });
});
