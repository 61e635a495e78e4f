import { expect } from 'chai';
import { ValidationError } from '../../../../src/domain/errors.js';
import { findMember } from '../../../../src/domain/cluster/model/cluster.js';
import {
  failoverToJson,
  historyToJson,
  memberToJson,
  parseCluster,
  parseFailover,
  parseFailsafe,
  parseHistory,
  parseMember,
  parseStatus,
  parseSync,
  statusToJson,
  syncToJson,
} from '../../../../src/adapters/cluster-store/codec.js';
import type { DcsEntry } from '../../../../src/adapters/cluster-store/keys.js';
import { changeOf } from '../../../../src/adapters/cluster-store/key-value-cluster-store.js';
import { resolveConfig } from '../../../../src/domain/cluster/config/config.js';
import { decide } from '../../../../src/domain/cluster/ha/decide.js';
import type { TickInput } from '../../../../src/domain/cluster/ha/decision.js';
import { input, leaderInput, peerStatus, primaryFacts, replicaFacts, row } from '../../domain/cluster/ha/fixtures.js';

function malformed(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ValidationError);
    expect((e as ValidationError).code).to.equal('malformed_dcs_value');
    return e as ValidationError;
  }
  throw new Error('did not throw');
}

const MEMBER = {
  conn_url: 'postgres://127.0.0.1:5432/postgres',
  api_url: 'http://127.0.0.1:8008',
  state: 'running',
  role: 'replica',
  version: '0.1.0',
  xlog_location: 100,
  receive_lsn: 90,
  replay_lsn: 80,
  replication_state: 'streaming',
  timeline: 2,
  tags: { zone: 'a', nofailover: false },
  pending_restart: true,
  pending_restart_reason: { shared_buffers: { old_value: '1', new_value: '2' } },
  scheduled_restart: { schedule: '2030-01-01T00:00:00Z' },
};

describe('domain/cluster/cluster: member keys', () => {
  it('parses every field of a member key', () => {
    const m = parseMember('node2', JSON.stringify(MEMBER), '7');
    expect(m).to.deep.include({
      name: 'node2', revision: '7', connUrl: MEMBER.conn_url, apiUrl: MEMBER.api_url, state: 'running', role: 'replica',
      version: '0.1.0', xlogLocation: 100, receiveLsn: 90, replayLsn: 80, replicationState: 'streaming', timeline: 2,
      pendingRestart: true,
    });
    expect(m.tags).to.deep.equal({ zone: 'a', nofailover: false });
    expect(m.scheduledRestart).to.deep.equal({ schedule: '2030-01-01T00:00:00Z' });
    expect(Object.isFrozen(m)).to.equal(true);
  });

  it('serializes back to the same JSON', () => {
    const m = parseMember('node2', JSON.stringify(MEMBER), '7');
    expect(JSON.parse(memberToJson(m))).to.deep.equal(MEMBER);
  });

  it('omits unknown values when serializing', () => {
    const m = parseMember('node2', JSON.stringify({ conn_url: 'c', api_url: 'a', state: 'stopped', role: 'replica', version: '1' }), '1');
    expect(JSON.parse(memberToJson(m))).to.deep.equal({ conn_url: 'c', api_url: 'a', state: 'stopped', role: 'replica', version: '1' });
  });

  it('not JSON: the error names the key', () => {
    const e = malformed(() => parseMember('node2', '{oops', '1'));
    expect(e.problems[0]!.path).to.equal('members/node2');
    expect(e.message).to.match(/^members\/node2: not valid JSON/);
  });

  it('JSON that is not an object: the error names the key and what it got', () => {
    expect(malformed(() => parseMember('node2', '[1]', '1')).message).to.equal('members/node2: expected a JSON object, got an array');
    expect(malformed(() => parseMember('node2', 'null', '1')).message).to.equal('members/node2: expected a JSON object, got null');
  });

  it('a field of the wrong type: the error names key.field, expected and got', () => {
    const e = malformed(() => parseMember('node2', JSON.stringify({ ...MEMBER, timeline: 'two', state: 5 }), '1'));
    expect(e.problems.map((p) => p.path)).to.deep.equal(['members/node2.state', 'members/node2.timeline']);
    expect(e.message).to.include('members/node2.timeline: expected a timeline (1 to 4294967295), got string "two"');
    expect(e.message).to.include('members/node2.state: expected a string, got number');
  });

  it('a bad tag value names the tag', () => {
    const e = malformed(() => parseMember('node2', JSON.stringify({ ...MEMBER, tags: { zone: ['a'] } }), '1'));
    expect(e.problems[0]!.path).to.equal('members/node2.tags.zone');
  });

  it('a non-boolean pending_restart names the field', () => {
    expect(malformed(() => parseMember('node2', JSON.stringify({ ...MEMBER, pending_restart: 'yes' }), '1')).problems[0]!.path).to.equal('members/node2.pending_restart');
  });
});

