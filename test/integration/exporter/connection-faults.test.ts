/**
 * The exporter while PostgreSQL ends its connections under it (pg_terminate_backend, a fast
 * restart): scrapes fail or report the server down, the process stays up, and the next
 * scrape after the faults answers. An 'error' event of a checked-out connection nobody
 * listened to used to crash the process.
 */
import { expect } from 'chai';
import pg from 'pg';
import { destroyAllServers, startPrimary, type PgServer } from '../../support/postgres-server.js';
import { startTestExporter, waitFor } from './fixture.js';

describe('exporter: PostgreSQL ending its connections during scrapes (real PostgreSQL 15)', function () {
  this.timeout(90_000);
  let primary: PgServer;
  before(async () => {
    primary = await startPrimary();
  });
  after(destroyAllServers);

  it('survives its backends terminated again and again while many scrapes run, then answers', async () => {
    const exporter = await startTestExporter(primary, { disableCache: true });
    const admin = new pg.Client({ connectionString: primary.connString });
    await admin.connect();
    try {
      const until = Date.now() + 4000;
      const scrapes: Promise<unknown>[] = [];
      let terminated = 0;
      while (Date.now() < until) {
        for (let i = 0; i < 4; i++) scrapes.push(fetch(`${exporter.url}/metrics`).then((r) => r.text()).catch(() => null));
        const r = await admin.query("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name LIKE 'warden-exporter%' AND pid <> pg_backend_pid()");
        terminated += Number(r.rows[0].n);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await Promise.all(scrapes);
      expect(terminated, 'backends of the exporter were terminated').to.be.greaterThan(10);
      const up = await waitFor(async () => / 1$/m.test((await (await fetch(`${exporter.url}/metrics`)).text()).split('\n').find((l) => l.startsWith('db_up ')) ?? ''), 10_000);
      expect(up, 'db_up 1 again after the faults').to.equal(true);
    } finally {
      await admin.end();
      await exporter.stop();
    }
  });
});
