/**
 * PgDatabase's part of a switchover on real PostgreSQL 15: the old primary is stopped fast by
 * a signal (no pg_ctl), its shutdown checkpoint's position is read from the control file, and the
 * candidate promotes once it holds the WAL up to there, losing no committed row. The steps
 * depend on each other and run in order.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { FENCE_HOLD_FILE, placeFenceHold } from '../../../../src/adapters/database/fence-hold.js';
import { pathExists } from '../../../../src/adapters/database/path-exists.js';
import { readControlData } from '../../../../src/adapters/database/pg-controldata.js';
import { parseLsn } from '../../../../src/domain/cluster/model/lsn.js';
import { destroyNodes, probeUntil, sql, streamingPair, type TestCredentials, type TestNode } from './pg-test-nodes.js';

const creds: TestCredentials = { superuser: { username: 'postgres', password: 'su' }, replication: { username: 'replicator', password: 'rep' } };
const START_MS = 30_000;

describe('PgDatabase: the switchover path (real PostgreSQL 15)', function () {
  this.timeout(90_000);
  let a: TestNode;
  let b: TestNode;

  before(async () => {
    ({ a, b } = await streamingPair('sw', creds, START_MS));
  });
  after(destroyNodes);

  it('has no shutdown checkpoint while running', async () => {
    expect(await a.db.shutdownCheckpoint()).to.equal(null);
  });

  it('stops the primary fast, done once the shutdown checkpoint is written, and reads its position from the control file', async () => {
    await sql(a, 'CREATE TABLE t (x int); INSERT INTO t SELECT generate_series(1, 1000)');
    await a.db.checkpoint();
    await sql(a, 'INSERT INTO t SELECT generate_series(1001, 2000)');
    await a.db.stop('fast', undefined, { untilShutdownCheckpoint: true });
    // The postmaster may still be exiting: the position is there all the same.
    const early = await a.db.shutdownCheckpoint();
    expect(early).to.be.a('number');
    // The next operation waits for the exit (a stop of a stopped server is one).
    await a.db.stop('fast');
    expect((await a.db.probe()).state).to.equal('stopped');
    const lsn = await a.db.shutdownCheckpoint();
    expect(lsn).to.equal(early);
    const cd = await readControlData(a.options.binDir ?? '/usr/lib/postgresql/15/bin', a.dataDir, process.getuid?.() === 0 ? 'postgres' : null);
    expect(cd['Database cluster state']).to.equal('shut down');
    expect(lsn).to.equal(parseLsn(cd['Latest checkpoint location']!));
  });

  it('promotes the replica once it holds the WAL up to there: every row is on the new primary', async () => {
    const lsn = (await a.db.shutdownCheckpoint())!;
    const t0 = performance.now();
    await b.db.promote(START_MS, { walAtLeast: lsn, catchUpMs: 2000 });
    const ms = performance.now() - t0;
    console.log(`      promote after catching up (request to writable): ${ms.toFixed(0)} ms`);
    const f = await b.db.probe();
    expect(f).to.include({ inRecovery: false, timeline: 2 });
    const [row] = await sql<{ n: number }>(b, 'SELECT count(*)::int AS n FROM t');
    expect(row!.n).to.equal(2000);
    // The new timeline branches after the old primary's shutdown checkpoint: it can follow without pg_rewind.
    const [history] = await b.db.timelineHistory();
    expect(history![1]).to.be.greaterThan(lsn);
    // The reload after the promotion took every change of the file (no server-start parameter left it).
    const log = await readFile(`${b.dataDir}-log/postgresql.log`, 'utf8');
    expect(log).to.not.match(/contains errors|cannot be changed without restarting/);
  });

  it("a replica's clean stop and an immediate stop leave no shutdown checkpoint to hand over", async () => {
    await a.db.start({ upstream: { name: 'sw_b', connUrl: b.connUrl }, timeoutMs: START_MS });
    await probeUntil(a, (f) => f.replicationState === 'streaming');
    await a.db.stop('fast');
    expect(await a.db.shutdownCheckpoint()).to.equal(null);
    expect((await a.db.probe()).stoppedAsReplica, "a replica's data, stopped").to.equal(true);
    await b.db.stop('immediate');
    expect(await b.db.shutdownCheckpoint()).to.equal(null);
    expect((await b.db.probe()).stoppedAsReplica, "a primary's data, stopped (crashed)").to.equal(false);
    // The fencer's hold (standby.signal) keeps the next start read-only; the data stays a primary's.
    expect(await placeFenceHold(b.dataDir, process.getuid?.() === 0 ? 'postgres' : null)).to.equal('placed');
    expect((await b.db.probe()).stoppedAsReplica, "a fenced primary's data").to.equal(false);
  });

  it('a candidate that never gets the WAL waits catchUpMs, then promotes anyway', async () => {
    // The agent's start as a primary lifts the fence's hold.
    await b.db.start({ upstream: null, timeoutMs: START_MS });
    expect((await b.db.probe()).inRecovery, 'started as the primary the agent asked for').to.equal(false);
    expect(await pathExists(join(b.dataDir, 'standby.signal'))).to.equal(false);
    expect(await pathExists(join(b.dataDir, FENCE_HOLD_FILE))).to.equal(false);
    await a.db.start({ upstream: { name: 'sw_b', connUrl: b.connUrl }, timeoutMs: START_MS });
    await probeUntil(a, (f) => f.replicationState === 'streaming');
    const beyond = ((await b.db.probe()).walLocation ?? 0) + 64 * 1024 * 1024;
    const t0 = performance.now();
    await a.db.promote(START_MS, { walAtLeast: beyond, catchUpMs: 500 });
    expect(performance.now() - t0).to.be.at.least(500);
    expect((await a.db.probe()).inRecovery).to.equal(false);
  });
});
