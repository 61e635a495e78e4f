import { expect } from 'chai';
import { decide } from '../../../../../src/domain/cluster/ha/decide.js';
import type { Action } from '../../../../../src/domain/cluster/ha/decision.js';
import { LOGICAL_ADVANCE_STEP, leaderStatus, reconcileSlots, retainedSlots, slotIgnored, wantedSlots } from '../../../../../src/domain/cluster/ha/slots.js';
import { tickContext } from '../../../../../src/domain/cluster/ha/tick-context.js';
import type { RawConfig } from '../../../../../src/domain/cluster/config/config.js';
import type { Cluster } from '../../../../../src/domain/cluster/model/cluster.js';
import { cluster, input, leaderInput, member, NOW, primaryFacts, replicaFacts, row, settings, slot, types } from './fixtures.js';

const logical = { cdc: { type: 'logical', database: 'app', plugin: 'pgoutput' }, archiver: { type: 'physical' } } as const;

/** node1 leads; node3 cascades from node2; node4 is tagged nostream. */
function topology(extra: Partial<Cluster> = {}): Cluster {
  const base = cluster('node1', extra);
  return {
    ...base,
    members: [
      ...base.members.map((m) => (m.name === 'node3' ? { ...m, tags: { replicatefrom: 'node2' }, replayLsn: 4200, receiveLsn: 4300 } : m)),
      member('node4', { tags: { nostream: true }, replicationState: 'in archive recovery' }),
    ],
    ...(extra.members ? { members: extra.members } : {}),
  };
}

const leaderCtx = (raw: RawConfig = {}, over: Parameters<typeof leaderInput>[0] = {}) => tickContext(leaderInput({ raw, cluster: topology(), ...over }));
const replicaCtx = (name: string, raw: RawConfig = {}, over: Parameters<typeof input>[0] = {}) =>
  tickContext(input({ raw, cluster: topology({ status: { optime: 5000, slots: { node2: 4800, node3: 4100, node1: 5000, archiver: 3000, cdc: 4500 }, retainSlots: ['gone', 'node2', 'node3'], revision: '5' } }), node: settings({ name, ...(over.node ?? {}) }), ...over }));

describe('replication slots: what each member keeps', () => {
  it('the leader: a slot per member streaming from it, an idle one moved to a cascading member\'s own position, none for nostream, the permanent ones', () => {
    const w = wantedSlots(leaderCtx({ slots: logical }), 'leader');
    expect(w).to.deep.equal([
      { name: 'archiver', type: 'physical' },
      { name: 'cdc', type: 'logical', database: 'app', plugin: 'pgoutput' },
      { name: 'node2', type: 'physical' },
      { name: 'node3', type: 'physical', advanceTo: 4200 },
    ]);
  });

  it('member_slots_ttl 0: the leader keeps only the slots of members that stream from it', () => {
    expect(wantedSlots(leaderCtx({ member_slots_ttl: 0 }), 'leader').map((s) => s.name)).to.deep.equal(['node2']);
    expect(wantedSlots(leaderCtx({ db: { use_slots: false }, slots: { archiver: { type: 'physical' } } }), 'leader').map((s) => s.name)).to.deep.equal(['archiver']);
  });

  it('a replica that can lead: its cascading member\'s slot (active), the others moved to the leader\'s positions, departed retained ones kept still, the permanent ones', () => {
    const w = wantedSlots(replicaCtx('node2', { slots: logical }), 'replica');
    expect(w).to.deep.equal([
      { name: 'archiver', type: 'physical', advanceTo: 3000 },
      { name: 'cdc', type: 'logical', database: 'app', plugin: 'pgoutput', advanceTo: 4500 },
      { name: 'gone', type: 'physical' },
      { name: 'node1', type: 'physical', advanceTo: 5000 },
      { name: 'node3', type: 'physical' },
    ]);
  });

  it('a cascading replica\'s copy of a logical slot never moves past what it replayed', () => {
    const w = wantedSlots(replicaCtx('node3', { slots: logical }, { facts: replicaFacts(5000, 'node2', { replayedLocation: 4400 }) }), 'replica');
    expect(w.find((s) => s.name === 'cdc')).to.deep.include({ advanceTo: 4400 });
    expect(w.find((s) => s.name === 'node2')).to.deep.equal({ name: 'node2', type: 'physical', advanceTo: 4800 });
  });

  it('a replica that can never lead keeps only the slots its cascading members use; a nostream one keeps no logical slot', () => {
    const nofailover = wantedSlots(replicaCtx('node2', { slots: logical }, { node: settings({ name: 'node2', tags: { nofailover: true } }) }), 'replica');
    expect(nofailover).to.deep.equal([{ name: 'node3', type: 'physical' }]);
    const archiveOnly = wantedSlots(replicaCtx('node4', { slots: logical }, { node: settings({ name: 'node4', tags: { nostream: true } }) }), 'replica');
    expect(archiveOnly.map((s) => s.name)).to.deep.equal(['archiver', 'gone', 'node1', 'node2', 'node3']);
  });
});