describe('domain/cluster/cluster: failover key', () => {
  it('parses leader, member and scheduled_at', () => {
    expect(parseFailover('{"leader":"a","member":"b","scheduled_at":"2030-01-01T00:00:00Z"}', '3')).to.deep.equal({
      leader: 'a', member: 'b', scheduledAt: '2030-01-01T00:00:00Z', revision: '3',
    });
  });

  it('{} (a cancelled request) and an empty value parse to null', () => {
    expect(parseFailover('{}', '3')).to.equal(null);
    expect(parseFailover('', '3')).to.equal(null);
  });

  it('round-trips, and null serializes to {}', () => {
    const f = { leader: 'a', member: null, scheduledAt: null };
    expect(parseFailover(failoverToJson(f), '1')).to.deep.include(f);
    expect(failoverToJson(null)).to.equal('{}');
  });

  it('malformed: the error names failover and the field', () => {
    expect(malformed(() => parseFailover('nope', '1')).problems[0]!.path).to.equal('failover');
    expect(malformed(() => parseFailover('{"leader":1}', '1')).message).to.equal('failover.leader: expected a string, got number');
  });
});

describe('domain/cluster/cluster: sync key', () => {
  it('parses leader, sync_standby list and quorum', () => {
    expect(parseSync('{"leader":"a","sync_standby":["b","c"],"quorum":1}', '4')).to.deep.equal({ leader: 'a', syncStandby: ['b', 'c'], quorum: 1, revision: '4' });
  });

  it('accepts a single name as sync_standby', () => {
    expect(parseSync('{"leader":"a","sync_standby":"b"}', '4').syncStandby).to.deep.equal(['b']);
  });

  it('round-trips', () => {
    const s = { leader: 'a', syncStandby: ['b'], quorum: 0 };
    expect(parseSync(syncToJson(s), '1')).to.deep.include(s);
  });

  it('round-trips the key a new primary writes before promoting (what it replaced); a malformed one names the field', () => {
    const s = { leader: 'b', syncStandby: [], quorum: 0, promoting: { timeline: 3, replaced: { leader: 'a', syncStandby: ['b', 'c'], quorum: 1 } } };
    expect(JSON.parse(syncToJson(s))).to.deep.equal({ leader: 'b', sync_standby: [], quorum: 0, promoting: { timeline: 3, replaced: { leader: 'a', sync_standby: ['b', 'c'], quorum: 1 } } });
    expect(parseSync(syncToJson(s), '1')).to.deep.equal({ ...s, revision: '1' });
    expect(malformed(() => parseSync('{"leader":"b","promoting":{"timeline":0,"replaced":{}}}', '1')).problems[0]!.path).to.equal('sync.promoting.timeline');
    expect(malformed(() => parseSync('{"leader":"b","promoting":{"timeline":2}}', '1')).problems[0]!.path).to.equal('sync.promoting.replaced');
    expect(malformed(() => parseSync('{"leader":"b","promoting":{"timeline":2,"replaced":{"sync_standby":[1]}}}', '1')).problems[0]!.path).to.equal('sync.promoting.replaced.sync_standby');
  });

  it('malformed: the error names sync and the field', () => {
    expect(malformed(() => parseSync('{"sync_standby":[1]}', '1')).message).to.equal('sync.sync_standby: expected a list of strings, got an array');
    expect(malformed(() => parseSync('{"quorum":"x"}', '1')).problems[0]!.path).to.equal('sync.quorum');
    expect(malformed(() => parseSync('"x"', '1')).problems[0]!.path).to.equal('sync');
  });
});

