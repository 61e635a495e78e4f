import { expect } from 'chai';
import { ValidationError } from '../../../../../src/domain/errors.js';
import { stoppedFacts } from '../../../../../src/domain/cluster/model/facts.js';
import { HEALTH_PATHS, checkHealth, replicationLag, type HealthEndpoint, type HealthQuery } from '../../../../../src/domain/cluster/rules/health.js';
import type { NodeSnapshot } from '../../../../../src/domain/cluster/model/snapshot.js';
import { NOW, clusterView, primaryFacts, replicaFacts, snapshot, sync } from '../fixtures.js';

const primary = () => snapshot({ facts: primaryFacts(), leader: true, cluster: clusterView({ leader: 'node1' }) });
/** Async replica: 2 MB behind on replay (optime 100 000 000, replayed 98 000 000), 1 MB on receive. */
const replica = (opts: Parameters<typeof snapshot>[0] = {}) => snapshot({ facts: replicaFacts(), ...opts });
const syncReplica = () => replica({ cluster: clusterView({ sync: sync(['node1']) }) });
const quorumReplica = () => replica({ config: { synchronous_mode: 'quorum' }, cluster: clusterView({ sync: sync(['node1']) }) });
const standbyLeader = () => snapshot({ facts: replicaFacts(), leader: true, standbyCluster: true, cluster: clusterView({ leader: 'node1' }) });
const stopped = () => snapshot({ facts: stoppedFacts('stopped', true) });
/** Lock expired: refreshed more than ttl ago. */
const expiredPrimary = (): NodeSnapshot => ({ ...primary(), leaderLockExpiresAt: NOW - 1 });

function check(endpoint: HealthEndpoint, snap: NodeSnapshot, query: HealthQuery = {}, now = NOW): 200 | 503 {
  return checkHealth(endpoint, snap, query, now);
}

function badQuery(endpoint: HealthEndpoint, query: HealthQuery): ValidationError {
  try {
    check(endpoint, replica(), query);
  } catch (e) {
    expect(e).to.be.instanceOf(ValidationError);
    expect((e as ValidationError).code).to.equal('invalid_query');
    return e as ValidationError;
  }
  throw new Error(`query ${JSON.stringify(query)} was accepted`);
}

describe('domain/cluster/health: paths', () => {
  it('maps every path of the seed table, aliases included', () => {
    expect(HEALTH_PATHS).to.deep.equal({
      '/': 'primary', '/primary': 'primary', '/read-write': 'primary',
      '/standby-leader': 'standby_leader', '/standby_leader': 'standby_leader',
      '/leader': 'leader', '/replica': 'replica', '/read-only': 'read_only',
      '/synchronous': 'synchronous', '/sync': 'synchronous', '/read-only-sync': 'read_only_sync',
      '/quorum': 'quorum', '/read-only-quorum': 'read_only_quorum',
      '/asynchronous': 'asynchronous', '/async': 'asynchronous',
      '/health': 'health', '/liveness': 'liveness', '/readiness': 'readiness',
    });
  });
});

