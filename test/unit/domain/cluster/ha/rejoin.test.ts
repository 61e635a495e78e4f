import { startFailureOutsideData } from '../../../../../src/domain/cluster/rules/start-failure.js';
import { expect } from 'chai';
import type { HistoryLine } from '../../../../../src/domain/cluster/model/cluster.js';
import { decide } from '../../../../../src/domain/cluster/ha/decide.js';
import { EMPTY_MEMORY, type Action, type LoopMemory } from '../../../../../src/domain/cluster/ha/decision.js';
import { stoppedFacts } from '../../../../../src/domain/cluster/model/facts.js';
import { observeFacts } from '../../../../../src/domain/cluster/ha/observation.js';
import { cluster, input, leaderInput, member, NOW, peerStatus, replicaFacts, types } from './fixtures.js';

const NODE1 = 'postgres://node1:5432/postgres';
/** node1 leads on timeline 2, promoted at 4000; node2 (under test) was on timeline 1. */
const history = { lines: [[1, 4000, 'no recovery target specified', null, 'node1'] as HistoryLine], revision: '6' };
const promotedLeader = (extra = {}) => member('node1', { role: 'primary', timeline: 2, receiveLsn: null, replayLsn: null, replicationState: null, ...extra });
const onTimeline2 = (extra = {}) => cluster('node1', { history, members: [promotedLeader(extra), member('node2'), member('node3')] });
const memory = (extra: Partial<LoopMemory> = {}): LoopMemory => ({ ...EMPTY_MEMORY, appliedParameters: '{}', ...extra });
/** Past the point where node1's timeline 2 branched off timeline 1, and not streaming. */
const pastBranch = replicaFacts(5000, 'node1', { replicationState: null });
const stopped = (extra = {}) => ({ ...stoppedFacts('stopped', true), systemIdentifier: '7300', ...extra });
/** The other members' /node documents: `leader` answers as a running primary on `timeline`. */
const answering = (leader = 'node1', timeline = 2) =>
  new Map(['node1', 'node3'].map((n) => [n, n === leader ? peerStatus('primary', 9000, { timeline }) : null] as const));