describe('replication slots: member_slots_ttl on the leader', () => {
  it('retains a departed member\'s slot from its departure for member_slots_ttl, then lets it go', () => {
    const gone = cluster('node1', { status: { optime: 5000, slots: {}, retainSlots: ['node2', 'node3', 'old'], revision: '5' } });
    const first = retainedSlots(tickContext(leaderInput({ raw: { member_slots_ttl: '10min' }, cluster: gone })));
    expect(first).to.deep.equal({ retain: ['node2', 'node3', 'old'], departed: { old: NOW } });
    const memory = { ...leaderInput().memory, departedSlots: { old: NOW - 9 * 60_000 } };
    expect(retainedSlots(tickContext(leaderInput({ raw: { member_slots_ttl: '10min' }, cluster: gone, memory }))).retain).to.include('old');
    const later = { ...memory, departedSlots: { old: NOW - 10 * 60_000 } };
    // Expired: no longer retained, and remembered as such while the status key (read a tick late) still lists it.
    const expired = retainedSlots(tickContext(leaderInput({ raw: { member_slots_ttl: '10min' }, cluster: gone, memory: later })));
    expect(expired).to.deep.equal({ retain: ['node2', 'node3'], departed: { old: null } });
    const staleView = { ...memory, departedSlots: expired.departed };
    expect(retainedSlots(tickContext(leaderInput({ raw: { member_slots_ttl: '10min' }, cluster: gone, memory: staleView }))).retain, 'no resurrection').to.deep.equal(['node2', 'node3']);
    const updated = cluster('node1', { status: { optime: 5000, slots: {}, retainSlots: ['node2', 'node3'], revision: '6' } });
    expect(retainedSlots(tickContext(leaderInput({ raw: { member_slots_ttl: '10min' }, cluster: updated, memory: staleView })))).to.deep.equal({ retain: ['node2', 'node3'], departed: {} });
    expect(retainedSlots(tickContext(leaderInput({ raw: { member_slots_ttl: 0 }, cluster: gone }))).retain).to.deep.equal(['node2', 'node3']);
  });

  it('a member that comes back is present again: its departure is forgotten', () => {
    const memory = { ...leaderInput().memory, departedSlots: { node3: NOW - 60_000 } };
    expect(retainedSlots(tickContext(leaderInput({ cluster: cluster('node1'), memory })))).to.deep.equal({ retain: ['node2', 'node3'], departed: {} });
  });

  it('the leader publishes its slots\' positions, its own WAL position for the others\' slot of it, and what it retains', () => {
    const facts = primaryFacts(9000, { slots: [slot('node2', { restartLsn: 8000, active: true }), slot('cdc', { type: 'logical', database: 'app', plugin: 'pgoutput', restartLsn: 7000, confirmedFlushLsn: 7500 }), slot('stray', { restartLsn: 1 })] });
    const gone = cluster('node1', { status: { optime: 5000, slots: {}, retainSlots: ['old'], revision: '5' } });
    const s = leaderStatus(tickContext(leaderInput({ raw: { slots: logical }, cluster: gone, facts })));
    expect(s.slots).to.deep.equal({ node2: 8000, cdc: 7500, node1: 9000 });
    expect(s.retainSlots).to.deep.equal(['node2', 'node3', 'old']);
    expect(s.remember).to.deep.equal([{ type: 'remember', patch: { departedSlots: { old: NOW } } }]);
  });

  it('decide(): the leader writes the status with the slots and retain_slots and syncs the slots that differ', () => {
    const d = decide(leaderInput({ raw: { slots: { archiver: { type: 'physical' } } } }));
    expect(types(d)).to.deep.equal(['refreshLeader', 'writeStatus', 'syncSlots']);
    expect(d.actions[1]).to.deep.include({ retainSlots: ['node2', 'node3'] });
    expect(d.actions[2]).to.deep.equal({ type: 'syncSlots', plan: { drop: [], create: [{ name: 'archiver', type: 'physical' }], advance: [] } });
  });
});

