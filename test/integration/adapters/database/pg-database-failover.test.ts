/**
 * PgDatabase on real PostgreSQL 15: a primary, a replica made by pg_basebackup, promotion of
 * the replica, fencing and demotion of the old primary, pg_rewind and following the new one.
 * The steps depend on each other and run in order.
 */
import { expect } from 'chai';
import { chmod, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseError } from '../../../../src/domain/errors.js';
import { freePort, PG_BIN_DIR, startPrimary } from '../../../support/postgres-server.js';
import { connect, destroyNodes, makeNode, probeUntil, sql, type TestCredentials, type TestNode } from './pg-test-nodes.js';

const creds: TestCredentials = {
  superuser: { username: 'postgres', password: 'su-secret' },
  replication: { username: 'replicator', password: 'repl secret \'quoted\'' },
};
const START_MS = 30_000;

describe('PgDatabase: replica, promote, demote, rewind (real PostgreSQL 15)', function () {
  this.timeout(60_000);
  let a: TestNode;
  let b: TestNode;

  before(async () => {
    a = await makeNode('node_a', creds);
    b = await makeNode('node_b', creds);
  });
  after(destroyNodes);

  it('initdb + start a primary', async () => {
    expect((await a.db.probe()).state).to.equal('stopped');
    await a.db.initdb();
    const stopped = await a.db.probe();
    expect(stopped).to.include({ state: 'stopped', initialized: true, running: false });
    expect(stopped.systemIdentifier).to.match(/^\d+$/);

    await a.db.start({ upstream: null, timeoutMs: START_MS });
    const f = await a.db.probe();
    expect(f).to.include({ state: 'running', running: true, inRecovery: false, timeline: 1, replicationState: null });
    expect(f.serverVersion).to.be.within(150000, 159999);
    expect(f.systemIdentifier).to.equal(stopped.systemIdentifier);
    expect(f.postmasterStartTime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/);
    expect(f.walLocation).to.be.a('number').and.greaterThan(0);
    expect(f.pendingRestart).to.equal(false);
    const [checksums] = await sql<{ data_checksums: string }>(a, 'SHOW data_checksums');
    expect(checksums!.data_checksums).to.equal('on');
    // the replication role was created with its password (scram over TCP works)
    const roles = await sql<{ rolreplication: boolean }>(a, "SELECT rolreplication FROM pg_roles WHERE rolname = 'replicator'");
    expect(roles).to.deep.equal([{ rolreplication: true }]);
    await sql(a, 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
  });

  it('creates a replica with pg_basebackup and sees it streaming through a slot', async () => {
    await a.db.syncSlots({ drop: [], create: [{ name: 'node_b', type: 'physical' }], advance: [] });
    const t0 = performance.now();
    await b.db.createReplica({ name: 'node_a', connUrl: a.connUrl });
    console.log(`      basebackup of an empty cluster: ${(performance.now() - t0).toFixed(0)} ms`);
    expect((await b.db.probe()).state).to.equal('stopped');

    await b.db.start({ upstream: { name: 'node_a', connUrl: a.connUrl }, slotName: 'node_b', timeoutMs: START_MS });
    const fb = await probeUntil(b, (f) => f.replicationState === 'streaming');
    expect(fb).to.include({ state: 'running', inRecovery: true, timeline: 1, upstreamConnUrl: a.connUrl });
    expect(fb.receivedLocation).to.be.a('number').and.greaterThan(0);
    expect(fb.replayedLocation).to.be.a('number').and.greaterThan(0);
    expect(fb.walLocation).to.equal(null);

    const fa = await probeUntil(a, (f) => f.replication.some((r) => r.application_name === 'node_b' && r.state === 'streaming'));
    const row = fa.replication.find((r) => r.application_name === 'node_b')!;
    expect(row).to.include({ usename: 'replicator', client_addr: '127.0.0.1', sync_state: 'async' });
    const [slot] = await sql<{ active: boolean }>(a, "SELECT active FROM pg_replication_slots WHERE slot_name = 'node_b'");
    expect(slot!.active).to.equal(true);

    await sql(a, 'INSERT INTO t VALUES (2)');
    await probeUntil(b, (f) => (f.replayedLocation ?? 0) >= ((fa.walLocation ?? 0) + 1));
    const rows = await sql<{ n: number }>(b, 'SELECT count(*)::int AS n FROM t');
    expect(rows[0]!.n).to.equal(2);
  });

  it('applies a slot plan: creates, drops (a missing one is no error), keeps the rest', async () => {
    await sql(a, "SELECT pg_create_physical_replication_slot('gone_member')");
    await a.db.syncSlots({ drop: ['gone_member', 'never_there'], create: [{ name: 'node_b', type: 'physical' }, { name: 'permanent_one', type: 'physical' }], advance: [] });
    const names = (await sql<{ slot_name: string }>(a, 'SELECT slot_name FROM pg_replication_slots ORDER BY 1')).map((r) => r.slot_name);
    expect(names).to.deep.equal(['node_b', 'permanent_one']);
    await a.db.syncSlots({ drop: ['permanent_one'], create: [], advance: [] });
  });

  it('promotes the replica: timeline 2 and writable', async () => {
    const t0 = performance.now();
    await b.db.promote(START_MS);
    const ms = performance.now() - t0;
    await sql(b, 'INSERT INTO t VALUES (3)');
    console.log(`      promote (request to writable): ${ms.toFixed(0)} ms`);
    const fb = await b.db.probe();
    expect(fb).to.include({ state: 'running', inRecovery: false, timeline: 2, replicationState: null, upstreamConnUrl: null });
    const history = await b.db.timelineHistory();
    expect(history).to.have.length(1);
    expect(history[0]![0]).to.equal(1);
    expect(history[0]![1]).to.be.a('number').and.greaterThan(0);
    expect(history[0]![3]).to.equal(null);
    expect(await a.db.timelineHistory()).to.deep.equal([]);
  });

  it('fences the old primary: client sessions are terminated at once', async () => {
    // the old primary diverges: a write the new timeline never saw
    await sql(a, 'INSERT INTO t VALUES (99)');
    const client = await connect(a);
    await client.query('SELECT 1');
    await a.db.terminateClientSessions();
    let error: unknown;
    try {
      await client.query('INSERT INTO t VALUES (100)');
    } catch (e) {
      error = e;
    }
    expect(error, 'the fenced session could still write').to.be.instanceOf(Error);
    await client.end().catch(() => undefined);
    // the agent's own probe connection survives the fencing
    expect((await a.db.probe()).running).to.equal(true);
  });

  it('demotes the old primary to a read-only standby', async () => {
    const t0 = performance.now();
    await a.db.follow({ name: 'node_b', connUrl: b.connUrl }, { slotName: 'node_a', timeoutMs: START_MS });
    const ms = performance.now() - t0;
    const [ro] = await sql<{ r: boolean }>(a, 'SELECT pg_is_in_recovery() AS r');
    console.log(`      demote (request to read-only): ${ms.toFixed(0)} ms`);
    expect(ro!.r).to.equal(true);
    let error: unknown;
    try {
      await sql(a, 'INSERT INTO t VALUES (101)');
    } catch (e) {
      error = e;
    }
    expect((error as { code?: string }).code).to.equal('25006'); // read_only_sql_transaction
    // diverged from timeline 2: it cannot stream from the new primary
    await new Promise((r) => setTimeout(r, 300));
    expect((await a.db.probe()).replicationState).to.equal('in archive recovery');
  });

  it('rewinds the old primary and makes it follow the new one', async () => {
    await b.db.syncSlots({ drop: [], create: [{ name: 'node_a', type: 'physical' }], advance: [] });
    await a.db.stop('fast', 10_000);
    expect((await a.db.probe()).state).to.equal('stopped');
    const t0 = performance.now();
    await a.db.rewind({ name: 'node_b', connUrl: b.connUrl });
    console.log(`      pg_rewind: ${(performance.now() - t0).toFixed(0)} ms`);
    await a.db.follow({ name: 'node_b', connUrl: b.connUrl }, { slotName: 'node_a', timeoutMs: START_MS });
    const fa = await probeUntil(a, (f) => f.replicationState === 'streaming' && f.timeline === 2);
    expect(fa).to.include({ state: 'running', inRecovery: true, upstreamConnUrl: b.connUrl });
    await probeUntil(b, (f) => f.replication.some((r) => r.application_name === 'node_a' && r.state === 'streaming'));
    await sql(b, 'INSERT INTO t VALUES (4)');
    const wanted = (await b.db.probe()).walLocation!;
    await probeUntil(a, (f) => (f.replayedLocation ?? 0) >= wanted);
    const xs = (await sql<{ x: number }>(a, 'SELECT x FROM t ORDER BY x')).map((r) => r.x);
    expect(xs).to.deep.equal([1, 2, 3, 4]); // the diverged row 99 is gone
    // the port and our generated files survived pg_rewind's copy of the source's files
    const [port] = await sql<{ port: string }>(a, 'SHOW port');
    expect(Number(port!.port)).to.equal(a.port);
  });

  it("the replica's primary_conninfo names a password file, never the password (SHOW is open to pg_monitor)", async () => {
    const [row] = await sql<{ primary_conninfo: string }>(a, 'SHOW primary_conninfo');
    expect(row!.primary_conninfo).to.include('passfile=').and.not.to.include('secret');
    const mode = (await stat(join(a.dataDir, 'warden.pgpass'))).mode & 0o777;
    expect(mode.toString(8)).to.equal('600');
  });

  it('follow() on a running replica switches upstream with a reload, not a restart', async () => {
    const before = (await a.db.probe()).postmasterStartTime;
    await a.db.follow(null, { timeoutMs: START_MS });
    const f = await probeUntil(a, (x) => x.upstreamConnUrl === null);
    expect(f.postmasterStartTime).to.equal(before);
    expect(f.inRecovery).to.equal(true);
    await a.db.follow({ name: 'node_b', connUrl: b.connUrl }, { slotName: 'node_a', timeoutMs: START_MS });
    await probeUntil(a, (x) => x.replicationState === 'streaming' && x.upstreamConnUrl === b.connUrl);
  });

  it('a WAL segment of a timeline the replica has no history file of (pg_rewind leaves the abandoned branch\'s) is not its timeline', async () => {
    const orphan = join(a.dataDir, 'pg_wal', '000000090000000000000009');
    await writeFile(orphan, '');
    try {
      const f = await a.db.probe();
      expect(f).to.include({ inRecovery: true, timeline: 2 });
    } finally {
      await rm(orphan, { force: true });
    }
  });

  it('refuses pg_rewind on a running server without harming it', async () => {
    let error: unknown;
    try {
      await a.db.rewind({ name: 'node_b', connUrl: b.connUrl });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(DatabaseError);
    expect((error as DatabaseError).code).to.equal('rewind_failed');
    expect(await a.db.probe()).to.include({ state: 'running', replicationState: 'streaming' });
  });

  it('a pg_rewind refused before it changed anything (another system) leaves the data directory startable', async () => {
    const stranger = await startPrimary(); // another cluster: pg_rewind refuses a foreign system
    try {
      await a.db.stop('fast');
      let error: unknown;
      try {
        await a.db.rewind({ name: 'stranger', connUrl: `postgres://127.0.0.1:${stranger.port}/postgres` });
      } catch (e) {
        error = e;
      }
      expect((error as DatabaseError).code).to.equal('rewind_failed');
      expect((error as Error).message).to.match(/different systems/);
    } finally {
      await stranger.destroy();
    }
    // An address that is not one fails before pg_rewind runs: nothing changed either.
    const bad = await a.db.rewind({ name: 'typo', connUrl: "postgres://127.0.0.1\nlisten_addresses = '*':5432/postgres" }).then(() => null, (e: unknown) => e);
    expect((bad as DatabaseError).code).to.equal('rewind_failed');
    expect(await readdir(a.dataDir)).not.to.include('warden.rewind_failed');
    await a.db.follow({ name: 'node_b', connUrl: b.connUrl }, { slotName: 'node_a', timeoutMs: START_MS });
    await probeUntil(a, (f) => f.replicationState === 'streaming' && f.timeline === 2);
  });

  it('a pg_rewind that failed after it began rewriting marks the data directory: never started or rewound again, reinitializing recovers', async () => {
    // A pg_rewind that says where it rewinds from, then dies (as one killed mid-copy, or out of disk, would).
    // It counts its runs and notes whether the data directory was marked before it ran (an agent killed meanwhile leaves the mark).
    const binDir = await mkdtemp(join(tmpdir(), 'warden-fake-rewind-'));
    for (const f of await readdir(PG_BIN_DIR)) await symlink(join(PG_BIN_DIR, f), join(binDir, f));
    await rm(join(binDir, 'pg_rewind'));
    const script = [
      '#!/bin/sh',
      `echo run >> ${binDir}/runs`,
      'for a in "$@"; do case "$a" in -D) next=1;; *) [ -n "$next" ] && dir="$a"; next=;; esac; done',
      `[ -f "$dir/warden.rewind_failed" ] && echo marked >> ${binDir}/runs`,
      'echo "pg_rewind: rewinding from last common checkpoint at 0/2000060 on timeline 1" >&2',
      'echo "pg_rewind: error: could not write file \"$dir/pg_wal/000000030000000000000007\": No space left on device" >&2',
      'exit 1',
    ].join('\n');
    await writeFile(join(binDir, 'pg_rewind'), `${script}\n`, { mode: 0o755 });
    await writeFile(join(binDir, 'runs'), '');
    await chmod(join(binDir, 'runs'), 0o666);
    await chmod(binDir, 0o755);
    try {
      const d = await makeNode('node_d', creds, { binDir });
      await d.db.initdb();
      const error = await d.db.rewind({ name: 'node_b', connUrl: b.connUrl }).then(() => null, (e: unknown) => e);
      expect((error as DatabaseError).code).to.equal('rewind_interrupted');
      expect((error as Error).message).to.include('after it began rewriting').and.include('No space left on device');
      expect(await readdir(d.dataDir)).to.include('warden.rewind_failed');
      expect((await readFile(join(binDir, 'runs'), 'utf8')).trim().split('\n')).to.deep.equal(['run', 'marked']);
      // A second rewind would read WAL the first may have replaced: refused without running pg_rewind.
      const again = await d.db.rewind({ name: 'node_b', connUrl: b.connUrl }).then(() => null, (e: unknown) => e);
      expect((again as DatabaseError).code).to.equal('rewind_interrupted');
      expect((await readFile(join(binDir, 'runs'), 'utf8')).trim().split('\n')).to.have.length(2);
      const startError = await d.db.start({ upstream: { name: 'node_b', connUrl: b.connUrl }, timeoutMs: START_MS }).then(() => null, (e: unknown) => e);
      expect((startError as Error).message).to.include('stopped before it finished and may have rewritten part of it');
      expect(await d.db.probe()).to.include({ state: 'start_failed', running: false });
      await d.db.removeDataDirectory();
      expect((await d.db.probe()).initialized).to.equal(false);
    } finally {
      await rm(binDir, { recursive: true, force: true });
    }
  });

  it('rewinds an old primary that crashed (kill -9) and makes it follow', async () => {
    // roles swap again: a becomes primary on timeline 3, b diverges on timeline 2 and crashes
    await a.db.promote(START_MS);
    await sql(b, 'INSERT INTO t VALUES (98)');
    const pid = Number((await readFile(join(b.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await probeUntil(b, (f) => f.state === 'crashed', 5_000);
    await a.db.syncSlots({ drop: [], create: [{ name: 'node_b', type: 'physical' }], advance: [] });
    const t0 = performance.now();
    await b.db.rewind({ name: 'node_a', connUrl: a.connUrl });
    console.log(`      pg_rewind of a crashed primary: ${(performance.now() - t0).toFixed(0)} ms`);
    await b.db.follow({ name: 'node_a', connUrl: a.connUrl }, { slotName: 'node_b', timeoutMs: START_MS });
    await probeUntil(b, (f) => f.state === 'running' && f.replicationState === 'streaming' && f.timeline === 3);
    await sql(a, 'INSERT INTO t VALUES (5)');
    const wanted = (await a.db.probe()).walLocation!;
    await probeUntil(b, (f) => (f.replayedLocation ?? 0) >= wanted);
    const xs = (await sql<{ x: number }>(b, 'SELECT x FROM t ORDER BY x')).map((r) => r.x);
    expect(xs).to.deep.equal([1, 2, 3, 4, 5]);
    expect((await a.db.timelineHistory()).map((l) => l[0])).to.deep.equal([1, 2]);
  });

  it('cleans up after a failed base backup (one that could not connect says so)', async () => {
    const c = await makeNode('node_c', creds);
    let error: unknown;
    try {
      await c.db.createReplica({ name: 'nobody', connUrl: `postgres://127.0.0.1:${await freePort()}/postgres` });
    } catch (e) {
      error = e;
    }
    expect((error as DatabaseError).code).to.equal('create_replica_source_unreachable');
    expect(await readdir(c.dataDir)).to.deep.equal([]);
    expect((await c.db.probe()).state).to.equal('stopped');
  });
});
