import { expect } from 'chai';
import { EMPTY_CLUSTER, type Cluster, type Member } from '../../../../../src/domain/cluster/model/cluster.js';
import { clusterDocument, clusterRoleOf, connHostPort } from '../../../../../src/domain/cluster/model/cluster-document.js';
import { resolveConfig } from '../../../../../src/domain/cluster/config/config.js';
import {
  candidatesToProbe,
  checkManualRequest,
  clusterTimeline,
  manualFailoverOutcome,
  ManualFailoverError,
  type ManualFailoverPlan,
} from '../../../../../src/domain/cluster/rules/manual-failover.js';
import { NOW } from '../../../adapters/http/support.js';

function member(name: string, over: Partial<Member> = {}): Member {
  return {
    name,
    revision: '1',
    connUrl: `postgres://10.0.0.${name.slice(-1)}:5432/postgres`,
    apiUrl: `http://10.0.0.${name.slice(-1)}:8008`,
    state: 'running',
    role: 'replica',
    version: '1.2.0',
    xlogLocation: null,
    receiveLsn: null,
    replayLsn: null,
    replicationState: null,
    timeline: 3,
    tags: {},
    pendingRestart: false,
    pendingRestartReason: null,
    scheduledRestart: null,
    ...over,
  };
}

function cluster(over: Partial<Cluster> = {}): Cluster {
  return { ...EMPTY_CLUSTER, leader: { name: 'node0', revision: '1' }, members: [member('node0', { role: 'primary' }), member('node1'), member('node2')], ...over };
}

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    return (e as ManualFailoverError).code;
  }
  return 'none';
};

describe('manual failover checks (domain)', () => {
  it('a failover naming a leader becomes a switchover; an empty leader or candidate counts as absent, an empty scheduled_at is malformed', () => {
    expect(checkManualRequest({ action: 'failover', leader: 'node0', candidate: 'node1', scheduledAt: null }, false, NOW).action).to.equal('switchover');
    expect(code(() => checkManualRequest({ action: 'switchover', leader: '', candidate: null, scheduledAt: null }, false, NOW))).to.equal('missing_leader');
    expect(code(() => checkManualRequest({ action: 'switchover', leader: 'node0', candidate: null, scheduledAt: '' }, false, NOW))).to.equal('invalid_schedule');
    expect(checkManualRequest({ action: 'switchover', leader: 'node0', candidate: '', scheduledAt: null }, false, NOW)).to.deep.equal({
      action: 'switchover',
      leader: 'node0',
      candidate: null,
      scheduledAt: null,
    });
  });

  it('members to probe: the candidate; else sync members (sync mode); else everyone but the leader', () => {
    const plan: ManualFailoverPlan = { action: 'switchover', leader: 'node0', candidate: null, scheduledAt: null };
    expect(candidatesToProbe(plan, cluster(), resolveConfig({})).map((m) => m.name)).to.deep.equal(['node1', 'node2']);
    const sync = cluster({ sync: { leader: 'node0', syncStandby: ['node2'], quorum: 0, revision: '2' } });
    expect(candidatesToProbe(plan, sync, resolveConfig({ synchronous_mode: true })).map((m) => m.name)).to.deep.equal(['node2']);
    expect(code(() => candidatesToProbe(plan, cluster({ members: [member('node0')] }), resolveConfig({})))).to.equal('no_candidates');
  });

  it('cluster timeline: the leader member, else one past the last history line', () => {
    expect(clusterTimeline(cluster())).to.equal(3);
    expect(clusterTimeline(cluster({ leader: null, history: { lines: [[4, 100, 'x', null, null]], revision: '1' } }))).to.equal(5);
    expect(clusterTimeline(cluster({ leader: null }))).to.equal(null);
  });

  it('outcome: a new leader is done, the key consumed without one is failed, else still running', () => {
    const plan: ManualFailoverPlan = { action: 'failover', leader: null, candidate: 'node2', scheduledAt: null };
    expect(manualFailoverOutcome(plan, 'node0', cluster({ leader: { name: 'node2', revision: '9' } }))).to.deep.equal({
      done: true,
      leader: 'node2',
      message: 'Successfully failed over to "node2"',
    });
    expect(manualFailoverOutcome(plan, 'node0', cluster({ leader: { name: 'node1', revision: '9' } })).done).to.equal(true);
    expect(manualFailoverOutcome(plan, 'node0', cluster())).to.deep.equal({ done: false, failed: true });
    const pending = cluster({ failover: { leader: null, member: 'node2', scheduledAt: null, revision: '5' } });
    expect(manualFailoverOutcome(plan, 'node0', pending)).to.deep.equal({ done: false, failed: false });
  });
});

describe('cluster document (domain)', () => {
  it('roles: leader, standby_leader in a standby cluster, sync and quorum standbys', () => {
    const sync = { leader: 'node0', syncStandby: ['node1'], quorum: 1, revision: '2' };
    expect(clusterRoleOf(cluster({ sync }), member('node1'))).to.equal('sync_standby');
    expect(clusterRoleOf(cluster({ sync, config: { value: { synchronous_mode: 'quorum' }, revision: '1' } }), member('node1'))).to.equal('quorum_standby');
    expect(clusterRoleOf(cluster({ config: { value: { standby_cluster: { host: 'x' } }, revision: '1' } }), member('node0'))).to.equal('standby_leader');
    expect(clusterRoleOf(cluster(), member('node0'))).to.equal('leader');
    // A sync key written by a former leader does not count.
    expect(clusterRoleOf(cluster({ sync: { ...sync, leader: 'node9' } }), member('node1'))).to.equal('replica');
  });

  it('host and port from conn_url, IPv6 and credentials included', () => {
    expect(connHostPort('postgres://u:p@[fd00::1]:5433/postgres')).to.deep.equal({ host: 'fd00::1', port: 5433 });
    expect(connHostPort('postgres://db.example:5432')).to.deep.equal({ host: 'db.example', port: 5432 });
    expect(connHostPort('garbage')).to.deep.equal({});
  });

  it('a cascading replica shows the member it streams from (upstream); others and the leader show none', () => {
    const members = [member('node1', { role: 'primary' }), member('node2'), member('node3', { tags: { replicatefrom: 'node2' } })];
    const doc = clusterDocument('demo', cluster({ leader: { name: 'node1', revision: '1' }, members }));
    expect(doc.members.map((m) => m.upstream ?? null)).to.deep.equal([null, null, 'node2']);
    const fallback = clusterDocument('demo', cluster({ leader: { name: 'node1', revision: '1' }, members: [members[0]!, member('node2', { state: 'stopped' }), members[2]!] }));
    expect(fallback.members[2]).to.not.have.property('upstream');
  });

  it('a leaderless cluster: every member has lag fields, all unknown without a status key', () => {
    const doc = clusterDocument('demo', cluster({ leader: null, members: [member('node1', { replayLsn: 10, receiveLsn: 20 })] }));
    expect(doc.members[0]).to.deep.include({ role: 'replica', lsn: '0/14', lag: 'unknown', receive_lsn: '0/14', replay_lsn: '0/A', replay_lag: 'unknown' });
    expect(doc).to.not.have.property('pause');
    expect(doc).to.not.have.property('scheduled_switchover');
  });

  it('a restarted receiver that reports the start of its segment shows what the replica holds (its replay), not megabytes of lag', () => {
    const doc = clusterDocument('demo', cluster({ leader: null, members: [member('node1', { receiveLsn: 0x4000000, replayLsn: 0x404be90 })] }));
    expect(doc.members[0]).to.deep.include({ receive_lsn: '0/404BE90', replay_lsn: '0/404BE90' });
  });
});
