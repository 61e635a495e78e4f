import { expect } from 'chai';
import { stoppedFacts } from '../../../../../src/domain/cluster/model/facts.js';
import { buildStatus, clusterViewStale, statusRole } from '../../../../../src/domain/cluster/model/status.js';
import { checkHealth } from '../../../../../src/domain/cluster/rules/health.js';
import { NOW, clusterView, config, nodeSettings, primaryFacts, replicaFacts, snapshot, statusInput, sync } from '../fixtures.js';

/** Documented key order. */
const SPEC_ORDER = [
  'state', 'postmaster_start_time', 'role', 'server_version', 'xlog', 'sync_standby', 'quorum_standby', 'timeline',
  'replication_state', 'replication', 'pause', 'cluster_unlocked', 'failsafe_mode_is_active', 'dcs_last_seen', 'tags',
  'database_system_identifier', 'pending_restart', 'pending_restart_reason', 'scheduled_restart', 'watchdog_failed', 'svc',
];

function expectSpecOrder(doc: object): void {
  const keys = Object.keys(doc);
  expect(keys).to.deep.equal(SPEC_ORDER.filter((k) => keys.includes(k)));
}

const replicaInput = (over = {}) =>
  statusInput({ facts: replicaFacts(), isLeader: false, cluster: clusterView({ leader: 'node0' }), ...over });

