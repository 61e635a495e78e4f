/**
 * A data directory deleted under a running server (real PostgreSQL 15): the server would go on
 * acknowledging commits for up to a minute, and pg_ctl cannot stop it any more. The probe
 * kills it at once, before the HA loop may give the leader key up.
 */
import { expect } from 'chai';
import { rename, rm } from 'node:fs/promises';
import { killDataDirProcesses, serverProcessesInDataDir } from '../../../../src/adapters/database/data-dir-processes.js';
import { destroyNodes, makeNode, sql } from './pg-test-nodes.js';

describe('PgDatabase: a data directory deleted under the running server (real PostgreSQL 15)', function () {
  this.timeout(60_000);
  after(destroyNodes);

  it('the next probe kills the server and reports no data, no server', async () => {
    const n = await makeNode('deleted', { superuser: { username: 'postgres', password: 'pw' }, replication: { username: 'replicator', password: 'rpw' } });
    await n.db.initdb();
    await n.db.start({ upstream: null, timeoutMs: 30_000 });
    await sql(n, 'CREATE TABLE t (x int)');
    expect((await serverProcessesInDataDir(n.dataDir)).length).to.be.greaterThan(0);
    await rm(n.dataDir, { recursive: true, force: true });
    const facts = await n.db.probe();
    expect(facts).to.include({ initialized: false, running: false });
    expect(await serverProcessesInDataDir(n.dataDir), 'no server process left').to.deep.equal([]);
    const after = await sql(n, 'INSERT INTO t VALUES (1)').then(
      () => 'written',
      () => 'refused',
    );
    expect(after, 'no commit is acknowledged any more').to.equal('refused');
  });

  it('a data directory moved away (renamed, or its file system lazily unmounted) under the running server: the next probe kills it too', async () => {
    const n = await makeNode('moved', { superuser: { username: 'postgres', password: 'pw' }, replication: { username: 'replicator', password: 'rpw' } });
    await n.db.initdb();
    await n.db.start({ upstream: null, timeoutMs: 30_000 });
    await sql(n, 'CREATE TABLE t (x int)');
    expect(await n.db.probe()).to.include({ initialized: true, running: true });
    // Its processes' working directory and postmaster.pid go with it: nothing left at the configured path names them.
    const movedTo = `${n.dataDir}.moved`;
    await rename(n.dataDir, movedTo);
    try {
      const facts = await n.db.probe();
      expect(facts).to.include({ initialized: false, running: false });
      const after = await sql(n, 'INSERT INTO t VALUES (1)').then(
        () => 'written',
        () => 'refused',
      );
      expect(after, 'the server the agent reports gone acknowledges no commit: a new primary may start beside it').to.equal('refused');
      expect(await serverProcessesInDataDir(movedTo), 'no server process left').to.deep.equal([]);
    } finally {
      await killDataDirProcesses(movedTo);
      await rm(movedTo, { recursive: true, force: true });
    }
  });
});
