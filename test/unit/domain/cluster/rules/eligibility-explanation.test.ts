import { expect } from 'chai';
import { eligibility, type CandidateInfo, type ElectionContext } from '../../../../../src/domain/cluster/rules/eligibility.js';
import { explainCandidate, explainMembers, explanationText, likelyWinner, ownIneligibility } from '../../../../../src/domain/cluster/rules/eligibility-explanation.js';
import type { NodeStatus } from '../../../../../src/domain/cluster/model/status.js';
import { clusterView, config, sync } from '../fixtures.js';
import { member } from '../ha/fixtures.js';

const svc = { version: '0.1.0', scope: 'demo', name: 'node2' };

function replica(position: number, timeline = 3, over: Partial<NodeStatus> = {}): NodeStatus {
  return {
    state: 'running',
    role: 'replica',
    xlog: { received_location: position, replayed_location: position, replayed_timestamp: null, paused: false },
    timeline,
    replication_state: 'streaming',
    svc,
    ...over,
  };
}

function ctx(over: Partial<ElectionContext> = {}): ElectionContext {
  return { kind: 'automatic', clusterHasLeader: false, config: config(), clusterTimeline: 3, leaderOptime: 100_000_000, sync: null, ...over };
}

const c = (name: string, status: NodeStatus | null, tags: CandidateInfo['tags'] = {}): CandidateInfo => ({ name, status, tags });

describe('domain/cluster/rules: eligibility explanations', () => {
  it('an eligible member has no reasons and its lag, timeline and position', () => {
    const e = explainCandidate(c('node2', replica(99_999_000)), ctx());
    expect(e).to.deep.equal({ name: 'node2', eligible: true, reasons: [], lag_bytes: 1000, timeline: 3, wal_position: 99_999_000, failover_priority: 1 });
  });

  it('lag over maximum_lag_on_failover names both numbers', () => {
    const e = explainCandidate(c('node2', replica(1000)), ctx());
    expect(e.eligible).to.equal(false);
    expect(e.reasons).to.deep.equal([
      { code: 'lag_exceeded', detail: 'lag 99999000 bytes exceeds maximum_lag_on_failover 1048576 bytes', lag_bytes: 99_999_000, maximum_lag_on_failover: 1_048_576 },
    ]);
  });

  it('a wrong timeline names the member timeline and the cluster timeline', () => {
    const e = explainCandidate(c('node2', replica(100_000_000, 2)), ctx({ config: config({ check_timeline: true }) }));
    expect(e.reasons).to.deep.equal([{ code: 'timeline_behind', detail: 'timeline 2 is below the cluster timeline 3', timeline: 2, cluster_timeline: 3 }]);
  });

  it('unreachable and not running are told apart; nofailover, watchdog and the synchronous set are named', () => {
    expect(explainCandidate(c('node2', null), ctx()).reasons.map((r) => r.code)).to.deep.equal(['unreachable']);
    const { xlog: _x, ...down } = replica(0);
    expect(explainCandidate(c('node2', { ...down, state: 'stopped' }), ctx()).reasons).to.deep.equal([{ code: 'not_running', detail: 'its database is not running (state stopped)' }]);
    const e = explainCandidate(c('node2', replica(100_000_000, 3, { watchdog_failed: true }), { nofailover: true }), ctx({ kind: 'switchover', clusterHasLeader: true, config: config({ synchronous_mode: true }), sync: sync(['node3']) }));
    expect(e.reasons.map((r) => r.code)).to.deep.equal(['nofailover', 'watchdog_failed', 'not_synchronous']);
    expect(e.reasons[2]).to.deep.include({ synchronous_members: ['node3'] });
    expect(e.reasons[2]!.detail).to.equal('not in the synchronous set (synchronous members: node3)');
    // A key naming its primary and no standby: the detail says who holds the commits, and the way out.
    const alone = explainCandidate(c('node2', replica(100_000_000)), ctx({ config: config({ synchronous_mode: true }), sync: { ...sync([]), leader: 'node3' } }));
    expect(alone.reasons[0]!.detail).to.match(/the sync key names no standby, so only node3 is known to hold every acknowledged commit \(start it again, or fail over by hand/);
  });

  it('the verdict is always the rules\' own, for every combination', () => {
    const statuses = [null, replica(1000), replica(100_000_000), replica(100_000_000, 2), replica(100_000_000, 3, { watchdog_failed: true })];
    const kinds: ElectionContext[] = [ctx(), ctx({ kind: 'switchover', clusterHasLeader: true }), ctx({ kind: 'failover' }), ctx({ config: config({ check_timeline: true, synchronous_mode: true }), sync: sync(['node2']) })];
    for (const s of statuses) {
      for (const tags of [{}, { nofailover: true }] as CandidateInfo['tags'][]) {
        for (const k of kinds) {
          const e = explainCandidate(c('node2', s, tags), k);
          const v = eligibility(c('node2', s, tags), k);
          expect(e.eligible).to.equal(v.eligible);
          expect(e.reasons.map((r) => (r.code === 'not_running' ? 'unreachable' : r.code))).to.deep.equal(v.reasons);
        }
      }
    }
  });

  it('explainMembers lists every member sorted, the leader of a switchover as stepping down', () => {
    const cluster = { ...clusterView({ leader: 'node1' }), members: [member('node3'), member('node1'), member('node2')] };
    const statuses = new Map<string, NodeStatus | null>([['node1', null], ['node2', replica(100_000_000)], ['node3', null]]);
    const all = explainMembers('switchover', cluster, config(), statuses);
    expect(all.map((e) => [e.name, e.eligible, e.reasons.map((r) => r.code)])).to.deep.equal([
      ['node1', false, ['leader']],
      ['node2', true, []],
      ['node3', false, ['unreachable']],
    ]);
    expect(explanationText(all)).to.equal('node1: holds the leader key (it is the one stepping down); node2: eligible; node3: its REST API did not answer');
  });

  it('likelyWinner picks the latest timeline, then the most WAL, then the first name; null when nobody is eligible', () => {
    const e = (name: string, eligible: boolean, timeline: number, wal: number) => ({ name, eligible, reasons: [], lag_bytes: 0, timeline, wal_position: wal, failover_priority: 1 });
    expect(likelyWinner([e('a', true, 3, 10), e('b', true, 3, 20), e('c', false, 4, 99)])!.name).to.equal('b');
    expect(likelyWinner([e('b', true, 3, 20), e('a', true, 3, 20)])!.name).to.equal('a');
    expect(likelyWinner([e('a', true, 2, 99), e('b', true, 3, 1)])!.name).to.equal('b');
    expect(likelyWinner([e('a', false, 3, 1)])).to.equal(null);
  });

  it('ownIneligibility: null on the leader and for an eligible node, the reasons otherwise', () => {
    const view = clusterView({ leader: 'node1' });
    expect(ownIneligibility('node2', replica(1000), {}, view, config(), true)).to.equal(null);
    expect(ownIneligibility('node2', replica(100_000_000), {}, view, config(), false)).to.equal(null);
    expect(ownIneligibility('node2', replica(100_000_000), { nofailover: true }, view, config(), false)!.map((r) => r.code)).to.deep.equal(['nofailover']);
    expect(ownIneligibility('node2', replica(1000), {}, view, config(), false)!.map((r) => r.code)).to.deep.equal(['lag_exceeded']);
  });
});