describe('replication slots: reconciling what a server has with what it should have', () => {
  const opts = { ignore: [], paused: false, replica: false };

  it('creates what is missing, drops what nobody wants, recreates a slot of the wrong kind', () => {
    const r = reconcileSlots(
      [slot('node2'), slot('stray'), slot('cdc', { type: 'logical', database: 'app', plugin: 'test_decoding' })],
      [{ name: 'node2', type: 'physical' }, { name: 'node3', type: 'physical' }, { name: 'cdc', type: 'logical', database: 'app', plugin: 'pgoutput' }],
      opts,
    );
    expect(r.plan).to.deep.equal({
      drop: ['stray', 'cdc'],
      create: [{ name: 'cdc', type: 'logical', database: 'app', plugin: 'pgoutput' }, { name: 'node3', type: 'physical' }],
      advance: [],
    });
  });

  it('ignore_slots: an entry matches when every field it gives matches; nothing is dropped while paused', () => {
    const ext = slot('ext', { type: 'logical', database: 'app', plugin: 'wal2json' });
    expect(slotIgnored(ext, [{ type: 'logical', plugin: 'wal2json' }])).to.equal(true);
    expect(slotIgnored(ext, [{ name: 'ext', database: 'other' }])).to.equal(false);
    expect(reconcileSlots([ext], [], { ...opts, ignore: [{ name: 'ext' }] }).plan.drop).to.deep.equal([]);
    expect(reconcileSlots([ext], [], { ...opts, paused: true }).plan.drop).to.deep.equal([]);
    expect(reconcileSlots([ext], [], opts).plan.drop).to.deep.equal(['ext']);
  });

  it('advances an idle slot forward only; an active one is its consumer\'s; one with an xmin or no reserved WAL is dropped to be made anew', () => {
    const want = [{ name: 'a', type: 'physical' as const, advanceTo: 5000 }];
    expect(reconcileSlots([slot('a', { restartLsn: 4000 })], want, opts).plan.advance).to.deep.equal([{ name: 'a', lsn: 5000 }]);
    expect(reconcileSlots([slot('a', { restartLsn: 6000 })], want, opts).plan.advance).to.deep.equal([]);
    expect(reconcileSlots([slot('a', { restartLsn: 4000, active: true })], want, opts).plan.advance).to.deep.equal([]);
    expect(reconcileSlots([slot('a', { hasXmin: true })], want, opts).plan.drop).to.deep.equal(['a']);
    expect(reconcileSlots([slot('a', { restartLsn: null })], want, opts).plan.drop).to.deep.equal(['a']);
    expect(reconcileSlots([slot('a', { restartLsn: 4000 })], [{ name: 'a', type: 'physical' }], opts).plan).to.deep.equal({ drop: [], create: [], advance: [] });
  });

  it('a logical slot advances by at most LOGICAL_ADVANCE_STEP a tick', () => {
    const cdc = slot('cdc', { type: 'logical', database: 'app', plugin: 'pgoutput', confirmedFlushLsn: 1000 });
    const want = [{ name: 'cdc', type: 'logical' as const, database: 'app', plugin: 'pgoutput', advanceTo: 1000 + 3 * LOGICAL_ADVANCE_STEP }];
    expect(reconcileSlots([cdc], want, { ...opts, replica: true }).plan.advance).to.deep.equal([{ name: 'cdc', lsn: 1000 + LOGICAL_ADVANCE_STEP }]);
  });

  it('a replica copies a missing logical slot the leader publishes, instead of creating it', () => {
    const want = [{ name: 'cdc', type: 'logical' as const, database: 'app', plugin: 'pgoutput', advanceTo: 0 }];
    expect(reconcileSlots([], want, { ...opts, replica: true, published: { cdc: 10 } })).to.deep.equal({ plan: { drop: [], create: [], advance: [] }, copy: ['cdc'] });
    expect(reconcileSlots([], want, { ...opts, replica: true, published: {} }).copy).to.deep.equal([]);
  });
});