describe('domain/cluster/cluster: status key', () => {
  it('parses optime and slots, and round-trips', () => {
    const s = { optime: 123, slots: { node2: 100 } };
    expect(parseStatus(statusToJson(s), '5')).to.deep.equal({ ...s, revision: '5' });
  });

  it('retain_slots (the member slots the leader retains) round-trips; absent stays absent', () => {
    const s = { optime: 123, slots: { node2: 100 }, retainSlots: ['node2', 'gone'] };
    expect(statusToJson(s)).to.equal('{"optime":123,"slots":{"node2":100},"retain_slots":["node2","gone"]}');
    expect(parseStatus(statusToJson(s), '5')).to.deep.equal({ ...s, revision: '5' });
    expect(parseStatus('{"optime":1,"slots":{}}', '5')).to.not.have.property('retainSlots');
    expect(malformed(() => parseStatus('{"optime":1,"retain_slots":[1]}', '1')).problems[0]!.path).to.equal('status.retain_slots');
  });

  it('malformed: the error names status and the field', () => {
    expect(malformed(() => parseStatus('{"optime":"abc"}', '1')).message).to.equal('status.optime: expected a WAL position (a whole number of bytes), got string "abc"');
    expect(malformed(() => parseStatus('{"optime":1,"slots":{"node2":"x"}}', '1')).problems[0]!.path).to.equal('status.slots.node2');
  });
});

describe('domain/cluster/cluster: history key', () => {
  it('parses lines and round-trips', () => {
    const lines = [[1, 100, 'no recovery target specified', '2030-01-01T00:00:00+00:00', 'node1'] as const];
    expect(parseHistory(historyToJson(lines), '1').lines).to.deep.equal(lines);
  });

  it('fills missing timestamp and new leader with null', () => {
    expect(parseHistory('[[1, 100, "x"]]', '1').lines).to.deep.equal([[1, 100, 'x', null, null]]);
  });

  it('malformed: the error names history and the line index', () => {
    expect(malformed(() => parseHistory('{', '1')).problems[0]!.path).to.equal('history');
    expect(malformed(() => parseHistory('{}', '1')).message).to.equal('history: expected a JSON array, got object');
    expect(malformed(() => parseHistory('[[1,100,"ok"],["x"]]', '1')).problems[0]!.path).to.equal('history[1]');
  });
});

describe('domain/cluster/cluster: failsafe key', () => {
  it('parses member name -> api_url', () => {
    expect(parseFailsafe('{"node1":"http://a"}')).to.deep.equal({ node1: 'http://a' });
  });

  it('malformed: the error names the member', () => {
    expect(malformed(() => parseFailsafe('{"node1":1}')).problems[0]!.path).to.equal('failsafe.node1');
  });
});

