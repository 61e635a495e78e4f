/**
 * Replica creation methods and the custom bootstrap on a real PostgreSQL 15: commands that
 * fail fall back to the next method, a method gets its parameters and options, a method that
 * needs no running server restores from a backup, and a custom bootstrap restores a backup
 * and recovers from a WAL archive until it promotes.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseError } from '../../../../src/domain/errors.js';
import { makeBaseDir, PG_BIN_DIR, runPg } from '../../../support/postgres-server.js';
import { destroyNodes, makeNode, script, sharedDir, probeUntil, sql, type TestNode } from './pg-test-nodes.js';

const creds = { superuser: { username: 'postgres' }, replication: { username: 'replicator' } };
const START_MS = 60_000;

describe('PgDatabase: replica creation methods and custom bootstrap (PostgreSQL 15)', function () {
  this.timeout(180_000);
  let primary: TestNode;
  let dir: string;
  let archive: string;
  let backup: string;

  before(async () => {
    dir = await makeBaseDir();
    archive = await sharedDir(join(dir, 'archive'));
    backup = join(dir, 'backup');
    primary = await makeNode('methods_primary', creds, {
      localParameters: { unix_socket_directories: dir, shared_buffers: '16MB', max_connections: 30, fsync: false, archive_mode: 'on', archive_command: `cp %p ${archive}/%f` },
    });
    await primary.db.initdb();
    await primary.db.start({ upstream: null, timeoutMs: START_MS });
    await sql(primary, 'CREATE TABLE rows_before (x int); INSERT INTO rows_before VALUES (1)');
    await runPg('pg_basebackup', ['-D', backup, '-d', `host=127.0.0.1 port=${primary.port} user=replicator`, '-X', 'stream', '-c', 'fast']);
    await sql(primary, 'CREATE TABLE rows_after (x int); INSERT INTO rows_after VALUES (2)');
    await sql(primary, 'SELECT pg_switch_wal()');
    const wanted = (await sql<{ f: string }>(primary, 'SELECT pg_walfile_name(pg_current_wal_lsn()) AS f'))[0]!.f;
    await sql(primary, 'SELECT pg_switch_wal()');
    for (let i = 0; i < 200; i++) {
      const files = execFileSync('ls', [archive]).toString();
      if (files.split('\n').some((f) => f >= wanted && /^[0-9A-F]{24}$/.test(f))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    await destroyNodes();
    await rm(dir, { recursive: true, force: true });
  });

  it('tries the methods in order: a failing command, then a command that gets --scope, --datadir, --role, --connstring and its options', async () => {
    const calls = join(dir, 'calls.log');
    const fail = await script(join(dir, 'fail.sh'), `echo "fail $*" >> ${calls}; exit 3`);
    const clone = await script(
      join(dir, 'clone.sh'),
      `echo "clone $*" >> ${calls}
for a in "$@"; do case "$a" in --datadir=*) D="\${a#--datadir=}";; --connstring=*) C="\${a#--connstring=}";; esac; done
exec ${PG_BIN_DIR}/pg_basebackup -D "$D" -d "$C" -X stream -c fast`,
    );
    await writeFile(calls, '');
    await chmod(calls, 0o666);
    const replica = await makeNode('methods_replica', creds, {
      createReplicaMethods: ['fail', 'clone', 'basebackup'],
      replicaMethods: { fail: { command: fail }, clone: { command: clone, marker: 'yes' } },
    });
    await replica.db.createReplica({ name: 'primary', connUrl: primary.connUrl });
    const log = (await readFile(calls, 'utf8')).trim().split('\n');
    expect(log).to.have.length(2);
    expect(log[0]).to.match(/^fail --scope=itest --datadir=\S+ --role=replica --connstring=/);
    expect(log[1]).to.match(new RegExp(`^clone --scope=itest --datadir=${replica.dataDir} --role=replica --connstring=.*port=${primary.port}.* --marker=yes$`));
    await replica.db.start({ upstream: { name: 'primary', connUrl: primary.connUrl }, timeoutMs: START_MS });
    await probeUntil(replica, (f) => f.replicationState === 'streaming');
    expect(await sql(replica, 'SELECT x FROM rows_after')).to.deep.equal([{ x: 2 }]);
  });

  it('without a running source only a no_leader method runs (a restore from a backup); when every method fails the directory is left empty and each reason is given', async () => {
    const restore = await script(join(dir, 'restore.sh'), `for a in "$@"; do case "$a" in --datadir=*) D="\${a#--datadir=}";; esac; done
cp -a ${backup}/. "$D"`);
    const node = await makeNode('methods_restore', creds, { createReplicaMethods: ['basebackup', 'restore'], replicaMethods: { restore: { command: restore, no_leader: true } } });
    await node.db.createReplica(null);
    expect((await node.db.probe()).initialized).to.equal(true);

    const nothing = await makeNode('methods_nothing', creds, { replicaMethods: { broken: { command: '/bin/false', no_leader: true } }, createReplicaMethods: ['broken', 'missing'] });
    let error: unknown;
    try {
      await nothing.db.createReplica(null);
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(DatabaseError).and.have.property('code', 'create_replica_failed');
    expect((error as Error).message).to.match(/broken: .*false.*; missing: not defined in this node's configuration \(db\.missing\)/);
    expect((await nothing.db.probe()).initialized).to.equal(false);
  });

  it("replacing the node's own database (reinitialize): a keep_data method runs over it (a delta restore), any other starts from an empty directory; never without being asked", async () => {
    const calls = join(dir, 'delta.log');
    await writeFile(calls, '');
    await chmod(calls, 0o666);
    const delta = await script(
      join(dir, 'delta.sh'),
      `for a in "$@"; do case "$a" in --datadir=*) D="\${a#--datadir=}";; esac; done
[ -f "$D/global/pg_control" ] && had=database || had=empty
[ -f "$D/kept-marker" ] && marker=kept || marker=none
echo "$had $marker" >> ${calls}
cp -a ${backup}/. "$D"`,
    );
    const node = await makeNode('methods_delta', creds, { createReplicaMethods: ['delta'], replicaMethods: { delta: { command: delta, keep_data: true } } });
    const source = { name: 'primary', connUrl: primary.connUrl };
    await node.db.createReplica(source);
    await writeFile(join(node.dataDir, 'kept-marker'), 'x');
    let refused: unknown;
    try {
      await node.db.createReplica(source);
    } catch (e) {
      refused = e;
    }
    expect((refused as Error).message, 'not asked to replace it').to.match(/already holds a database/);
    await node.db.createReplica(source, { replacing: true });
    expect((await readFile(calls, 'utf8')).trim().split('\n')).to.deep.equal(['empty none', 'database kept']);
    expect((await node.db.probe()).initialized).to.equal(true);
    // basebackup needs an empty directory: the database it replaces goes first.
    await node.db.createReplica(source, { replacing: true, methods: ['basebackup'] });
    expect(existsSync(join(node.dataDir, 'kept-marker'))).to.equal(false);
    expect((await node.db.probe()).initialized).to.equal(true);
  });

  it('a custom bootstrap restores a backup, recovers from the WAL archive until it promotes, and leaves a stopped primary', async () => {
    const restore = await script(join(dir, 'bootstrap.sh'), `for a in "$@"; do case "$a" in --datadir=*) D="\${a#--datadir=}";; esac; done
cp -a ${backup}/. "$D"`);
    const node = await makeNode('methods_bootstrap', creds, {
      customBootstrap: { name: 'restore', command: restore, recovery_conf: { restore_command: `cp ${archive}/%f %p` } },
    });
    await node.db.initdb();
    const stopped = await node.db.probe();
    expect(stopped).to.include({ initialized: true, running: false, state: 'stopped' });
    expect(stopped.systemIdentifier).to.equal((await primary.db.probe()).systemIdentifier);
    await node.db.start({ upstream: null, timeoutMs: START_MS });
    const f = await node.db.probe();
    expect(f).to.include({ running: true, inRecovery: false });
    expect(f.timeline).to.be.greaterThan(1);
    // Written after the backup was taken: it came from the archive.
    expect(await sql(node, 'SELECT x FROM rows_after')).to.deep.equal([{ x: 2 }]);
  });

  it('a custom bootstrap that fails says so in its state and leaves the directory empty', async () => {
    const node = await makeNode('methods_bootstrap_fail', creds, { customBootstrap: { name: 'broken', command: '/bin/false' } });
    let error: unknown;
    try {
      await node.db.initdb();
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(DatabaseError).and.have.property('code', 'initdb_failed');
    expect((error as Error).message).to.match(/custom bootstrap broken failed/);
    expect(await node.db.probe()).to.include({ initialized: false, state: 'custom_bootstrap_failed' });
  });
});
