/**
 * PgDatabase on one real PostgreSQL 15 server: configuration and pending restarts, process
 * states, crash detection after kill -9 of the postmaster, stop modes.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseError } from '../../../../src/domain/errors.js';
import { serverProcessesInDataDir } from '../../../../src/adapters/database/data-dir-processes.js';
import { pidAlive } from '../../../support/postgres-server.js';
import { FrozenProcesses, freezerAvailable } from '../../../support/frozen-processes.js';
import { connect, destroyNodes, makeNode, probeUntil, sql, type TestNode } from './pg-test-nodes.js';

const START_MS = 30_000;

async function postmasterPid(node: TestNode): Promise<number> {
  return Number((await readFile(join(node.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

describe('PgDatabase: configuration, states and crashes (real PostgreSQL 15)', function () {
  this.timeout(60_000);
  let n: TestNode;

  before(async () => {
    // no passwords: trust on loopback only
    n = await makeNode('solo', { superuser: { username: 'postgres' }, replication: { username: 'replicator' } });
    await n.db.initdb();
    await n.db.start({ upstream: null, timeoutMs: START_MS });
  });
  after(destroyNodes);

  it('writes the HA-required values, merged with dynamic and local parameters', async () => {
    await n.db.configure({ work_mem: '8MB', port: 1, wal_level: 'minimal', max_wal_senders: 7, shared_buffers: '64MB' });
    const settings = await sql<{ name: string; setting: string }>(
      n,
      `SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name IN
        ('work_mem','port','wal_level','max_wal_senders','hot_standby','wal_log_hints','cluster_name','listen_addresses')`,
    );
    const byName = Object.fromEntries(settings.map((s) => [s.name, s.setting]));
    expect(byName).to.deep.equal({
      cluster_name: 'itest',
      hot_standby: 'on',
      listen_addresses: '127.0.0.1',
      max_wal_senders: '10', // needs a restart: the file says 7, the server still runs 10
      port: String(n.port), // cannot be set through parameters
      wal_level: 'replica', // never below replica
      wal_log_hints: 'on',
      work_mem: '8MB', // reloadable: applied at once
    });
    // the local shared_buffers (16MB) wins over the dynamic 64MB: no pending change for it
    const f = await n.db.probe();
    expect(f.pendingRestartReason).to.not.have.property('shared_buffers');
    const hba = await readFile(join(n.dataDir, 'pg_hba.conf'), 'utf8');
    expect(hba).to.match(/^host\s+replication\s+"replicator"\s+127\.0\.0\.1\/32\s+trust$/m);
    expect(hba).to.not.match(/0\.0\.0\.0\/0/);
  });

  it('reports pending_restart with old and new value; restart clears it', async () => {
    await n.db.configure({ max_wal_senders: 7, max_connections: 40 });
    const f = await n.db.probe();
    expect(f.pendingRestart).to.equal(true);
    expect(f.pendingRestartReason).to.deep.equal({
      max_wal_senders: { old_value: '10', new_value: '7' },
    });
    const before = f.postmasterStartTime;
    await n.db.restart(START_MS);
    const after = await n.db.probe();
    expect(after).to.include({ state: 'running', pendingRestart: false });
    expect(after.pendingRestartReason).to.deep.equal({});
    expect(after.postmasterStartTime).to.not.equal(before);
    const [row] = await sql<{ max_wal_senders: string }>(n, 'SHOW max_wal_senders');
    expect(row!.max_wal_senders).to.equal('7');
  });

  it('sets synchronous_standby_names with a reload', async () => {
    await n.db.setSynchronousStandbyNames('ANY 1 ("node_b")');
    expect((await n.db.probe()).synchronousStandbyNames).to.equal('ANY 1 ("node_b")');
    await n.db.configure({ synchronous_standby_names: 'ignored' });
    expect((await n.db.probe()).synchronousStandbyNames).to.equal('ANY 1 ("node_b")');
    await n.db.setSynchronousStandbyNames('');
    expect((await n.db.probe()).synchronousStandbyNames).to.equal('');
  });

  it('takes what it sets out of postgresql.auto.conf (ALTER SYSTEM would override it), keeps the rest', async () => {
    await sql(n, "ALTER SYSTEM SET synchronous_standby_names = 'someone'");
    await sql(n, "ALTER SYSTEM SET work_mem = '9MB'");
    await sql(n, 'SELECT pg_reload_conf()');
    await probeUntil(n, (f) => f.synchronousStandbyNames === 'someone', 5_000);
    await n.db.setSynchronousStandbyNames('FIRST 1 ("node_b")');
    expect((await n.db.probe()).synchronousStandbyNames).to.equal('FIRST 1 ("node_b")');
    const auto = await readFile(join(n.dataDir, 'postgresql.auto.conf'), 'utf8');
    expect(auto).to.not.match(/synchronous_standby_names/);
    expect(auto).to.match(/^work_mem = '9MB'$/m);
    expect((await sql<{ work_mem: string }>(n, 'SHOW work_mem'))[0]!.work_mem).to.equal('9MB');
    await sql(n, 'ALTER SYSTEM RESET work_mem');
    await n.db.setSynchronousStandbyNames('');
  });

  it('detects a crashed postmaster after kill -9 and starts again', async () => {
    const pid = await postmasterPid(n);
    const client = await connect(n);
    process.kill(pid, 'SIGKILL');
    const t0 = performance.now();
    const f = await probeUntil(n, (x) => x.state === 'crashed', 5_000);
    console.log(`      crash detected ${(performance.now() - t0).toFixed(0)} ms after kill -9`);
    expect(f).to.include({ running: false, initialized: true, inRecovery: null });
    expect(f.systemIdentifier).to.match(/^\d+$/); // from pg_controldata while down
    await client.end().catch(() => undefined);
    // stays crashed until an operation changes it
    expect((await n.db.probe()).state).to.equal('crashed');
    await n.db.start({ upstream: null, timeoutMs: START_MS });
    expect(await n.db.probe()).to.include({ state: 'running', running: true, inRecovery: false });
    expect(await postmasterPid(n)).to.not.equal(pid);
  });

  it('checkpoints, and stops with smart, fast and immediate', async () => {
    await n.db.checkpoint();
    for (const mode of ['smart', 'fast', 'immediate'] as const) {
      const pid = await postmasterPid(n);
      await n.db.stop(mode, 10_000);
      expect(pidAlive(pid), `${mode} stop left the postmaster`).to.equal(false);
      expect(await n.db.probe()).to.include({ state: 'stopped', running: false });
      await n.db.start({ upstream: null, timeoutMs: START_MS });
    }
    // stopping a stopped server is not an error
    await n.db.stop('fast');
    await n.db.stop('fast');
    expect((await n.db.probe()).state).to.equal('stopped');
  });

  it('escalates a smart stop that clients block to immediate after the timeout', async () => {
    await n.db.start({ upstream: null, timeoutMs: START_MS });
    const client = await connect(n); // a smart shutdown waits for this session forever
    const pid = await postmasterPid(n);
    const t0 = performance.now();
    await n.db.stop('smart', 500);
    expect(performance.now() - t0).to.be.lessThan(10_000);
    expect(pidAlive(pid)).to.equal(false);
    await client.end().catch(() => undefined);
  });

  it('starts a leaderless standby, and reports a start that cannot succeed as start_failed', async () => {
    await n.db.start({ upstream: null, standby: true, timeoutMs: START_MS });
    const f = await n.db.probe();
    expect(f).to.include({ inRecovery: true, replicationState: 'in archive recovery', upstreamConnUrl: null });
    await n.db.promote(START_MS);
    expect((await n.db.probe()).inRecovery).to.equal(false);
    await n.db.stop('fast');

    await n.db.configure({ shared_preload_libraries: 'no_such_library' });
    let error: unknown;
    try {
      await n.db.start({ upstream: null, timeoutMs: START_MS });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(DatabaseError);
    expect((error as DatabaseError).code).to.equal('start_failed');
    expect((error as Error).message).to.include('no_such_library');
    expect((await n.db.probe()).state).to.equal('start_failed');
    await n.db.configure({});
    await n.db.start({ upstream: null, timeoutMs: START_MS });
    expect((await n.db.probe()).state).to.equal('running');
  });

  it('starts as a standby with a setting lowered below what the control file records: the recorded value is used', async () => {
    await n.db.configure({ max_prepared_transactions: 5 });
    await n.db.restart(START_MS); // the control file now records 5, as a primary's WAL would tell its replicas
    await n.db.stop('fast');
    await n.db.configure({ max_prepared_transactions: 2 });
    await n.db.start({ upstream: null, standby: true, timeoutMs: START_MS });
    expect(await n.db.probe()).to.include({ state: 'running', inRecovery: true });
    const [row] = await sql<{ max_prepared_transactions: string }>(n, 'SHOW max_prepared_transactions');
    expect(row!.max_prepared_transactions).to.equal('5');
    await n.db.promote(START_MS);
    await n.db.stop('fast');
    await n.db.configure({});
    await n.db.start({ upstream: null, timeoutMs: START_MS });
  });

  it('probe answers within 2 s and never throws, even against a hung server', async () => {
    const pid = await postmasterPid(n);
    // a stopped (SIGSTOP) postmaster still holds its port: connections hang
    n.db.close();
    process.kill(pid, 'SIGSTOP');
    try {
      const t0 = performance.now();
      const f = await n.db.probe();
      const ms = performance.now() - t0;
      expect(ms).to.be.lessThan(2_100);
      expect(f.running).to.equal(false);
      expect(f.state).to.equal('running'); // alive but silent is not a crash
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await probeUntil(n, (x) => x.running);
  });

  it('an immediate stop of a frozen server kills its processes: nothing of it answers when thawed; an operator\'s process in the data directory is left alone', async () => {
    const pid = await postmasterPid(n);
    const all = [pid, ...(await serverProcessesInDataDir(n.dataDir)).filter((p) => p !== pid)];
    expect(all.length).to.be.greaterThan(3);
    // An operator's shell or tail sitting in the data directory: neither killed nor waited for.
    const bystander = spawn('sleep', ['120'], { cwd: n.dataDir, stdio: 'ignore' });
    for (const p of all) process.kill(p, 'SIGSTOP');
    try {
      expect((await n.db.probe()).state).to.equal('running');
      const t0 = performance.now();
      await n.db.stop('immediate');
      const ms = performance.now() - t0;
      expect(ms).to.be.lessThan(8_000);
      expect(await serverProcessesInDataDir(n.dataDir)).to.deep.equal([]);
      expect((await n.db.probe()).running).to.equal(false);
      await n.db.start({ upstream: null, timeoutMs: START_MS });
      expect(await n.db.probe()).to.include({ running: true, inRecovery: false });
      expect(pidAlive(bystander.pid!)).to.equal(true);
    } finally {
      for (const p of all) if (pidAlive(p)) process.kill(p, 'SIGCONT');
      bystander.kill('SIGKILL');
    }
  });

  it('an immediate stop of a server stuck in the kernel (state D: a hung disk) counts as done once its processes have SIGKILL pending; a start waits until they are gone', async function () {
    if (!(await freezerAvailable())) this.skip();
    await probeUntil(n, (x) => x.running);
    const all = await serverProcessesInDataDir(n.dataDir);
    const stuck = await FrozenProcesses.freeze(`warden-itest-${process.pid}`, all).catch(() => null);
    if (!stuck || !(await stuck.allStuck())) {
      await stuck?.release();
      this.skip();
    }
    try {
      expect((await n.db.probe()).state).to.equal('running');
      const t0 = performance.now();
      await n.db.stop('immediate');
      expect(performance.now() - t0).to.be.lessThan(8_000);
      // Still there, holding the data directory, but every one of them doomed: none can accept, commit or answer anything again.
      expect((await stuck.killPending()).sort()).to.deep.equal([...all].sort());
      expect(await n.db.probe()).to.include({ running: false, state: 'stopped' });
      const refused = await n.db.start({ upstream: null, timeoutMs: 2_000 }).then(() => null, (e: unknown) => e);
      expect(refused).to.be.instanceOf(DatabaseError);
      expect(String((refused as Error).message) + String((refused as Error & { cause?: unknown }).cause ?? '')).to.match(/stuck in the kernel/);
    } finally {
      await stuck.release();
    }
    // Released, they die at once: the server starts.
    expect(await serverProcessesInDataDir(n.dataDir)).to.deep.equal([]);
    await n.db.start({ upstream: null, timeoutMs: START_MS });
    expect(await n.db.probe()).to.include({ running: true, inRecovery: false });
  });
});