describe('replication slots: decide() on a replica', () => {
  const status = { optime: 5000, slots: { node1: 5000, node3: 4800, cdc: 4500 }, retainSlots: ['node2', 'node3'], revision: '5' };

  it('creates and advances the slots it keeps for after a failover as part of its steady state', () => {
    const d = decide(input({ cluster: cluster('node1', { status }), facts: replicaFacts(5000, 'node1', { slots: [slot('node1', { restartLsn: 4000 })] }) }));
    expect(d.actions).to.deep.equal([{ type: 'syncSlots', plan: { drop: [], create: [{ name: 'node3', type: 'physical' }], advance: [{ name: 'node1', lsn: 5000 }] } }]);
  });

  it('copies a permanent logical slot from the leader as a job (the server restarts), with hot_standby_feedback on', () => {
    const raw = { slots: { cdc: { type: 'logical', database: 'app', plugin: 'pgoutput' } } } as const;
    const d = decide(input({ raw, cluster: cluster('node1', { status }), memory: { ...input().memory, appliedParameters: '{"hot_standby_feedback":true}' } }));
    expect(d.job).to.equal('copy slots');
    const copy = d.actions.find((a) => a.type === 'copyLogicalSlots') as Extract<Action, { type: 'copyLogicalSlots' }>;
    expect(copy).to.deep.include({ source: { name: 'node1', connUrl: 'postgres://node1:5432/postgres' }, names: ['cdc'] });
    // Without hot_standby_feedback applied yet, the parameters come first: configure (no job).
    const first = decide(input({ raw, cluster: cluster('node1', { status }) }));
    expect(first.actions.find((a) => a.type === 'configure')).to.deep.include({ parameters: { hot_standby_feedback: true } });
  });

  it('does not copy while paused, while not streaming, or when the leader has not published the slot', () => {
    const raw = { slots: { cdc: { type: 'logical', database: 'app', plugin: 'pgoutput' } } } as const;
    const memory = { ...input().memory, appliedParameters: '{"hot_standby_feedback":true}' };
    expect(decide(input({ raw: { ...raw, pause: true }, cluster: cluster('node1', { status }), memory })).job).to.equal(null);
    expect(decide(input({ raw, cluster: cluster('node1', { status: { ...status, slots: {} } }), memory })).job).to.equal(null);
  });
});

describe('replication slots: the leader streams a member through its slot after a failover', () => {
  it('a new leader keeps the slots it kept as a replica (now active ones) and drops none of them', () => {
    const facts = primaryFacts(5000, { replication: [row('node2', 5000)], slots: [slot('node2'), slot('node3')] });
    const d = decide(leaderInput({ facts }));
    expect(types(d)).to.not.include('syncSlots');
  });
});
