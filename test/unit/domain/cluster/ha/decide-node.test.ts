import { expect } from 'chai';
import { EMPTY_CLUSTER, type Member } from '../../../../../src/domain/cluster/model/cluster.js';
import { decide } from '../../../../../src/domain/cluster/ha/decide.js';
import { EMPTY_MEMORY } from '../../../../../src/domain/cluster/ha/decision.js';
import { REPLAY_RESTART_PAUSE_MS } from '../../../../../src/domain/cluster/ha/follow.js';
import { stoppedFacts } from '../../../../../src/domain/cluster/model/facts.js';
import { cluster, input, leaderInput, member, NOW, peerStatus, primaryFacts, replicaFacts, settings, types } from './fixtures.js';

const stopped = (extra = {}) => ({ ...stoppedFacts('stopped', true), systemIdentifier: '7300', ...extra });

describe('decide(): bootstrap', () => {
  it('an empty node in an empty DCS races for initialize, then initdb, key, start, initialize, config', () => {
    const d = decide(input({ cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false) }));
    expect(d.job).to.equal('bootstrap');
    expect(types(d)).to.deep.equal(['createInitialize', 'initdb', 'acquireLeader', 'start', 'writeInitialize', 'writeConfig', 'remember']);
    expect(d.actions[0]).to.deep.include({ value: '' });
    expect(d.actions[5]).to.deep.include({ value: { ttl: 30 } });
    expect(d.rollback?.fromIndex).to.equal(1);
  });

  it('in synchronous mode the sync key names the bootstrapping node, and no standby, before its server starts', () => {
    const d = decide(input({ cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false), raw: { synchronous_mode: true } }));
    expect(types(d)).to.deep.equal(['createInitialize', 'initdb', 'acquireLeader', 'writeSync', 'start', 'writeInitialize', 'writeConfig', 'remember']);
    expect(d.actions[3]).to.deep.include({ leader: 'node2', syncStandby: [], quorum: 0, ifRevision: '0' });
  });

  it('a failure is undone (data removed, claim dropped) up to the start only: once the server ran read-write under the key, what failed after is finished by the leader', () => {
    const d = decide(input({ cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false) }));
    expect(d.rollback?.untilIndex).to.equal(types(d).indexOf('start') + 1);
    expect(d.rollback!.actions.map((a) => a.type)).to.include('removeData');
  });

  it('post_bootstrap: the script runs on the started primary before the initialize key names the cluster; its failure undoes the bootstrap', () => {
    const local = { ...input().local, postBootstrap: true };
    const d = decide(input({ cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false), local }));
    expect(types(d)).to.deep.equal(['createInitialize', 'initdb', 'acquireLeader', 'start', 'postBootstrap', 'writeInitialize', 'clearBootstrapMark', 'writeConfig', 'remember']);
    expect(d.rollback?.untilIndex, 'a failed script rolls back too').to.equal(types(d).indexOf('postBootstrap') + 1);
    expect(d.rollback!.actions.map((a) => a.type)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader', 'removeData', 'deleteInitialize']);
    expect(d.rollback!.actions[0]).to.deep.include({ mode: 'immediate' });
    // Never for data a node already holds (it registers that data).
    expect(types(decide(input({ cluster: EMPTY_CLUSTER, facts: primaryFacts(), local })))).to.not.include('postBootstrap');
  });

  it('initdb marks the new data unfinished when a post_bootstrap script is to run (an interrupted bootstrap is then known)', () => {
    const withScript = decide(input({ cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false), local: { ...input().local, postBootstrap: true } }));
    expect(withScript.actions.find((a) => a.type === 'initdb')).to.deep.equal({ type: 'initdb', unfinished: true });
    expect(decide(input({ cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false) })).actions.find((a) => a.type === 'initdb')).to.deep.equal({ type: 'initdb' });
  });

  it('data whose bootstrap was interrupted before its post_bootstrap script succeeded is undone, and the bootstrap starts over', () => {
    const unfinished = { ...primaryFacts(), bootstrapUnfinished: true };
    // Its agent came back while it still held the key and the claim.
    const mine = decide(leaderInput({ cluster: cluster('node1', { initialize: '', initializeRevision: '7' }), facts: unfinished }));
    expect(mine.message).to.equal(
      'the local data is a new cluster whose bootstrap was interrupted before its post_bootstrap script succeeded and the cluster was registered: removing it, the bootstrap starts over',
    );
    expect(types(mine)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader', 'removeData', 'deleteInitialize']);
    expect(mine.actions[0]).to.deep.include({ mode: 'immediate' });
    // The claim it saw, by its revision: one made since is another member's bootstrap under way.
    expect(mine.actions[4]).to.deep.include({ revision: '7' });
    // Its key ran out meanwhile: the claim is dropped unless another member is bootstrapping under it.
    const stale = { ...stopped(), bootstrapUnfinished: true };
    expect(types(decide(input({ cluster: { ...EMPTY_CLUSTER, initialize: '', initializeRevision: '7' }, facts: stale })))).to.deep.equal(['stop', 'disarmWatchdog', 'removeData', 'deleteInitialize']);
    const other = { ...EMPTY_CLUSTER, initialize: '', initializeRevision: '7', members: [member('node3', { state: 'initializing new cluster' })] };
    expect(types(decide(input({ cluster: other, facts: stale })))).to.deep.equal(['stop', 'disarmWatchdog', 'removeData']);
    // Another member registered a cluster meanwhile: its key stays, this data goes.
    expect(types(decide(input({ cluster: cluster('node1'), facts: { ...stale, systemIdentifier: '7301' } })))).to.deep.equal(['stop', 'disarmWatchdog', 'removeData']);
    // Registered (the initialize key names this data), stopped before the mark was cleared: only the mark goes.
    const registered = decide(input({ cluster: { ...cluster('node1'), initialize: '7300' }, facts: stale }));
    expect(types(registered)).to.deep.equal(['clearBootstrapMark']);
    expect(registered.message).to.equal('the cluster is registered with the local data: clearing its unfinished mark');
    // In pause nothing is removed.
    const paused = decide(input({ cluster: { ...EMPTY_CLUSTER, initialize: '' }, facts: stale, raw: { pause: true } }));
    expect(types(paused)).to.deep.equal([]);
    expect(paused.message).to.match(/^waiting for the end of the pause to remove the local data: the local data is a new cluster whose bootstrap was interrupted/);
  });

  it('the undo of an interrupted bootstrap is not held back while failed bootstraps back off: the leader key it holds would keep everyone else from bootstrapping', () => {
    const unfinished = { ...primaryFacts(), bootstrapUnfinished: true };
    const base = leaderInput({ cluster: cluster('node1', { initialize: '', initializeRevision: '7' }), facts: unfinished });
    const failed = { ...base.memory, jobFailures: [{ job: 'bootstrap', count: 4, lastAt: NOW - 1000, error: 'writeInitialize: the DCS did not answer' }] };
    const d = decide({ ...base, memory: failed });
    expect(types(d)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader', 'removeData', 'deleteInitialize']);
    expect(d.job).to.equal('undo bootstrap');
    // The next attempt waits its turn.
    const next = decide(input({ cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false), memory: failed }));
    expect(types(next)).to.deep.equal([]);
    expect(next.message).to.match(/^bootstrapping a new cluster: waiting \d+ s before the next attempt \(bootstrap failed 4 times in a row/);
  });

  it('no replica is copied from a leader whose bootstrap is unfinished (the initialize key still empty): it could be undone', () => {
    const unfinished = cluster('node1', { initialize: '' });
    const d = decide(input({ cluster: unfinished, facts: stoppedFacts('stopped', false) }));
    expect(types(d)).to.deep.equal([]);
    expect(d.message).to.equal('waiting for leader node1 to finish bootstrapping the cluster, to create a replica from it');
    expect(d.publish?.waitingFor).to.match(/^leader node1 to finish bootstrapping/);
    expect(decide(input({ cluster: cluster('node1'), facts: stoppedFacts('stopped', false) })).job).to.equal('create replica');
  });

  it('the leader finishes what a failed bootstrap left: the system identifier in the empty initialize key, the missing configuration', () => {
    const unfinished = decide(leaderInput({ cluster: cluster('node1', { initialize: '', config: null }) }));
    expect(types(unfinished)).to.include.members(['writeInitialize', 'writeConfig']);
    expect(unfinished.actions.find((a) => a.type === 'writeConfig')).to.deep.include({ value: { ttl: 30 } });
    expect(unfinished.message).to.contain('system identifier').and.to.contain('configuration');
    const configOnly = decide(leaderInput({ cluster: cluster('node1', { config: null }) }));
    expect(types(configOnly)).to.include('writeConfig').and.not.include('writeInitialize');
    const finished = decide(leaderInput({ cluster: cluster('node1') }));
    expect(types(finished)).to.not.include.members(['writeInitialize']);
    expect(types(finished)).to.not.include('writeConfig');
  });

  it('a stopped node whose bootstrap failed after the start (its data and the initialize key kept) starts its server again, not a copy', () => {
    const d = decide(input({ node: settings({ name: 'node1' }), cluster: cluster(null, { config: null, members: [member('node1')] }), facts: stopped() }));
    expect(types(d)).to.not.include.members(['createReplica', 'removeData']);
    expect(types(d)).to.include('start');
  });

  it('nofailover nodes and unusable required watchdogs never bootstrap', () => {
    expect(types(decide(input({ cluster: EMPTY_CLUSTER, facts: stoppedFacts('stopped', false), node: settings({ tags: { nofailover: true } }) })))).to.deep.equal([]);
  });

  it('a node with data and no initialize key registers its system identifier', () => {
    const d = decide(input({ cluster: EMPTY_CLUSTER, facts: primaryFacts() }));
    expect(types(d)).to.deep.equal(['createInitialize', 'writeConfig']);
    expect(d.actions[0]).to.deep.include({ value: '7300' });
  });

  it('a running replica with no initialize key waits for its primary\'s agent instead of registering (and being promoted beside it)', () => {
    const d = decide(input({ cluster: EMPTY_CLUSTER, facts: replicaFacts(5000, '10.0.0.1') }));
    expect(types(d)).to.deep.equal([]);
    expect(d.message).to.match(/waiting for the primary's agent to register the cluster: .* runs here as a replica of postgres:\/\/10\.0\.0\.1:5432/);
    expect(types(decide(input({ cluster: EMPTY_CLUSTER, facts: replicaFacts(5000, null), memory: { ...EMPTY_MEMORY, noInitializeSince: NOW - 300_000 } }))), 'a replica following nobody, after primary_start_timeout').to.deep.equal(['createInitialize', 'writeConfig']);
    expect(types(decide(input({ cluster: EMPTY_CLUSTER, facts: stopped() }))), 'stopped data').to.deep.equal(['createInitialize', 'writeConfig']);
    const registered = decide(input({ cluster: { ...EMPTY_CLUSTER, initialize: '7300', members: [member('node1')] }, facts: replicaFacts(5000, '10.0.0.1') }));
    expect(types(registered), 'once the primary registered the cluster').to.not.include('createInitialize');
  });

  it('stopped data that was a replica\'s waits primary_start_timeout for a primary\'s data to register the cluster, then registers itself', () => {
    const replicaData = stopped({ stoppedAsReplica: true });
    const fresh = decide(input({ cluster: EMPTY_CLUSTER, facts: replicaData, memory: { ...EMPTY_MEMORY, noInitializeSince: NOW - 10_000 } }));
    expect(types(fresh), 'started read-only meanwhile: its position counts in the race once a member registers').to.deep.equal(['configure', 'start']);
    expect(fresh.actions[1]).to.deep.include({ upstream: null, standby: true });
    expect(fresh.job).to.equal('start');
    expect(fresh.message).to.match(/^starting the local data read-only \(no upstream\) while waiting for a member with a primary's data to register the cluster \(at most primary_start_timeout, 300 s,/);
    expect(fresh.publish?.waitingFor).to.match(/^a member with a primary's data to register the cluster/);
    const running = decide(input({ cluster: EMPTY_CLUSTER, facts: replicaFacts(5000, null), memory: { ...EMPTY_MEMORY, noInitializeSince: NOW - 10_000 } }));
    expect(types(running), 'running read-only: it waits').to.deep.equal([]);
    expect(running.message).to.match(/^waiting for a member with a primary's data to register the cluster \(at most primary_start_timeout, 300 s,/);
    expect(running.wakeAt).to.equal(NOW - 10_000 + 300_000);
    const paused = decide(input({ cluster: EMPTY_CLUSTER, facts: replicaData, raw: { pause: true }, memory: { ...EMPTY_MEMORY, noInitializeSince: NOW - 10_000 } }));
    expect(types(paused), 'in pause nothing is started').to.deep.equal([]);
    const late = decide(input({ cluster: EMPTY_CLUSTER, facts: replicaData, memory: { ...EMPTY_MEMORY, noInitializeSince: NOW - 300_000 } }));
    expect(types(late), 'nobody came: this data is what the cluster has').to.deep.equal(['createInitialize', 'writeConfig']);
    expect(types(decide(input({ cluster: EMPTY_CLUSTER, facts: stopped({ stoppedAsReplica: false }), memory: { ...EMPTY_MEMORY, noInitializeSince: NOW } }))), 'a primary\'s data').to.deep.equal([
      'createInitialize',
      'writeConfig',
    ]);
  });

  it('losers wait for the bootstrap, then clone the leader', () => {
    const boot = { ...EMPTY_CLUSTER, initialize: '', members: [member('node1', { state: 'initializing new cluster' })] };
    const memory = { ...EMPTY_MEMORY, initializeSeen: { revision: '4', since: NOW - 60_000 } };
    expect(types(decide(input({ cluster: boot, facts: stoppedFacts('stopped', false), memory })))).to.deep.equal([]);
    const d = decide(input({ cluster: cluster('node1'), facts: stoppedFacts('stopped', false) }));
    expect(d.job).to.equal('create replica');
    expect(types(d)).to.deep.equal(['remember', 'configure', 'createReplica', 'start']);
  });

  it('without a leader, an empty node with a no_leader method restores a backup and starts as a replica of nobody; otherwise, or with a leader key, it waits', () => {
    const leaderless = cluster(null);
    expect(leaderless.initialize, 'a registered cluster').to.be.a('string').and.not.equal('');
    const local = { ...input().local, replicaWithoutLeader: true };
    const d = decide(input({ cluster: leaderless, facts: stoppedFacts('stopped', false), local }));
    expect(d.job).to.equal('create replica');
    expect(d.message).to.equal('no leader to create a replica from: restoring a backup (a create_replica_methods method marked no_leader)');
    expect(d.actions.find((a) => a.type === 'createReplica')).to.deep.equal({ type: 'createReplica', source: null });
    expect(d.actions.find((a) => a.type === 'start')).to.deep.include({ upstream: null, standby: true });
    // Without such a method: wait for a leader.
    expect(decide(input({ cluster: leaderless, facts: stoppedFacts('stopped', false) })).job).to.equal(null);
    // A leader whose server is down will be copied once it runs (or replaced by a failover).
    const down = cluster('node1', { members: cluster('node1').members.map((m) => (m.name === 'node1' ? { ...m, state: 'stopped' } : m)) });
    expect(decide(input({ cluster: down, facts: stoppedFacts('stopped', false), local })).job).to.equal(null);
    // Nor in pause.
    expect(decide(input({ cluster: leaderless, facts: stoppedFacts('stopped', false), local, raw: { pause: true } })).job).to.equal(null);
  });

  it('clonefrom: a new replica copies a streaming member tagged clonefrom instead of the leader, then streams from the leader', () => {
    const tagged = (extra: Partial<Member> = {}) => {
      const c = cluster('node1');
      return { ...c, members: c.members.map((m) => (m.name === 'node3' ? { ...m, tags: { clonefrom: true }, ...extra } : m)) };
    };
    const d = decide(input({ cluster: tagged(), facts: stoppedFacts('stopped', false) }));
    expect(d.message).to.equal('creating a replica from node3 (tagged clonefrom)');
    expect(d.actions.find((a) => a.type === 'createReplica')).to.deep.equal({ type: 'createReplica', source: { name: 'node3', connUrl: 'postgres://node3:5432/postgres' } });
    expect(d.actions.find((a) => a.type === 'start')).to.deep.include({ upstream: { name: 'node1', connUrl: 'postgres://node1:5432/postgres' } });
    // A reinitialize too.
    const reinit = (fromLeader: boolean) => decide(input({ cluster: tagged(), commands: { restart: null, reinitialize: { id: 3, force: false, fromLeader } } }));
    expect(reinit(false).actions.find((a) => a.type === 'createReplica')).to.deep.include({ source: { name: 'node3', connUrl: 'postgres://node3:5432/postgres' } });
    // wardenctl reinit --from-leader.
    expect(reinit(true).actions.find((a) => a.type === 'createReplica')).to.deep.include({ source: { name: 'node1', connUrl: 'postgres://node1:5432/postgres' } });
    // Not streaming, on another timeline, on another major version, or not running: the leader.
    for (const extra of [{ replicationState: 'in archive recovery' }, { timeline: 2 }, { serverVersion: 160004 }, { state: 'stopped' }] as Partial<Member>[]) {
      const c = tagged(extra);
      const withVersions = { ...c, members: c.members.map((m) => (m.name === 'node1' ? { ...m, serverVersion: 150004 } : m)) };
      const other = decide(input({ cluster: withVersions, facts: stoppedFacts('stopped', false) }));
      expect(other.message, JSON.stringify(extra)).to.equal('creating a replica from node1');
    }
  });

  it('an empty initialize key left by a vanished bootstrapper is deleted by an empty node after two ttls', () => {
    const boot = { ...EMPTY_CLUSTER, initialize: '' };
    const seenFor = (ms: number) => ({ ...EMPTY_MEMORY, initializeSeen: { revision: '4', since: NOW - ms } });
    const d = decide(input({ cluster: boot, facts: stoppedFacts('stopped', false), memory: seenFor(60_001) }));
    expect(d.actions).to.deep.equal([{ type: 'deleteInitialize', revision: '4' }]);
    for (const ms of [1000, 31_000, 60_000]) {
      expect(types(decide(input({ cluster: boot, facts: stoppedFacts('stopped', false), memory: seenFor(ms) }))), `${ms} ms`).to.deep.equal([]);
    }
  });

  it('a node with data puts its system identifier in place of an abandoned claim after one ttl, in one write', () => {
    const boot = { ...EMPTY_CLUSTER, initialize: '' };
    const seenFor = (ms: number) => ({ ...EMPTY_MEMORY, initializeSeen: { revision: '4', since: NOW - ms } });
    const d = decide(input({ cluster: boot, facts: stopped(), memory: seenFor(31_000) }));
    expect(d.actions).to.deep.equal([
      { type: 'createInitialize', value: '7300', replacing: '4' },
      { type: 'writeConfig', value: { ttl: 30 } },
    ]);
    expect(d.message).to.match(/abandoned: registering the system identifier 7300/);
    expect(types(decide(input({ cluster: boot, facts: stopped(), memory: seenFor(29_000) })))).to.deep.equal([]);
    const bootstrapping = { ...boot, members: [member('node3', { state: 'initializing new cluster' })] };
    expect(types(decide(input({ cluster: bootstrapping, facts: stopped(), memory: seenFor(90_000) })))).to.deep.equal([]);
    const withConfig = decide(input({ cluster: { ...boot, config: { ttl: 30 } as never }, facts: stopped(), memory: seenFor(31_000) }));
    expect(types(withConfig)).to.deep.equal(['createInitialize']);
  });

  it('data of another cluster is never started or led with', () => {
    const d = decide(input({ facts: stopped({ systemIdentifier: '999' }) }));
    expect(types(d)).to.deep.equal([]);
    expect(d.message).to.match(/another cluster/);
  });

  it('an initialize key that holds no system identifier (a hand edit) is not another cluster: the leader keeps its key and a replica starts (the leader gave its key up and nobody led)', () => {
    for (const garbage of [' ', 'yes', '{"sysid":7300}', '7300x']) {
      const leader = decide(leaderInput({ cluster: cluster('node1', { initialize: garbage }) }));
      expect(types(leader), garbage).to.not.include('releaseLeader');
      expect(leader.message, garbage).to.not.match(/another cluster/);
      expect(types(decide(input({ cluster: cluster('node1', { initialize: garbage }), facts: stopped() }))), garbage).to.deep.equal(['start']);
    }
    // Digits that are not this data's identifier still are another cluster's.
    expect(types(decide(leaderInput({ cluster: cluster('node1', { initialize: '999' }) })))).to.include('releaseLeader');
  });

  it('data of another cluster in a cluster without a leader: the advice is not a reinitialize, which has nothing to copy from', () => {
    const withLeader = decide(input({ facts: stopped({ systemIdentifier: '999' }) }));
    expect(withLeader.publish?.reinitializeRequired).to.match(/run wardenctl reinit node2 to replace it$/);
    const leaderless = decide(input({ cluster: { ...cluster('node1'), leader: null }, facts: stopped({ systemIdentifier: '999' }) }));
    expect(types(leaderless)).to.deep.equal([]);
    expect(leaderless.publish?.reinitializeRequired).to.match(/no member leads the cluster to copy from: .*pg_upgrade.*wardenctl remove demo\b/);
  });
});

describe('decide(): a stopped server', () => {
  it('starts as a replica of the leader', () => {
    const d = decide(input({ facts: stopped() }));
    expect(types(d)).to.deep.equal(['start']);
    expect(d.actions[0]).to.deep.include({ standby: true, upstream: { name: 'node1', connUrl: 'postgres://node1:5432/postgres' } });
  });

  it('a crashed primary holding the key starts again as primary, refreshing the key first', () => {
    const d = decide(leaderInput({ facts: stopped({ state: 'crashed' }) }));
    expect(types(d)).to.deep.equal(['refreshLeader', 'remember', 'start']);
    expect(d.actions[2]).to.deep.include({ standby: false, upstream: null });
  });

  it('primary_start_timeout passed (or 0): stops what is left of the server, gives the key up and starts as a replica', () => {
    const memory = { ...leaderInput().memory, primaryStartAt: NOW - 400_000 };
    for (const d of [
      decide(leaderInput({ facts: stopped({ state: 'start_failed' }), memory })),
      decide(leaderInput({ facts: stopped({ state: 'crashed' }), raw: { primary_start_timeout: 0 } })),
    ]) {
      // A postmaster recovering from a backend's crash is still alive: down before the key goes.
      expect(types(d).slice(0, 3)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader']);
      expect(d.actions[0]).to.deep.include({ mode: 'immediate' });
    }
    // Restarts that kept failing back off; the give-up does not wait for their next attempt.
    const failing = { ...memory, jobFailures: [{ job: 'start', count: 8, lastAt: NOW - 1000, error: 'No space left on device' }] };
    const held = decide(leaderInput({ facts: stopped({ state: 'start_failed' }), memory: failing }));
    expect(types(held).slice(0, 3)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader']);
  });

  it('synchronous mode: a primary that failed to start twice in a row gives the key up before primary_start_timeout, its synchronous standbys holding every commit it acknowledged', () => {
    const sync = { leader: 'node1', syncStandby: ['node2'], quorum: 0, revision: '3' };
    const failures = (count: number) => ({ ...leaderInput().memory, primaryStartAt: NOW - 10_000, jobFailures: [{ job: 'start', count, lastAt: NOW - 1000, error: 'start: the server exited during start-up: FATAL: could not write to file "pg_wal/xlogtemp.1": No space left on device' }] });
    const at = (count: number, raw: Record<string, unknown>, s: typeof sync | null = sync) => decide(leaderInput({ raw, cluster: cluster('node1', { sync: s }), facts: stopped({ state: 'start_failed' }), memory: failures(count) }));
    const early = at(2, { synchronous_mode: true });
    expect(types(early).slice(0, 3)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader']);
    expect(early.message).to.equal('the primary failed to start 2 times in a row and its synchronous standbys (node2) hold every commit it acknowledged: giving the key up to fail over');
    expect(types(at(2, { synchronous_mode: 'quorum' }, { ...sync, syncStandby: ['node2', 'node3'], quorum: 1 })).slice(0, 3)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader']);
    // Once only: the next attempt may still bring it back (a moment's shortage); it waits its back-off, holding the key.
    const keeps = (d: ReturnType<typeof decide>) => types(d).includes('refreshLeader') && !types(d).includes('releaseLeader');
    expect(keeps(at(1, { synchronous_mode: true }))).to.equal(true);
    // Where a failover could lose commits, primary_start_timeout decides: asynchronous mode, a key naming no standby (commits did not wait), or another primary.
    expect(keeps(at(5, {}))).to.equal(true);
    expect(keeps(at(5, { synchronous_mode: true }, { ...sync, syncStandby: [] }))).to.equal(true);
    expect(keeps(at(5, { synchronous_mode: true }, { ...sync, leader: 'node2', syncStandby: ['node1'] }))).to.equal(true);
    expect(keeps(at(5, { synchronous_mode: true }, null))).to.equal(true);
  });

  it('a server that runs but does not answer is never started over; its leader holds the key until primary_start_timeout, then stops it before giving the key up', () => {
    const silent = stopped({ state: 'running' });
    const first = decide(leaderInput({ facts: silent }));
    expect(types(first)).to.deep.equal(['refreshLeader', 'remember']);
    expect(first.job).to.equal(null);
    expect(first.message).to.contain('does not answer').and.to.contain('holding the leader key');
    const waiting = decide(leaderInput({ facts: silent, memory: { ...leaderInput().memory, primaryStartAt: NOW - 299_000 } }));
    expect(types(waiting)).to.deep.equal(['refreshLeader']);
    const late = decide(leaderInput({ facts: silent, memory: { ...leaderInput().memory, primaryStartAt: NOW - 301_000 } }));
    expect(types(late)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader', 'remember']);
    expect(late.actions[0]).to.deep.include({ mode: 'immediate' });
    expect(late.job).to.equal('stop');
    // In pause the key stays with it: no failover, and no second primary once it answers again.
    const paused = decide(leaderInput({ facts: silent, raw: { pause: true }, memory: { ...leaderInput().memory, primaryStartAt: NOW - 301_000 } }));
    expect(types(paused)).to.include('refreshLeader').and.not.include.members(['stop', 'releaseLeader']);
    // A replica's silent server: nothing to do but wait.
    const replica = decide(input({ facts: silent }));
    expect(types(replica)).to.deep.equal([]);
    expect(replica.message).to.equal('waiting: the server runs but does not answer');
  });

  it('a silent server last seen as a primary, on a node without the key or without the DCS, is stopped at once (not in pause, nor by a failsafe leader)', () => {
    const silent = stopped({ state: 'running' });
    const memory = { ...input().memory, lastRole: 'primary' as const };
    const keyElsewhere = decide(input({ facts: silent, memory }));
    expect(types(keyElsewhere)).to.deep.equal(['stop']);
    expect(keyElsewhere.actions[0]).to.deep.include({ mode: 'immediate' });
    expect(keyElsewhere.message).to.contain('last seen as a primary');
    const blind = decide(input({ facts: silent, memory, dcsReachable: false }));
    expect(types(blind)).to.deep.equal(['stop']);
    expect(types(decide(input({ facts: silent, dcsReachable: false })))).to.deep.equal([]);
    // In failsafe mode the leader keeps it until its lease runs out (one slow probe must not end a confirmed primary).
    const failsafeLeader = decide(leaderInput({ facts: silent, dcsReachable: false, raw: { failsafe_mode: true } }));
    expect(types(failsafeLeader)).to.deep.equal([]);
    expect(failsafeLeader.message).to.contain('does not answer');
    expect(types(decide(input({ facts: silent, memory, raw: { pause: true } })))).to.deep.equal([]);
    // Its status says so whatever the tick decided, so that no other node promotes before it is stopped; a silent replica's does not.
    expect(keyElsewhere.publish.silentPrimary).to.equal(true);
    expect(decide(input({ facts: silent, memory, raw: { pause: true } })).publish.silentPrimary).to.equal(true);
    expect(decide(input({ facts: silent })).publish.silentPrimary).to.equal(undefined);
    // A stop that could not take it down leaves it silent too (its state says stop_failed).
    expect(types(decide(input({ facts: stopped({ state: 'stop_failed' }), memory })))).to.deep.equal(['stop']);
  });

  it('holding the key but last seen as a replica: starts read-only (promotion follows)', () => {
    const d = decide(leaderInput({ facts: stopped(), memory: { ...EMPTY_MEMORY, appliedParameters: '{}' } }));
    expect(types(d)).to.deep.equal(['refreshLeader', 'start']);
    expect(d.actions[1]).to.deep.include({ standby: true, upstream: null });
  });

  it('a leader still starting keeps its key until primary_start_timeout, then stops it and gives the key up', () => {
    const starting = stopped({ state: 'starting' });
    expect(types(decide(leaderInput({ facts: starting })))).to.deep.equal(['refreshLeader', 'remember']);
    const memory = { ...leaderInput().memory, primaryStartAt: NOW - 301_000 };
    expect(types(decide(leaderInput({ facts: starting, memory })))).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader', 'remember']);
  });

  it('pause: nothing is started', () => {
    expect(types(decide(input({ facts: stopped(), raw: { pause: true } })))).to.deep.equal([]);
  });
});

describe('decide(): a replica', () => {
  it('follows a new leader', () => {
    const d = decide(input({ facts: replicaFacts(5000, 'node3') }));
    expect(types(d)).to.deep.equal(['follow']);
  });

  it('rewinds when its timeline branched off the leader and it has not streamed for the grace period; reinitializes without pg_rewind or after a failed rewind', () => {
    const history = { lines: [[1, 4000, 'no recovery target specified', null, 'node1'] as const], revision: '6' };
    const c = cluster('node1', { history, members: [member('node1', { timeline: 2, role: 'primary' }), member('node2'), member('node3')] });
    const diverged = replicaFacts(5000, 'node1', { replicationState: null });
    const waited = { ...EMPTY_MEMORY, appliedParameters: '{}', notStreamingSince: { since: NOW - 60_000, upstream: 'postgres://node1:5432/postgres', position: 5000 } };
    const peers = new Map([['node1', peerStatus('primary', 6000, { timeline: 2 })], ['node3', null]]);
    expect(decide(input({ cluster: c, facts: diverged, memory: waited })).need).to.equal('peers');
    expect(types(decide(input({ cluster: c, facts: diverged, memory: waited, peers })))).to.deep.equal(['stop', 'rewind', 'remember', 'start']);
    // Without pg_rewind, or after a failed rewind, the data directory is rebuilt only where an opt-in allows it.
    const noRewind = decide(input({ cluster: c, facts: diverged, memory: waited, peers, raw: { db: { use_pg_rewind: false } } }));
    expect(types(noRewind)).to.deep.equal([]);
    expect(noRewind.publish.reinitializeRequired).to.match(/pg_rewind is not allowed .*run wardenctl reinit node2 .*remove_data_directory_on_diverged_timelines/);
    const diverging = { db: { use_pg_rewind: false, remove_data_directory_on_diverged_timelines: true } };
    expect(decide(input({ cluster: c, facts: diverged, memory: waited, peers, raw: diverging })).job).to.equal('reinitialize');
    const failed = decide(input({ cluster: c, facts: diverged, memory: { ...waited, rewindFailedOnTimeline: 1 }, peers }));
    expect(types(failed)).to.deep.equal([]);
    expect(failed.publish.reinitializeRequired).to.match(/pg_rewind failed on timeline 1.*remove_data_directory_on_rewind_failure/);
    const rebuild = { db: { remove_data_directory_on_rewind_failure: true } };
    expect(decide(input({ cluster: c, facts: diverged, memory: { ...waited, rewindFailedOnTimeline: 1 }, peers, raw: rebuild })).job).to.equal('reinitialize');
    // Behind the branch point it is not diverged; streaming proves it either way.
    expect(types(decide(input({ cluster: c, facts: replicaFacts(3000, 'node1', { replicationState: null }), memory: waited })))).to.deep.equal([]);
    expect(types(decide(input({ cluster: c, facts: replicaFacts(5000, 'node1'), memory: waited })))).to.deep.equal([]);
  });

  it('applies changed server parameters (local ones win over the dynamic ones)', () => {
    const d = decide(input({ raw: { db: { parameters: { work_mem: '8MB', shared_buffers: '1GB' } } }, local: { bootstrapDcs: {}, parameters: { work_mem: '16MB' }, watchdogSafetyMargin: 5 } }));
    expect(d.actions).to.deep.equal([{ type: 'configure', parameters: { shared_buffers: '1GB', work_mem: '16MB' }, key: '{"shared_buffers":"1GB","work_mem":"16MB"}' }]);
  });

  it('configures again when a reload changed only the local access rules (db.pg_hba, db.pg_ident), and hands them over', () => {
    const local = { bootstrapDcs: {}, parameters: { work_mem: '16MB' }, watchdogSafetyMargin: 5, access: { hba: ['host all app 10.0.0.0/8 scram-sha-256'], ident: null } };
    const first = decide(input({ local }));
    const configure = first.actions.find((a) => a.type === 'configure');
    expect(configure).to.deep.include({ local: { parameters: { work_mem: '16MB' }, hba: local.access.hba, ident: null } });
    const applied = { ...EMPTY_MEMORY, appliedParameters: configure!.type === 'configure' ? configure!.key : null };
    expect(types(decide(input({ local, memory: applied }))), 'nothing changed').to.deep.equal([]);
    const reloaded = { ...local, access: { hba: local.access.hba, ident: ['corp alice@EXAMPLE alice'] } };
    const again = decide(input({ local: reloaded, memory: applied })).actions;
    expect(again.map((a) => a.type)).to.deep.equal(['configure']);
    expect(again[0]).to.deep.include({ local: { parameters: { work_mem: '16MB' }, hba: local.access.hba, ident: ['corp alice@EXAMPLE alice'] } });
  });
});

describe('decide(): commands and scheduled restarts', () => {
  it('restart: runs as a job and answers when done; refused when its conditions do not hold', () => {
    const d = decide(input({ commands: { restart: { id: 7, conditions: {} }, reinitialize: null } }));
    expect(d.job).to.equal('restart');
    expect(types(d)).to.deep.equal(['restart', 'resolveCommand']);
    // A crashed former primary (another node leads, here in pause) comes back as a replica, never as a second primary.
    const crashed = { ...stoppedFacts('crashed', true), systemIdentifier: '7300', timeline: 1 };
    const asked = decide(input({ facts: crashed, raw: { pause: true }, memory: { ...EMPTY_MEMORY, lastRole: 'primary' }, commands: { restart: { id: 7, conditions: {} }, reinitialize: null } }));
    expect(types(asked)).to.deep.equal(['configure', 'stop', 'start', 'resolveCommand']);
    expect(asked.actions[2]).to.deep.include({ standby: true, upstream: { name: 'node1', connUrl: 'postgres://node1:5432/postgres' } });
    expect(asked.actions[1]).to.deep.include({ mode: 'fast' });
    // A server that runs but does not answer would sit on a fast shutdown: it is stopped immediately.
    const silent = decide(input({ facts: { ...stoppedFacts('running', true) }, commands: { restart: { id: 7, conditions: {} }, reinitialize: null } }));
    expect(types(silent)).to.include.ordered.members(['stop', 'start', 'resolveCommand']);
    expect(silent.actions.find((a) => a.type === 'stop')).to.deep.include({ mode: 'immediate' });
    // So is the leader's: pg_ctl restart would wait out its whole timeout on a fast shutdown first.
    const silentLeader = decide(leaderInput({ facts: stopped({ state: 'running' }), commands: { restart: { id: 7, conditions: {} }, reinitialize: null } }));
    expect(types(silentLeader).filter((t) => ['stop', 'restart', 'resolveCommand'].includes(t))).to.deep.equal(['stop', 'restart', 'resolveCommand']);
    expect(silentLeader.actions.find((a) => a.type === 'stop')).to.deep.include({ mode: 'immediate' });
    const refused = decide(input({ commands: { restart: { id: 7, conditions: { role: 'primary' } }, reinitialize: null } }));
    expect(refused.actions).to.deep.equal([{ type: 'resolveCommand', id: 7, ok: false, error: 'restart_conditions_not_met', message: "restart conditions are not satisfied: the node's role is replica, not primary" }]);
  });

  it('a leader restarting keeps refreshing its key while the job runs', () => {
    const d = decide(leaderInput({ job: { name: 'restart', startedAt: NOW - 5000, step: 'restart' } }));
    expect(types(d)).to.deep.equal(['refreshLeader']);
    const demoting = decide(leaderInput({ job: { name: 'demote', startedAt: NOW - 5000, step: 'stop' } }));
    expect(types(demoting)).to.deep.equal([]);
  });

  it('commands during a job: refused as in progress; a forced reinitialize is queued', () => {
    const job = { name: 'restart', startedAt: NOW, step: 'restart' };
    const d = decide(input({ job, commands: { restart: { id: 1, conditions: {} }, reinitialize: { id: 2, force: true, fromLeader: false } } }));
    expect(d.actions).to.deep.include({ type: 'resolveCommand', id: 1, ok: false, error: 'action_in_progress', message: 'restart already in progress' });
    expect(types(d)).to.include('remember');
    const queued = decide(input({ memory: { ...EMPTY_MEMORY, appliedParameters: '{}', reinitializeQueued: { fromLeader: false } } }));
    expect(queued.job).to.equal('reinitialize');
  });

  it('reinitialize: stop, replace the data with a copy, start on a replica; refused on the leader', () => {
    const d = decide(input({ commands: { restart: null, reinitialize: { id: 3, force: false, fromLeader: true } } }));
    expect(types(d)).to.deep.equal(['resolveCommand', 'stop', 'remember', 'configure', 'createReplica', 'start']);
    // The copy replaces the data itself (a keep_data method restores over it: a delta restore).
    expect(d.actions.find((a) => a.type === 'createReplica')).to.deep.include({ replacing: true });
    const onLeader = decide(leaderInput({ commands: { restart: null, reinitialize: { id: 3, force: false, fromLeader: false } } }));
    expect(onLeader.actions).to.deep.include({ type: 'resolveCommand', id: 3, ok: false, error: 'not_allowed_on_leader', message: 'I am the leader, can not reinitialize' });
  });

  it('reinitialize is refused while this node runs another major version than the leader (its data may be the only way back)', () => {
    const commands = { restart: null, reinitialize: { id: 4, force: true, fromLeader: false } };
    const members = cluster('node1').members.map((m) => (m.name === 'node1' ? { ...m, serverVersion: 160004 } : m));
    const d = decide(input({ cluster: cluster('node1', { members }), facts: replicaFacts(5000, 'node1', { serverVersion: 150018 }), commands }));
    expect(types(d)).to.not.include.members(['removeData', 'createReplica']);
    expect(d.actions[0]).to.deep.include({ type: 'resolveCommand', id: 4, ok: false, error: 'not_possible_now' });
    expect((d.actions[0] as { message: string }).message).to.match(/^this node runs PostgreSQL 15 and the leader 16: .*point db\.bin_dir at PostgreSQL 16/);
    const same = cluster('node1').members.map((m) => (m.name === 'node1' ? { ...m, serverVersion: 150020 } : m));
    expect(types(decide(input({ cluster: cluster('node1', { members: same }), facts: replicaFacts(5000, 'node1', { serverVersion: 150018 }), commands }))), 'a minor release apart').to.include('createReplica');
  });

  it('a scheduled restart waits for its time, runs when due under its conditions, else is dropped', () => {
    const at = new Date(NOW + 30_000).toISOString();
    const memory = { ...EMPTY_MEMORY, appliedParameters: '{}', scheduledRestart: { schedule: at } };
    expect(decide(input({ memory })).wakeAt).to.equal(NOW + 30_000);
    expect(decide(input({ memory, now: NOW + 30_000 })).job).to.equal('restart');
    const pending = { ...memory, scheduledRestart: { schedule: at, restart_pending: true } };
    const dropped = decide(input({ memory: pending, now: NOW + 30_000 }));
    expect(dropped.job).to.equal(null);
    expect(dropped.actions).to.deep.include({ type: 'remember', patch: { scheduledRestart: null } });
    expect(decide(input({ memory, now: NOW + 60_000 })).actions).to.deep.include({ type: 'remember', patch: { scheduledRestart: null } });
    // Paused: held, at and past its time (nothing restarts in maintenance mode); kept for after the resume.
    for (const now of [NOW, NOW + 30_000, NOW + 60_000]) {
      const held = decide(input({ memory, now, raw: { pause: true } }));
      expect(held.job, `at +${now - NOW} ms`).to.equal(null);
      expect(held.actions).to.not.deep.include({ type: 'remember', patch: { scheduledRestart: null } });
      expect(held.message).to.include(`restart scheduled at ${at} held while paused`);
    }
  });
});

describe('decide(): a replica whose replay waits for a restart', () => {
  const blocked = (memory = {}, raw = {}) =>
    input({ raw, facts: replicaFacts(5000, 'node1', { replayPaused: true, replayBlockedBy: 'max_connections 100 is below 200 on the primary' }), memory: { ...EMPTY_MEMORY, appliedParameters: '{}', ...memory } });

  it('restarts at once, remembering when, so the restart takes the primary value from the control file', () => {
    const d = decide(blocked());
    expect(d.job).to.equal('restart');
    expect(types(d)).to.include.members(['remember', 'restart']);
    expect(d.message).to.equal('restarting: replay is paused until a restart because max_connections 100 is below 200 on the primary');
  });

  it('does not restart again within five minutes of the last such restart, and says what it waits for', () => {
    const d = decide(blocked({ replayRestartAt: NOW - 60_000 }));
    expect(d.job).to.equal(null);
    expect(types(d)).to.not.include('restart');
    expect(d.wakeAt).to.equal(NOW - 60_000 + REPLAY_RESTART_PAUSE_MS);
    expect(d.publish.waitingFor).to.equal('a restart: replay is paused because max_connections 100 is below 200 on the primary');
    expect(decide(blocked({ replayRestartAt: NOW - REPLAY_RESTART_PAUSE_MS })).job).to.equal('restart');
  });

  it('leaves it to the operator in pause; a pause of another kind (no reason known) is left alone', () => {
    expect(types(decide(blocked({}, { pause: true })))).to.not.include('restart');
    const operatorPause = input({ facts: replicaFacts(5000, 'node1', { replayPaused: true, replayBlockedBy: null }) });
    expect(types(decide(operatorPause))).to.not.include('restart');
  });
});

describe('decide(): a replica whose control file moved its hot-standby minimums', () => {
  it('writes its configuration again (a lowered value then shows as a pending restart), once', () => {
    const moved = input({ facts: replicaFacts(5000, 'node1', { standbyMinimumsChanged: true }) });
    expect(types(decide(moved))).to.include('configure');
    expect(types(decide(input({ facts: replicaFacts(5000, 'node1', { standbyMinimumsChanged: false }) })))).to.not.include('configure');
  });
});
