import { expect } from 'chai';
import { decide } from '../../../../../src/domain/cluster/ha/decide.js';
import type { Action } from '../../../../../src/domain/cluster/ha/decision.js';
import { eligibility } from '../../../../../src/domain/cluster/rules/eligibility.js';
import { likelyWinner, explainMembers } from '../../../../../src/domain/cluster/rules/eligibility-explanation.js';
import { resolveConfig } from '../../../../../src/domain/cluster/config/config.js';
import { syncCandidates } from '../../../../../src/domain/cluster/ha/sync-mode.js';
import { tickContext } from '../../../../../src/domain/cluster/ha/tick-context.js';
import { cluster, input, leaderInput, member, NOW, peerStatus, primaryFacts, replicaFacts, row, settings, types } from './fixtures.js';

const unlocked = cluster(null);
const peers = (over: Record<string, ReturnType<typeof peerStatus> | null> = {}) => new Map(Object.entries({ node1: null, node3: peerStatus('replica', 5000), ...over }));

describe('decide(): failover_priority in the leader race', () => {
  it('among members with as much WAL the higher failover_priority leads: a lower one backs off, a higher one takes the key', () => {
    const higher = peers({ node3: peerStatus('replica', 5000, { tags: { failover_priority: 2 } }) });
    const d = decide(input({ cluster: unlocked, peers: higher }));
    expect(types(d)).to.deep.equal([]);
    expect(d.message).to.match(/node3 has as much WAL and a higher failover_priority \(2 > 1\)/);
    expect(decide(input({ cluster: unlocked, node: settings({ tags: { failover_priority: 3 } }), peers: higher })).job).to.equal('promote');
    // Equal priorities: as before, nobody backs off for an equal.
    expect(decide(input({ cluster: unlocked, peers: peers() })).job).to.equal('promote');
  });

  it('a leader that stepped down for a switchover without candidate does not hold the others back by its priority (found by the simulation)', () => {
    const stepped = cluster(null, { failover: { leader: 'node1', member: null, scheduledAt: null, revision: '7' } });
    const withOldLeader = peers({ node1: peerStatus('replica', 5000, { tags: { failover_priority: 3 } }) });
    expect(decide(input({ cluster: stepped, peers: withOldLeader })).job).to.equal('promote');
  });

  it('WAL comes first: a higher priority that is behind does not stop a node that is ahead', () => {
    const behind = peers({ node3: peerStatus('replica', 4000, { tags: { failover_priority: 9 } }) });
    expect(decide(input({ cluster: unlocked, peers: behind })).job).to.equal('promote');
  });

  it('a higher priority that is not eligible (lag, sync, priority 0) does not stop anyone', () => {
    const ineligible = peers({ node3: peerStatus('replica', 5000, { tags: { failover_priority: 2 }, watchdog_failed: true }) });
    expect(decide(input({ cluster: unlocked, peers: ineligible })).job).to.equal('promote');
  });

  it('failover_priority 0 never races, never bootstraps and gives up a key it holds as a replica', () => {
    const zero = settings({ tags: { failover_priority: 0 } });
    const d = decide(input({ cluster: unlocked, node: zero, peers: peers() }));
    expect(types(d)).to.deep.equal([]);
    expect(d.message).to.match(/tagged failover_priority 0/);
    expect(decide(input({ cluster: unlocked, node: zero })).need, 'it does not even ask the others').to.equal(null);
    const boot = decide(input({ cluster: { ...unlocked, initialize: null, members: [] }, node: zero, facts: { ...replicaFacts(), running: false, initialized: false } }));
    expect(types(boot)).to.not.include('createInitialize');
    const holding = decide(input({ cluster: cluster('node2'), node: zero, lockDeadline: NOW + 10_000 }));
    expect(types(holding)).to.include('releaseLeader');
    // A manual failover to it is refused by the same rule the API uses.
    const fk = cluster(null, { failover: { leader: null, member: 'node2', scheduledAt: null, revision: '7' } });
    expect(decide(input({ cluster: fk, node: zero, peers: peers() })).job).to.equal(null);
  });

  it('eligibility: failover_priority 0 is the nofailover reason; the likely winner breaks WAL ties by priority', () => {
    const ctx = { kind: 'automatic' as const, clusterHasLeader: false, config: resolveConfig({}), clusterTimeline: null, leaderOptime: 5000, sync: null };
    const e = eligibility({ name: 'node3', status: peerStatus('replica', 5000), tags: { failover_priority: 0 } }, ctx);
    expect(e.reasons).to.deep.equal(['nofailover']);
    expect(e.detail).to.match(/tagged failover_priority 0/);
    const statuses = new Map([
      ['node1', peerStatus('replica', 5000, { tags: { failover_priority: 1 } })],
      ['node2', peerStatus('replica', 5000, { tags: { failover_priority: 5 } })],
      ['node3', peerStatus('replica', 5000)],
    ]);
    const ex = explainMembers('automatic', unlocked, resolveConfig({}), statuses);
    expect(ex.map((x) => x.failover_priority)).to.deep.equal([1, 5, 1]);
    expect(likelyWinner(ex)!.name).to.equal('node2');
  });
});

