/**
 * db.authentication.rewind on real PostgreSQL 15 servers: the primary creates the role with
 * the grants pg_rewind needs (not a superuser), replicas get it by replication, and a rewind
 * of a diverged old primary logs in as that role on its source.
 */
import { expect } from 'chai';
import { DatabaseError } from '../../../../src/domain/errors.js';
import { destroyNodes, makeNode, probeUntil, sql, type TestCredentials, type TestNode } from './pg-test-nodes.js';

const creds: TestCredentials = {
  superuser: { username: 'postgres', password: 'su-secret' },
  replication: { username: 'replicator', password: 'repl-secret' },
};
const rewind = { rewind: { username: 'rewinder', password: 'rw secret' } };
const START_MS = 30_000;

describe('PgDatabase: a rewind role of its own (real PostgreSQL 15)', function () {
  this.timeout(90_000);
  let a: TestNode;
  let b: TestNode;

  before(async () => {
    a = await makeNode('rw_a', creds, rewind);
    b = await makeNode('rw_b', creds, rewind);
  });
  after(destroyNodes);

  it('the primary creates the role, without superuser, with the functions pg_rewind calls', async () => {
    await a.db.initdb();
    await a.db.start({ upstream: null, timeoutMs: START_MS });
    const [role] = await sql<{ rolsuper: boolean; rolcanlogin: boolean; ls: boolean; read: boolean }>(
      a,
      "SELECT rolsuper, rolcanlogin, has_function_privilege('rewinder', 'pg_catalog.pg_ls_dir(text, boolean, boolean)', 'EXECUTE') AS ls, has_function_privilege('rewinder', 'pg_catalog.pg_read_binary_file(text, bigint, bigint, boolean)', 'EXECUTE') AS read FROM pg_roles WHERE rolname = 'rewinder'",
    );
    expect(role).to.deep.equal({ rolsuper: false, rolcanlogin: true, ls: true, read: true });
    await sql(a, 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
  });

  it('a diverged old primary is rewound as that role', async () => {
    await b.db.createReplica({ name: 'rw_a', connUrl: a.connUrl });
    await b.db.start({ upstream: { name: 'rw_a', connUrl: a.connUrl }, standby: true, timeoutMs: START_MS });
    await probeUntil(b, (f) => f.replicationState === 'streaming');
    await b.db.promote(START_MS);
    await sql(a, 'INSERT INTO t VALUES (99)');
    await a.db.stop('fast', 10_000);
    await a.db.rewind({ name: 'rw_b', connUrl: b.connUrl });
    // The role is what pg_rewind logs in as: without LOGIN on the source, the next rewind cannot connect.
    await sql(b, 'ALTER ROLE rewinder NOLOGIN');
    const error = await a.db.rewind({ name: 'rw_b', connUrl: b.connUrl }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(DatabaseError);
    expect((error as Error).message).to.match(/rewinder/);
  });
});
