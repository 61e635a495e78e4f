import { expect } from 'chai';
import type { CollectorDefinition } from '../../../src/domain/collectors/collector.js';
import { loadDefinitions } from '../../../src/domain/collectors/definitions.js';
import { SqlError } from '../../../src/domain/collectors/sql-error.js';
import { ValidationError } from '../../../src/domain/errors.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCollectorFiles, type LoadedCollectors } from '../../../src/app/exporter/config-files.js';
import { parseExporterOptions, type ExporterOptions } from '../../../src/app/exporter/options.js';
import { wireExporter } from '../../../src/app/exporter/run.js';
import { parseExposition, type ParsedFamily } from './exposition-parser.js';
import { FakeSql, MemoryLogger } from './fakes.js';

const gauge = (col = 'v') => [{ [col]: { usage: 'GAUGE', description: `value ${col}` } }];

function loaded(doc: Record<string, unknown>): LoadedCollectors {
  return { collectors: loadDefinitions([{ source: 't.yml', doc }]), path: 't.yml', files: ['t.yml'] };
}

function make(doc: Record<string, unknown>, over: Partial<ExporterOptions> = {}, sql = new FakeSql()) {
  const options: ExporterOptions = { ...parseExporterOptions([], {}, '0.1.0'), ...over };
  const logger = new MemoryLogger();
  let next: () => Promise<LoadedCollectors> = async () => loaded(doc);
  const w = wireExporter(options, loaded(doc), logger, {
    sql,
    processMetrics: { text: () => '# HELP process_x x\n# TYPE process_x gauge\nprocess_x 1\n' },
    buildInfo: { version: '0.1.0', branch: 'main', revision: 'abc' },
    loader: () => next(),
  });
  return { ...w, sql, logger, setLoader: (f: () => Promise<LoadedCollectors>) => (next = f) };
}

async function scrape(e: ReturnType<typeof make>): Promise<Map<string, ParsedFamily>> {
  return parseExposition((await e.service.scrape()).bytes('text').toString());
}

