/**
 * A hot standby whose max_connections is below its primary's: PostgreSQL pauses its replay
 * ("insufficient parameter settings") until a restart, and aborts a promotion. The probe says
 * why replay waits; a restart takes the primary's value from the control file; a promotion the
 * server aborts fails at once with the server's reason, instead of holding the leader key
 * until its timeout.
 */
import { expect } from 'chai';
import { DatabaseError } from '../../../../src/domain/errors.js';
import { destroyNodes, probeUntil, sql, streamingPair, type TestCredentials, type TestNode } from './pg-test-nodes.js';

const creds: TestCredentials = {
  superuser: { username: 'postgres', password: 'su-secret' },
  replication: { username: 'replicator', password: 'repl-secret' },
};
const START_MS = 30_000;

describe("PgDatabase: a standby below its primary's hot-standby settings (real PostgreSQL 15)", function () {
  this.timeout(90_000);
  let a: TestNode;
  let b: TestNode;

  before(async () => {
    ({ a, b } = await streamingPair('abort', creds, START_MS));
  });
  after(destroyNodes);

  /** Restarts the primary with 50 more max_connections than the standby runs with (ALTER SYSTEM wins over the generated file). */
  async function raisePrimary(): Promise<number> {
    const [row] = await sql<{ max_connections: string }>(b, 'SHOW max_connections');
    const raised = Number(row!.max_connections) + 50;
    await sql(a, `ALTER SYSTEM SET max_connections = ${raised}`);
    await a.db.stop('fast', START_MS);
    await a.db.start({ upstream: null, timeoutMs: START_MS });
    return raised;
  }

  it('the probe says why replay waits; a restart takes the primary value and replay goes on', async () => {
    const raised = await raisePrimary();
    const blocked = await probeUntil(b, (f) => f.replayPaused, 30_000);
    expect(blocked.replayBlockedBy).to.equal(`max_connections ${raised - 50} is below ${raised} on the primary`);
    await b.db.restart(START_MS);
    const after = await probeUntil(b, (f) => f.replicationState === 'streaming' && !f.replayPaused, 30_000);
    expect(after.replayBlockedBy).to.equal(null);
    const [row] = await sql<{ max_connections: string }>(b, 'SHOW max_connections');
    expect(Number(row!.max_connections)).to.equal(raised);
  });

  it('lowered on the primary: the replica sees its control file move, and a configure shows the lower value as a pending restart', async () => {
    const [row] = await sql<{ max_connections: string }>(b, 'SHOW max_connections');
    const running = Number(row!.max_connections);
    await sql(a, `ALTER SYSTEM SET max_connections = ${running - 20}`);
    await a.db.stop('fast', START_MS);
    await a.db.start({ upstream: null, timeoutMs: START_MS });
    await probeUntil(b, (f) => f.standbyMinimumsChanged === true, 30_000);
    await b.db.configure({});
    const after = await probeUntil(b, (f) => f.standbyMinimumsChanged === false && f.pendingRestart, 30_000);
    expect(after.pendingRestartReason['max_connections']).to.deep.equal({ old_value: String(running), new_value: String(running - 20) });
  });

  it('a promotion the server aborts fails within seconds, with its FATAL line', async () => {
    await raisePrimary();
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
