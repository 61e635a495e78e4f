/**
 * A replica without streaming (what a node tagged `nostream` runs as) on real PostgreSQL 15:
 * standby.signal without primary_conninfo, WAL restored from an archive through
 * restore_command; a streaming replica told to follow nobody switches to the archive.
 */
import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeBaseDir } from '../../../support/postgres-server.js';
import { destroyNodes, makeNode, probeUntil, sql, type TestCredentials, type TestNode } from './pg-test-nodes.js';

const creds: TestCredentials = { superuser: { username: 'postgres', password: 'su-secret' }, replication: { username: 'replicator', password: 'repl-secret' } };
const START_MS = 30_000;

describe('PgDatabase: a replica that restores the archive only (real PostgreSQL 15)', function () {
  this.timeout(90_000);
  let a: TestNode;
  let b: TestNode;
  let archiveBase: string;
  let archive: string;

  before(async () => {
    archiveBase = await makeBaseDir();
    archive = join(archiveBase, 'archive');
    a = await makeNode('node_a', creds);
    b = await makeNode('node_b', creds);
    await a.db.initdb();
    await a.db.configure({ archive_mode: 'on', archive_command: `mkdir -p ${archive} && cp %p ${archive}/%f` });
    await a.db.start({ upstream: null, timeoutMs: START_MS });
    await sql(a, 'CREATE TABLE t (x int)');
    await b.db.createReplica({ name: 'node_a', connUrl: a.connUrl });
    await b.db.configure({ restore_command: `cp ${archive}/%f %p` });
  });
  after(async () => {
    await destroyNodes();
    if (archiveBase) await rm(archiveBase, { recursive: true, force: true });
  });

  it('starts as a standby with no upstream and replays what the primary archives', async () => {
    await b.db.start({ upstream: null, standby: true, timeoutMs: START_MS });
    const f = await probeUntil(b, (x) => x.running && x.replicationState === 'in archive recovery');
    expect(f).to.include({ inRecovery: true, upstreamConnUrl: null });
    await sql(a, 'INSERT INTO t VALUES (1)');
    await sql(a, 'SELECT pg_switch_wal()');
    await probeUntil(b, () => true);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await sql<{ n: number }>(b, 'SELECT count(*)::int AS n FROM t').catch(() => [{ n: 0 }]);
      if (rows[0]!.n === 1) break;
      if (Date.now() > deadline) throw new Error('the archived row never reached the replica');
      await new Promise((r) => setTimeout(r, 200));
    }
    // Nothing streams from the primary.
    expect((await a.db.probe()).replication).to.deep.equal([]);
  });

  it('a streaming replica told to follow nobody stops streaming and restores the archive, without a restart', async () => {
    await b.db.follow({ name: 'node_a', connUrl: a.connUrl }, { timeoutMs: START_MS });
    const streaming = await probeUntil(b, (f) => f.replicationState === 'streaming');
    await b.db.follow(null, { timeoutMs: START_MS });
    const f = await probeUntil(b, (x) => x.replicationState === 'in archive recovery');
    expect(f.postmasterStartTime).to.equal(streaming.postmasterStartTime);
    expect(f.upstreamConnUrl).to.equal(null);
    await probeUntil(a, (x) => x.replication.length === 0);
  });
});