function value(f: Map<string, ParsedFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  return f.get(name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

describe('exporter runtime: scrape', () => {
  it('renders built-ins, collector samples and self metrics as valid exposition text', async () => {
    const e = make({ db_a: { query: 'SELECT a', tags: ['cluster'], metrics: [{ k: { usage: 'LABEL' } }, ...gauge()] } }, { constLabels: [['env', 'test']] });
    e.sql.on(/^SELECT a/, { columns: ['k', 'v'], rows: [['x', '1'], ['y', '2']] });
    const f = await scrape(e);
    expect(value(f, 'db_up')).to.equal(1);
    expect(value(f, 'db_version')).to.equal(150004);
    expect(value(f, 'db_in_recovery')).to.equal(0);
    expect(f.get('db_exporter_build_info')!.samples[0]!.labels).to.deep.equal({ version: '0.1.0', branch: 'main', revision: 'abc', env: 'test' });
    expect(f.get('db_a_v')!.samples.map((s) => s.labels)).to.deep.equal([{ k: 'x', env: 'test' }, { k: 'y', env: 'test' }]);
    expect(value(f, 'db_exporter_query_metrics', { collector: 'db_a' })).to.equal(2);
    expect(value(f, 'db_exporter_scrape_total')).to.equal(1);
    expect(f.has('process_x')).to.equal(true);
    expect(e.service.state.status).to.equal('primary');
  });

  it('serves fresh results from the TTL cache and counts cache hits', async () => {
    const e = make({ db_a: { query: 'SELECT a', ttl: '1m', tags: ['cluster'], metrics: gauge() }, db_z: { query: 'SELECT z', ttl: 0, tags: ['cluster'], metrics: gauge() } });
    e.sql.on(/^SELECT a/, { columns: ['v'], rows: [['1']] }).on(/^SELECT z/, { columns: ['v'], rows: [['2']] });
    await scrape(e);
    await scrape(e);
    const f = await scrape(e);
    expect(e.sql.count(/^SELECT a/)).to.equal(1);
    expect(e.sql.count(/^SELECT z/)).to.equal(3);
    expect(value(f, 'db_exporter_query_cache_hits_total', { collector: 'db_a' })).to.equal(2);
    expect(value(f, 'db_a_v')).to.equal(1);
    expect(e.service.stats().find((s) => s.name === 'db_a')).to.include({ runs: 1, cacheHits: 2, errors: 0, lastMetrics: 1 });
  });

  it('--disable-cache runs every collector on every scrape', async () => {
    const e = make({ db_a: { query: 'SELECT a', ttl: '1m', metrics: gauge() } }, { disableCache: true });
    e.sql.on(/^SELECT a/, { columns: ['v'], rows: [['1']] });
    await scrape(e);
    await scrape(e);
    expect(e.sql.count(/^SELECT a/)).to.equal(2);
  });

  it('concurrent scrapes share one in-flight run', async () => {
    const e = make({ db_a: { query: 'SELECT a', ttl: 0, metrics: gauge() } });
    e.sql.on(/^SELECT a/, { columns: ['v'], rows: [['1']] });
    e.sql.delayMs = 20;
    const bodies = await Promise.all(Array.from({ length: 16 }, () => e.service.scrape()));
    expect(new Set(bodies).size).to.equal(1);
    expect(bodies[0]!.bytes('text').toString()).to.contain('db_a_v{datname="postgres"} 1\n');
    expect(e.sql.count(/^SELECT a/)).to.equal(1);
  });

  it('runs collectors with bounded concurrency and passes each one its timeout', async () => {
    const doc = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`db_c${i}`, { query: `SELECT c${i}`, timeout: '250ms', metrics: gauge() }]));
    const e = make(doc, { concurrency: 2 });
    e.sql.on(/^SELECT c/, { columns: ['v'], rows: [['1']] });
    e.sql.delayMs = 5;
    const f = await scrape(e);
    expect(e.sql.count(/^SELECT c\d/)).to.equal(8);
    expect(e.sql.maxActive).to.equal(2);
    expect(e.sql.calls.filter((c) => /^SELECT c\d/.test(c.sql)).every((c) => c.timeoutMs === 250)).to.equal(true);
    expect(f.get('db_c7_v')!.samples).to.have.length(1);
  });

  it('a failing collector is counted and logged; the rest still report and db_up stays 1', async () => {
    const e = make({ db_ok: { query: 'SELECT ok', metrics: gauge() }, db_bad: { query: 'SELECT bad', metrics: gauge() } });
    e.sql.on(/^SELECT ok/, { columns: ['v'], rows: [['1']] }).on(/^SELECT bad/, new SqlError('sql_timeout', 'canceling statement due to statement timeout', '57014'));
    const f = await scrape(e);
    expect(value(f, 'db_up')).to.equal(1);
    expect(value(f, 'db_ok_v')).to.equal(1);
    expect(f.has('db_bad_v')).to.equal(false);
    expect(value(f, 'db_exporter_query_errors_total', { collector: 'db_bad' })).to.equal(1);
    expect(value(f, 'db_exporter_scrape_errors_total')).to.equal(1);
    expect(e.logger.lines.some((l) => l.level === 'warn' && l.msg === 'collector failed' && l.fields?.['collector'] === 'db_bad')).to.equal(true);
    expect(e.service.stats().find((s) => s.name === 'db_bad')!.lastError).to.contain('statement timeout');
  });

  it('a failing fatal collector reports db_up 0 and no collector samples', async () => {
    const e = make({ db_ok: { query: 'SELECT ok', metrics: gauge() }, db_must: { query: 'SELECT must', fatal: true, metrics: gauge() } });
    e.sql.on(/^SELECT ok/, { columns: ['v'], rows: [['1']] }).on(/^SELECT must/, new SqlError('sql_failed', 'permission denied', '42501'));
    const f = await scrape(e);
    expect(value(f, 'db_up')).to.equal(0);
    expect(f.has('db_ok_v')).to.equal(false);
    expect(value(f, 'db_exporter_query_errors_total', { collector: 'db_must' })).to.equal(1);
  });

  it('with the database down: db_up 0, role checks down, and it comes back by itself', async () => {
    const e = make({ db_a: { query: 'SELECT a', ttl: 0, metrics: gauge() } });
    e.sql.on(/^SELECT a/, { columns: ['v'], rows: [['1']] });
    e.sql.down = true;
    let f = await scrape(e);
    expect(value(f, 'db_up')).to.equal(0);
    expect(f.has('db_a_v')).to.equal(false);
    expect(e.service.state.status).to.equal('down');
    expect(e.service.ready).to.equal(false);
    e.sql.down = false;
    await e.probe.refresh();
    f = await scrape(e);
    expect(value(f, 'db_up')).to.equal(1);
    expect(value(f, 'db_a_v')).to.equal(1);
    expect(e.service.ready).to.equal(true);
  });

  it('a collector losing the connection marks the server down at once', async () => {
    const e = make({ db_a: { query: 'SELECT a', ttl: 0, metrics: gauge() } });
    let lost = false;
    e.sql.on(/^SELECT a/, () => (lost ? new SqlError('sql_unavailable', 'Connection terminated unexpectedly') : { columns: ['v'], rows: [['1']] }));
    expect(value(await scrape(e), 'db_up')).to.equal(1);
    lost = true;
    const f = await scrape(e);
    expect(value(f, 'db_up')).to.equal(0);
    expect(e.service.state.status).to.equal('down');
    expect(e.service.state.error).to.equal('Connection terminated unexpectedly');
  });

  it('replans when the role changes: primary-only out, replica-only in, caches dropped', async () => {
    const e = make({
      db_p: { query: 'SELECT p', ttl: '1m', tags: ['primary'], metrics: gauge() },
      db_r: { query: 'SELECT r', ttl: '1m', tags: ['replica'], metrics: gauge() },
      db_any: { query: 'SELECT any', ttl: '1m', metrics: gauge() },
    });
    e.sql.on(/^SELECT p/, { columns: ['v'], rows: [['1']] }).on(/^SELECT r/, { columns: ['v'], rows: [['2']] }).on(/^SELECT any/, { columns: ['v'], rows: [['3']] });
    let f = await scrape(e);
    expect(f.has('db_p_v')).to.equal(true);
    expect(f.has('db_r_v')).to.equal(false);
    e.sql.inRecovery = true;
    await e.probe.refresh();
    expect(e.service.state.status).to.equal('replica');
    f = await scrape(e);
    expect(f.has('db_p_v')).to.equal(false);
    expect(value(f, 'db_r_v')).to.equal(2);
    expect(value(f, 'db_in_recovery')).to.equal(1);
    expect(e.sql.count(/^SELECT any/)).to.equal(2);
    expect(e.service.explain()).to.contain('Collector: db_p\n').and.contain('Status:    Inactive (primary only; server is a replica)');
  });

  it('per-database collectors run on every discovered database with a datname label; cluster ones once', async () => {
    const sql = new FakeSql();
    sql.databases = ['postgres', 'app', 'skipme', 'other'];
    sql.extensions = { postgres: [], app: ['pg_trgm'], skipme: [], other: [] };
    const e = make(
      {
        db_c: { query: 'SELECT c', tags: ['cluster'], metrics: gauge() },
        db_t: { query: 'SELECT t', metrics: gauge() },
        db_x: { query: 'SELECT x', tags: ['extension:pg_trgm'], metrics: gauge() },
      },
      { autoDiscovery: true, excludeDatabases: ['skipme'] },
      sql,
    );
    sql.on(/^SELECT c/, { columns: ['v'], rows: [['1']] }).on(/^SELECT t/, (o) => ({ columns: ['v'], rows: [[o.database === undefined ? '10' : '20']] })).on(/^SELECT x/, { columns: ['v'], rows: [['5']] });
    const f = await scrape(e);
    expect(f.get('db_c_v')!.samples.map((s) => s.labels)).to.deep.equal([{}]);
    expect(f.get('db_t_v')!.samples.map((s) => [s.labels['datname'], s.value])).to.deep.equal([['postgres', 10], ['app', 20], ['other', 20]]);
    expect(f.get('db_x_v')!.samples.map((s) => s.labels['datname'])).to.deep.equal(['app']);
    expect(sql.calls.filter((c) => c.sql.startsWith('SELECT t')).map((c) => c.database ?? '(main)')).to.deep.equal(['(main)', 'app', 'other']);
    expect(sql.retained.at(-1)).to.deep.equal(['app', 'other']);
  });

  it('forgets the cached results of a database that is no longer discovered (a rediscovery keeps the others)', async () => {
    const sql = new FakeSql();
    sql.databases = ['postgres', 'app', 'gone'];
    const e = make(
      { db_t: { query: 'SELECT t', ttl: '1h', predicate_queries: [{ name: 'on', predicate_query: 'SELECT pred', ttl: '1h' }], metrics: gauge() } },
      { autoDiscovery: true },
      sql,
    );
    sql.on(/^SELECT pred/, { columns: ['b'], rows: [['t']] }).on(/^SELECT t/, { columns: ['v'], rows: [['1']] });
    const cached = () => {
      const runner = e.main.runner as unknown as { entries: Map<string, unknown>; predicates: Map<string, unknown> };
      const dbs = (m: Map<string, unknown>) => [...m.keys()].map((k) => k.split('\u0000')[1]).sort();
      return { entries: dbs(runner.entries), predicates: dbs(runner.predicates) };
    };
    let f = await scrape(e);
    expect(f.get('db_t_v')!.samples.map((s) => s.labels['datname'])).to.deep.equal(['postgres', 'app', 'gone']);
    expect(cached()).to.deep.equal({ entries: ['app', 'gone', 'postgres'], predicates: ['app', 'gone', 'postgres'] });
    sql.databases = ['postgres', 'app'];
    e.planner.invalidate();
    f = await scrape(e);
    expect(f.get('db_t_v')!.samples.map((s) => s.labels['datname'])).to.deep.equal(['postgres', 'app']);
    expect(cached(), 'the dropped database left nothing behind').to.deep.equal({ entries: ['app', 'postgres'], predicates: ['app', 'postgres'] });
    expect(sql.count(/^SELECT t/), 'the others stayed cached across the rediscovery').to.equal(3);
  });

  it('--include-database limits discovery', async () => {
    const sql = new FakeSql();
    sql.databases = ['postgres', 'app', 'other'];
    const e = make({ db_t: { query: 'SELECT t', metrics: gauge() } }, { autoDiscovery: true, includeDatabases: ['app'] }, sql);
    sql.on(/^SELECT t/, { columns: ['v'], rows: [['1']] });
    const f = await scrape(e);
    expect(f.get('db_t_v')!.samples.map((s) => s.labels['datname'])).to.deep.equal(['postgres', 'app']);
  });

  it('predicate queries gate a collector, each cached for its own ttl', async () => {
    const e = make({ db_p: { query: 'SELECT p', ttl: 0, predicate_queries: [{ name: 'enabled', predicate_query: 'SELECT pred', ttl: '1m' }], metrics: gauge() } });
    let pred = 'f';
    e.sql.on(/^SELECT pred/, () => ({ columns: ['b'], rows: [[pred]] })).on(/^SELECT p/, { columns: ['v'], rows: [['1']] });
    let f = await scrape(e);
    expect(f.has('db_p_v')).to.equal(false);
    expect(e.sql.count(/^SELECT p$/)).to.equal(0);
    expect(e.service.explain()).to.contain('Status:    Inactive (predicate enabled returned false)');
    pred = 't';
    f = await scrape(e);
    expect(f.has('db_p_v')).to.equal(false);
    expect(e.sql.count(/^SELECT pred/)).to.equal(1);
  });

  it('reload: a broken configuration is refused and the old one keeps serving; a good one replaces it', async () => {
    const e = make({ db_a: { query: 'SELECT a', metrics: gauge() } });
    e.sql.on(/^SELECT a/, { columns: ['v'], rows: [['1']] }).on(/^SELECT b/, { columns: ['v'], rows: [['2']] });
    await scrape(e);
    e.setLoader(async () => {
      throw new ValidationError([{ path: 'db_b.query', message: 'is required' }], 'invalid_collectors');
    });
    const bad = await e.service.reload();
    expect(bad.status).to.equal('error');
    expect(bad.message).to.contain('db_b.query: is required');
    expect(new Date(bad.timestamp).toISOString()).to.equal(bad.timestamp);
    let f = await scrape(e);
    expect(value(f, 'db_a_v')).to.equal(1);
    e.setLoader(async () => loaded({ db_b: { query: 'SELECT b', metrics: gauge() } }));
    const good = await e.service.reload();
    expect(good).to.include({ status: 'success', message: 'reloaded 1 collectors from t.yml' });
    f = await scrape(e);
    expect(f.has('db_a_v')).to.equal(false);
    expect(value(f, 'db_b_v')).to.equal(2);
    expect(e.service.explain()).to.match(/^Collector: db_b\n/);
  });

  it("reload checks the metric names against the exporter's --namespace, as its start did", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'exporter-ns-'));
    try {
      const file = join(dir, 'c.yml');
      writeFileSync(file, 'db_a:\n  query: SELECT 1 AS v\n  metrics: [{v: {usage: GAUGE, description: a value}}]\n');
      const startWith = async (namespace: string) => {
        const options: ExporterOptions = { ...parseExporterOptions([], {}, '0.1.0'), namespace, configPath: file };
        return wireExporter(options, await loadCollectorFiles(file, namespace), new MemoryLogger(), { sql: new FakeSql() });
      };
      const underPg = await startWith('pg');
      const underDb = await startWith('db');
      // A collector whose metric would be pg_up: the exporter's own under --namespace pg, a collector's under db.
      writeFileSync(file, 'pg:\n  query: SELECT 1 AS up\n  metrics: [{up: {usage: GAUGE, description: a value}}]\n');
      const refused = await underPg.service.reload();
      expect(refused.status).to.equal('error');
      expect(refused.message).to.contain('pg_up');
      expect((await underDb.service.reload()).status).to.equal('success');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('readiness follows the plan; explain and stat list every configured collector', async () => {
    const e = make({ db_a: { query: 'SELECT a', metrics: gauge() }, db_old: { query: 'SELECT old', max_version: 100000, metrics: gauge() } });
    e.sql.on(/^SELECT a/, { columns: ['v'], rows: [['1']] });
    expect(e.service.ready).to.equal(false);
    expect(e.service.explain()).to.contain('Inactive (not planned: database starting)');
    await scrape(e);
    expect(e.service.ready).to.equal(true);
    expect(e.service.stats().map((s) => s.name)).to.deep.equal(['db_a', 'db_old']);
    expect(e.service.explain().match(/^Collector: /gm)).to.have.length(2);
  });

  it('a version change replans (an upgrade under the exporter)', async () => {
    const defs: Record<string, unknown> = {
      db_old: { name: 'db_s', query: 'SELECT old', max_version: 170000, metrics: gauge() },
      db_new: { name: 'db_s', query: 'SELECT new', min_version: 170000, metrics: gauge() },
    };
    const e = make(defs);
    e.sql.on(/^SELECT old/, { columns: ['v'], rows: [['1']] }).on(/^SELECT new/, { columns: ['v'], rows: [['2']] });
    expect(value(await scrape(e), 'db_s_v')).to.equal(1);
    e.sql.version = 170002;
    await e.probe.refresh();
    expect(value(await scrape(e), 'db_s_v')).to.equal(2);
    expect((e.collectors.collectors as CollectorDefinition[]).length).to.equal(2);
  });
});

