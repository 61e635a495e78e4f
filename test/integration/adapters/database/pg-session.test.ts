/**
 * The agent's long-lived session to a real PostgreSQL 15 when several statements are asked at
 * once (a tick's probe beside a reload's wait, say): each gets its own answer, in the order
 * asked, without the driver's own queue (deprecated: it prints a warning into the agent's log);
 * and a server that stops answering fails every waiting statement within one bound, as the
 * driver's queue did, rather than one bound after another.
 */
import { expect } from 'chai';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';
import { PgSession } from '../../../../src/adapters/database/pg-session.js';
import { destroyAllServers, startPrimary, type PgServer } from '../../../support/postgres-server.js';

/** Client-side bound of a statement: statement_timeout + 500 ms. */
const LIMITS = { connectTimeoutMs: 2000, statementTimeoutMs: 300 };

describe('PgSession on PostgreSQL 15: statements asked at once', function () {
  this.timeout(60_000);
  let server: PgServer;
  let session: PgSession;
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);

  before(async () => {
    server = await startPrimary();
    session = new PgSession(() => ({ host: '127.0.0.1', port: server.port, user: 'postgres' }), LIMITS, new NullLogger());
    process.on('warning', onWarning);
  });

  after(async () => {
    process.off('warning', onWarning);
    session.close();
    await destroyAllServers();
  });

  it('answers each of ten statements asked at once, in the order asked, and the driver warns of nothing', async () => {
    const order: number[] = [];
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        session.query<{ n: string }>('SELECT $1::int AS n, clock_timestamp()::text AS at', [i]).then((rows) => {
          order.push(i);
          return Number(rows[0]!.n);
        }),
      ),
    );
    expect(answers).to.deep.equal([...Array(10).keys()]);
    expect(order).to.deep.equal([...Array(10).keys()]);
    // Node prints a warning once per process and emits the event on the next tick.
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => /client\.query\(\)/.test(w))).to.deep.equal([]);
  });

  it('fails every statement waiting behind a hung one within one bound, then reconnects', async () => {
    const [{ pid }] = await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const settled = await Promise.allSettled([1, 2, 3].map((i) => session.query('SELECT $1::int AS n', [i]).finally(() => Date.now() - started)));
      const took = Date.now() - started;
      expect(settled.map((s) => s.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
      for (const s of settled) expect(((s as PromiseRejectedResult).reason as Error).message).to.match(/timeout/i);
      // one bound (800 ms) and scheduling slack, not three bounds one after another
      expect(took).to.be.within(700, 1_600);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const [{ n }] = await session.query<{ n: string }>('SELECT 7::text AS n');
    expect(n).to.equal('7');
  });
});
