import { expect } from 'chai';
import { candidateLag, eligibility, statusWalPosition, type CandidateInfo, type ElectionContext } from '../../../../../src/domain/cluster/rules/eligibility.js';
import type { NodeStatus } from '../../../../../src/domain/cluster/model/status.js';
import { config, sync } from '../fixtures.js';

const svc = { version: '0.1.0', scope: 'demo', name: 'node2' };

function replicaStatus(over: Partial<NodeStatus> & { received?: number | null; replayed?: number | null } = {}): NodeStatus {
  const { received = 100_000_000, replayed = 100_000_000, ...rest } = over;
  return {
    state: 'running',
    role: 'replica',
    xlog: { received_location: received, replayed_location: replayed, replayed_timestamp: null, paused: false },
    timeline: 3,
    replication_state: 'streaming',
    svc,
    ...rest,
  };
}

function candidate(over: Partial<CandidateInfo> = {}): CandidateInfo {
  return { name: 'node2', status: replicaStatus(), tags: {}, ...over };
}

function ctx(over: Partial<ElectionContext> = {}): ElectionContext {
  return { kind: 'automatic', clusterHasLeader: false, config: config(), clusterTimeline: 3, leaderOptime: 100_000_000, sync: null, ...over };
}

const SWITCHOVER = { kind: 'switchover', clusterHasLeader: true } as const;
const FAILOVER_NO_LEADER = { kind: 'failover', clusterHasLeader: false } as const;
const lagging = replicaStatus({ received: 1000, replayed: 1000 }); // ~100 MB behind
const oldTimeline = replicaStatus({ timeline: 2 });