describe('domain/cluster/cluster: parseCluster', () => {
  const entry = (value: string, revision = '1'): DcsEntry => ({ value, revision });

  it('builds the whole view, members sorted by name, immutable', () => {
    const snapshot = new Map<string, DcsEntry>([
      ['initialize', entry('7300')],
      ['config', entry('{"ttl":40}', '2')],
      ['leader', entry('node1', '3')],
      ['members/node2', entry(JSON.stringify(MEMBER))],
      ['members/node1', entry(JSON.stringify({ ...MEMBER, role: 'primary' }))],
      ['sync', entry('{"leader":"node1","sync_standby":["node2"]}')],
      ['status', entry('{"optime":500}')],
      ['history', entry('[]')],
      ['failover', entry('{}')],
    ]);
    const { cluster, problems } = parseCluster(snapshot);
    expect(problems).to.deep.equal([]);
    expect(cluster.initialize).to.equal('7300');
    expect(cluster.config).to.deep.equal({ value: { ttl: 40 }, revision: '2' });
    expect(cluster.leader).to.deep.equal({ name: 'node1', revision: '3' });
    expect(cluster.members.map((m) => m.name)).to.deep.equal(['node1', 'node2']);
    expect(cluster.sync?.syncStandby).to.deep.equal(['node2']);
    expect(cluster.status?.optime).to.equal(500);
    expect(cluster.failover).to.equal(null);
    expect(findMember(cluster, 'node2')?.role).to.equal('replica');
    expect(Object.isFrozen(cluster) && Object.isFrozen(cluster.members)).to.equal(true);
  });

  it('a malformed key is reported with its name and read the safe way; the rest still parses', () => {
    const snapshot = new Map<string, DcsEntry>([
      ['leader', entry('node1')],
      ['members/node1', entry(JSON.stringify(MEMBER))],
      ['members/node2', entry('{broken')],
      ['config', entry('[1]')],
      ['sync', entry('{"sync_standby":5}', '4')],
      ['status', entry('{"optime":"x"}')],
      ['history', entry('{}')],
      ['failover', entry('{"member":1}')],
      ['failsafe', entry('{"a":1}')],
    ]);
    const { cluster, problems } = parseCluster(snapshot);
    expect(problems.map((p) => p.path)).to.have.members([
      'members/node2', 'config', 'sync.sync_standby', 'status.optime', 'history', 'failover.member', 'failsafe.a',
    ]);
    expect(cluster.members.map((m) => m.name)).to.deep.equal(['node1']);
    // An unreadable sync key names nobody (no standby is known to hold every commit) and keeps its revision for compare-and-set.
    expect(cluster.sync).to.deep.equal({ leader: null, syncStandby: [], quorum: 0, revision: '4' });
    // The status key is read field by field: an unreadable optime is unknown (0).
    expect(cluster.status).to.deep.equal({ optime: 0, slots: {}, revision: '1' });
    expect([cluster.history, cluster.failover, cluster.failsafe]).to.deep.equal([null, null, null]);
    // An unreadable configuration reads as empty, marked unreadable, and keeps its revision, so a compare-and-set can replace it.
    expect(cluster.config).to.deep.equal({ value: {}, revision: '1', unreadable: true });
    expect(cluster.failoverRevision).to.equal('1');
    expect(cluster.leader?.name).to.equal('node1');
  });

  it('an empty leader value is a held key (by nobody known), not a free one, and is reported', () => {
    const { cluster, problems } = parseCluster(new Map([['leader', entry('', '9')]]));
    expect(cluster.leader).to.deep.equal({ name: '', revision: '9' });
    expect(problems.map((p) => p.path)).to.deep.equal(['leader']);
  });
});

describe('codec: checkpoint after promote', () => {
  it('the member key carries checkpoint_after_promote when set, and parses it back', () => {
    const base = { connUrl: 'postgres://n:1/postgres', apiUrl: 'http://n:8008', state: 'running', role: 'primary', version: '0.1.0', xlogLocation: 1, receiveLsn: null, replayLsn: null, replicationState: null, timeline: 2, tags: {}, pendingRestart: false, pendingRestartReason: null, scheduledRestart: null };
    expect(parseMember('n', memberToJson({ ...base, checkpointAfterPromote: false }), '1').checkpointAfterPromote).to.equal(false);
    expect(parseMember('n', memberToJson({ ...base, checkpointAfterPromote: true }), '1').checkpointAfterPromote).to.equal(true);
    expect(JSON.parse(memberToJson(base))).to.not.have.property('checkpoint_after_promote');
    expect(parseMember('n', memberToJson(base), '1')).to.not.have.property('checkpointAfterPromote');
  });

  it('the member key carries the running server\'s server_version when told, and parses it back', () => {
    const base = { connUrl: 'postgres://n:1/postgres', apiUrl: 'http://n:8008', state: 'running', role: 'primary', version: '0.1.0', xlogLocation: 1, receiveLsn: null, replayLsn: null, replicationState: null, timeline: 2, tags: {}, pendingRestart: false, pendingRestartReason: null, scheduledRestart: null };
    expect(parseMember('n', memberToJson({ ...base, serverVersion: 150018 }), '1').serverVersion).to.equal(150018);
    expect(parseMember('n', memberToJson(base), '1')).to.not.have.property('serverVersion');
  });
});

/**
 * What other writers leave under the keys (an operator's etcdctl put, Patroni, another
 * version, a truncated value), each case found by codec-fuzz.test.ts: read the safe way,
 * never as a value of another type than the domain's.
 */
