/**
 * A replica created from another replica (a member tagged clonefrom) rather than from the
 * primary (real PostgreSQL 15): pg_basebackup runs against the standby, and the copy then
 * streams from the primary with every row the primary committed.
 */
import { expect } from 'chai';
import { destroyNodes, makeNode, probeUntil, sql, streamingPair, type TestNode } from './pg-test-nodes.js';

const START_MS = 30_000;
const creds = { superuser: { username: 'postgres' }, replication: { username: 'replicator' } };

describe('PgDatabase: a replica copied from a replica (real PostgreSQL 15)', function () {
  this.timeout(120_000);
  let a: TestNode;
  let b: TestNode;
  let c: TestNode;

  before(async () => {
    ({ a, b } = await streamingPair('clone', creds, START_MS));
    c = await makeNode('clone_c', creds);
  });
  after(destroyNodes);

  it('pg_basebackup from the standby, then streaming from the primary', async () => {
    await sql(a, 'CREATE TABLE t(id int)');
    await sql(a, 'INSERT INTO t SELECT generate_series(1, 1000)');
    await probeUntil(b, (f) => f.replicationState === 'streaming');
    await c.db.createReplica({ name: b.name, connUrl: b.connUrl });
    await a.db.syncSlots({ drop: [], create: [{ name: c.name, type: 'physical' }], advance: [] });
    await c.db.start({ upstream: { name: a.name, connUrl: a.connUrl }, slotName: c.name, timeoutMs: START_MS });
    await sql(a, 'INSERT INTO t SELECT generate_series(1001, 1500)');
    const facts = await probeUntil(c, (f) => f.replicationState === 'streaming');
    expect(facts.upstreamConnUrl).to.equal(a.connUrl);
    const deadline = Date.now() + 20_000;
    let count = 0;
    while (Date.now() < deadline) {
      count = Number((await sql<{ n: string }>(c, 'SELECT count(*) AS n FROM t'))[0]!.n);
      if (count === 1500) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(count).to.equal(1500);
  });
});