describe('domain/cluster/health: the seed table, row by row', () => {
  it('/, /primary, /read-write: 200 only for a primary holding the leader lock', () => {
    expect(check('primary', primary())).to.equal(200);
    expect(check('primary', expiredPrimary())).to.equal(503);
    expect(check('primary', replica())).to.equal(503);
    expect(check('primary', standbyLeader())).to.equal(503);
    expect(check('primary', snapshot({ facts: primaryFacts(), leader: false }))).to.equal(503);
    // A primary being stopped (a switchover's demotion has begun) takes no new sessions.
    expect(check('primary', snapshot({ facts: primaryFacts({ state: 'stopping' }), leader: true, cluster: clusterView({ leader: 'node1' }) }))).to.equal(503);
    expect(check('leader', snapshot({ facts: primaryFacts({ state: 'stopping' }), leader: true, cluster: clusterView({ leader: 'node1' }) }))).to.equal(200);
  });

  it('/standby-leader, /standby_leader: 200 only for the leader of a standby cluster', () => {
    expect(check('standby_leader', standbyLeader())).to.equal(200);
    expect(check('standby_leader', primary())).to.equal(503);
    expect(check('standby_leader', replica())).to.equal(503);
    expect(check('standby_leader', { ...standbyLeader(), leaderLockExpiresAt: NOW })).to.equal(503);
  });

  it('/leader: 200 for the lock holder, primary or standby leader, whatever its server does meanwhile', () => {
    expect(check('leader', primary())).to.equal(200);
    expect(check('leader', standbyLeader())).to.equal(200);
    expect(check('leader', replica())).to.equal(503);
    expect(check('leader', expiredPrimary())).to.equal(503);
    // The leader's server restarting (stopped, role demoted) keeps the lock: a router on /leader does not flap.
    const restarting = snapshot({ facts: stoppedFacts('stopped', true), leader: true, cluster: clusterView({ leader: 'node1' }) });
    expect(restarting.status.role).to.equal('demoted');
    expect(check('leader', restarting)).to.equal(200);
    expect(check('primary', restarting)).to.equal(503);
    expect(check('leader', { ...restarting, leaderLockExpiresAt: NOW })).to.equal(503);
  });

  it('/replica: 200 for a running replica without noloadbalance', () => {
    expect(check('replica', replica())).to.equal(200);
    expect(check('replica', primary())).to.equal(503);
    expect(check('replica', standbyLeader())).to.equal(503);
    expect(check('replica', stopped())).to.equal(503);
    expect(check('replica', snapshot({ facts: replicaFacts({ state: 'starting' }) }))).to.equal(503);
  });

  it('/replica: 503 when noloadbalance is set', () => {
    expect(check('replica', replica({ node: { tags: { noloadbalance: true } } }))).to.equal(503);
    expect(check('replica', replica({ node: { tags: { noloadbalance: 'true' } } }))).to.equal(503);
    expect(check('replica', replica({ node: { tags: { noloadbalance: false } } }))).to.equal(200);
  });

  it('/read-only: as /replica, and also the primary', () => {
    expect(check('read_only', replica())).to.equal(200);
    expect(check('read_only', primary())).to.equal(200);
    expect(check('read_only', expiredPrimary())).to.equal(503);
    expect(check('read_only', stopped())).to.equal(503);
    expect(check('read_only', replica({ node: { tags: { noloadbalance: true } } }))).to.equal(503);
  });

  it('/read-only and its sync and quorum variants: the leader of a standby cluster serves reads too', () => {
    for (const ep of ['read_only', 'read_only_sync', 'read_only_quorum'] as const) {
      expect(check(ep, standbyLeader()), ep).to.equal(200);
      expect(check(ep, { ...standbyLeader(), leaderLockExpiresAt: NOW }), ep).to.equal(503);
    }
    const standbyLeaderDown = snapshot({ facts: stoppedFacts('stopped', true), leader: true, standbyCluster: true, cluster: clusterView({ leader: 'node1' }) });
    expect(check('read_only', standbyLeaderDown)).to.equal(503);
  });

  it('/synchronous, /sync: 200 for a synchronous standby', () => {
    expect(check('synchronous', syncReplica())).to.equal(200);
    expect(check('synchronous', replica())).to.equal(503);
    expect(check('synchronous', quorumReplica())).to.equal(503);
    expect(check('synchronous', primary())).to.equal(503);
  });

  it('/sync: 503 when the DCS view is older than ttl', () => {
    expect(check('synchronous', { ...syncReplica(), clusterReadAt: NOW - 30_000 })).to.equal(503);
    expect(check('synchronous', { ...syncReplica(), clusterReadAt: null })).to.equal(503);
  });

  it('/read-only-sync: as /sync, and also the primary', () => {
    expect(check('read_only_sync', syncReplica())).to.equal(200);
    expect(check('read_only_sync', primary())).to.equal(200);
    expect(check('read_only_sync', replica())).to.equal(503);
    expect(check('read_only_sync', { ...syncReplica(), clusterReadAt: NOW - 31_000 })).to.equal(503);
  });

  it('/quorum: 200 for a quorum standby', () => {
    expect(check('quorum', quorumReplica())).to.equal(200);
    expect(check('quorum', syncReplica())).to.equal(503);
    expect(check('quorum', replica())).to.equal(503);
    expect(check('quorum', { ...quorumReplica(), clusterReadAt: NOW - 30_000 })).to.equal(503);
  });

  it('/read-only-quorum: as /quorum, and also the primary', () => {
    expect(check('read_only_quorum', quorumReplica())).to.equal(200);
    expect(check('read_only_quorum', primary())).to.equal(200);
    expect(check('read_only_quorum', syncReplica())).to.equal(503);
  });

  it('/asynchronous, /async: 200 for an asynchronous standby', () => {
    expect(check('asynchronous', replica())).to.equal(200);
    expect(check('asynchronous', syncReplica())).to.equal(503);
    expect(check('asynchronous', quorumReplica())).to.equal(503);
    expect(check('asynchronous', primary())).to.equal(503);
    expect(check('asynchronous', { ...replica(), clusterReadAt: NOW - 30_000 })).to.equal(503);
  });

  it('/health: 200 while the database is up and running and answers, whatever the role', () => {
    expect(check('health', primary())).to.equal(200);
    expect(check('health', replica())).to.equal(200);
    expect(check('health', stopped())).to.equal(503);
    expect(check('health', snapshot({ facts: stoppedFacts('crashed', true) }))).to.equal(503);
    // Its postmaster lives but the server answers nothing (frozen, stalled on I/O): not up.
    const silent = snapshot({ facts: { ...stoppedFacts('running', true) } });
    expect(silent.status).to.include({ state: 'running', role: 'demoted' });
    expect(check('health', silent)).to.equal(503);
    expect(check('health', snapshot({ facts: stoppedFacts('running', true), leader: true, cluster: clusterView({ leader: 'node1' }) }))).to.equal(503);
  });

  it('/liveness: primary fails when the last loop ran more than ttl ago', () => {
    expect(check('liveness', { ...primary(), lastLoopAt: NOW - 30_000 })).to.equal(200);
    expect(check('liveness', { ...primary(), lastLoopAt: NOW - 30_001 })).to.equal(503);
  });

  it('/liveness: a replica fails only after 2*ttl', () => {
    expect(check('liveness', { ...replica(), lastLoopAt: NOW - 59_000 })).to.equal(200);
    expect(check('liveness', { ...replica(), lastLoopAt: NOW - 60_001 })).to.equal(503);
    expect(check('liveness', { ...replica({ config: { ttl: 60, retry_timeout: 10 } }), lastLoopAt: NOW - 100_000 })).to.equal(200);
  });

  it('/liveness: always 200 while paused', () => {
    expect(check('liveness', { ...primary(), config: { ...primary().config, pause: true }, lastLoopAt: NOW - 3_600_000 })).to.equal(200);
  });

  it('/liveness executes no database check: a stopped database still passes', () => {
    expect(check('liveness', stopped())).to.equal(200);
  });

  it('/readiness: 200 for the leader', () => {
    expect(check('readiness', primary())).to.equal(200);
    expect(check('readiness', standbyLeader())).to.equal(200);
  });

  it('/readiness: a replica must run, stream, and be within maximum_lag_on_failover by default', () => {
    expect(check('readiness', replica({ config: { maximum_lag_on_failover: '2MB' } }))).to.equal(200);
    expect(check('readiness', replica())).to.equal(503); // 2 000 000 bytes behind > 1 MiB default
    expect(check('readiness', replica({ facts: replicaFacts({ replicationState: 'in archive recovery' }), config: { maximum_lag_on_failover: '1GB' } }))).to.equal(503);
    expect(check('readiness', stopped())).to.equal(503);
  });
});

