import { expect } from 'chai';
import { decide } from '../../../../../src/domain/cluster/ha/decide.js';
import { failsafeConfirmationStands, type Action } from '../../../../../src/domain/cluster/ha/decision.js';
import type { NodeStatus } from '../../../../../src/domain/cluster/model/status.js';
import { EMPTY_MEMORY } from '../../../../../src/domain/cluster/ha/decision.js';
import { cluster, failover, input, member, NOW, peerStatus, primaryFacts, replicaFacts, settings, types } from './fixtures.js';

const unlocked = cluster(null);
const peers = (over: Record<string, ReturnType<typeof peerStatus> | null> = {}) =>
  new Map(Object.entries({ node1: null, node3: peerStatus('replica', 5000), ...over }));

describe('decide(): the leader race', () => {
  it('asks the other members first, then takes the key by atomic create and promotes', () => {
    const base = input({ cluster: unlocked });
    expect(decide(base).need).to.equal('peers');
    const d = decide({ ...base, peers: peers() });
    expect(d.job).to.equal('promote');
    expect(types(d)).to.deep.equal(['acquireLeader', 'remember', 'promote', 'recordPromotion', 'remember']);
    expect(d.actions[1]).to.deep.equal({ type: 'remember', patch: { checkpointAfterPromote: false } });
    expect(d.rollback).to.deep.include({ fromIndex: 1, untilIndex: 1 });
    const rec = d.actions[3] as Extract<Action, { type: 'recordPromotion' }>;
    expect(rec).to.deep.include({ timeline: 1, lsn: 5000, leader: 'node2' });
  });

  it('backs off when a reachable member runs as primary, or an eligible one is ahead (timeline first, then WAL)', () => {
    const base = input({ cluster: unlocked });
    const primary = decide({ ...base, peers: peers({ node1: peerStatus('primary', 100) }) });
    expect(types(primary)).to.deep.equal([]);
    // A primary without the key stops within moments (failsafe confirmations ending, its own loop): asked again soon.
    expect(primary.wakeAt).to.equal(NOW + 500);
    const ahead = decide({ ...base, peers: peers({ node3: peerStatus('replica', 6000) }) });
    expect(types(ahead)).to.deep.equal([]);
    // It takes the key within moments, or says in its next answer why it cannot: asked again in a second, not a loop later.
    expect(ahead.wakeAt).to.equal(NOW + 1000);
    // One whose agent cannot reach the DCS cannot take the key: not waited for, but its WAL is taken first.
    const noDcs = peers({ node3: peerStatus('replica', 6000, { dcs_unreachable: true }) });
    const catchUp = decide({ ...base, peers: noDcs });
    expect(catchUp.job, catchUp.message).to.equal('follow');
    expect(catchUp.message).to.match(/node3 is ahead .* but cannot reach the DCS: taking its WAL before racing; streaming from it to catch up/);
    expect(decide({ ...base, facts: replicaFacts(6000, 'node3'), peers: noDcs }).job).to.equal('promote');
    expect(types(decide({ ...base, peers: peers({ node3: peerStatus('replica', 100, { timeline: 2 }) }) }))).to.deep.equal([]);
    // An ahead member that may not lead does not stop us.
    expect(decide({ ...base, peers: peers({ node3: peerStatus('replica', 6000, { tags: { nofailover: true } }) }) }).job).to.equal('promote');
    // A primary already shutting down does not either.
    expect(decide({ ...base, peers: peers({ node1: peerStatus('primary', 100, { state: 'stopping' }) }) }).job).to.equal('promote');
  });

  it('a member that does not answer but whose member key shows a running replica with more WAL gets the race for a grace, then this node races', () => {
    // node2 (this node) at 5000; node1 cut off from it (no answer) but publishing 6000 as a running replica.
    const withNode1 = (extra: Parameters<typeof member>[1]) => ({ ...unlocked, members: unlocked.members.map((m) => (m.name === 'node1' ? member('node1', extra) : m)) });
    const ahead = withNode1({ xlogLocation: 6000, receiveLsn: 6000, replayLsn: 6000 });
    const d = decide(input({ cluster: ahead, peers: peers() }));
    expect(types(d)).to.deep.equal(['remember']);
    expect(d.message).to.match(/node1 does not answer this node, but its member key shows it running with more WAL .*racing anyway if it has not taken the key within 20 s\)$/);
    expect(d.actions[0]).to.deep.equal({ type: 'remember', patch: { silentAheadWait: { member: 'node1', position: 6000, since: NOW } } });
    expect(d.wakeAt).to.equal(NOW + 20_000);
    // Within the grace, nothing to remember again; past it, the race goes on.
    const waiting = { ...EMPTY_MEMORY, appliedParameters: '{}', silentAheadWait: { member: 'node1', position: 6000, since: NOW - 19_000 } };
    expect(types(decide(input({ cluster: ahead, peers: peers(), memory: waiting })))).to.deep.equal([]);
    expect(decide(input({ cluster: ahead, peers: peers(), memory: { ...waiting, silentAheadWait: { member: 'node1', position: 6000, since: NOW - 20_000 } } })).job).to.equal('promote');
    // A position that moved starts the grace again.
    expect(types(decide(input({ cluster: ahead, peers: peers(), memory: { ...waiting, silentAheadWait: { member: 'node1', position: 5500, since: NOW - 60_000 } } })))).to.deep.equal(['remember']);
    // Not waited for: a member that answers (judged by its answer), the last leader, one not running, one that may not lead, one not ahead, the operator's candidate elsewhere.
    expect(decide(input({ cluster: ahead, peers: peers({ node1: peerStatus('replica', 4000) }) })).job).to.equal('promote');
    expect(decide(input({ cluster: withNode1({ role: 'primary', xlogLocation: 9000 }), peers: peers() })).job).to.equal('promote');
    expect(decide(input({ cluster: withNode1({ state: 'stopped', xlogLocation: 6000 }), peers: peers() })).job).to.equal('promote');
    expect(decide(input({ cluster: withNode1({ xlogLocation: 6000, tags: { nofailover: true } }), peers: peers() })).job).to.equal('promote');
    expect(decide(input({ cluster: withNode1({ xlogLocation: 5000 }), peers: peers() })).job).to.equal('promote');
    // A later timeline is ahead whatever the position.
    expect(types(decide(input({ cluster: withNode1({ xlogLocation: 100, timeline: 2 }), peers: peers() })))).to.deep.equal(['remember']);
    // Synchronous mode: not waited for when the sync key leaves it out (it never wins), waited for when it names it.
    const sync = (syncStandby: string[]) => ({ ...ahead, sync: { leader: 'node3', syncStandby, quorum: 0, revision: '3' } });
    expect(decide(input({ cluster: sync(['node2']), raw: { synchronous_mode: true }, peers: peers() })).job).to.equal('promote');
    expect(types(decide(input({ cluster: sync(['node1', 'node2']), raw: { synchronous_mode: true }, peers: peers() })))).to.deep.equal(['remember']);
  });

  it('a primary this node confirmed in failsafe mode holds the race while it may write; not once it answers that its server is down and it holds no lock', () => {
    const base = { ...input({ cluster: unlocked }), failsafeConfirmedOther: { name: 'node1', at: NOW - 1000, ttlMs: 30_000 } };
    const svc = { version: '0.1.0', scope: 'demo', name: 'node1' };
    const down: NodeStatus = { state: 'starting', role: 'demoted', fencer: 'idle', svc };
    expect(decide({ ...base, peers: peers() }).message).to.match(/node1, a primary this node confirmed in failsafe mode, does not answer and may write for 29 s more/);
    // A switchover's old primary between its stop and its start as a replica: no lock, nothing runs.
    expect(decide({ ...base, peers: peers({ node1: down }) }).job).to.equal('promote');
    // Still holding a lock (its fencer guards one, or a failsafe round), stopping, or running without answering: it may write.
    for (const s of [{ ...down, fencer: 'guarding' as const }, { ...down, failsafe_mode_is_active: true as const }, { ...down, state: 'stopping' }, { ...down, state: 'running', silent_primary: true as const }, { ...down, fencer: 'off' as const }]) {
      const d = decide({ ...base, peers: peers({ node1: s }) });
      expect(types(d), JSON.stringify(s)).to.deep.equal([]);
      // It answers: what it holds changes within moments (a fencer that lets go of a released lock), asked again soon.
      expect(d.message, JSON.stringify(s)).to.contain('answers that it may still hold a lock');
      expect(d.wakeAt, JSON.stringify(s)).to.equal(NOW + 300);
    }
    // One that does not answer is waited for until its lock may have run out.
    expect(decide({ ...base, peers: peers() }).wakeAt).to.equal(NOW - 1000 + 30_000);
  });

  it('backs off while a member says its server, last seen as a primary, runs without answering: it takes writes again the moment it answers', () => {
    const base = input({ cluster: unlocked });
    const silent: NodeStatus = { state: 'running', role: 'demoted', silent_primary: true, svc: { version: '0.1.0', scope: 'demo', name: 'node1' } };
    const d = decide({ ...base, peers: peers({ node1: silent }) });
    expect(types(d)).to.deep.equal([]);
    expect(d.message).to.contain("node1's server, last seen as a primary, runs without answering");
    // Once its agent stopped it, the race goes on.
    expect(decide({ ...base, peers: peers({ node1: { ...silent, state: 'stopped', silent_primary: undefined } as NodeStatus }) }).job).to.equal('promote');
  });

  it('a failsafe confirmation ends once a read begun after it shows another member holding the leader key', () => {
    const confirmed = { name: 'node1', at: NOW, ttlMs: 30_000 };
    expect(failsafeConfirmationStands(confirmed, { leader: 'node3', readAt: NOW + 1 })).to.equal(false);
    // The key gone, or still the confirmed primary's: it may still write under failsafe.
    expect(failsafeConfirmationStands(confirmed, { leader: null, readAt: NOW + 1 })).to.equal(true);
    expect(failsafeConfirmationStands(confirmed, { leader: 'node1', readAt: NOW + 1 })).to.equal(true);
    // A read begun before the confirmation (or none yet) may have been served before node1 held the key.
    expect(failsafeConfirmationStands(confirmed, { leader: 'node3', readAt: NOW })).to.equal(true);
    expect(failsafeConfirmationStands(confirmed, { leader: 'node3', readAt: null })).to.equal(true);
  });

  it('failsafe mode: a node the last leader did not list among its failsafe members races only when every listed member answers', () => {
    const listed = { ...unlocked, failsafe: { node1: 'http://node1:8008', node3: 'http://node3:8008' } };
    // node1 (listed) does not answer: it may be the leader, still writing with node3's confirmation.
    const d = decide(input({ cluster: listed, raw: { failsafe_mode: true }, peers: peers() }));
    expect(types(d)).to.deep.equal([]);
    expect(d.message).to.match(/not among the failsafe members the last leader listed, and node1 of them do not answer/);
    // A manual failover to this node is the operator's call.
    expect(decide(input({ cluster: { ...listed, failover: failover(null, 'node2') }, raw: { failsafe_mode: true }, peers: peers() })).job).to.equal('promote');
    // A list of the leader alone: that leader never stays without the DCS, so nothing to wait for.
    expect(decide(input({ cluster: { ...unlocked, failsafe: { node1: 'http://node1:8008' } }, raw: { failsafe_mode: true }, peers: peers() })).job).to.equal('promote');
    // Every listed member answers, none as primary: nobody writes under failsafe.
    expect(decide(input({ cluster: listed, raw: { failsafe_mode: true }, peers: peers({ node1: peerStatus('replica', 100) }) })).job).to.equal('promote');
    // Listed, or failsafe mode off: it races as usual.
    expect(decide(input({ cluster: { ...listed, failsafe: { ...listed.failsafe, node2: 'http://node2:8008' } }, raw: { failsafe_mode: true }, peers: peers() })).job).to.equal('promote');
    expect(decide(input({ cluster: listed, peers: peers() })).job).to.equal('promote');
  });

  it('failsafe mode: a listed member does not wait for a better one the rule keeps out of the race (it would never race)', () => {
    // node1, the last leader, is gone; node3 has a higher failover_priority (or more WAL) but was not listed.
    const listed = { ...unlocked, failsafe: { node1: 'http://node1:8008', node2: 'http://node2:8008' } };
    const better = peerStatus('replica', 5000, { tags: { failover_priority: 2 } });
    expect(decide(input({ cluster: listed, raw: { failsafe_mode: true }, peers: peers({ node3: better }) })).job).to.equal('promote');
    expect(decide(input({ cluster: listed, raw: { failsafe_mode: true }, peers: peers({ node3: peerStatus('replica', 6000) }) })).job).to.equal('promote');
    // Once every listed member answers, node3 races too: it is waited for again.
    const answering = peers({ node1: peerStatus('replica', 100), node3: better });
    expect(types(decide(input({ cluster: listed, raw: { failsafe_mode: true }, peers: answering })))).to.deep.equal([]);
    expect(types(decide(input({ cluster: listed, peers: peers({ node3: better }) }))), 'failsafe mode off').to.deep.equal([]);
  });

  it('a primary without the key that is not the healthiest demotes; one that is takes the key without promoting', () => {
    const base = input({ cluster: unlocked, facts: primaryFacts(5000) });
    expect(decide({ ...base, peers: peers({ node3: peerStatus('replica', 6000) }) }).job).to.equal('demote');
    expect(types(decide({ ...base, peers: peers() }))).to.deep.equal(['acquireLeader']);
  });

  it('nofailover and an unusable required watchdog keep a node out of the race', () => {
    expect(types(decide(input({ cluster: unlocked, node: settings({ tags: { nofailover: true } }) })))).to.deep.equal([]);
    expect(types(decide(input({ cluster: unlocked, node: settings({ watchdogMode: 'required' }), watchdog: { active: false, usable: false } })))).to.deep.equal([]);
  });

  it('lag above maximum_lag_on_failover keeps a node out of an automatic race', () => {
    const d = decide(input({ cluster: unlocked, raw: { maximum_lag_on_failover: 100 }, facts: replicaFacts(4000), peers: peers({ node3: null }) }));
    expect(types(d)).to.deep.equal([]);
    expect(d.message).to.match(/lag/);
  });

  it('lag above maximum_lag_on_failover: the node streams from a member ahead that answers, then races', () => {
    // The last leader was at 5000; node3 (which may not lead) got all of it, this node only 4000.
    const raw = { maximum_lag_on_failover: 100 };
    const node3 = peerStatus('replica', 5000, { tags: { failover_priority: 0 } });
    const d = decide(input({ cluster: unlocked, raw, facts: replicaFacts(4000), peers: peers({ node3 }) }));
    expect(d.message).to.match(/lag .* exceeds maximum_lag_on_failover .*; streaming from it to catch up/);
    expect(d.job).to.equal('follow');
    expect(d.actions[0]).to.deep.include({ type: 'follow', upstream: { name: 'node3', connUrl: 'postgres://node3:5432/postgres' } });
    // While it streams from node3 it waits; holding as much, it is no longer behind and races.
    expect(types(decide(input({ cluster: unlocked, raw, facts: replicaFacts(4050, 'node3'), peers: peers({ node3 }) })))).to.deep.equal([]);
    expect(decide(input({ cluster: unlocked, raw, facts: replicaFacts(5000, 'node3'), peers: peers({ node3 }) })).job).to.equal('promote');
    // Nobody ahead answers as a replica: it only waits.
    expect(types(decide(input({ cluster: unlocked, raw, facts: replicaFacts(4000), peers: peers({ node3: peerStatus('replica', 3000) }) })))).to.deep.equal([]);
  });

  it('a manual failover to this node with no leader wins despite lag; other nodes wait for the candidate', () => {
    const fk = cluster(null, { failover: failover(null, 'node2') });
    const d = decide(input({ cluster: fk, raw: { maximum_lag_on_failover: 100 }, facts: replicaFacts(4000), peers: peers({ node3: peerStatus('replica', 6000) }) }));
    expect(d.job).to.equal('promote');
    expect(types(d)).to.include('clearFailover');
    const node3 = { node: settings({ name: 'node3', apiUrl: 'http://node3:8008' }), cluster: fk, peers: new Map(Object.entries({ node1: null, node2: peerStatus('replica', 4000) })) };
    const other = decide(input(node3));
    // It remembers since when it waits, and wakes when the wait is over.
    expect(types(other)).to.deep.equal(['remember']);
    expect(other.message).to.match(/requested candidate/);
    expect(other.wakeAt).to.equal(NOW + 20_000);
    // A candidate that has not taken the key after the grace (busy with a long job, stuck): the others race as usual.
    const waited = { ...EMPTY_MEMORY, appliedParameters: '{}', candidateWait: { revision: fk.failoverRevision, since: NOW - 20_000 } };
    expect(decide(input({ ...node3, memory: waited })).job).to.equal('promote');
    // A new request (another revision of the failover key) gets the full grace again.
    expect(types(decide(input({ ...node3, memory: { ...waited, candidateWait: { revision: 'older', since: NOW - 60_000 } } })))).to.deep.equal(['remember']);
  });

  it('pause: no automatic race, but a manual failover candidate still races', () => {
    expect(types(decide(input({ cluster: unlocked, raw: { pause: true }, peers: peers() })))).to.deep.equal([]);
    const fk = cluster(null, { failover: failover(null, 'node2') });
    expect(decide(input({ cluster: fk, raw: { pause: true }, peers: peers() })).job).to.equal('promote');
  });

  it('synchronous mode: the sync key is written naming only this node before promoting; non-members never win', () => {
    const sync = { leader: 'node1', syncStandby: ['node2'], quorum: 0, revision: '3' };
    const d = decide(input({ cluster: cluster(null, { sync }), raw: { synchronous_mode: true }, peers: peers() }));
    expect(types(d)).to.deep.equal(['acquireLeader', 'writeSync', 'setSynchronousStandbyNames', 'remember', 'promote', 'recordPromotion', 'remember']);
    expect(d.actions[1]).to.deep.include({ leader: 'node2', syncStandby: [], ifRevision: '3' });
    // The key it replaces goes with it, with the timeline it is on: its fencer puts it back if the promotion never happens.
    expect(d.actions[1]).to.deep.include({ promoting: { timeline: input().facts.timeline, replaced: { leader: 'node1', syncStandby: ['node2'], quorum: 0 } } });
    // Its own key of an attempt that failed: what that one replaced goes on, with the timeline of then.
    const earlier = { leader: 'node2', syncStandby: [], quorum: 0, promoting: { timeline: 1, replaced: { leader: 'node1', syncStandby: ['node2'], quorum: 0 } }, revision: '5' };
    const again = decide(input({ cluster: cluster(null, { sync: earlier }), raw: { synchronous_mode: true }, peers: peers() }));
    expect(again.actions[1]).to.deep.include({ leader: 'node2', syncStandby: [], ifRevision: '5', promoting: earlier.promoting });
    const notSync = decide(input({ cluster: cluster(null, { sync: { ...sync, syncStandby: ['node3'] } }), raw: { synchronous_mode: true }, peers: peers() }));
    expect(types(notSync)).to.deep.equal([]);
  });

  it("pre_promote: the operator's fencing script runs right after the key is taken, before the sync key narrows; a failure gives the key back", () => {
    const sync = { leader: 'node1', syncStandby: ['node2'], quorum: 0, revision: '3' };
    const local = { ...input().local, prePromote: true };
    const d = decide(input({ local, cluster: cluster(null, { sync }), raw: { synchronous_mode: true }, peers: peers() }));
    expect(types(d)).to.deep.equal(['acquireLeader', 'prePromote', 'writeSync', 'setSynchronousStandbyNames', 'remember', 'promote', 'recordPromotion', 'remember']);
    // The script is where the background job starts; its failure (up to the promotion) rolls back to no key.
    expect(d.job).to.equal('promote');
    expect(d.rollback).to.deep.include({ fromIndex: 1, untilIndex: 4 });
    expect(d.rollback?.actions.map((a) => a.type)).to.deep.equal(['disarmWatchdog', 'releaseLeader']);
    // With a watchdog, it is armed before the script: a node that cannot arm a required one gives the key back without fencing anybody.
    const node = { ...input().node, watchdogMode: 'required' as const };
    const armed = decide(input({ local, node, cluster: cluster(null, { sync }), raw: { synchronous_mode: true }, peers: peers() }));
    expect(types(armed).slice(0, 3)).to.deep.equal(['acquireLeader', 'armWatchdog', 'prePromote']);
    // A running primary that takes the key back is not promoted: no script.
    const primary = decide(input({ local, cluster: unlocked, facts: primaryFacts(), peers: peers() }));
    expect(types(primary)).to.not.include('prePromote');
  });

  it('pre_promote: after the script refused, this node stays out of the race with growing pauses up to ttl (the others race meanwhile)', () => {
    const local = { ...input().local, prePromote: true };
    const failed = (count: number, ago: number) => ({
      ...EMPTY_MEMORY,
      appliedParameters: '{}',
      jobFailures: [{ job: 'promote', count, lastAt: NOW - ago, error: 'prePromote: the pre_promote script exited with code 1', code: 'pre_promote_failed' }],
    });
    const waiting = decide(input({ local, cluster: unlocked, peers: peers(), memory: failed(1, 3_000) }));
    expect(types(waiting)).to.deep.equal([]);
    expect(waiting.message).to.match(/waiting 7 s before the next attempt \(promote failed once; last error: prePromote: the pre_promote script exited with code 1\)/);
    expect(waiting.wakeAt).to.equal(NOW + 7_000);
    expect(decide(input({ local, cluster: unlocked, peers: peers(), memory: failed(1, 10_000) })).job).to.equal('promote');
    // The pauses double (10, 20 s), but never beyond ttl (30 s): a cluster whose fencing works again gets its primary soon.
    expect(types(decide(input({ local, cluster: unlocked, peers: peers(), memory: failed(2, 15_000) })))).to.deep.equal([]);
    expect(types(decide(input({ local, cluster: unlocked, peers: peers(), memory: failed(6, 29_000) })))).to.deep.equal([]);
    expect(decide(input({ local, cluster: unlocked, peers: peers(), memory: failed(6, 30_000) })).job).to.equal('promote');
    // A promotion that failed in PostgreSQL is retried at the loop's pace, as before.
    const pgFailed = { ...failed(3, 3_000), jobFailures: [{ job: 'promote', count: 3, lastAt: NOW - 3_000, error: 'promote: timed out', code: 'promote_failed' }] };
    expect(decide(input({ local, cluster: unlocked, peers: peers(), memory: pgFailed })).job).to.equal('promote');
  });

  it('quorum mode: a candidate must see |L| - k + 1 members of the key', () => {
    const sync = { leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1, revision: '3' };
    const base = input({ cluster: cluster(null, { sync }), raw: { synchronous_mode: 'quorum' } });
    expect(decide({ ...base, peers: peers() }).job).to.equal('promote');
    expect(types(decide({ ...base, peers: peers({ node3: null }) }))).to.deep.equal([]);
  });

  it('quorum mode: a member of the key ahead of this node stops it even when that member may not lead', () => {
    // Found by the simulation (seed 858317281): the primary acknowledged commits with node3's
    // confirmation alone (ANY 1 of node2, node3); node3 (failover_priority 0) was ahead, and
    // node2, back from a crash, promoted without them.
    const sync = { leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1, revision: '3' };
    const base = input({ cluster: cluster(null, { sync }), raw: { synchronous_mode: 'quorum' } });
    const aheadNoLead = peers({ node3: peerStatus('replica', 6000, { tags: { failover_priority: 0 } }) });
    const d = decide({ ...base, peers: aheadNoLead });
    expect(d.message).to.match(/node3 is ahead .* a synchronous quorum member, may hold acknowledged commits this node lacks; streaming from it to catch up/);
    // It streams from node3 (a cascade, no slot there) to get what node3 holds...
    expect(d.job).to.equal('follow');
    expect(d.actions).to.deep.equal([{ type: 'follow', upstream: { name: 'node3', connUrl: 'postgres://node3:5432/postgres' }, timeoutMs: d.actions[0]!.type === 'follow' ? d.actions[0].timeoutMs : 0 }]);
    // ...waits while it does...
    const streaming = decide({ ...base, facts: replicaFacts(5000, 'node3'), peers: aheadNoLead });
    expect(types(streaming)).to.deep.equal([]);
    expect(streaming.message).to.match(/streaming from it to catch up/);
    // ...and races once it holds as much.
    expect(decide({ ...base, facts: replicaFacts(6000, 'node3'), peers: aheadNoLead }).job).to.equal('promote');
    // Where node3 cannot feed it (not running as a replica), it only waits.
    const down = decide({ ...base, cluster: cluster(null, { sync, members: ['node1', 'node2', 'node3'].map((n) => member(n, n === 'node3' ? { state: 'stopped' } : {})) }), peers: aheadNoLead });
    expect(types(down)).to.deep.equal([]);
    expect(down.message).to.match(/cannot stream from it to catch up: node3 is not running/);
    // Not a member of the key: it holds no commit the quorum acknowledged, as outside quorum mode.
    const notMember = decide({ ...base, cluster: cluster(null, { sync: { ...sync, syncStandby: ['node2'] } }), peers: aheadNoLead });
    expect(notMember.job, notMember.message).to.equal('promote');
    const plain = decide(input({ cluster: cluster(null, { sync: { ...sync, quorum: 0 } }), raw: { synchronous_mode: true }, peers: aheadNoLead }));
    expect(plain.job, plain.message).to.equal('promote');
  });

  it('quorum mode: the primary the key names, answering as a replica with no more WAL on this node\'s timeline, stands for the quorum members out of sight', () => {
    // Found exploring switchovers under faults: a switchover without candidate, the other quorum
    // member crashed at once; the old primary left the race to node2 (which has everything it has),
    // and node2 waited for the crashed member for ever.
    const sync = { leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1, revision: '3' };
    const base = input({ cluster: cluster(null, { sync }), raw: { synchronous_mode: 'quorum' } });
    const oldPrimary = (wal: number, extra: Partial<NodeStatus> = {}) => peers({ node1: peerStatus('replica', wal, extra), node3: null });
    expect(decide({ ...base, peers: oldPrimary(5000) }).job).to.equal('promote');
    expect(decide({ ...base, peers: oldPrimary(4000) }).job).to.equal('promote');
    // Not when it holds more, answers on another timeline, still runs as a primary, or this node lacks the position handed over.
    expect(types(decide({ ...base, peers: oldPrimary(5000, { timeline: 2 }) }))).to.deep.equal([]);
    expect(types(decide({ ...base, peers: peers({ node1: peerStatus('primary', 5000, { state: 'stopping' }), node3: null }) }))).to.deep.equal([]);
    const handedOver = decide({ ...base, cluster: cluster(null, { sync, status: { optime: 6000, slots: {}, revision: '6' } }), peers: oldPrimary(5000) });
    expect(handedOver.message).to.match(/too few synchronous quorum members answered/);
    expect(decide({ ...base, peers: oldPrimary(6000) }).job).to.not.equal('promote');
    // Without it, as before: too few members of the list answered.
    expect(decide({ ...base, peers: peers({ node1: null, node3: null }) }).message).to.match(/too few synchronous quorum members answered/);
  });

  it('quorum mode: a member that answers without a data directory (reinitializing) holds no commit, and counts as seen', () => {
    // Found by the simulation (seed 705809295): the only other quorum member was being
    // reinitialized, the old primary was stuck demoting, and no replica ever raced again.
    const sync = { leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1, revision: '3' };
    const base = input({ cluster: cluster(null, { sync }), raw: { synchronous_mode: 'quorum' } });
    const empty = { state: 'creating replica', role: 'uninitialized', svc: { version: '0.1.0', scope: 'demo', name: 'node3' } } as NodeStatus;
    expect(decide({ ...base, peers: peers({ node1: null, node3: empty }) }).job).to.equal('promote');
    // A member that answers but whose data is unknown (not running) still does not count.
    const stopped = { state: 'stopped', role: 'demoted', svc: { version: '0.1.0', scope: 'demo', name: 'node3' } } as NodeStatus;
    expect(types(decide({ ...base, peers: peers({ node1: null, node3: stopped }) }))).to.deep.equal([]);
  });

  it('watchdog: armed before the promotion', () => {
    const d = decide(input({ cluster: unlocked, node: settings({ watchdogMode: 'automatic' }), peers: peers() }));
    expect(types(d).indexOf('armWatchdog')).to.be.lessThan(types(d).indexOf('promote'));
    expect(d.actions.find((a) => a.type === 'armWatchdog')).to.deep.include({ timeoutSeconds: 25, required: false });
  });

  it('the old leader of a switchover without candidate leaves the race to the others', () => {
    const d = decide(input({ cluster: cluster(null, { failover: failover('node2', null) }), peers: peers() }));
    // Nothing but remembering since when it waits (see the grace below).
    expect(types(d)).to.deep.equal(['remember']);
    expect(decide(input({ cluster: cluster(null, { failover: failover('node2', null) }), peers: peers({ node3: null }) })).job).to.equal('promote');
  });

  it('the old leader of a switchover without candidate leaves the race only for a grace: past it, it races itself', () => {
    // A member the rules let lead may still not take the key (its quorum out of sight, a job of its own): the old primary holds every commit.
    const fk = cluster(null, { failover: failover('node2', null) });
    const first = decide(input({ cluster: fk, peers: peers() }));
    expect(first.message).to.match(/stepped down for a switchover and node3 can take over \(racing anyway if nobody has taken the key within 20 s\)/);
    expect(first.wakeAt).to.equal(NOW + 20_000);
    const since = (ago: number) => ({ ...EMPTY_MEMORY, appliedParameters: '{}', candidateWait: { revision: fk.failoverRevision, since: NOW - ago } });
    expect(types(decide(input({ cluster: fk, peers: peers(), memory: since(19_000) })))).to.deep.equal([]);
    expect(decide(input({ cluster: fk, peers: peers(), memory: since(20_000) })).job).to.equal('promote');
  });

  it('the old leader of a switchover without candidate races when no eligible member has everything it has', () => {
    const d = decide(input({ cluster: cluster(null, { failover: failover('node2', null) }), facts: replicaFacts(6000), peers: peers() }));
    expect(d.job).to.equal('promote');
  });

  it("a switchover's candidate promotes once it holds the WAL up to the old leader's last position; a failover's does not wait", () => {
    const promote = (d: ReturnType<typeof decide>) => d.actions.find((a) => a.type === 'promote') as Extract<Action, { type: 'promote' }>;
    const status = { optime: 7000, slots: {}, revision: '6' };
    const sw = decide(input({ cluster: cluster(null, { status, failover: failover('node1', 'node2') }), peers: peers() }));
    expect(sw.job).to.equal('promote');
    expect(promote(sw)).to.deep.include({ walAtLeast: 7000, catchUpMs: 2000 });
    // A manual failover (no leader named) and an automatic race promote at once.
    expect(promote(decide(input({ cluster: cluster(null, { status, failover: failover(null, 'node2') }), peers: peers() })))).to.not.have.property('walAtLeast');
    expect(promote(decide(input({ cluster: cluster(null, { status }), peers: peers() })))).to.not.have.property('walAtLeast');
    // No status key: nothing to wait for.
    expect(promote(decide(input({ cluster: cluster(null, { status: null, failover: failover('node1', 'node2') }), peers: peers() })))).to.not.have.property('walAtLeast');
  });

  it('quorum mode: a switchover candidate behind a member that answers takes that WAL from it first, then takes over as asked (a member of the list may lack acknowledged commits)', () => {
    // Found by the simulation (seed 238571342): node3's link was cut while node4 confirmed
    // every commit (ANY 1 of node3, node4); the switchover to node3 promoted it without them.
    const sync = { leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1, revision: '3' };
    const status = { optime: 7000, slots: {}, revision: '6' };
    const base = input({ cluster: cluster(null, { sync, status, failover: failover('node1', 'node2') }), raw: { synchronous_mode: 'quorum' } });
    const ahead = peers({ node3: peerStatus('replica', 7000, { tags: { failover_priority: 0 } }) });
    const behind = decide({ ...base, peers: ahead });
    expect(behind.job, behind.message).to.equal('follow');
    expect(behind.message).to.match(/this node is the requested candidate, but node3 holds WAL it lacks .*streaming from it to catch up/);
    expect(behind.actions).to.have.length(1);
    expect(behind.actions[0]).to.deep.include({ type: 'follow', upstream: { name: 'node3', connUrl: 'postgres://node3:5432/postgres' } });
    // Streaming from it, it looks again within moments: the others leave it the race only for a grace.
    const streaming = decide({ ...base, facts: replicaFacts(6000, 'node3'), peers: ahead });
    // Remembering where its WAL stands, to tell a stream that moves from one that does not (below).
    expect(types(streaming)).to.deep.equal(['remember']);
    expect(streaming.wakeAt).to.equal(NOW + 250);
    // Holding the old leader's last position and node3's WAL, it takes over as asked.
    const caughtUp = decide({ ...base, facts: replicaFacts(7000, 'node3'), peers: ahead });
    expect(caughtUp.job, caughtUp.message).to.equal('promote');
    expect(caughtUp.message).to.match(/switchover to this node/);
    // Behind the old leader's last position with nobody that answers ahead: the automatic rules decide, as before.
    const onlyOptime = decide({ ...base, peers: peers({ node3: peerStatus('replica', 5000) }) });
    expect(onlyOptime.message).to.match(/this node is the healthiest/);
    // A candidate whose server does not run cannot stream: the automatic rules decide, no quick looks again.
    const stopped = decide({ ...base, facts: { ...replicaFacts(6000), running: false, inRecovery: null, state: 'stopped' }, peers: ahead });
    expect(stopped.message).to.not.match(/requested candidate/);
    expect(stopped.wakeAt).to.equal(null);
    // A candidate the switchover rules refuse (not in the quorum list) does not stream as the candidate either.
    const outside = decide({ ...base, cluster: cluster(null, { sync: { ...sync, syncStandby: ['node3'] }, status, failover: failover('node1', 'node2') }), peers: ahead });
    expect(outside.message).to.not.match(/requested candidate/);
    // Synchronous mode (FIRST k): a member of the key holds every acknowledged commit; the promotion waits for the rest itself.
    const strict = decide(input({ raw: { synchronous_mode: true }, cluster: cluster(null, { sync: { ...sync, quorum: 0 }, status, failover: failover('node1', 'node2') }), peers: ahead }));
    expect(strict.job, strict.message).to.equal('promote');
  });

  it('quorum mode: a switchover candidate whose WAL stands still for 3 s while it catches up gives the switchover up, clearing the request', () => {
    // Found by the availability exploration (seed 20431363): the candidate's stream could not
    // move, and every member waited out its grace (20 s at loop_wait 10) before the old leader
    // took its key back.
    const sync = { leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1, revision: '3' };
    const status = { optime: 7000, slots: {}, revision: '6' };
    const fk = cluster(null, { sync, status, failover: failover('node1', 'node2') });
    const base = { ...input({ cluster: fk, raw: { synchronous_mode: 'quorum' } }), peers: peers({ node3: peerStatus('replica', 7000) }) };
    const at = (wal: number, ago: number, lookedAgo = 250) => ({ ...EMPTY_MEMORY, appliedParameters: '{}', candidateCatchUp: { revision: fk.failover!.revision, wal, since: NOW - ago, at: NOW - lookedAgo } });
    const remembered = (d: ReturnType<typeof decide>) => (d.actions.find((a) => a.type === 'remember') as Extract<Action, { type: 'remember' }>).patch.candidateCatchUp;
    // Standing still for less than 3 s: it goes on waiting, and remembers when it looked.
    const waiting = decide({ ...base, facts: replicaFacts(6000, 'node3'), memory: at(6000, 2_900) });
    expect(types(waiting)).to.deep.equal(['remember']);
    expect(remembered(waiting)).to.deep.equal({ revision: fk.failover!.revision, wal: 6000, since: NOW - 2_900, at: NOW });
    expect(waiting.wakeAt).to.equal(NOW + 250);
    // Its WAL moved since: the clock starts again from now.
    const moving = decide({ ...base, facts: replicaFacts(6500, 'node3'), memory: at(6000, 10_000) });
    expect(remembered(moving)).to.deep.equal({ revision: fk.failover!.revision, wal: 6500, since: NOW, at: NOW });
    // 3 s at the same position: it clears the request (at its revision), so the members race at once.
    const stalled = decide({ ...base, facts: replicaFacts(6000, 'node3'), memory: at(6000, 3_000) });
    expect(stalled.message).to.match(/giving the switchover up: the requested candidate could not catch up with node3 \(its WAL stood at 6000 for 3 s\)/);
    expect(stalled.actions[0]).to.deep.include({ type: 'clearFailover', revision: fk.failover!.revision });
    expect(stalled.job).to.equal(null);
    // A position remembered for another request does not count, nor a catch-up not looked at for over a second (it waited on something else).
    const otherRequest = decide({ ...base, facts: replicaFacts(6000, 'node3'), memory: { ...at(6000, 10_000), candidateCatchUp: { revision: 'older', wal: 6000, since: NOW - 10_000, at: NOW - 250 } } });
    expect(remembered(otherRequest)).to.deep.include({ since: NOW });
    const interrupted = decide({ ...base, facts: replicaFacts(6000, 'node3'), memory: at(6000, 10_000, 1_500) });
    expect(interrupted.message).to.match(/streaming from it to catch up/);
    expect(remembered(interrupted)).to.deep.include({ since: NOW });
  });

  it('a requested candidate that fails the switchover rules still races under the automatic ones', () => {
    // node2 is the primary the sync key names (it has every commit) but not one of its standbys.
    const sync = { leader: 'node2', syncStandby: [], quorum: 0, revision: '3' };
    const d = decide(input({ raw: { synchronous_mode: true }, cluster: cluster(null, { sync, failover: failover('node1', 'node2') }), peers: peers() }));
    expect(d.job).to.equal('promote');
  });

  it('pause: a running primary takes a free key, unless its timeline is behind the cluster or a candidate is named', () => {
    expect(types(decide(input({ cluster: unlocked, raw: { pause: true }, facts: primaryFacts() })))).to.deep.equal(['acquireLeader']);
    const history = { lines: [[1, 100, 'r', null, 'node3'] as const], revision: '6' };
    expect(types(decide(input({ cluster: cluster(null, { history }), raw: { pause: true }, facts: primaryFacts() })))).to.deep.equal([]);
    expect(types(decide(input({ cluster: cluster(null, { failover: failover(null, 'node3') }), raw: { pause: true }, facts: primaryFacts() })))).to.deep.equal([]);
  });
});
