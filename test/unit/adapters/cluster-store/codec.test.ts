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
    expect(e.message).to.include('members/node2.timeline: expected a number, got string "two"');
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
    expect(malformed(() => parseStatus('{"optime":"abc"}', '1')).message).to.equal('status.optime: expected a number, got string "abc"');
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

  it('a malformed key is reported with its name and treated as absent; the rest still parses', () => {
    const snapshot = new Map<string, DcsEntry>([
      ['leader', entry('node1')],
      ['members/node1', entry(JSON.stringify(MEMBER))],
      ['members/node2', entry('{broken')],
      ['config', entry('[1]')],
      ['sync', entry('{"sync_standby":5}')],
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
    expect([cluster.sync, cluster.status, cluster.history, cluster.failover, cluster.failsafe]).to.deep.equal([null, null, null, null, null]);
    // An unreadable configuration reads as empty and keeps its revision, so a compare-and-set can replace it.
    expect(cluster.config).to.deep.equal({ value: {}, revision: '1' });
    expect(cluster.failoverRevision).to.equal('1');
    expect(cluster.leader?.name).to.equal('node1');
  });

  it('an empty leader value means no leader', () => {
    expect(parseCluster(new Map([['leader', entry('')]])).cluster.leader).to.equal(null);
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