describe('domain/cluster/health: query parameters', () => {
  it('/replica?replication_state=streaming requires that state', () => {
    expect(check('replica', replica(), { replication_state: 'streaming' })).to.equal(200);
    const archive = replica({ facts: replicaFacts({ replicationState: 'in archive recovery' }) });
    expect(check('replica', archive, { replication_state: 'streaming' })).to.equal(503);
    expect(check('replica', archive, { replication_state: 'in archive recovery' })).to.equal(200);
  });

  it('/replica?lag= requires lag not above the value, in bytes or a size', () => {
    expect(replicationLag(replica())).to.equal(2_000_000);
    expect(check('replica', replica(), { lag: '2000000' })).to.equal(200);
    expect(check('replica', replica(), { lag: '1999999' })).to.equal(503);
    expect(check('replica', replica(), { lag: '2MB' })).to.equal(200);
    expect(check('replica', replica(), { lag: '1MB' })).to.equal(503);
  });

  it('/replica?lag= fails when the leader position is unknown, passes without lag', () => {
    const unknown = replica({ cluster: clusterView({ optime: null }) });
    expect(check('replica', unknown, { lag: '1GB' })).to.equal(503);
    expect(check('replica', unknown)).to.equal(200);
  });

  it('/async?lag= and /asynchronous?lag= filter by lag', () => {
    expect(check('asynchronous', replica(), { lag: '16MB' })).to.equal(200);
    expect(check('asynchronous', replica(), { lag: '16kB' })).to.equal(503);
  });

  it('/replica?tag_<name>=<value> requires each tag to exist with that value', () => {
    const tagged = replica({ node: { tags: { zone: 'east', rack: 'r1' } } });
    expect(check('replica', tagged, { tag_zone: 'east' })).to.equal(200);
    expect(check('replica', tagged, { tag_zone: 'east', tag_rack: 'r1' })).to.equal(200);
    expect(check('replica', tagged, { tag_zone: 'west' })).to.equal(503);
    expect(check('replica', tagged, { tag_dc: 'x' })).to.equal(503);
    expect(check('replica', tagged, { tag_zone: ['east', 'west'] })).to.equal(503);
  });

  it('/replica tag filters compare boolean and numeric tags as lowercase strings', () => {
    const tagged = replica({ node: { tags: { backup: true, weight: 1 } } });
    expect(check('replica', tagged, { tag_backup: 'true', tag_weight: '1' })).to.equal(200);
    expect(check('replica', tagged, { tag_backup: 'True' })).to.equal(503);
  });

  it('/read-only applies lag and replication_state to a replica, not to the primary; tag filters to both', () => {
    expect(check('read_only', replica(), { lag: '1kB' })).to.equal(503);
    expect(check('read_only', primary(), { lag: '1kB', replication_state: 'streaming' })).to.equal(200);
    expect(check('read_only', primary(), { tag_zone: 'x' })).to.equal(503);
    expect(check('read_only', snapshot({ facts: primaryFacts(), leader: true, node: { tags: { zone: 'x' } }, cluster: clusterView({ leader: 'node1' }) }), { tag_zone: 'x' })).to.equal(200);
  });

  it('the sync, quorum and async checks take the replica filters (lag, replication_state, tags) and noloadbalance', () => {
    const tags = { node: { tags: { zone: 'east' } } };
    expect(check('synchronous', replica({ ...tags, cluster: clusterView({ sync: sync(['node1']) }) }), { tag_zone: 'east', lag: '4MB' })).to.equal(200);
    expect(check('synchronous', syncReplica(), { tag_zone: 'east' })).to.equal(503);
    expect(check('synchronous', syncReplica(), { lag: '1kB' })).to.equal(503);
    expect(check('read_only_sync', syncReplica(), { lag: '1kB' })).to.equal(503);
    expect(check('quorum', quorumReplica(), { lag: '4MB' })).to.equal(200);
    expect(check('quorum', quorumReplica(), { lag: '1kB' })).to.equal(503);
    expect(check('read_only_quorum', quorumReplica(), { tag_zone: 'east' })).to.equal(503);
    expect(check('asynchronous', replica(tags), { tag_zone: 'east' })).to.equal(200);
    expect(check('asynchronous', replica(tags), { tag_zone: 'west' })).to.equal(503);
    expect(check('asynchronous', replica(), { replication_state: 'in archive recovery' })).to.equal(503);
    expect(check('asynchronous', replica(), { replication_state: 'streaming' })).to.equal(200);
    expect(check('synchronous', replica({ node: { tags: { noloadbalance: true } }, cluster: clusterView({ sync: sync(['node1']) }) }))).to.equal(503);
    expect(check('asynchronous', replica({ node: { tags: { noloadbalance: true } } }))).to.equal(503);
    expect(check('health', replica(tags), { tag_zone: 'east' })).to.equal(200);
    expect(check('health', replica(), { tag_zone: 'east' })).to.equal(503);
  });

  it('leader-type endpoints accept and ignore tag parameters', () => {
    for (const ep of ['primary', 'leader', 'standby_leader'] as const) {
      const snap = ep === 'standby_leader' ? standbyLeader() : primary();
      expect(check(ep, snap, { tag_zone: 'nowhere' }), ep).to.equal(200);
    }
  });

  it('/readiness?lag= overrides maximum_lag_on_failover', () => {
    expect(check('readiness', replica(), { lag: '2MB' })).to.equal(200);
    expect(check('readiness', replica({ config: { maximum_lag_on_failover: '1GB' } }), { lag: '1kB' })).to.equal(503);
  });

  it('/readiness?mode=write measures received WAL; mode=apply (default) replayed WAL', () => {
    // received is 1 000 000 behind, replayed 2 000 000 behind
    expect(check('readiness', replica(), { lag: '1500000', mode: 'write' })).to.equal(200);
    expect(check('readiness', replica(), { lag: '1500000', mode: 'apply' })).to.equal(503);
    expect(check('readiness', replica(), { lag: '1500000' })).to.equal(503);
  });

  it('/readiness fails when the leader position is unknown', () => {
    expect(check('readiness', replica({ cluster: clusterView({ optime: null }), config: { maximum_lag_on_failover: '1GB' } }))).to.equal(503);
  });

  it('an invalid lag (abc) is a bad request naming lag', () => {
    const e = badQuery('replica', { lag: 'abc' });
    expect(e.problems[0]!.path).to.equal('lag');
    expect(e.message).to.include('invalid size "abc"');
    badQuery('readiness', { lag: '10 mb' });
    badQuery('asynchronous', { lag: '-1' });
  });

  it('an unknown parameter is a bad request naming it', () => {
    const e = badQuery('replica', { lga: '1MB' });
    expect(e.problems[0]!.path).to.equal('lga');
    expect(e.message).to.include('unknown parameter');
    expect(e.message).to.include('lag, replication_state, tag_<name>');
  });

  it('a parameter unknown to this endpoint is a bad request (lag on /health, mode on /replica, tags on /readiness)', () => {
    expect(badQuery('health', { lag: '1MB' }).problems[0]!.path).to.equal('lag');
    expect(badQuery('replica', { mode: 'apply' }).problems[0]!.path).to.equal('mode');
    expect(badQuery('readiness', { tag_zone: 'a' }).problems[0]!.path).to.equal('tag_zone');
    expect(badQuery('liveness', { tag_zone: 'a' }).problems[0]!.path).to.equal('tag_zone');
    expect(badQuery('synchronous', { mode: 'apply' }).problems[0]!.path).to.equal('mode');
    expect(badQuery('primary', { lag: '1MB' }).problems[0]!.path).to.equal('lag');
    expect(badQuery('replica', { tag_: 'a' }).problems[0]!.path).to.equal('tag_');
  });

  it('a bad mode is a bad request naming mode', () => {
    const e = badQuery('readiness', { mode: 'read' });
    expect(e.problems[0]!.path).to.equal('mode');
    expect(e.message).to.include('expected "apply" or "write", got "read"');
  });

  it('an invalid replication_state is a bad request naming it', () => {
    const e = badQuery('replica', { replication_state: 'catching_up' });
    expect(e.problems[0]!.path).to.equal('replication_state');
  });

  it('a single-valued parameter given twice is a bad request', () => {
    expect(badQuery('replica', { lag: ['1MB', '2MB'] }).message).to.include('expected one value, got 2');
  });

  it('lists every bad parameter at once', () => {
    expect(badQuery('readiness', { lag: 'x', mode: 'y', foo: '1' }).problems.map((p) => p.path)).to.deep.equal(['lag', 'mode', 'foo']);
  });

  it('a bad query is refused whatever the node state (validation comes first)', () => {
    expect(() => checkHealth('replica', stopped(), { lag: 'abc' }, NOW)).to.throw(ValidationError);
  });
});