describe('codec: values other writers leave, read the safe way', () => {
  const entry = (value: string, revision = '1'): DcsEntry => ({ value, revision });
  const member = (over: Record<string, unknown>) => parseCluster(new Map([['members/node2', entry(JSON.stringify({ ...MEMBER, ...over }))]]));

  it('positions and timelines out of range are unknown (a negative, fractional or huge LSN used to reach the domain and GET /cluster)', () => {
    const { cluster, problems } = member({ xlog_location: -1, receive_lsn: 1.5, replay_lsn: 1e30, timeline: 0 });
    expect(findMember(cluster, 'node2')).to.deep.include({ xlogLocation: null, receiveLsn: null, replayLsn: null, timeline: null, state: 'running' });
    expect(problems.map((p) => p.path)).to.have.members(['members/node2.xlog_location', 'members/node2.receive_lsn', 'members/node2.replay_lsn', 'members/node2.timeline']);
    expect(findMember(member({ timeline: 2 ** 32, xlog_location: '99999999999999999999' }).cluster, 'node2')).to.deep.include({ timeline: null, xlogLocation: null });
    // PostgreSQL's own notation and digit strings are positions.
    expect(findMember(member({ xlog_location: '0/3000060', receive_lsn: '123', timeline: '3' }).cluster, 'node2')).to.deep.include({ xlogLocation: 0x3000060, receiveLsn: 123, timeline: 3 });
    expect(findMember(member({ xlog_location: '0/ZZ' }).cluster, 'node2')?.xlogLocation).to.equal(null);
  });

  it('a member with one unreadable field stays in the view with that field unknown (it used to vanish, with its slot and sync place)', () => {
    const { cluster, problems } = member({ server_version: '16.1', safety_margin: -5, checkpoint_after_promote: 'no', pending_restart: 'yes' });
    const m = findMember(cluster, 'node2')!;
    expect(m).to.deep.include({ connUrl: MEMBER.conn_url, xlogLocation: 100, pendingRestart: false });
    expect(m).to.not.have.property('serverVersion');
    expect(m).to.not.have.property('safetyMargin');
    // An unreadable checkpoint_after_promote counts as pending: rewinders wait.
    expect(m.checkpointAfterPromote).to.equal(false);
    expect(problems).to.have.length(4);
  });

  it('a member value that is not a JSON object (or nests deeper than 64 levels) leaves the member out, and says so', () => {
    for (const text of ['', 'null', '[1]', '"node2"', '{"a":']) {
      const { cluster, problems } = parseCluster(new Map([['members/node2', entry(text)]]));
      expect(cluster.members, text).to.deep.equal([]);
      expect(problems.map((p) => p.path), text).to.deep.equal(['members/node2']);
    }
  });

  it("scheduled_restart keeps the fields of a scheduled restart only, of their types (Patroni's postmaster_start_time, a role of 5 used to pass)", () => {
    const patroni = member({ scheduled_restart: { schedule: '2030-01-01T00:00:00+00:00', postmaster_start_time: '2023-01-01 00:00:00 UTC' } });
    expect(findMember(patroni.cluster, 'node2')!.scheduledRestart).to.deep.equal({ schedule: '2030-01-01T00:00:00+00:00' });
    expect(patroni.problems).to.deep.equal([]);
    const bad = member({ scheduled_restart: { schedule: '2030-01-01T00:00:00Z', role: 5, timeout: 'x', restart_pending: true } });
    expect(findMember(bad.cluster, 'node2')!.scheduledRestart).to.deep.equal({ schedule: '2030-01-01T00:00:00Z', restart_pending: true });
    expect(bad.problems.map((p) => p.path)).to.deep.equal(['members/node2.scheduled_restart.role', 'members/node2.scheduled_restart.timeout']);
    expect(findMember(member({ scheduled_restart: { role: 'replica' } }).cluster, 'node2')!.scheduledRestart).to.equal(null);
  });

  it('pending_restart_reason keeps the readable {old_value, new_value} entries', () => {
    const { cluster, problems } = member({ pending_restart_reason: { a: { old_value: 1, new_value: '2' }, b: 'x', c: { old_value: [] } } });
    expect(findMember(cluster, 'node2')!.pendingRestartReason).to.deep.equal({ a: { old_value: '1', new_value: '2' } });
    expect(problems.map((p) => p.path)).to.deep.equal(['members/node2.pending_restart_reason.b', 'members/node2.pending_restart_reason.c']);
  });

  it('tags named like Object properties stay plain tags', () => {
    const { cluster } = parseCluster(new Map([['members/node2', entry('{"tags":{"__proto__":"x","constructor":true,"zone":{"a":1}}}')]]));
    const tags = findMember(cluster, 'node2')!.tags;
    expect(Object.getPrototypeOf(tags)).to.equal(Object.prototype);
    expect(Object.entries(tags)).to.deep.equal([['__proto__', 'x'], ['constructor', true]]);
  });

  it("an unreadable sync key names nobody and keeps its revision (it used to read as no key); Patroni's comma-separated list is read", () => {
    for (const text of ['nope', '[]', '{"leader":"node1","sync_standby":[1]}', '{"leader":"node1","sync_standby":["node2"],"quorum":-1}', '{"leader":"node1","sync_standby":["node2"],"quorum":1e30}']) {
      const { cluster, problems } = parseCluster(new Map([['sync', entry(text, '4')]]));
      expect(cluster.sync, text).to.deep.equal({ leader: null, syncStandby: [], quorum: 0, revision: '4' });
      expect(problems, text).to.not.be.empty;
    }
    expect(parseSync('{"leader":"node1","sync_standby":"node2,node3","quorum":1}', '4')).to.deep.equal({ leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1, revision: '4' });
    expect(parseSync('{"leader":"node1","sync_standby":null}', '4').syncStandby).to.deep.equal([]);
    // A quorum above the standbys listed is what strict quorum mode writes with fewer standbys than synchronous_node_count.
    expect(parseSync('{"leader":"node1","sync_standby":["node2"],"quorum":2}', '4').quorum).to.equal(2);
  });

  it('the status key is read field by field: bad slot positions are left out, a bad optime is unknown (0), a negative one used to pass', () => {
    const { cluster, problems } = parseCluster(new Map([['status', entry('{"optime":-5,"slots":{"node2":100,"node3":-1,"x":"0/10","y":1e30},"retain_slots":[1]}')]]));
    expect(cluster.status).to.deep.equal({ optime: 0, slots: { node2: 100, x: 16 }, revision: '1' });
    expect(problems.map((p) => p.path)).to.deep.equal(['status.slots.node3', 'status.slots.y', 'status.retain_slots', 'status.optime']);
    // Patroni's older plain optime, or anything but an object: no status.
    expect(parseCluster(new Map([['status', entry('50331808')]])).cluster.status).to.equal(null);
  });

  it('history lines need a timeline (1 to 2^32-1) and a position (it used to take 1.5, -1 and 1e30)', () => {
    for (const text of ['[[1.5,100,"x"]]', '[[1,-1,"x"]]', '[[0,100,"x"]]', '[[1e30,100,"x"]]', '[[1,100,5]]']) {
      expect(parseCluster(new Map([['history', entry(text)]])).cluster.history, text).to.equal(null);
    }
    expect(parseHistory('[[1,"0/10","x"]]', '1').lines).to.deep.equal([[1, 16, 'x', null, null]]);
  });

  it('a value nested deeper than 64 levels is unreadable (GET /config and /cluster answered 500, a tick of the leader failed on it)', () => {
    const deep = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
    const { cluster, problems } = parseCluster(
      new Map([
        ['config', entry(`{"ttl":30,"x":${deep(20_000)}}`)],
        ['members/node2', entry(JSON.stringify(MEMBER).replace(/}$/, `,"scheduled_restart":{"schedule":"2030-01-01T00:00:00Z","role":${deep(20_000)}}}`))],
        ['history', entry(`[[1,100,"x",null,${deep(100)}]]`)],
      ]),
    );
    expect(cluster.config?.value).to.deep.equal({});
    expect(findMember(cluster, 'node2')).to.equal(undefined);
    expect(cluster.history).to.equal(null);
    expect(problems.map((p) => p.message)).to.deep.equal(Array(3).fill('nested deeper than 64 levels'));
    expect(parseCluster(new Map([['config', entry(`{"a":${deep(60)}}`)]])).cluster.config?.value).to.have.property('a');
  });

  it("a watch event of an empty leader value names an empty holder, not none (only a delete frees the key)", () => {
    expect(changeOf('leader', '')).to.deep.equal({ kind: 'leader', holder: '' });
    expect(changeOf('leader', null)).to.deep.equal({ kind: 'leader', holder: null });
  });
});