describe('domain/cluster/status: buildStatus', () => {
  it('a primary: state, start time, role, version, xlog location, timeline, identifiers, svc', () => {
    const doc = buildStatus(statusInput());
    expect(doc).to.deep.equal({
      state: 'running',
      postmaster_start_time: '2029-12-31T23:00:00.000+00:00',
      role: 'primary',
      server_version: 150018,
      xlog: { location: 100_000_000 },
      timeline: 2,
      dcs_last_seen: NOW / 1000,
      database_system_identifier: '7300000000000000001',
      svc: { version: '0.1.0', scope: 'demo', name: 'node1' },
    });
    expectSpecOrder(doc);
  });

  it('a new cluster\'s primary whose post_bootstrap script has not succeeded says so (bootstrap_unfinished): no primary or leader health check passes', () => {
    const doc = buildStatus(statusInput({ facts: { ...primaryFacts(), bootstrapUnfinished: true } }));
    expect(doc).to.include({ state: 'running', role: 'primary', bootstrap_unfinished: true });
    const leaderCluster = clusterView({ leader: 'node1' });
    expect(checkHealth('primary', snapshot({ facts: { ...primaryFacts(), bootstrapUnfinished: true }, leader: true, cluster: leaderCluster }), {}, NOW)).to.equal(503);
    for (const endpoint of ['leader', 'read_only', 'read_only_sync'] as const) {
      expect(checkHealth(endpoint, snapshot({ facts: { ...primaryFacts(), bootstrapUnfinished: true }, leader: true, cluster: leaderCluster }), {}, NOW), endpoint).to.equal(503);
    }
    expect(checkHealth('primary', snapshot({ facts: primaryFacts(), leader: true, cluster: leaderCluster }), {}, NOW)).to.equal(200);
    expect(buildStatus(statusInput())).to.not.have.property('bootstrap_unfinished');
  });

  it('a replica: xlog with received, replayed, timestamp and paused; replication_state', () => {
    const doc = buildStatus(replicaInput());
    expect(doc.role).to.equal('replica');
    expect(doc.xlog).to.deep.equal({ received_location: 99_000_000, replayed_location: 98_000_000, replayed_timestamp: '2029-12-31T23:59:59.000+00:00', paused: false });
    expect(doc.replication_state).to.equal('streaming');
    expect(doc).not.to.have.property('replication');
    expectSpecOrder(doc);
  });

  it('a replica in archive recovery reports it, and has received at least what it replayed', () => {
    const doc = buildStatus(replicaInput({ facts: replicaFacts({ replicationState: 'in archive recovery', receivedLocation: null }) }));
    expect(doc.replication_state).to.equal('in archive recovery');
    expect(doc.xlog).to.deep.include({ received_location: 98_000_000, replayed_location: 98_000_000 });
  });

  it('the leader of a standby cluster reports standby_leader', () => {
    expect(buildStatus(replicaInput({ isLeader: true, standbyCluster: true })).role).to.equal('standby_leader');
    expect(buildStatus(replicaInput({ isLeader: true, standbyCluster: false })).role).to.equal('replica');
    expect(buildStatus(replicaInput({ isLeader: false, standbyCluster: true })).role).to.equal('replica');
  });

  it('a primary lists its standbys under replication, with the documented fields only', () => {
    const row = { usename: 'replicator', application_name: 'node2', client_addr: '127.0.0.1', state: 'streaming', sync_state: 'async', sync_priority: 0 };
    const doc = buildStatus(statusInput({ facts: primaryFacts({ replication: [{ ...row, write_lsn: 5, flush_lsn: 4, replay_lsn: 3 }] }) }));
    expect(doc.replication).to.deep.equal([row]);
    expectSpecOrder(doc);
  });

  it('sync_standby: true for a replica listed in the sync key', () => {
    const doc = buildStatus(replicaInput({ cluster: clusterView({ sync: sync(['node1']) }) }));
    expect(doc.sync_standby).to.equal(true);
    expect(doc).not.to.have.property('quorum_standby');
    expectSpecOrder(doc);
  });

  it('quorum_standby: true instead in quorum mode', () => {
    const doc = buildStatus(replicaInput({ config: config({ synchronous_mode: 'quorum' }), cluster: clusterView({ sync: sync(['node1']) }) }));
    expect(doc.quorum_standby).to.equal(true);
    expect(doc).not.to.have.property('sync_standby');
  });

  it('no sync flag for a replica absent from the sync key', () => {
    const doc = buildStatus(replicaInput({ cluster: clusterView({ sync: sync(['node2']) }) }));
    expect(doc).not.to.have.any.keys('sync_standby', 'quorum_standby');
  });

  it('pause: true while the cluster is paused', () => {
    expect(buildStatus(statusInput({ config: config({ pause: true }) })).pause).to.equal(true);
    expect(buildStatus(statusInput())).not.to.have.property('pause');
  });

  it('cluster_unlocked: absent on the lock holder even when its published view predates the acquisition', () => {
    expect(buildStatus(statusInput({ isLeader: true, cluster: clusterView({ leader: null }) })).cluster_unlocked).to.equal(undefined);
  });

  it('cluster_unlocked: true when the cluster view has no leader (or there is no view yet)', () => {
    expect(buildStatus(replicaInput({ cluster: clusterView({ leader: null }) })).cluster_unlocked).to.equal(true);
    expect(buildStatus(replicaInput({ cluster: null })).cluster_unlocked).to.equal(true);
    expect(buildStatus(replicaInput())).not.to.have.property('cluster_unlocked');
  });

  it('cluster_unlocked: true once the last view of the cluster is older than ttl (the DCS has not answered since), as Patroni after a failed read', () => {
    // The last view still names a leader: within ttl of it, the lock may still be held.
    expect(buildStatus(replicaInput({ clusterViewStale: false }))).not.to.have.property('cluster_unlocked');
    const stale = buildStatus(replicaInput({ clusterViewStale: true }));
    expect(stale.cluster_unlocked).to.equal(true);
    expectSpecOrder(stale);
    // A primary whose lock ran out (it stepped down): the same.
    expect(buildStatus(statusInput({ isLeader: false, clusterViewStale: true })).cluster_unlocked).to.equal(true);
    // A lock this node still holds, renewed in the DCS, is held whatever the age of the view.
    expect(buildStatus(statusInput({ isLeader: true, clusterViewStale: true }))).not.to.have.property('cluster_unlocked');
    // A lock kept only by failsafe: unlocked, with failsafe (the documented variant).
    expect(buildStatus(statusInput({ isLeader: true, failsafeActive: true, clusterViewStale: true }))).to.include({ cluster_unlocked: true, failsafe_mode_is_active: true });
  });

  it('clusterViewStale: a view read more than ttl ago; never read is no stale view (there is none: cluster_unlocked says so already)', () => {
    expect(clusterViewStale(NOW - 30_000, NOW, 30)).to.equal(false);
    expect(clusterViewStale(NOW - 30_001, NOW, 30)).to.equal(true);
    expect(clusterViewStale(NOW - 1000, NOW, 30)).to.equal(false);
    expect(clusterViewStale(null, NOW, 30)).to.equal(false);
  });

  it('failsafe_mode_is_active: true with an unlocked cluster (the failsafe variant)', () => {
    const doc = buildStatus(statusInput({ cluster: clusterView({ leader: null }), failsafeActive: true }));
    expect(doc).to.include({ cluster_unlocked: true, failsafe_mode_is_active: true });
    expectSpecOrder(doc);
  });

  it('tags only when non-empty', () => {
    expect(buildStatus(statusInput())).not.to.have.property('tags');
    expect(buildStatus(statusInput({ node: nodeSettings({ tags: { zone: 'a', nofailover: false } }) })).tags).to.deep.equal({ zone: 'a', nofailover: false });
  });

  it('pending_restart and its reason', () => {
    const reason = { shared_buffers: { old_value: '128MB', new_value: '256MB' } };
    const doc = buildStatus(statusInput({ facts: primaryFacts({ pendingRestart: true, pendingRestartReason: reason }) }));
    expect(doc.pending_restart).to.equal(true);
    expect(doc.pending_restart_reason).to.deep.equal(reason);
    expectSpecOrder(doc);
  });

  it('scheduled_restart with its filters, and watchdog_failed', () => {
    const scheduledRestart = { schedule: '2030-01-01T01:00:00+00:00', role: 'primary' };
    const doc = buildStatus(statusInput({ scheduledRestart, watchdogFailed: true }));
    expect(doc.scheduled_restart).to.deep.equal(scheduledRestart);
    expect(doc.watchdog_failed).to.equal(true);
    expectSpecOrder(doc);
  });

  it('silent_primary: only while the server still runs without answering (once stopped, the others may promote)', () => {
    const silent = { ...stoppedFacts('running', true), systemIdentifier: '7300000000000000001' };
    expect(buildStatus(replicaInput({ facts: silent, silentPrimary: true })).silent_primary).to.equal(true);
    expect(buildStatus(replicaInput({ facts: { ...silent, state: 'stop_failed' }, silentPrimary: true })).silent_primary).to.equal(true);
    expect(buildStatus(replicaInput({ facts: { ...silent, state: 'stopped' }, silentPrimary: true }))).to.not.have.property('silent_primary');
    expect(buildStatus(replicaInput({ facts: silent }))).to.not.have.property('silent_primary');
  });

  it('no dcs_last_seen before the first DCS contact', () => {
    expect(buildStatus(statusInput({ dcsLastSeen: null }))).not.to.have.property('dcs_last_seen');
  });

  it('every optional key at once still follows the spec order', () => {
    const doc = buildStatus(
      replicaInput({
        config: config({ pause: true }),
        cluster: clusterView({ leader: null, sync: sync(['node1']) }),
        failsafeActive: true,
        node: nodeSettings({ tags: { zone: 'b' } }),
        facts: replicaFacts({ pendingRestart: true, pendingRestartReason: { a: { old_value: '1', new_value: '2' } } }),
        scheduledRestart: { schedule: '2030-01-01T01:00:00Z' },
        watchdogFailed: true,
      }),
    );
    expect(Object.keys(doc)).to.have.length(19);
    expectSpecOrder(doc);
  });

  describe('while the database does not run', () => {
    it('no xlog, no server details; state from the adapter', () => {
      const doc = buildStatus(statusInput({ facts: stoppedFacts('crashed', true), isLeader: false }));
      expect(doc).not.to.have.any.keys('xlog', 'postmaster_start_time', 'server_version', 'timeline', 'replication_state');
      expect(doc.state).to.equal('crashed');
      expectSpecOrder(doc);
    });

    it('uses the documented human state strings', () => {
      expect(buildStatus(statusInput({ facts: stoppedFacts('initdb', false) })).state).to.equal('initializing new cluster');
      expect(buildStatus(statusInput({ facts: stoppedFacts('start_failed', true) })).state).to.equal('start failed');
    });

    it('role uninitialized without a data directory', () => {
      expect(buildStatus(statusInput({ facts: stoppedFacts('stopped', false) })).role).to.equal('uninitialized');
    });

    it('role demoted for an initialized server that is down', () => {
      expect(buildStatus(statusInput({ facts: stoppedFacts('stopped', true) })).role).to.equal('demoted');
    });

    it('the transitional role the HA loop names wins (promoted / demoted)', () => {
      expect(buildStatus(statusInput({ facts: stoppedFacts('starting', true), transitionalRole: 'promoted' })).role).to.equal('promoted');
      expect(buildStatus(statusInput({ facts: stoppedFacts('stopping', true), transitionalRole: 'demoted' })).role).to.equal('demoted');
    });

    it('a running server ignores a stale transitional role', () => {
      expect(statusRole({ facts: primaryFacts(), isLeader: true, standbyCluster: false, transitionalRole: 'demoted' })).to.equal('primary');
    });
  });

  it('returns a frozen document', () => {
    expect(Object.isFrozen(buildStatus(statusInput()))).to.equal(true);
  });
});
