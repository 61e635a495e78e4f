/**
 * Replication slots of PgDatabase on real PostgreSQL 15: a plan on the primary (member,
 * permanent physical and logical slots), slots a replica keeps for after a failover (created
 * and advanced on a standby), a logical slot copied from the primary to the replica, advanced
 * there, and usable after the replica is promoted. The steps depend on each other.
 */
import { expect } from 'chai';
import { parseLsn } from '../../../../src/domain/cluster/model/lsn.js';
import { destroyNodes, makeNode, probeUntil, sql, type TestCredentials, type TestNode } from './pg-test-nodes.js';

const creds: TestCredentials = { superuser: { username: 'postgres', password: 'su-secret' }, replication: { username: 'replicator', password: 'repl-secret' } };
const START_MS = 30_000;
const PARAMS = { wal_level: 'logical', hot_standby_feedback: true };

/** Bytes of an LSN text, as the probe reports positions. */
const lsn = (text: string | null): number => (text === null ? 0 : parseLsn(text)!);

describe('PgDatabase: replication slots on a primary and a replica (real PostgreSQL 15)', function () {
  this.timeout(90_000);
  let a: TestNode;
  let b: TestNode;
  const upA = () => ({ name: 'node_a', connUrl: a.connUrl });

  before(async () => {
    a = await makeNode('node_a', creds);
    b = await makeNode('node_b', creds);
    await a.db.initdb();
    await a.db.configure(PARAMS);
    await a.db.start({ upstream: null, timeoutMs: START_MS });
    await sql(a, 'CREATE TABLE t (x int)');
  });
  after(destroyNodes);

  it('the primary applies a plan: member, permanent physical and logical slots; the probe reports them', async () => {
    await a.db.syncSlots({
      drop: [],
      create: [
        { name: 'node_b', type: 'physical' },
        { name: 'archiver', type: 'physical' },
        { name: 'cdc', type: 'logical', database: 'postgres', plugin: 'test_decoding' },
      ],
      advance: [],
    });
    const f = await a.db.probe();
    expect(f.slots.map((s) => [s.name, s.type, s.database, s.plugin, s.active])).to.deep.equal([
      ['archiver', 'physical', null, null, false],
      ['cdc', 'logical', 'postgres', 'test_decoding', false],
      ['node_b', 'physical', null, null, false],
    ]);
    expect(f.slots.find((s) => s.name === 'archiver')!.restartLsn, 'WAL reserved at once').to.be.a('number');
    expect(f.slots.find((s) => s.name === 'cdc')!.confirmedFlushLsn).to.be.a('number');
  });

  it('a replica streams through its slot; the primary sees the slot active', async () => {
    await b.db.createReplica(upA());
    await b.db.configure(PARAMS);
    await b.db.start({ upstream: upA(), slotName: 'node_b', timeoutMs: START_MS });
    await probeUntil(b, (f) => f.replicationState === 'streaming');
    await probeUntil(a, (f) => f.slots.some((s) => s.name === 'node_b' && s.active));
  });

  it('the replica keeps physical slots for after a failover, moved forward (never past what it replayed) while idle', async () => {
    await b.db.syncSlots({ drop: [], create: [{ name: 'node_a', type: 'physical' }, { name: 'archiver', type: 'physical' }], advance: [] });
    const before = (await b.db.probe()).slots.find((s) => s.name === 'archiver')!.restartLsn!;
    await sql(a, 'INSERT INTO t SELECT generate_series(1, 5000)');
    const target = (await a.db.probe()).walLocation!;
    const replayed = (await probeUntil(b, (f) => (f.replayedLocation ?? 0) >= target)).replayedLocation!;
    await b.db.syncSlots({ drop: [], create: [], advance: [{ name: 'archiver', lsn: target + 1_000_000 }] });
    const after = (await b.db.probe()).slots.find((s) => s.name === 'archiver')!.restartLsn!;
    expect(after).to.be.greaterThan(before);
    expect(after).to.be.at.most(replayed);
    // Never back: an advance behind the slot changes nothing and is no error.
    await b.db.syncSlots({ drop: [], create: [], advance: [{ name: 'archiver', lsn: before }] });
    expect((await b.db.probe()).slots.find((s) => s.name === 'archiver')!.restartLsn).to.equal(after);
  });

  it('copies the logical slot from the primary (the replica restarts to load it) and advances the copy to where the consumer confirmed', async () => {
    await sql(a, 'INSERT INTO t VALUES (1), (2)');
    // The consumer reads up to here; what follows must still be there after a failover.
    const consumed = await sql<{ lsn: string }>(a, "SELECT max(lsn)::text AS lsn FROM pg_logical_slot_get_changes('cdc', NULL, NULL)");
    expect(consumed[0]!.lsn).to.be.a('string');
    await sql(a, 'INSERT INTO t VALUES (42)');
    const started = (await b.db.probe()).postmasterStartTime;
    await b.db.copyLogicalSlots(upA(), ['cdc'], START_MS);
    const copied = await probeUntil(b, (f) => f.running && f.slots.some((s) => s.name === 'cdc'));
    expect(copied.postmasterStartTime).to.not.equal(started);
    expect(copied.inRecovery).to.equal(true);
    await probeUntil(b, (f) => f.replicationState === 'streaming');
    const confirmedOnA = (await a.db.probe()).slots.find((s) => s.name === 'cdc')!.confirmedFlushLsn!;
    const onB = copied.slots.find((s) => s.name === 'cdc')!;
    expect(onB.confirmedFlushLsn).to.be.at.most(confirmedOnA);
    const target = (await a.db.probe()).walLocation!;
    await probeUntil(b, (f) => (f.replayedLocation ?? 0) >= target);
    await b.db.syncSlots({ drop: [], create: [], advance: [{ name: 'cdc', lsn: confirmedOnA }] });
    const advanced = (await b.db.probe()).slots.find((s) => s.name === 'cdc')!;
    expect(advanced.confirmedFlushLsn).to.equal(confirmedOnA);
    expect(lsn(consumed[0]!.lsn)).to.be.at.most(confirmedOnA);
  });

  it('after the replica is promoted, the consumer goes on from the copy: it sees what it had not confirmed, not what it had', async () => {
    await b.db.promote(START_MS);
    const changes = await sql<{ data: string }>(b, "SELECT data FROM pg_logical_slot_get_changes('cdc', NULL, NULL)");
    const text = changes.map((c) => c.data).join('\n');
    expect(text).to.include('x[integer]:42');
    expect(text).to.not.include('x[integer]:2');
  });

  it('drops: a missing slot is no error; an active one\'s walsender is ended first', async () => {
    await b.db.syncSlots({ drop: ['node_a', 'nothing_here'], create: [], advance: [] });
    expect((await b.db.probe()).slots.map((s) => s.name)).to.deep.equal(['archiver', 'cdc']);
  });
});
