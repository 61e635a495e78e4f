/**
 * A data directory that holds files neither PostgreSQL nor the agent made (a wrong data_dir, a
 * mount point) is never emptied to build a database in it: initdb and a copy of the leader
 * refuse and leave every file where it was. What an interrupted build left is replaced.
 */
import { expect } from 'chai';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseError } from '../../../../src/domain/errors.js';
import { destroyNodes, makeNode, type TestCredentials } from './pg-test-nodes.js';

const creds: TestCredentials = { superuser: { username: 'postgres' }, replication: { username: 'replicator' } };

describe("PgDatabase: somebody else's files in the data directory (real PostgreSQL 15)", function () {
  this.timeout(60_000);
  after(destroyNodes);

  it('initdb and a base backup refuse, naming the files, and delete nothing', async () => {
    const n = await makeNode('foreign_a', creds);
    await mkdir(n.dataDir, { recursive: true });
    await writeFile(join(n.dataDir, 'junk.txt'), 'keep me\n');
    const initdb = await n.db.initdb().then(() => null, (e: unknown) => e);
    expect(initdb).to.be.instanceOf(DatabaseError).and.have.property('code', 'data_dir_not_empty');
    expect(String((initdb as Error).message)).to.match(/holds files that are not PostgreSQL's \(junk\.txt\): Warden does not delete files it did not make/);
    const copy = await n.db.createReplica({ name: 'nobody', connUrl: 'postgres://127.0.0.1:1/postgres' }).then(() => null, (e: unknown) => e);
    expect(copy).to.be.instanceOf(DatabaseError).and.have.property('code', 'data_dir_not_empty');
    expect(String((copy as Error).message)).to.match(/junk\.txt/);
    expect(await readFile(join(n.dataDir, 'junk.txt'), 'utf8')).to.equal('keep me\n');
  });

  it('what an interrupted initdb left (PostgreSQL names only, no control file) is cleared and initdb goes on', async () => {
    const n = await makeNode('foreign_b', creds);
    await mkdir(join(n.dataDir, 'base'), { recursive: true });
    await writeFile(join(n.dataDir, 'PG_VERSION'), '15\n');
    await n.db.initdb();
    expect(await readdir(n.dataDir)).to.include.members(['PG_VERSION', 'global', 'base']);
    expect((await n.db.probe()).initialized).to.equal(true);
  });

  it('a database that lost global/pg_control is not emptied to copy the leader into it; what an interrupted base backup left is', async () => {
    const n = await makeNode('foreign_c', creds);
    await mkdir(join(n.dataDir, 'base', '5'), { recursive: true });
    await mkdir(join(n.dataDir, 'global'), { recursive: true });
    await mkdir(join(n.dataDir, 'pg_wal'), { recursive: true });
    await writeFile(join(n.dataDir, 'PG_VERSION'), '15\n');
    await writeFile(join(n.dataDir, 'base', '5', '16385'), 'rows only this member holds\n');
    await writeFile(join(n.dataDir, 'global', '1262'), 'catalog\n');
    const initdb = await n.db.initdb().then(() => null, (e: unknown) => e);
    expect(String((initdb as Error).message)).to.match(/holds a database whose global\/pg_control is missing or unreadable: Warden does not delete it/);
    const copy = await n.db.createReplica({ name: 'node1', connUrl: 'postgres://127.0.0.1:1/postgres' }).then(() => null, (e: unknown) => e);
    expect(copy).to.be.instanceOf(DatabaseError);
    expect(String((copy as Error).message)).to.match(/holds a database whose global\/pg_control is missing or unreadable: Warden does not delete it/);
    expect(await readFile(join(n.dataDir, 'base', '5', '16385'), 'utf8')).to.equal('rows only this member holds\n');

    // An interrupted base backup writes backup_label first: its leftovers are cleared before the next copy.
    const m = await makeNode('foreign_d', creds);
    await mkdir(join(m.dataDir, 'base'), { recursive: true });
    await writeFile(join(m.dataDir, 'PG_VERSION'), '15\n');
    await writeFile(join(m.dataDir, 'backup_label'), 'START WAL LOCATION: 0/2000028\n');
    const again = await m.db.createReplica({ name: 'node1', connUrl: 'postgres://127.0.0.1:1/postgres' }).then(() => null, (e: unknown) => e);
    expect(String((again as Error).message)).to.not.match(/pg_control is missing/);
    expect(await readdir(m.dataDir)).to.deep.equal([]);
  });
});
