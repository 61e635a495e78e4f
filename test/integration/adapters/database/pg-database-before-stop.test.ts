/**
 * PgDatabase with the operator's before_stop script (real PostgreSQL 15): the agent's fast and
 * smart stops and its restarts wait for it while the server still serves; an immediate stop
 * (an emergency) does not run it.
 */
import { expect } from 'chai';
import { destroyNodes, makeNode, sql, type TestNode } from './pg-test-nodes.js';

const START_MS = 30_000;

describe('PgDatabase: before_stop (real PostgreSQL 15)', function () {
  this.timeout(60_000);
  let n: TestNode;
  /** What the server answered each time the script ran (it must still be up). */
  const seen: string[] = [];
  /** How long the script takes. */
  let scriptMs = 300;

  before(async () => {
    n = await makeNode(
      'hooked',
      { superuser: { username: 'postgres' }, replication: { username: 'replicator' } },
      {
        beforeStop: async () => {
          const rows = await sql<{ up: string }>(n, "SELECT 'up' AS up").catch((e: Error) => [{ up: `down: ${e.message}` }]);
          // A script that takes its time: the stop waits for it.
          await new Promise((r) => setTimeout(r, scriptMs));
          seen.push(rows[0]!.up);
        },
      },
    );
    await n.db.initdb();
    await n.db.start({ upstream: null, timeoutMs: START_MS });
  });
  after(destroyNodes);

  it('a fast stop runs the script first, while the server still answers, and waits for it', async () => {
    const t0 = Date.now();
    await n.db.stop('fast');
    expect(Date.now() - t0).to.be.at.least(300);
    expect(seen).to.deep.equal(['up']);
    expect((await n.db.probe()).running).to.equal(false);
  });

  it('a stopped server: nothing to stop, no script', async () => {
    await n.db.stop('fast');
    expect(seen).to.have.length(1);
  });

  it('a restart runs it; an immediate stop does not', async () => {
    await n.db.start({ upstream: null, timeoutMs: START_MS });
    await n.db.restart(START_MS);
    expect(seen).to.deep.equal(['up', 'up']);
    await n.db.stop('immediate');
    expect(seen).to.have.length(2);
    expect((await n.db.probe()).running).to.equal(false);
  });

  it("a leader's stop waits for the script only until its lock would run out (beforeStopUntil), then stops the server anyway", async () => {
    await n.db.start({ upstream: null, timeoutMs: START_MS });
    scriptMs = 5000;
    const t0 = Date.now();
    await n.db.stop('fast', undefined, { beforeStopUntil: Date.now() + 500 });
    expect(Date.now() - t0).to.be.below(3000);
    expect((await n.db.probe()).running).to.equal(false);
  });
});
