import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { destroyAllServers, startPrimary, type PgServer } from '../../support/postgres-server.js';
import { parseExposition } from '../../unit/collectors/exposition-parser.js';
import { startTestExporter, startTestExporterAt, statusOf, waitFor } from './fixture.js';
import { startPgBouncer, type PgBouncerServer } from './pgbouncer-server.js';
import { promtoolProblems } from './promtool.js';

describe('exporter against a real pgBouncer admin console', function () {
  this.timeout(120_000);
  let primary: PgServer;
  let bouncer: PgBouncerServer;
  let client: pg.Client;
  let dir: string;
  const stops: (() => Promise<void>)[] = [];

  before(async () => {
    primary = await startPrimary();
    bouncer = await startPgBouncer(primary.port);
    // a client through the pooler, so there is a pool and traffic to report
    client = new pg.Client({ connectionString: bouncer.appUrl });
    await client.connect();
    for (let i = 0; i < 5; i++) await client.query('SELECT 1');
    dir = await mkdtemp(join(tmpdir(), 'warden-exporter-pgbouncer-'));
  });

  after(async () => {
    for (const s of stops) await s();
    await client?.end().catch(() => undefined);
    await bouncer?.stop();
    await destroyAllServers();
    await rm(dir, { recursive: true, force: true });
  });

  it('with --url pointing at the console, the pgBouncer collector set runs: pools, stats, databases, lists', async () => {
    const e = await startTestExporterAt(bouncer.adminUrl);
    stops.push(() => e.stop());
    expect(await waitFor(async () => (await statusOf(e.url, '/readiness')) === 200, 20_000), 'ready').to.equal(true);
    const body = await (await fetch(`${e.url}/metrics`)).text();
    const f = parseExposition(body);
    expect(f.get('db_up')!.samples[0]!.value).to.equal(1);
    expect(f.get('db_version')!.samples[0]!.value).to.be.at.least(11800);
    const stats = ((await (await fetch(`${e.url}/stat?format=json`)).json()) as { collectors: { name: string; runs: number; errors: number; lastError: string | null }[] }).collectors;
    expect(stats.filter((c) => c.errors > 0).map((c) => `${c.name}: ${c.lastError}`)).to.deep.equal([]);
    expect(stats.map((c) => [c.name, c.runs > 0])).to.deep.equal([
      ['db_pgbouncer_pools', true],
      ['db_pgbouncer_stats', true],
      ['db_pgbouncer_databases', true],
      ['db_pgbouncer_lists', true],
    ]);
    expect(f.get('db_pgbouncer_pools_client_active_connections')!.samples.some((s) => s.labels['database'] === 'app' && s.labels['user'] === 'postgres')).to.equal(true);
    // The oldest client's wait is whole seconds plus the fraction (maxwait_us), both in seconds.
    expect(f.get('db_pgbouncer_pools_client_max_wait_fraction_seconds')!.samples.find((s) => s.labels['database'] === 'app')!.value).to.be.within(0, 1);
    expect(f.get('db_pgbouncer_stats_queries_total')!.samples.find((s) => s.labels['database'] === 'app')!.value).to.be.at.least(5);
    expect(f.get('db_pgbouncer_databases_pool_size')!.samples.find((s) => s.labels['database'] === 'app')!.labels['backend_database']).to.equal('postgres');
    expect(f.get('db_pgbouncer_lists_items')!.samples.map((s) => s.labels['list'])).to.include('pools');
    expect(await promtoolProblems(body)).to.deep.equal([]);
  });

  it('a pgBouncer named in the targets file answers /probe next to a PostgreSQL target', async () => {
    await writeFile(join(dir, 'targets.yml'), `targets:\n  pooler:\n    url: ${bouncer.adminUrl}\n  db:\n    url: ${primary.connString}\n`);
    const e = await startTestExporter(primary, { targetsFile: join(dir, 'targets.yml') });
    stops.push(() => e.stop());
    const pooler = parseExposition(await (await fetch(`${e.url}/probe?target=pooler`)).text());
    expect(pooler.get('db_up')!.samples[0]!.value).to.equal(1);
    expect(pooler.has('db_pgbouncer_pools_server_idle_connections')).to.equal(true);
    const db = parseExposition(await (await fetch(`${e.url}/probe?target=db`)).text());
    expect(db.has('db_database_xact_commit_total')).to.equal(true);
    expect(db.has('db_pgbouncer_lists_items')).to.equal(false);
  });
});
