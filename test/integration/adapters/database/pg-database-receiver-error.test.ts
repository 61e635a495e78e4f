/**
 * A replica that cannot connect for replication: the probe reports the WAL receiver's error
 * from the server log (pg_stat_wal_receiver has no row then), so the agent can say why and
 * does not take it for WAL gone from the leader.
 */
import { expect } from 'chai';
import { destroyNodes, probeUntil, sql, streamingPair, type TestCredentials, type TestNode } from './pg-test-nodes.js';

const creds: TestCredentials = {
  superuser: { username: 'postgres', password: 'su-secret' },
  replication: { username: 'replicator', password: 'repl-secret' },
};
const START_MS = 30_000;

describe('PgDatabase: why a replica does not stream (real PostgreSQL 15)', function () {
  this.timeout(90_000);
  let a: TestNode;
  let b: TestNode;

  before(async () => {
    ({ a, b } = await streamingPair('recv', creds, START_MS));
  });
  after(destroyNodes);

  it('streaming: no error; refused by a changed password: a connection error in the server words; streaming again: none', async () => {
    expect((await probeUntil(b, (f) => f.replicationState === 'streaming')).receiverError).to.equal(null);
    await sql(a, "ALTER ROLE replicator PASSWORD 'changed'");
    await sql(a, 'SELECT pg_terminate_backend(pid) FROM pg_stat_replication');
    const refused = await probeUntil(b, (f) => f.receiverError?.cause === 'connection', 30_000);
    expect(refused.replicationState).to.not.equal('streaming');
    expect(refused.receiverError!.message).to.match(/^could not connect to the primary server: .*password authentication failed for user "replicator"/);
    await sql(a, "ALTER ROLE replicator PASSWORD 'repl-secret'");
    const back = await probeUntil(b, (f) => f.replicationState === 'streaming', 30_000);
    expect(back.receiverError).to.equal(null);
  });
});
