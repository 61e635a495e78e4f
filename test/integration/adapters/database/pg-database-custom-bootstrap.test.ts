/**
 * A custom bootstrap's point-in-time restore on a real PostgreSQL 15: the method restores a
 * base backup and names a recovery target (as pgBackRest `--type=name|time|lsn` and Barman
 * `--target-*` do, in postgresql.auto.conf with recovery.signal), and with
 * keep_existing_recovery_conf the server stops replaying at that target, not at the end of the
 * archive; the target is gone once the bootstrap is over. recovery_conf's own target is
 * honoured the same way.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseError } from '../../../../src/domain/errors.js';
import type { CustomBootstrap } from '../../../../src/adapters/database/pg-custom-bootstrap.js';
import { makeBaseDir, runPg } from '../../../support/postgres-server.js';
import { destroyNodes, makeNode, script, sharedDir, sql, type TestNode } from './pg-test-nodes.js';

const creds = { superuser: { username: 'postgres' }, replication: { username: 'replicator' } };
const START_MS = 60_000;

/** Tables of the public schema, sorted. */
async function tables(node: TestNode): Promise<string[]> {
  const rows = await sql<{ t: string }>(node, "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
  return rows.map((r) => r.t);
}

describe('PgDatabase: a custom bootstrap recovers to the target its method set (PostgreSQL 15)', function () {
  this.timeout(180_000);
  let primary: TestNode;
  let dir: string;
  let archive: string;
  let backup: string;
  /** The WAL position after `doomed` got its row and before it was dropped. */
  let beforeDropLsn: string;

  /** A method that restores the backup and leaves recovery.signal and `settings` in postgresql.auto.conf (pgBackRest's way). */
  async function restoreMethod(name: string, settings: Readonly<Record<string, string>>, extra: Partial<CustomBootstrap> = {}): Promise<CustomBootstrap> {
    const lines = Object.entries(settings)
      .map(([k, v]) => `${k} = '${v}'`)
      .join('\n');
    const command = await script(
      join(dir, `${name}.sh`),
      `for a in "$@"; do case "$a" in --datadir=*) D="\${a#--datadir=}";; esac; done
cp -a ${backup}/. "$D"
cat >> "$D/postgresql.auto.conf" <<'EOF'
${lines}
EOF
touch "$D/recovery.signal"`,
    );
    return { name, command, keep_existing_recovery_conf: true, ...extra };
  }

  before(async () => {
    dir = await makeBaseDir();
    archive = await sharedDir(join(dir, 'archive'));
    backup = join(dir, 'backup');
    primary = await makeNode('pitr_primary', creds, {
      localParameters: { unix_socket_directories: dir, shared_buffers: '16MB', max_connections: 30, fsync: false, archive_mode: 'on', archive_command: `cp %p ${archive}/%f` },
    });
    await primary.db.initdb();
    await primary.db.start({ upstream: null, timeoutMs: START_MS });
    await sql(primary, 'CREATE TABLE kept (x int); INSERT INTO kept VALUES (1)');
    await runPg('pg_basebackup', ['-D', backup, '-d', `host=127.0.0.1 port=${primary.port} user=replicator`, '-X', 'stream', '-c', 'fast']);
    await sql(primary, 'CREATE TABLE doomed (x int); INSERT INTO doomed VALUES (2)');
    await sql(primary, "SELECT pg_create_restore_point('before_drop')");
    beforeDropLsn = (await sql<{ l: string }>(primary, 'SELECT pg_current_wal_insert_lsn()::text AS l'))[0]!.l;
    await sql(primary, 'DROP TABLE doomed; CREATE TABLE after_drop (x int); INSERT INTO after_drop VALUES (3)');
    const last = (await sql<{ f: string }>(primary, 'SELECT pg_walfile_name(pg_current_wal_lsn()) AS f'))[0]!.f;
    await sql(primary, 'SELECT pg_switch_wal()');
    for (let i = 0; i < 300; i++) {
      if ((await readdir(archive)).some((f) => /^[0-9A-F]{24}$/.test(f) && f >= last)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await primary.db.stop('fast', 30_000);
  });
  after(async () => {
    await destroyNodes();
    await rm(dir, { recursive: true, force: true });
  });

  it('keep_existing_recovery_conf: the recovery_target_name the method wrote stops the recovery there (the dropped table is back), and the target is gone afterwards', async () => {
    const method = await restoreMethod('by_name', { restore_command: `cp ${archive}/%f %p`, recovery_target_name: 'before_drop', recovery_target_action: 'promote' });
    const node = await makeNode('pitr_name', creds, { customBootstrap: method });
    await node.db.initdb();
    expect(await node.db.probe()).to.include({ initialized: true, running: false, state: 'stopped' });
    // A later recovery (this member rejoining as a replica) must not stop at the old target.
    const auto = await readFile(join(node.dataDir, 'postgresql.auto.conf'), 'utf8');
    expect(auto).to.not.match(/recovery_target/);
    expect(auto, 'the rest of what the method wrote stays').to.match(/restore_command/);
    expect(await readFile(join(node.dataDir, 'postgresql.conf'), 'utf8')).to.not.match(/recovery_target_action/);

    await node.db.start({ upstream: null, timeoutMs: START_MS });
    expect(await node.db.probe()).to.include({ running: true, inRecovery: false });
    expect(await tables(node)).to.deep.equal(['doomed', 'kept']);
    expect(await sql(node, 'SELECT x FROM doomed')).to.deep.equal([{ x: 2 }]);
    expect(await sql(node, 'SHOW recovery_target_name')).to.deep.equal([{ recovery_target_name: '' }]);
    await node.db.stop('fast', 30_000);
  });

  it("keep_existing_recovery_conf: a recovery_target_lsn with pgBackRest's default action (pause) still ends in a primary at the target", async () => {
    const method = await restoreMethod('by_lsn', { restore_command: `cp ${archive}/%f %p`, recovery_target_lsn: beforeDropLsn, recovery_target_action: 'pause' });
    const node = await makeNode('pitr_lsn', creds, { customBootstrap: method });
    await node.db.initdb();
    expect(await readFile(join(node.dataDir, 'postgresql.auto.conf'), 'utf8')).to.not.match(/recovery_target/);
    await node.db.start({ upstream: null, timeoutMs: START_MS });
    expect(await node.db.probe()).to.include({ running: true, inRecovery: false });
    expect(await tables(node)).to.deep.equal(['doomed', 'kept']);
    await node.db.stop('fast', 30_000);
  });

  it('keep_existing_recovery_conf: a target the archive never reaches fails the bootstrap instead of promoting at the end of the WAL', async () => {
    const method = await restoreMethod('unreached', { restore_command: `cp ${archive}/%f %p`, recovery_target_name: 'never_created' });
    const node = await makeNode('pitr_unreached', creds, { customBootstrap: method });
    let error: unknown;
    try {
      await node.db.initdb();
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(DatabaseError).and.have.property('code', 'initdb_failed');
    expect(await node.db.probe()).to.include({ initialized: false, state: 'custom_bootstrap_failed' });
  });

  it("recovery_conf: the bootstrap's own recovery_target_name is honoured, and gone afterwards", async () => {
    const command = await script(join(dir, 'plain.sh'), `for a in "$@"; do case "$a" in --datadir=*) D="\${a#--datadir=}";; esac; done
cp -a ${backup}/. "$D"`);
    const node = await makeNode('pitr_conf', creds, {
      customBootstrap: { name: 'plain', command, recovery_conf: { restore_command: `cp ${archive}/%f %p`, recovery_target_name: 'before_drop' } },
    });
    await node.db.initdb();
    expect(await readFile(join(node.dataDir, 'postgresql.conf'), 'utf8')).to.not.match(/recovery_target_name|restore_command/);
    await node.db.start({ upstream: null, timeoutMs: START_MS });
    expect(await tables(node)).to.deep.equal(['doomed', 'kept']);
    await node.db.stop('fast', 30_000);
  });

  it('a configuration pass of the HA loop during the recovery keeps its restore_command and target', async () => {
    const waiting = join(dir, 'restore-waiting');
    const go = join(dir, 'restore-go');
    const command = await script(join(dir, 'plain2.sh'), `for a in "$@"; do case "$a" in --datadir=*) D="\${a#--datadir=}";; esac; done
cp -a ${backup}/. "$D"`);
    // Held at its first call, so that the configuration is written while the server recovers.
    const restore = await script(join(dir, 'held-restore.sh'), `touch ${waiting}; while [ ! -f ${go} ]; do sleep 0.1; done; exec cp ${archive}/$1 $2`);
    const node = await makeNode('pitr_configure', creds, {
      customBootstrap: { name: 'plain2', command, recovery_conf: { restore_command: `${restore} %f %p`, recovery_target_name: 'before_drop' } },
    });
    const bootstrap = node.db.initdb();
    bootstrap.catch(() => undefined);
    for (let i = 0; i < 300 && !existsSync(waiting); i++) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(waiting), 'the recovery called restore_command').to.equal(true);
    await node.db.configure({ work_mem: '8MB' });
    await writeFile(go, '');
    await bootstrap;
    await node.db.start({ upstream: null, timeoutMs: START_MS });
    expect(await tables(node)).to.deep.equal(['doomed', 'kept']);
    expect(await sql(node, 'SHOW work_mem')).to.deep.equal([{ work_mem: '8MB' }]);
    await node.db.stop('fast', 30_000);
  });
});