describe('exporter runtime: whole-scrape coalescing', () => {
  it('16 scrapers in a loop share runs: a ttl-0 collector runs well under once per two served scrapes', async () => {
    const e = make({ db_now: { query: 'SELECT now', ttl: 0, tags: ['cluster'], metrics: gauge() } });
    e.sql.on(/^SELECT now/, { columns: ['v'], rows: [['1']] });
    e.sql.delayMs = 1;
    let served = 0;
    const until = performance.now() + 400;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (performance.now() < until) {
          await e.service.scrape();
          served++;
        }
      }),
    );
    const runs = e.sql.count(/^SELECT now/);
    expect(served).to.be.greaterThan(100);
    expect(runs / served).to.be.at.most(0.5);
  });

  it('a scrape right after a run whose results all came from the cache gets the same answer; a later one a new run', async () => {
    const e = make({ db_a: { query: 'SELECT a', ttl: '1m', tags: ['cluster'], metrics: gauge() } });
    e.sql.on(/^SELECT a/, { columns: ['v'], rows: [['1']] });
    await e.service.scrape();
    const a = await e.service.scrape();
    const b = await e.service.scrape();
    expect(b).to.equal(a);
    await new Promise((r) => setTimeout(r, 20));
    const c = await e.service.scrape();
    expect(c).to.not.equal(a);
    const f = parseExposition(c.bytes('text').toString());
    expect(value(f, 'db_exporter_scrape_requests_total')).to.equal(4);
    expect(e.sql.count(/^SELECT a/)).to.equal(1);
  });
});
