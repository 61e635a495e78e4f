import { expect } from 'chai';
import { stoppedFacts } from '../../../../../src/domain/cluster/model/facts.js';
import { hasDiverged, historyAfterPromotion, historyFromServer, PROMOTION_REASON } from '../../../../../src/domain/cluster/model/history.js';
import { formatServerVersion, restartConditionProblem, versionNumber } from '../../../../../src/domain/cluster/rules/restart-conditions.js';
import { primaryFacts, replicaFacts } from '../ha/fixtures.js';

describe('timeline history and divergence', () => {
  const promotion = { timeline: 1, lsn: 5000, at: '2024-01-01T00:00:00.000Z', leader: 'node2' };

  it('appends [old timeline, switch lsn, reason, time, new leader], preferring the server history files', () => {
    expect(historyAfterPromotion([], [], promotion, 0)).to.deep.equal([[1, 5000, PROMOTION_REASON, '2024-01-01T00:00:00.000Z', 'node2']]);
    expect(historyAfterPromotion([], [[1, 4990, 'x', null, null]], promotion, 0)).to.deep.equal([[1, 4990, 'x', '2024-01-01T00:00:00.000Z', 'node2']]);
  });

  it('replaces a lost branch of the same timeline, and keeps at most max_timelines_history lines', () => {
    const prev = [[1, 100, 'r', 't1', 'a'] as const, [2, 200, 'r', 't2', 'b'] as const];
    expect(historyAfterPromotion(prev, [], { ...promotion, timeline: 2, lsn: 150 }, 0)).to.deep.equal([prev[0], [2, 150, PROMOTION_REASON, promotion.at, 'node2']]);
    expect(historyAfterPromotion(prev, [], { ...promotion, timeline: 3, lsn: 300 }, 2)).to.have.length(2);
  });

  it('historyFromServer: a standby leader\'s history files, keeping the dates and leaders of matching lines; null when nothing changes', () => {
    const prev = [[1, 100, 'r', 't1', 'a'] as const];
    const server = [[1, 100, 'r', null, null] as const, [2, 200, 'no recovery target specified', null, null] as const];
    expect(historyFromServer(prev, server, 0)).to.deep.equal([prev[0], server[1]]);
    expect(historyFromServer([prev[0], server[1]], server, 0)).to.equal(null);
    expect(historyFromServer(prev, [], 0)).to.equal(null);
    expect(historyFromServer([], server, 1)).to.deep.equal([server[1]]);
    // A line of the same timeline with another switch point (the remote's own branch) replaces ours.
    expect(historyFromServer([[1, 90, 'r', 't0', 'b']], server, 0)).to.deep.equal(server);
  });

  it('hasDiverged: past the branch point, or on a timeline the leader never had', () => {
    const history = [[1, 4000, 'r', null, null] as const];
    expect(hasDiverged(1, 5000, 2, history)).to.equal(true);
    expect(hasDiverged(1, 4000, 2, history)).to.equal(false);
    expect(hasDiverged(3, 1, 2, history)).to.equal(true);
    expect(hasDiverged(2, 9999, 2, history)).to.equal(false);
    expect(hasDiverged(1, 5000, 3, [])).to.equal(null);
  });
});

describe('restart conditions', () => {
  it('parses versions like server_version_num', () => {
    expect(versionNumber('15.2')).to.equal(150002);
    expect(versionNumber('9.6.24')).to.equal(90624);
    expect(versionNumber('x')).to.equal(null);
    expect([150018, 170000, 90624].map(formatServerVersion)).to.deep.equal(['15.18', '17.0', '9.6.24']);
  });

  it('checks restart_pending, role and db_version', () => {
    expect(restartConditionProblem({}, replicaFacts(), null)).to.equal(null);
    expect(restartConditionProblem({ restart_pending: true }, replicaFacts(), null)).to.match(/pending/);
    expect(restartConditionProblem({ restart_pending: true }, replicaFacts(1, 'node1', { pendingRestart: true }), null)).to.equal(null);
    expect(restartConditionProblem({ role: 'primary' }, primaryFacts(), 'primary')).to.equal(null);
    expect(restartConditionProblem({ db_version: '15.0' }, { ...primaryFacts(), serverVersion: 150018 }, 'primary')).to.equal('the server version 15.18 is not lower than 15.0');
    expect(restartConditionProblem({ db_version: '16.1' }, primaryFacts(), 'primary')).to.equal(null);
  });

  it('role: the leader of a standby cluster is standby_leader, not replica; a leader whose server is down keeps its role', () => {
    expect(restartConditionProblem({ role: 'standby_leader' }, replicaFacts(), 'standby_leader')).to.equal(null);
    expect(restartConditionProblem({ role: 'replica' }, replicaFacts(), 'standby_leader')).to.equal("the node's role is standby_leader, not replica");
    expect(restartConditionProblem({ role: 'replica' }, replicaFacts(), null)).to.equal(null);
    expect(restartConditionProblem({ role: 'standby_leader' }, replicaFacts(), null)).to.equal("the node's role is replica, not standby_leader");
    expect(restartConditionProblem({ role: 'primary' }, stoppedFacts('stopped', true), 'primary')).to.equal(null);
    expect(restartConditionProblem({ role: 'replica' }, stoppedFacts('stopped', true), null)).to.equal(null);
  });
});