describe('decide(): sync_priority when choosing synchronous standbys', () => {
  const leaderWith = (tags: Record<string, Record<string, number | boolean>>, current: string[] = []) => {
    const base = cluster('node1');
    const members = [...base.members, member('node4')].map((m) => ({ ...m, tags: tags[m.name] ?? {} }));
    const rows = [row('node2', 5000), row('node3', 4000), row('node4', 3000)];
    return syncCandidates(tickContext(leaderInput({ raw: { synchronous_mode: true }, cluster: { ...base, members }, facts: primaryFacts(5000, { replication: rows }) })), current);
  };

  it('the highest sync_priority first, then the current ones, then the most advanced; 0 and nosync never', () => {
    expect(leaderWith({})).to.deep.equal(['node2', 'node3', 'node4']);
    expect(leaderWith({ node4: { sync_priority: 3 } })).to.deep.equal(['node4', 'node2', 'node3']);
    expect(leaderWith({ node2: { sync_priority: 0 }, node3: { nosync: true } })).to.deep.equal(['node4']);
    // Equal priorities keep a working set: the current standby stays first.
    expect(leaderWith({}, ['node3'])).to.deep.equal(['node3', 'node2', 'node4']);
    // A higher priority replaces it.
    expect(leaderWith({ node4: { sync_priority: 2 } }, ['node3'])).to.deep.equal(['node4', 'node3', 'node2']);
  });
});

/** node2 tagged to cascade from node3 (a running replica of the leader node1). */
const cascade = settings({ tags: { replicatefrom: 'node3' } });
const followAction = (d: { actions: readonly Action[] }) => d.actions.find((a) => a.type === 'follow') as Extract<Action, { type: 'follow' }> | undefined;

describe('decide(): a cascading replica (replicatefrom)', () => {
  it('points primary_conninfo at its named member, with its slot there', () => {
    const d = decide(input({ node: cascade }));
    expect(d.job).to.equal('follow');
    expect(followAction(d)).to.deep.include({ upstream: { name: 'node3', connUrl: 'postgres://node3:5432/postgres' }, slotName: 'node2' });
    expect(d.message).to.match(/following node3 \(replicatefrom\)/);
  });

  it('streaming from it: nothing to do; the leader when it stops running, and back once it runs again', () => {
    const fromNode3 = replicaFacts(5000, 'node3');
    expect(types(decide(input({ node: cascade, facts: fromNode3 })))).to.deep.equal([]);
    const stopped = cluster('node1', { members: cluster('node1').members.map((m) => (m.name === 'node3' ? { ...m, state: 'stopped' } : m)) });
    const back = decide(input({ node: cascade, facts: fromNode3, cluster: stopped }));
    expect(followAction(back)?.upstream?.name).to.equal('node1');
    expect(back.message).to.match(/leader node1 \(replicatefrom not used: node3 is not running \(stopped\)\)/);
    expect(types(decide(input({ node: cascade, facts: replicaFacts(5000, 'node1'), cluster: stopped })))).to.deep.equal([]);
    expect(followAction(decide(input({ node: cascade, facts: replicaFacts(5000, 'node1') })))?.upstream?.name).to.equal('node3');
  });

  it('not streaming from its member for long: it waits for it (no reinitialize; that member catches up from the leader)', () => {
    const notStreaming = replicaFacts(5000, 'node3', { replicationState: 'in archive recovery' });
    const memory = { ...input().memory, notStreamingSince: { since: NOW - 120_000, upstream: 'postgres://node3:5432/postgres', position: 5000 } };
    const d = decide(input({ node: cascade, facts: notStreaming, memory }));
    expect(types(d)).to.deep.equal([]);
    expect(d.publish.waitingFor).to.equal('node3 to stream WAL to this node');
    expect(d.publish.reinitializeRequired).to.equal(undefined);
  });

  it('a stopped cascading replica starts streaming from its member directly', () => {
    const stopped = { ...replicaFacts(5000, 'node3'), running: false, inRecovery: null, state: 'stopped' as const };
    const d = decide(input({ node: cascade, facts: stopped }));
    expect(d.actions.find((a) => a.type === 'start')).to.deep.include({ upstream: { name: 'node3', connUrl: 'postgres://node3:5432/postgres' }, slotName: 'node2' });
  });

  it('a diverged cascading replica is rewound from the leader', () => {
    const history = { lines: [[1, 3000, 'no recovery target specified', null, 'node1'] as const], revision: '4' };
    const c = cluster('node1', { history, members: cluster('node1').members.map((m) => ({ ...m, timeline: 2 })) });
    const d = decide(input({ node: cascade, cluster: c, facts: replicaFacts(5000, 'node3'), peers: new Map([['node1', peerStatus('primary', 6000, { timeline: 2 })]]) }));
    expect(d.job).to.equal('rewind');
    expect(d.actions.find((a) => a.type === 'rewind')).to.deep.include({ source: { name: 'node1', connUrl: 'postgres://node1:5432/postgres' } });
  });
});

describe('decide(): a replica tagged nostream', () => {
  const nostream = settings({ tags: { nostream: true } });

  it('streams from nobody: primary_conninfo and its slot go; archive recovery is its steady state', () => {
    const d = decide(input({ node: nostream }));
    expect(followAction(d)).to.deep.include({ upstream: null });
    expect(followAction(d)).to.not.have.property('slotName');
    const archive = replicaFacts(5000, null, { replicationState: 'in archive recovery' });
    const restore = { db: { parameters: { restore_command: 'cp /archive/%f %p' } } };
    const memory = { ...input().memory, appliedParameters: '{"restore_command":"cp /archive/%f %p"}', notStreamingSince: { since: NOW - 600_000, upstream: null, position: 5000 } };
    const steady = decide(input({ node: nostream, raw: restore, facts: archive, memory }));
    expect(types(steady)).to.deep.equal([]);
    expect(steady.publish.waitingFor).to.equal(undefined);
  });

  it('without a restore_command it says what it waits for', () => {
    const archive = replicaFacts(5000, null, { replicationState: 'in archive recovery' });
    expect(decide(input({ node: nostream, facts: archive })).publish.waitingFor).to.match(/a restore_command in db.parameters/);
  });
});
