import { expect } from 'chai';
import { BUNDLED_PGBOUNCER_COLLECTORS_DIR, loadCollectorFiles } from '../../../src/app/exporter/config-files.js';
import { isValueUsage } from '../../../src/domain/collectors/collector.js';
import { planCollectors } from '../../../src/domain/collectors/select.js';

describe('the bundled collector set', () => {
  it('loads without a problem, one file per area', async () => {
    const l = await loadCollectorFiles();
    expect(l.files.length).to.be.greaterThanOrEqual(8);
    expect(l.collectors.length).to.be.greaterThanOrEqual(40);
  });

  it('describes every metric and every collector', async () => {
    const { collectors } = await loadCollectorFiles();
    const missing = collectors.flatMap((c) => [...(c.desc ? [] : [`${c.key} (desc)`]), ...c.metrics.filter((m) => !m.description).map((m) => `${c.key}.${m.column}`)]);
    expect(missing).to.deep.equal([]);
  });

  it('every collector but db_server has a TTL (scrapes are served from the cache), and a version range from PostgreSQL 13', async () => {
    const { collectors } = await loadCollectorFiles();
    // db_server reports the server's clock and uptime, compared with the scrape's time: a cached row would read as clock skew.
    expect(collectors.filter((c) => c.ttlMs <= 0).map((c) => c.key)).to.deep.equal(['db_server']);
    expect(collectors.filter((c) => (c.minVersion ?? 0) < 130000).map((c) => c.key)).to.deep.equal([]);
  });

  for (const version of [130012, 140009, 150004, 160002, 170000, 180000]) {
    for (const role of ['primary', 'replica'] as const) {
      it(`plans at least 40 metric families' worth of collectors on PostgreSQL ${Math.floor(version / 10000)} (${role})`, async () => {
        const { collectors } = await loadCollectorFiles();
        const plan = planCollectors(collectors, { server: { version, role }, main: { name: 'postgres', extensions: new Set() }, others: [], exporterTags: new Set() });
        const families = plan.active.flatMap((p) => p.def.metrics.filter((m) => isValueUsage(m.usage)));
        expect(plan.active.length).to.be.greaterThanOrEqual(30);
        expect(families.length).to.be.greaterThanOrEqual(150);
      });
    }
  }

  it('covers the documented areas', async () => {
    const { collectors } = await loadCollectorFiles();
    const text = collectors.map((c) => c.query).join('\n');
    for (const source of ['pg_postmaster_start_time', 'pg_stat_activity', 'pg_stat_database', 'pg_database_size', 'pg_stat_replication', 'pg_stat_wal_receiver', 'pg_last_xact_replay_timestamp', 'pg_replication_slots', 'pg_stat_wal', 'pg_stat_bgwriter', 'pg_stat_checkpointer', 'pg_locks', 'backend_xmin', 'datfrozenxid', 'pg_stat_user_tables', 'pg_stat_user_indexes', 'pg_settings', 'pg_stat_archiver', 'pg_last_wal_replay_lsn']) {
      expect(text, source).to.contain(source);
    }
  });
});

describe('the bundled pgBouncer collector set', () => {
  it('loads without a problem: pools, stats, databases and lists of the admin console', async () => {
    const { collectors } = await loadCollectorFiles(BUNDLED_PGBOUNCER_COLLECTORS_DIR);
    expect(collectors.map((c) => c.query)).to.deep.equal(['SHOW POOLS', 'SHOW STATS', 'SHOW DATABASES', 'SHOW LISTS']);
    expect(collectors.every((c) => c.tags.includes('cluster') && c.minVersion === 11800)).to.equal(true);
  });

  it('is not part of the PostgreSQL set (a subfolder is not read)', async () => {
    const { collectors } = await loadCollectorFiles();
    expect(collectors.some((c) => c.key.startsWith('db_pgbouncer'))).to.equal(false);
  });
});

describe('collector metric names the exporter writes itself', () => {
  it('are refused: the exposition would hold the family twice and Prometheus refuses the whole scrape', async () => {
    const { loadDefinitions, reservedNameProblems } = await import('../../../src/domain/collectors/definitions.js');
    const defs = loadDefinitions([
      {
        source: 'x.yml',
        doc: {
          db: { query: 'SELECT 1 AS up', metrics: [{ up: { usage: 'GAUGE', description: 'x' } }] },
          db_exporter: { query: 'SELECT 1 AS build_info', metrics: [{ build_info: { usage: 'GAUGE', description: 'x' } }] },
          fine: { query: 'SELECT 1 AS a', metrics: [{ a: { usage: 'GAUGE', description: 'x' } }] },
        },
      },
    ]);
    expect(reservedNameProblems(defs, 'db').map((p) => p.path)).to.deep.equal(['db.metrics.up', 'db_exporter.metrics.build_info']);
    expect(reservedNameProblems(defs, 'pg').map((p) => p.path)).to.deep.equal([]);
    const { collectors } = await loadCollectorFiles();
    expect(reservedNameProblems(collectors, 'db')).to.deep.equal([]);
  });
});