describe('decide(): a replica rejoining after a switchover or failover', () => {
  it('a replica whose WAL goes past the branch point is rewound at once, even while it shows streaming (a WAL receiver the leader refuses)', () => {
    // The leader must answer first: its member key outlives a dead one.
    expect(decide(input({ cluster: onTimeline2(), facts: pastBranch })).need).to.equal('peers');
    expect(types(decide(input({ cluster: onTimeline2(), facts: pastBranch, peers: answering() })))).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
    const flickering = replicaFacts(5000, 'node1', { replicationState: 'streaming' });
    const d = decide(input({ cluster: onTimeline2(), facts: flickering, peers: answering() }));
    expect(types(d)).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
    expect(d.message).to.match(/^timeline 1 diverged from leader node1 \(timeline 2\): its WAL goes past the branch point: rewinding from node1$/);
    // Up to the branch point it has not diverged: it follows the timeline switch by itself.
    expect(types(decide(input({ cluster: onTimeline2(), facts: replicaFacts(4000, 'node1', { replicationState: null }), peers: answering() })))).to.deep.equal([]);
    // Paused: it says so and touches nothing.
    const paused = decide(input({ cluster: onTimeline2(), facts: pastBranch, peers: answering(), raw: { pause: true } }));
    expect(types(paused)).to.deep.equal([]);
    expect(paused.message).to.match(/diverged/);
  });

  it('a replica that cannot stream from a leader that answers (the WAL it needs is gone there) keeps its data and asks for a reinitialize after a while', () => {
    const behind = replicaFacts(3000, 'node1', { replicationState: null, timeline: 2 });
    const c = onTimeline2({ checkpointAfterPromote: true });
    const young = decide(input({ cluster: c, facts: behind, memory: memory({ notStreamingSince: { since: NOW - 10_000, upstream: NODE1, position: null } }), peers: answering() }));
    expect(types(young)).to.deep.equal([]);
    expect(young.wakeAt).to.equal(NOW + 20_000);
    const stuck = memory({ notStreamingSince: { since: NOW - 31_000, upstream: NODE1, position: null } });
    // No opt-in covers it: only the operator's reinitialize deletes the data directory.
    for (const raw of [{}, { db: { remove_data_directory_on_rewind_failure: true, remove_data_directory_on_diverged_timelines: true } }]) {
      const d = decide(input({ cluster: c, facts: behind, memory: stuck, peers: answering(), raw }));
      expect(types(d)).to.deep.equal([]);
      expect(d.publish.reinitializeRequired).to.match(/^not streaming for over 30 s from leader node1: the data directory must be rebuilt from the leader; run wardenctl reinit node2$/);
    }
    // The reason stays the same from tick to tick (it is logged when it changes), and names the server's error when there is one.
    const later = decide(input({ cluster: c, facts: behind, memory: memory({ notStreamingSince: { since: NOW - 95_000, upstream: NODE1, position: null } }), peers: answering() }));
    expect(later.publish.reinitializeRequired).to.match(/^not streaming for over 30 s from leader node1:/);
    const gone = { cause: 'wal_removed' as const, message: 'could not receive data from WAL stream: ERROR:  requested WAL segment 000000010000000000000003 has already been removed' };
    const said = decide(input({ cluster: c, facts: { ...behind, receiverError: gone }, memory: stuck, peers: answering() }));
    expect(said.publish.reinitializeRequired).to.match(/^not streaming for over 30 s from leader node1 \(could not receive data from WAL stream: .*has already been removed\): the data directory must be rebuilt/);
    // Never in pause.
    const paused = decide(input({ cluster: c, facts: behind, memory: stuck, peers: answering(), raw: { pause: true } }));
    expect(types(paused)).to.deep.equal([]);
    expect(paused.publish.reinitializeRequired).to.equal(undefined);
  });

  it('a replica that cannot connect for replication (a password, pg_hba.conf) waits and says why: a new copy would fail the same way', () => {
    const behind = replicaFacts(3000, 'node1', { replicationState: 'in archive recovery', timeline: 2 });
    const refused = { cause: 'connection' as const, message: 'could not connect to the primary server: connection to server at "10.0.0.1", port 5432 failed: FATAL:  password authentication failed for user "replicator"' };
    const stuck = memory({ notStreamingSince: { since: NOW - 31_000, upstream: NODE1, position: null } });
    const d = decide(input({ cluster: onTimeline2({ checkpointAfterPromote: true }), facts: { ...behind, receiverError: refused }, memory: stuck, peers: answering() }));
    expect(types(d)).to.deep.equal([]);
    expect(d.publish.reinitializeRequired).to.equal(undefined);
    expect(d.publish.waitingFor).to.equal(`a replication connection to node1 (${refused.message})`);
  });

  it('a replica whose pg_wal is full (or read-only) waits and says so: no reinitialize is asked for, a copy would need the same space', () => {
    const behind = replicaFacts(3000, 'node1', { replicationState: 'in archive recovery', timeline: 2 });
    const full = { cause: 'storage' as const, message: 'could not write to file "pg_wal/xlogtemp.17373": No space left on device' };
    const stuck = memory({ notStreamingSince: { since: NOW - 31_000, upstream: NODE1, position: null } });
    const d = decide(input({ cluster: onTimeline2({ checkpointAfterPromote: true }), facts: { ...behind, receiverError: full }, memory: stuck, peers: answering() }));
    expect(types(d)).to.deep.equal([]);
    expect(d.publish.reinitializeRequired).to.equal(undefined);
    expect(d.publish.waitingFor).to.match(/^space or write access in this node's pg_wal .*No space left on device\)$/);
  });

  it('a former primary of the diverged timeline is rewound at once, without waiting to stream or following first', () => {
    const oldPrimary = replicaFacts(5000, null, { replicationState: null });
    const m = memory({ primaryOnTimeline: 1, lastRole: 'replica' });
    expect(decide(input({ cluster: onTimeline2(), facts: oldPrimary, memory: m })).need).to.equal('peers');
    const d = decide(input({ cluster: onTimeline2(), facts: oldPrimary, memory: m, peers: answering() }));
    expect(types(d)).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
    expect(d.message).to.match(/was the primary of timeline 1/);
    expect(d.actions[2]).to.deep.equal({ type: 'remember', patch: { rewoundAt: { timeline: 1, position: 5000 } } });
  });

  it('a server pg_rewind already found nothing to undo on, still where it was, is not rewound again (it looped stop, rewind, start)', () => {
    const oldPrimary = replicaFacts(5000, null, { replicationState: null });
    const m = memory({ primaryOnTimeline: 1, lastRole: 'replica', rewoundAt: { timeline: 1, position: 5000 } });
    const d = decide(input({ cluster: onTimeline2(), facts: oldPrimary, memory: m, peers: answering() }));
    expect(types(d), d.message).not.to.include('rewind');
    // Past where the rewind left it: diverged anew, rewound again.
    const further = decide(input({ cluster: onTimeline2(), facts: replicaFacts(6000, null, { replicationState: null }), memory: m, peers: answering() }));
    expect(types(further)).to.include('rewind');
  });

  it('a replica pointed at the old primary follows the new leader first, unless it has diverged', () => {
    const atBranch = decide(input({ cluster: onTimeline2(), facts: replicaFacts(4000, 'node3', { replicationState: null }) }));
    expect(types(atBranch)).to.deep.equal(['follow']);
    const past = decide(input({ cluster: onTimeline2(), facts: replicaFacts(5000, 'node3', { replicationState: null }), peers: answering() }));
    expect(types(past)).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
  });

  it('a rewind waits until the leader is a running primary on the new timeline whose checkpoint after the promotion is done', () => {
    const waited = memory({ notStreamingSince: { since: NOW - 60_000, upstream: NODE1, position: null } });
    const pending = decide(input({ cluster: onTimeline2({ checkpointAfterPromote: false }), facts: pastBranch, memory: waited }));
    expect(types(pending)).to.deep.equal([]);
    expect(pending.message).to.match(/checkpoint after the promotion/);
    const staleKey = decide(input({ cluster: onTimeline2({ timeline: 1 }), facts: pastBranch, memory: waited }));
    expect(types(staleKey)).to.deep.equal([]);
    expect(staleKey.message).to.match(/does not show timeline 2/);
    expect(types(decide(input({ cluster: onTimeline2({ state: 'starting' }), facts: pastBranch, memory: waited })))).to.deep.equal([]);
    // A leader whose member key still says running but that does not answer (killed within the ttl) is not a source.
    expect(decide(input({ cluster: onTimeline2({ checkpointAfterPromote: true }), facts: pastBranch, memory: waited })).need).to.equal('peers');
    const dead = decide(input({ cluster: onTimeline2({ checkpointAfterPromote: true }), facts: pastBranch, memory: waited, peers: new Map([['node1', null]]) }));
    expect(types(dead)).to.deep.equal([]);
    expect(dead.message).to.match(/does not answer/);
    expect(types(decide(input({ cluster: onTimeline2({ checkpointAfterPromote: true }), facts: pastBranch, memory: waited, peers: answering() })))).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
  });

  it('a crashed former primary is rewound before its first start as a replica (memory or the history key tell it led its timeline)', () => {
    // node2 was promoted into timeline 2; node3 was promoted into 3 and leads.
    const lines: HistoryLine[] = [[1, 4000, 'r', null, 'node2'], [2, 9000, 'r', null, 'node3']];
    const c = cluster('node3', { history: { lines, revision: '7' }, members: [member('node1'), member('node2'), member('node3', { role: 'primary', timeline: 3 })] });
    const d = decide(input({ cluster: c, facts: stopped({ state: 'crashed', timeline: 2 }), peers: answering('node3', 3) }));
    expect(types(d), d.message).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
    expect(d.actions[1]).to.deep.include({ source: { name: 'node3', connUrl: 'postgres://node3:5432/postgres' } });
    // Without the history line naming it, the loop's memory of its role tells the same.
    const anonymous: HistoryLine[] = [[1, 4000, 'r', null, 'node1'], [2, 9000, 'r', null, 'node3']];
    const c2 = { ...c, history: { lines: anonymous, revision: '7' } };
    expect(types(decide(input({ cluster: c2, facts: stopped({ timeline: 2 }), memory: memory({ lastRole: 'primary' }), peers: answering('node3', 3) })))).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
    // Killed before the checkpoint after its promotion: its control file still shows the timeline before.
    const early = decide(input({ cluster: c, facts: stopped({ state: 'crashed', timeline: 1 }), peers: answering('node3', 3) }));
    expect(types(early), early.message).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
    expect(early.message).to.match(/primary of timeline 2 and the cluster is on timeline 3/);
    // A former replica just starts; so does a former primary already on the cluster's timeline.
    expect(types(decide(input({ cluster: c2, facts: stopped({ timeline: 2 }) })))).to.deep.equal(['start']);
    expect(types(decide(input({ cluster: c, facts: stopped({ timeline: 3 }), memory: memory({ lastRole: 'primary' }) })))).to.deep.equal(['start']);
    // Without pg_rewind it starts; failed starts escalate to a reinitialize.
    expect(types(decide(input({ cluster: c, facts: stopped({ timeline: 2 }), raw: { db: { use_pg_rewind: false } } })))).to.deep.equal(['start']);
  });

  it('repeated failed starts as a replica escalate to a rewind, then to a reinitialize, instead of looping', () => {
    const c = onTimeline2({ checkpointAfterPromote: true });
    const first = decide(input({ cluster: c, facts: stopped({ state: 'start_failed', timeline: 2 }) }));
    expect(types(first)).to.deep.equal(['start']);
    // A failure of the start counts.
    expect(first.rollback).to.deep.equal({ fromIndex: 0, untilIndex: 1, actions: [{ type: 'remember', patch: { startFailures: 1 } }] });
    const third = decide(input({ cluster: c, facts: stopped({ state: 'start_failed', timeline: 2 }), memory: memory({ startFailures: 3 }), peers: answering() }));
    expect(third.job).to.equal('rewind');
    expect(third.actions[0]).to.deep.equal({ type: 'remember', patch: { startFailures: 4 } });
    // A rewind that did not cure it: the data directory is rebuilt only with the opt-in; otherwise it keeps trying to start
    // (backing off: the cause may be a taken port or a full disk) and names the command that would rebuild it.
    const kept = decide(input({ cluster: c, facts: stopped({ state: 'start_failed', timeline: 2 }), memory: memory({ startFailures: 4 }), peers: answering() }));
    expect(types(kept)).to.deep.equal(['start']);
    expect(kept.message).to.match(/\(4 failed starts so far\); if its data directory is damaged, run wardenctl reinit node2 \(or set db.remove_data_directory_on_rewind_failure/);
    // Without pg_rewind there is no rewind to try first.
    const noRewindNoOptIn = decide(input({ cluster: c, facts: stopped({ state: 'start_failed', timeline: 2 }), memory: memory({ startFailures: 3 }), peers: answering(), raw: { db: { use_pg_rewind: false } } }));
    expect(types(noRewindNoOptIn)).to.deep.equal(['start']);
    const optIn = { db: { remove_data_directory_on_rewind_failure: true } };
    const fourth = decide(input({ cluster: c, facts: stopped({ state: 'start_failed', timeline: 2 }), memory: memory({ startFailures: 4 }), peers: answering(), raw: optIn }));
    expect(fourth.job).to.equal('reinitialize');
    expect(types(fourth)).to.deep.equal(['remember', 'stop', 'remember', 'configure', 'createReplica', 'start']);
    expect(fourth.actions.find((a) => a.type === 'createReplica')).to.deep.include({ replacing: true });
    const noRewind = decide(input({ cluster: c, facts: stopped({ state: 'start_failed', timeline: 2 }), memory: memory({ startFailures: 3 }), peers: answering(), raw: { db: { use_pg_rewind: false, ...optIn.db } } }));
    expect(noRewind.job).to.equal('reinitialize');
  });

  it('failed starts for a cause outside the data (configuration, port, disk) are never repaired: no rewind, no rebuild even with the opt-in', () => {
    const c = onTimeline2({ checkpointAfterPromote: true });
    const optIn = { db: { remove_data_directory_on_rewind_failure: true } };
    for (const error of [
      'pg_ctl: could not start server: FATAL:  configuration file "/data/postgresql.auto.conf" contains errors',
      'FATAL:  could not create any TCP/IP sockets',
      'PANIC:  could not write to file "pg_wal/xlogtemp.123": No space left on device',
      // A replica replaying onto a full disk (seen on a real server).
      'start: the server exited during start-up: FATAL: could not extend file "base/5/16391": wrote only 4096 of 8192 bytes at block 9916',
      "start: could not launch the server: EROFS: read-only file system, unlink '/data/postmaster.pid'",
      'FATAL:  database files are incompatible with server\nDETAIL:  The data directory was initialized by PostgreSQL version 14, which is not compatible with this version 15.18.',
    ]) {
      const jobFailures = [{ job: 'start', count: 4, lastAt: NOW - 600_000, error }];
      for (const startFailures of [3, 4]) {
        const d = decide(input({ cluster: c, facts: stopped({ state: 'start_failed', timeline: 2 }), memory: memory({ startFailures, jobFailures }), peers: answering(), raw: optIn }));
        expect(types(d), `${error} (${startFailures})`).to.deep.equal(['start']);
        expect(d.message).to.match(/not its data: fix that \(nothing is rewound or rebuilt\)$/);
      }
    }
    expect(startFailureOutsideData('FATAL:  could not locate a valid checkpoint record')).to.equal(null);
  });

  it('a rewind that failed for a cause outside the data is tried again, never a reason to rebuild', () => {
    // node2 was promoted into timeline 2; node3 was promoted into 3 and leads.
    const lines: HistoryLine[] = [[1, 4000, 'r', null, 'node2'], [2, 9000, 'r', null, 'node3']];
    const c = cluster('node3', { history: { lines, revision: '7' }, members: [member('node1'), member('node2'), member('node3', { role: 'primary', timeline: 3 })] });
    const optIn = { db: { remove_data_directory_on_rewind_failure: true } };
    const failed = (error: string) =>
      decide(
        input({ cluster: c, facts: stopped({ timeline: 2 }), memory: memory({ lastRole: 'primary', rewindFailedOnTimeline: 2, jobFailures: [{ job: 'rewind', count: 1, lastAt: NOW - 600_000, error }] }), peers: answering('node3', 3), raw: optIn }),
      );
    const outside = failed('pg_rewind: error: postgres single-user mode in target cluster failed: FATAL:  configuration file "x" contains errors');
    expect(outside.job, outside.message).to.equal('rewind');
    expect(types(outside)).not.to.include.members(['removeData', 'createReplica']);
    // A rewind that failed on the data itself is not tried again (its failed starts then lead to a rebuild, see above).
    expect(failed('pg_rewind: fatal: could not find common ancestor of the source and target cluster\'s timelines').job).to.equal('start');
  });

  it('a rewind that stopped after it began rewriting (a full disk mid-copy, seen on a real server) is neither tried again nor started: rebuilt by the operator, or with the opt-in', () => {
    const lines: HistoryLine[] = [[1, 4000, 'r', null, 'node2'], [2, 9000, 'r', null, 'node3']];
    const c = cluster('node3', { history: { lines, revision: '7' }, members: [member('node1'), member('node2'), member('node3', { role: 'primary', timeline: 3 })] });
    const error = 'rewind: pg_rewind from node3 failed after it began rewriting the data directory: pg_rewind: error: could not write file "/data/pg_wal/000000030000000000000007": No space left on device';
    const interrupted = (raw: Record<string, unknown>, code: string | undefined) =>
      decide(
        input({
          cluster: c,
          facts: stopped({ timeline: 2 }),
          memory: memory({ lastRole: 'primary', rewindFailedOnTimeline: 2, jobFailures: [{ job: 'rewind', count: 1, lastAt: NOW - 600_000, error, ...(code ? { code } : {}) }] }),
          peers: answering('node3', 3),
          raw,
        }),
      );
    const kept = interrupted({}, 'rewind_interrupted');
    expect(types(kept)).to.deep.equal([]);
    expect(kept.publish.reinitializeRequired).to.match(/^pg_rewind stopped after it began rewriting this data directory; pg_rewind failed on timeline 2: the data directory must be rebuilt from the leader; run wardenctl reinit node2/);
    const rebuilt = interrupted({ db: { remove_data_directory_on_rewind_failure: true } }, 'rewind_interrupted');
    expect(rebuilt.job).to.equal('reinitialize');
    // The same full disk before pg_rewind changed anything (no code): tried again, as above.
    expect(interrupted({}, undefined).job).to.equal('rewind');
  });

  it("a fresh agent starts its server with the cluster's parameters (a standby below the primary's max_connections does not start)", () => {
    const raw = { db: { parameters: { max_connections: 120 } } };
    const d = decide(input({ raw, facts: stopped({ timeline: 1 }), memory: { ...EMPTY_MEMORY } }));
    expect(types(d)).to.deep.equal(['configure', 'start']);
    expect(d.actions[0]).to.deep.include({ parameters: { max_connections: 120 } });
    expect(d.rollback?.fromIndex).to.equal(1);
    // Already applied: no configure.
    expect(types(decide(input({ raw, facts: stopped({ timeline: 1 }), memory: { ...EMPTY_MEMORY, appliedParameters: '{"max_connections":120}' } })))).to.deep.equal(['start']);
  });
});

describe('decide(): the checkpoint after a promotion', () => {
  it('a newly promoted leader runs CHECKPOINT in the background on its next tick, then records it done', () => {
    const d = decide(leaderInput({ memory: { ...leaderInput().memory, checkpointAfterPromote: false } }));
    expect(d.job).to.equal('checkpoint');
    const t = types(d);
    expect(t[0]).to.equal('refreshLeader');
    expect(t.slice(-2)).to.deep.equal(['checkpoint', 'remember']);
    expect(d.actions[d.actions.length - 1]).to.deep.equal({ type: 'remember', patch: { checkpointAfterPromote: true } });
    expect(types(decide(leaderInput({ memory: { ...leaderInput().memory, checkpointAfterPromote: true } })))).to.not.include('checkpoint');
  });

  it('a demotion forgets it', () => {
    const d = decide(leaderInput({ cluster: cluster('node2'), memory: { ...leaderInput().memory, checkpointAfterPromote: true } }));
    const remember = d.actions.find((a): a is Extract<Action, { type: 'remember' }> => a.type === 'remember');
    expect(remember?.patch).to.deep.include({ checkpointAfterPromote: null });
  });

});

describe('observeFacts(): what the loop learns from a probe', () => {
  it("lifts a replica's timeline to the highest seen on the same data (the probe's can be stale), never a primary's", () => {
    const seen = memory({ timelineSeen: { systemIdentifier: '7300', timeline: 5 } });
    expect(observeFacts(replicaFacts(5000, 'node1', { timeline: 3 }), seen, NOW).facts.timeline).to.equal(5);
    expect(observeFacts(stopped({ timeline: 4 }), seen, NOW).facts.timeline).to.equal(5);
    expect(observeFacts(stopped({ timeline: null }), seen, NOW).facts.timeline).to.equal(5);
    const up = observeFacts(replicaFacts(5000, 'node1', { timeline: 6 }), seen, NOW);
    expect(up.facts.timeline).to.equal(6);
    expect(up.patch.timelineSeen).to.deep.equal({ systemIdentifier: '7300', timeline: 6 });
    // Other data (a new system identifier): the old timeline means nothing.
    const other = observeFacts(replicaFacts(5000, 'node1', { timeline: 1, systemIdentifier: '9999' }), seen, NOW);
    expect(other.facts.timeline).to.equal(1);
    expect(other.patch.timelineSeen).to.deep.equal({ systemIdentifier: '9999', timeline: 1 });
  });

  it('times how long a replica has neither streamed from its configured upstream nor made progress, and clears failed starts once it runs', () => {
    const first = observeFacts(replicaFacts(5000, 'node1', { replicationState: null }), memory({ startFailures: 2 }), NOW);
    expect(first.patch).to.deep.include({ notStreamingSince: { since: NOW, upstream: NODE1, position: 5000 }, startFailures: 0, lastRole: 'replica' });
    const still = observeFacts(replicaFacts(5000, 'node1', { replicationState: null }), memory({ lastRole: 'replica', notStreamingSince: { since: NOW - 5000, upstream: NODE1, position: 5000 } }), NOW);
    expect(still.patch).to.not.have.property('notStreamingSince');
    // Replaying a local backlog before the WAL receiver starts is progress, not a stuck replica.
    const replaying = observeFacts(replicaFacts(7000, 'node1', { replicationState: null }), memory({ lastRole: 'replica', notStreamingSince: { since: NOW - 5000, upstream: NODE1, position: 5000 } }), NOW);
    expect(replaying.patch.notStreamingSince).to.deep.equal({ since: NOW, upstream: NODE1, position: 7000 });
    const streaming = observeFacts(replicaFacts(5000, 'node1'), memory({ lastRole: 'replica', notStreamingSince: { since: NOW - 5000, upstream: NODE1, position: 5000 } }), NOW);
    expect(streaming.patch).to.deep.include({ notStreamingSince: null });
  });
});
