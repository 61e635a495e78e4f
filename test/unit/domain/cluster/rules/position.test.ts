import { expect } from 'chai';
import { checkHealth, type HealthEndpoint } from '../../../../../src/domain/cluster/rules/health.js';
import { confirmPosition, leaderRef, unconfirmedPosition, type LeaderRef } from '../../../../../src/domain/cluster/rules/position.js';
import { EMPTY_CLUSTER } from '../../../../../src/domain/cluster/model/cluster.js';
import { NOW, clusterView, primaryFacts, replicaFacts, snapshot } from '../fixtures.js';
import { member } from '../ha/fixtures.js';

const LEADER: LeaderRef = { name: 'node0', connUrl: 'postgres://127.0.0.1:5433/postgres', timeline: 2 };
/** The fixtures' replica streams from 127.0.0.1:5433 on timeline 2. */
const streaming = replicaFacts();

describe('domain/cluster/rules/position: a replica confirms its WAL position against the leader', () => {
  it('streaming from the leader on its timeline confirms; the proof holds while the leader stays, even through a pause in streaming', () => {
    const confirmed = confirmPosition(null, streaming, LEADER);
    expect(confirmed).to.deep.equal({ leader: 'node0', timeline: 2 });
    expect(confirmPosition(confirmed, replicaFacts({ replicationState: null }), LEADER)).to.equal(confirmed);
    expect(confirmPosition(confirmed, replicaFacts({ replicationState: null }), null), 'no leader: the last proof stands').to.equal(confirmed);
  });

  it('no proof from another upstream, another timeline, or a node running as primary; a new leader drops the proof', () => {
    expect(confirmPosition(null, replicaFacts({ upstreamConnUrl: 'postgres://elsewhere:5432/postgres' }), LEADER)).to.equal(null);
    expect(confirmPosition(null, replicaFacts({ timeline: 3 }), LEADER)).to.equal(null);
    expect(confirmPosition(null, streaming, { ...LEADER, timeline: 3 })).to.equal(null);
    const confirmed = confirmPosition(null, streaming, LEADER);
    expect(confirmPosition(confirmed, primaryFacts(), LEADER)).to.equal(null);
    expect(confirmPosition(confirmed, replicaFacts({ replicationState: null }), { ...LEADER, name: 'node2' })).to.equal(null);
  });

  it('says why a replica is unconfirmed; nothing for a primary, the lock holder or a confirmed replica', () => {
    expect(unconfirmedPosition(replicaFacts({ timeline: 1 }), null, LEADER, false)).to.match(/on timeline 1 while the leader node0 is on timeline 2/);
    expect(unconfirmedPosition(replicaFacts({ upstreamConnUrl: null, replicationState: null }), null, LEADER, false)).to.match(/not yet following the leader node0/);
    expect(unconfirmedPosition(replicaFacts({ replicationState: null }), null, LEADER, false)).to.match(/has not streamed from the leader node0 yet/);
    expect(unconfirmedPosition(streaming, null, null, false)).to.match(/no leader/);
    expect(unconfirmedPosition(primaryFacts(), null, LEADER, false)).to.equal(null);
    expect(unconfirmedPosition(streaming, null, LEADER, true)).to.equal(null);
    expect(unconfirmedPosition(streaming, { leader: 'node0', timeline: 2 }, LEADER, false)).to.equal(null);
  });

  it('no proof from a leader whose record does not show it running as primary yet (its timeline is still a replica\'s)', () => {
    expect(confirmPosition(null, streaming, { ...LEADER, runsAsPrimary: false })).to.equal(null);
    expect(confirmPosition(null, streaming, { ...LEADER, runsAsPrimary: true })).to.deep.equal({ leader: 'node0', timeline: 2 });
    const c = clusterView({ leader: 'node0' });
    expect(leaderRef(c)!.runsAsPrimary).to.be.a('boolean');
    // The standby leader of a standby cluster vouches for its cascade replicas just as a primary does.
    expect(leaderRef({ ...c, members: [member('node0', { role: 'standby_leader' })] })!.runsAsPrimary).to.equal(true);
    expect(leaderRef({ ...c, members: [member('node0', { role: 'replica' })] })!.runsAsPrimary).to.equal(false);
  });

  it('a proof taken while the view showed the leader on an older timeline stops holding once its new timeline is known', () => {
    // Confirmed against node0 while its key still showed timeline 1 (before its promotion was published).
    const stale = confirmPosition(null, replicaFacts({ timeline: 1 }), { ...LEADER, timeline: 1 });
    expect(stale).to.deep.equal({ leader: 'node0', timeline: 1 });
    expect(unconfirmedPosition(replicaFacts({ timeline: 1 }), stale, LEADER, false)).to.match(/on timeline 1 while the leader node0 is on timeline 2/);
  });

  it('a cascading replica confirms by streaming from another member on the leader\'s (known) timeline', () => {
    const relay = 'postgres://127.0.0.1:5434/postgres';
    const viaRelay = { ...LEADER, relays: [relay] };
    const cascading = replicaFacts({ upstreamConnUrl: relay });
    expect(confirmPosition(null, cascading, viaRelay)).to.deep.equal({ leader: 'node0', timeline: 2 });
    expect(confirmPosition(null, cascading, LEADER), 'not a member').to.equal(null);
    expect(confirmPosition(null, replicaFacts({ upstreamConnUrl: relay, timeline: 1 }), viaRelay), 'a relay on an older timeline').to.equal(null);
    expect(confirmPosition(null, cascading, { ...viaRelay, timeline: null }), 'the leader\'s timeline unknown').to.equal(null);
    expect(confirmPosition(null, cascading, { ...viaRelay, runsAsPrimary: false })).to.equal(null);
    expect(unconfirmedPosition(replicaFacts({ upstreamConnUrl: relay, replicationState: null }), null, viaRelay, false)).to.match(/has not streamed WAL of the leader node0's timeline from its upstream yet/);
    const c = { ...clusterView({ leader: 'node0' }), members: [member('node0'), member('node3', { connUrl: relay })] };
    expect(leaderRef(c)!.relays).to.deep.equal([relay]);
  });

  it('a node tagged nostream confirms by restoring the archive on the leader\'s timeline', () => {
    const archive = replicaFacts({ upstreamConnUrl: null, replicationState: 'in archive recovery' });
    expect(confirmPosition(null, archive, LEADER, { archiveOnly: true })).to.deep.equal({ leader: 'node0', timeline: 2 });
    expect(confirmPosition(null, archive, LEADER), 'only when tagged nostream').to.equal(null);
    expect(confirmPosition(null, replicaFacts({ upstreamConnUrl: null, replicationState: 'in archive recovery', timeline: 1 }), LEADER, { archiveOnly: true })).to.equal(null);
    expect(unconfirmedPosition(archive, null, LEADER, false)).to.match(/has not restored WAL of the leader node0's timeline from the archive yet/);
  });

  it('leaderRef: the leader member, and the timeline from it or from the history', () => {
    expect(leaderRef(EMPTY_CLUSTER)).to.equal(null);
    const c = clusterView({ leader: 'node0' });
    expect(leaderRef(c)).to.deep.include({ name: 'node0' });
    const withHistory = { ...c, history: { lines: [[1, 100, 'x', null, 'node0'] as const, [2, 200, 'x', null, 'node0'] as const], revision: '9' } };
    expect(leaderRef(withHistory)!.timeline).to.equal(3);
  });
});

describe('domain/cluster/rules/health: a node that may hold WAL the leader lacks passes no read-only check', () => {
  const unconfirmed = () => snapshot({ facts: replicaFacts(), positionUnconfirmed: 'on timeline 1 while the leader node0 is on timeline 2' });
  for (const endpoint of ['replica', 'read_only', 'asynchronous', 'health', 'readiness'] as HealthEndpoint[]) {
    it(`${endpoint}: 503 while unconfirmed, 200 once confirmed`, () => {
      expect(checkHealth(endpoint, unconfirmed(), {}, NOW)).to.equal(503);
      expect(checkHealth(endpoint, snapshot({ facts: replicaFacts() }), endpoint === 'readiness' ? { lag: '10MB' } : {}, NOW)).to.equal(200);
    });
  }

  it('readiness: a node tagged nostream is ready while it restores the archive (others must stream)', () => {
    const archive = replicaFacts({ upstreamConnUrl: null, replicationState: 'in archive recovery' });
    expect(checkHealth('readiness', snapshot({ facts: archive, node: { tags: { nostream: true } } }), { lag: '10MB' }, NOW)).to.equal(200);
    expect(checkHealth('readiness', snapshot({ facts: archive }), { lag: '10MB' }, NOW)).to.equal(503);
  });

  it('/node carries the reason', () => {
    expect(unconfirmed().status.position_unconfirmed).to.match(/timeline 1/);
    expect(snapshot({ facts: replicaFacts() }).status).to.not.have.property('position_unconfirmed');
  });
});

describe('domain/cluster/rules/health: a node whose data directory waits for an operator serves nothing', () => {
  const kept = () => snapshot({ facts: replicaFacts(), reinitializeRequired: 'pg_rewind failed on timeline 1: the data directory must be rebuilt from the leader; run wardenctl reinit node1' });
  for (const endpoint of ['replica', 'read_only', 'asynchronous', 'health', 'readiness'] as HealthEndpoint[]) {
    it(`${endpoint}: 503 while a reinitialize is required`, () => {
      expect(checkHealth(endpoint, kept(), endpoint === 'readiness' ? { lag: '10MB' } : {}, NOW)).to.equal(503);
    });
  }

  it('/node says why and names the command; what a node waits for is shown too', () => {
    expect(kept().status.reinitialize_required).to.match(/run wardenctl reinit node1$/);
    expect(snapshot({ facts: replicaFacts() }).status).to.not.have.property('reinitialize_required');
    const waiting = snapshot({ facts: replicaFacts(), waitingFor: 'a leader to create a replica from' }).status;
    expect(waiting.waiting_for).to.equal('a leader to create a replica from');
    // svc comes last whatever optional keys are present.
    expect(Object.keys(kept().status).at(-1)).to.equal('svc');
  });
});