describe('domain/cluster/eligibility: healthy standby rules', () => {
  it('a healthy, caught-up replica is eligible for every kind of election', () => {
    for (const c of [ctx(), ctx(SWITCHOVER), ctx(FAILOVER_NO_LEADER), ctx({ kind: 'failover', clusterHasLeader: true })]) {
      const e = eligibility(candidate(), c);
      expect(e, e.detail).to.deep.include({ eligible: true, reasons: [] });
    }
  });

  describe('rule 1: reachable via the API', () => {
    it('a candidate whose /node did not answer is ineligible (unreachable)', () => {
      const e = eligibility(candidate({ status: null }), ctx());
      expect(e.eligible).to.equal(false);
      expect(e.reasons).to.deep.equal(['unreachable']);
      expect(e.detail).to.include('did not answer');
    });

    it('a status document without xlog (database down) counts as unreachable', () => {
      const { xlog: _omit, ...noXlog } = replicaStatus();
      expect(eligibility(candidate({ status: noXlog }), ctx()).reasons).to.deep.equal(['unreachable']);
    });

    it('unreachable holds even for a manual failover without a leader', () => {
      expect(eligibility(candidate({ status: null }), ctx(FAILOVER_NO_LEADER)).reasons).to.deep.equal(['unreachable']);
    });
  });

  describe('rule 2: nofailover tag not true', () => {
    for (const v of [true, 'true', 'yes', 1] as const) {
      it(`nofailover=${JSON.stringify(v)} makes the candidate ineligible`, () => {
        expect(eligibility(candidate({ tags: { nofailover: v } }), ctx()).reasons).to.deep.equal(['nofailover']);
      });
    }

    it('nofailover=false leaves it eligible', () => {
      expect(eligibility(candidate({ tags: { nofailover: false } }), ctx()).eligible).to.equal(true);
    });

    it('nofailover holds even for a manual failover without a leader', () => {
      expect(eligibility(candidate({ tags: { nofailover: true } }), ctx(FAILOVER_NO_LEADER)).reasons).to.deep.equal(['nofailover']);
    });
  });

  describe('its agent reaches the DCS', () => {
    it('a member that reports it cannot reach the DCS cannot take the key: ineligible for every kind of election', () => {
      const e = eligibility(candidate({ status: replicaStatus({ dcs_unreachable: true }) }), ctx());
      expect(e.reasons).to.deep.equal(['dcs_unreachable']);
      expect(e.detail).to.include('cannot reach the DCS');
      expect(eligibility(candidate({ status: replicaStatus({ dcs_unreachable: true }) }), ctx(FAILOVER_NO_LEADER)).reasons).to.deep.equal(['dcs_unreachable']);
    });
  });

  describe('rule 3: watchdog fully functional when required', () => {
    it('watchdog_failed in the status document makes the candidate ineligible', () => {
      const e = eligibility(candidate({ status: replicaStatus({ watchdog_failed: true }) }), ctx());
      expect(e.reasons).to.deep.equal(['watchdog_failed']);
      expect(e.detail).to.include('watchdog');
    });

    it('watchdog_failed holds even for a manual failover without a leader', () => {
      expect(eligibility(candidate({ status: replicaStatus({ watchdog_failed: true }) }), ctx(FAILOVER_NO_LEADER)).reasons).to.deep.equal(['watchdog_failed']);
    });
  });

  describe('rule 4: lag not above maximum_lag_on_failover', () => {
    it('automatic failover: a lagging candidate is ineligible, and the detail gives the figures', () => {
      const e = eligibility(candidate({ status: lagging }), ctx());
      expect(e.reasons).to.deep.equal(['lag_exceeded']);
      expect(e.detail).to.include('lag 99999000 bytes exceeds maximum_lag_on_failover 1048576');
    });

    it('switchover on a healthy cluster: a lagging candidate is ineligible', () => {
      expect(eligibility(candidate({ status: lagging }), ctx(SWITCHOVER)).reasons).to.deep.equal(['lag_exceeded']);
    });

    it('lag exactly at the limit is allowed ("not above")', () => {
      const atLimit = replicaStatus({ received: 100_000_000 - 1048576, replayed: 0 });
      expect(eligibility(candidate({ status: atLimit }), ctx()).eligible).to.equal(true);
      const overLimit = replicaStatus({ received: 100_000_000 - 1048577, replayed: 0 });
      expect(eligibility(candidate({ status: overLimit }), ctx()).reasons).to.deep.equal(['lag_exceeded']);
    });

    it('uses the larger of received and replayed positions, and a primary its location', () => {
      expect(statusWalPosition(replicaStatus({ received: 10, replayed: 20 }))).to.equal(20);
      expect(statusWalPosition(replicaStatus({ received: 30, replayed: null }))).to.equal(30);
      expect(statusWalPosition({ state: 'running', role: 'primary', xlog: { location: 77 }, svc })).to.equal(77);
      expect(candidateLag(replicaStatus({ received: 90, replayed: 80 }), 100)).to.equal(10);
    });

    it('a reachable candidate with no WAL position at all exceeds any limit', () => {
      const e = eligibility(candidate({ status: replicaStatus({ received: null, replayed: null }) }), ctx());
      expect(e.reasons).to.deep.equal(['lag_exceeded']);
    });

    it('an unknown leader position cannot show lag, so it does not exclude', () => {
      expect(eligibility(candidate({ status: lagging }), ctx({ leaderOptime: null })).eligible).to.equal(true);
    });

    it('honours maximum_lag_on_failover from the config (a size string)', () => {
      expect(eligibility(candidate({ status: lagging }), ctx({ config: config({ maximum_lag_on_failover: '1GB' }) })).eligible).to.equal(true);
    });

    it('manual failover on a healthy cluster does not check lag (the seed limits rule 4 to switchover and automatic failover)', () => {
      expect(eligibility(candidate({ status: lagging }), ctx({ kind: 'failover', clusterHasLeader: true })).eligible).to.equal(true);
    });
  });

  describe('rule 5: timeline not below the cluster timeline when check_timeline', () => {
    const checking = config({ check_timeline: true });

    it('automatic failover: a candidate on an older timeline is ineligible', () => {
      const e = eligibility(candidate({ status: oldTimeline }), ctx({ config: checking }));
      expect(e.reasons).to.deep.equal(['timeline_behind']);
      expect(e.detail).to.include('timeline 2 is below the cluster timeline 3');
    });

    it('switchover on a healthy cluster: a candidate on an older timeline is ineligible', () => {
      expect(eligibility(candidate({ status: oldTimeline }), ctx({ ...SWITCHOVER, config: checking })).reasons).to.deep.equal(['timeline_behind']);
    });

    it('check_timeline false (the default) ignores the timeline', () => {
      expect(eligibility(candidate({ status: oldTimeline }), ctx()).eligible).to.equal(true);
    });

    it('an unknown cluster timeline cannot exclude anyone', () => {
      expect(eligibility(candidate({ status: oldTimeline }), ctx({ config: checking, clusterTimeline: null })).eligible).to.equal(true);
    });

    it('same or newer timeline is fine', () => {
      expect(eligibility(candidate({ status: replicaStatus({ timeline: 4 }) }), ctx({ config: checking })).eligible).to.equal(true);
    });
  });

  describe('rule 6: synchronous membership', () => {
    const syncOn = config({ synchronous_mode: true });

    it('switchover in synchronous mode requires the candidate in the sync key', () => {
      const e = eligibility(candidate(), ctx({ ...SWITCHOVER, config: syncOn, sync: sync(['node3']) }));
      expect(e.reasons).to.deep.equal(['not_synchronous']);
      expect(e.detail).to.include('synchronous members: node3');
      expect(eligibility(candidate(), ctx({ ...SWITCHOVER, config: syncOn, sync: sync(['node2']) })).eligible).to.equal(true);
    });

    it('switchover in synchronous mode with no sync key has no eligible candidate', () => {
      expect(eligibility(candidate(), ctx({ ...SWITCHOVER, config: syncOn, sync: null })).reasons).to.deep.equal(['not_synchronous']);
    });

    it('switchover in quorum mode requires membership too', () => {
      expect(eligibility(candidate(), ctx({ ...SWITCHOVER, config: config({ synchronous_mode: 'quorum' }), sync: sync(['node3']) })).reasons).to.deep.equal(['not_synchronous']);
    });

    it('automatic failover in synchronous mode: only members of an existing sync key may be promoted', () => {
      expect(eligibility(candidate(), ctx({ config: syncOn, sync: sync(['node3']) })).reasons).to.deep.equal(['not_synchronous']);
      expect(eligibility(candidate(), ctx({ config: syncOn, sync: sync(['node2']) })).eligible).to.equal(true);
    });

    it('automatic failover: the primary named in the sync key may take the lock back', () => {
      expect(eligibility(candidate(), ctx({ config: syncOn, sync: sync([], 'node2') })).eligible).to.equal(true);
    });

    it('automatic failover in synchronous mode without a sync key does not restrict', () => {
      expect(eligibility(candidate(), ctx({ config: syncOn, sync: null })).eligible).to.equal(true);
    });

    it('asynchronous mode ignores the sync key', () => {
      expect(eligibility(candidate(), ctx({ ...SWITCHOVER, sync: sync(['node3']) })).eligible).to.equal(true);
    });

    it('a manual failover on a healthy cluster skips the sync check', () => {
      expect(eligibility(candidate(), ctx({ kind: 'failover', clusterHasLeader: true, config: syncOn, sync: sync(['node3']) })).eligible).to.equal(true);
    });
  });

  describe('the manual-failover exception: no leader', () => {
    const strict = config({ check_timeline: true, synchronous_mode: true });

    it('ignores lag above maximum_lag_on_failover', () => {
      expect(eligibility(candidate({ status: lagging }), ctx(FAILOVER_NO_LEADER)).eligible).to.equal(true);
    });

    it('ignores a timeline below the last known one', () => {
      expect(eligibility(candidate({ status: oldTimeline }), ctx({ ...FAILOVER_NO_LEADER, config: strict, sync: sync(['node2']) })).eligible).to.equal(true);
    });

    it('ignores absence from the synchronous members', () => {
      expect(eligibility(candidate(), ctx({ ...FAILOVER_NO_LEADER, config: strict, sync: sync(['node3']) })).eligible).to.equal(true);
    });

    it('all three at once', () => {
      const worst = replicaStatus({ received: 5, replayed: 5, timeline: 1 });
      expect(eligibility(candidate({ status: worst }), ctx({ ...FAILOVER_NO_LEADER, config: strict, sync: sync(['node3']) })).eligible).to.equal(true);
      expect(eligibility(candidate({ status: worst }), ctx({ config: strict, sync: sync(['node3']) })).reasons).to.deep.equal([
        'lag_exceeded',
        'timeline_behind',
        'not_synchronous',
      ]);
    });
  });

  it('reports every failed rule, not only the first', () => {
    const e = eligibility(
      candidate({ status: replicaStatus({ received: 1, replayed: 1, timeline: 1, watchdog_failed: true }), tags: { nofailover: true } }),
      ctx({ ...SWITCHOVER, config: config({ check_timeline: true, synchronous_mode: true }), sync: sync([]) }),
    );
    expect(e.reasons).to.deep.equal(['nofailover', 'watchdog_failed', 'lag_exceeded', 'timeline_behind', 'not_synchronous']);
    expect(e.detail).to.match(/^node2 is not eligible: tagged nofailover; /);
  });
});