describe('codec: what decide() makes of unreadable keys', () => {
  const entry = (value: string, revision = '1'): DcsEntry => ({ value, revision });
  const view = (over: Record<string, string>) =>
    parseCluster(
      new Map<string, DcsEntry>(
        Object.entries({
          initialize: '7300',
          config: '{"synchronous_mode":true}',
          'members/node1': JSON.stringify({ conn_url: 'postgres://node1:5432/postgres', api_url: 'http://node1:8008', state: 'running', role: 'primary', timeline: 1, xlog_location: 5000 }),
          'members/node2': JSON.stringify({ conn_url: 'postgres://node2:5432/postgres', api_url: 'http://node2:8008', state: 'running', role: 'replica', timeline: 1 }),
          'members/node3': JSON.stringify({ conn_url: 'postgres://node3:5432/postgres', api_url: 'http://node3:8008', state: 'running', role: 'replica', timeline: 1 }),
          status: '{"optime":5000,"slots":{}}',
          ...over,
        })
          .filter(([, v]) => v !== '<absent>')
          .map(([k, v]) => [k, entry(v, k === 'sync' ? '4' : '1')]),
      ),
    ).cluster;
  const cfg = (c: ReturnType<typeof view>) => resolveConfig(c.config?.value);
  const kinds = (d: { readonly actions: readonly { readonly type: string }[] }) => d.actions.map((a) => a.type);
  /** decide(), answering a request for peers with node3 a little behind and node1 gone. */
  const tick = (i: TickInput) => {
    const d = decide(i);
    return d.need === 'peers' ? decide({ ...i, peers: new Map([['node1', null], ['node3', peerStatus('replica', 4000)]]) }) : d;
  };

  it('an empty leader value: a replica does not race, a primary without the lock and one whose key was overwritten demote (they used to race for it)', () => {
    const c = view({ leader: '', config: '{}' });
    expect(kinds(tick(input({ cluster: c, config: cfg(c) })))).to.not.include.members(['acquireLeader']);
    const primary = tick(input({ cluster: c, config: cfg(c), facts: primaryFacts() }));
    expect(primary.job).to.equal('demote');
    const holder = tick(leaderInput({ cluster: c, config: cfg(c) }));
    expect(kinds(holder)).to.not.include('acquireLeader');
    expect(holder.job).to.equal('demote');
  });

  it('synchronous mode, the leader gone and the sync key unreadable: no standby is promoted (an absent key would let one)', () => {
    const node2 = (c: ReturnType<typeof view>) => tick(input({ cluster: c, config: cfg(c), facts: replicaFacts(5000) }));
    expect(kinds(node2(view({ sync: '<absent>' })))).to.include('promote');
    for (const garbage of ['{"leader":"node1","sync_standby":[7]}', 'not json', '{"leader":"node1","sync_standby":["node2"],"quorum":"x"}']) {
      const d = node2(view({ sync: garbage }));
      expect(kinds(d), garbage).to.not.include.members(['promote']);
      expect(kinds(d), garbage).to.not.include.members(['acquireLeader']);
    }
  });

  it('the leader replaces an unreadable sync key by compare-and-set on its revision (it used to ask for an absent key, and failed every loop)', () => {
    const c = view({ leader: 'node1', sync: '{"sync_standby":5}' });
    const d = decide(leaderInput({ cluster: c, config: cfg(c), facts: primaryFacts(5000, { replication: [row('node2', 5000)] }) }));
    const write = d.actions.find((a) => a.type === 'writeSync');
    expect(write).to.deep.include({ leader: 'node1', ifRevision: '4' });
  });
});
