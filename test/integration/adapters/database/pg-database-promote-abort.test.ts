/**
 * A promotion that PostgreSQL aborts: a hot standby whose max_connections is below its
 * primary's pauses replay ("insufficient parameter settings"), and a promote request then
 * makes it exit. The promotion must fail at once with the server's reason, not hold the
 * leader key until its timeout.
 */
import { expect } from 'chai';
import { DatabaseError } from '../../../../src/domain/errors.js';
import { destroyNodes, makeNode, probeUntil, sql, type TestCredentials, type TestNode } from './pg-test-nodes.js';

const creds: TestCredentials = {
  superuser: { username: 'postgres', password: 'su-secret' },
  replication: { username: 'replicator', password: 'repl-secret' },
};
const START_MS = 30_000;

describe('PgDatabase: a promotion the server aborts (real PostgreSQL 15)', function () {
  this.timeout(90_000);
  let a: TestNode;
  let b: TestNode;

  before(async () => {
    a = await makeNode('abort_a', creds);
    b = await makeNode('abort_b', creds);
  });
  after(destroyNodes);

  it('fails within seconds, naming the server log, when the server exits instead of promoting', async () => {
    await a.db.initdb();
    await a.db.start({ upstream: null, timeoutMs: START_MS });
    await a.db.syncSlots({ drop: [], create: [{ name: 'abort_b', type: 'physical' }], advance: [] });
    await b.db.createReplica({ name: 'abort_a', connUrl: a.connUrl });
    await b.db.start({ upstream: { name: 'abort_a', connUrl: a.connUrl }, slotName: 'abort_b', timeoutMs: START_MS });
    await probeUntil(b, (f) => f.replicationState === 'streaming');

    // The primary's max_connections goes up (ALTER SYSTEM wins over the generated file); the standby keeps its own.
    const [before] = await sql<{ max_connections: string }>(b, 'SHOW max_connections');
    await sql(a, `ALTER SYSTEM SET max_connections = ${Number(before!.max_connections) + 50}`);
    await a.db.stop('fast', START_MS);
    await a.db.start({ upstream: null, timeoutMs: START_MS });
    await probeUntil(b, (f) => f.replayPaused, 30_000);

    const t0 = performance.now();
    const error = await b.db.promote(60_000).then(
      () => null,
      (e: unknown) => e,
    );
    const ms = performance.now() - t0;
    console.log(`      aborted promotion reported after ${ms.toFixed(0)} ms`);
    expect(error).to.be.instanceOf(DatabaseError);
    expect((error as DatabaseError).code).to.equal('promote_failed');
    expect(String((error as Error).message)).to.match(/exited during the promotion/);
    expect(String((error as Error).message)).to.match(/insufficient parameter settings/);
    expect(ms).to.be.below(20_000);
  });
});
