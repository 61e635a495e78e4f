import { expect } from 'chai';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLED_COLLECTORS_DIR, loadCollectorFiles } from '../../../src/app/exporter/config-files.js';
import { versionInRange, type CollectorDefinition } from '../../../src/domain/collectors/collector.js';
import type { CollectorStat } from '../../../src/domain/collectors/stat.js';
import { destroyAllServers, startPrimary, startReplica, type PgServer } from '../../support/postgres-server.js';
import { parseExposition, sampleCount, type ParsedFamily } from '../../unit/collectors/exposition-parser.js';
import { PRIMARY_PARAMETERS, SCHEMA_SQL, startTestExporter, statusOf, waitFor } from './fixture.js';

type Exporter = Awaited<ReturnType<typeof startTestExporter>>;

const PRIMARY_PATHS = ['/primary', '/leader', '/master', '/read-write', '/rw'];
const REPLICA_PATHS = ['/replica', '/standby', '/slave', '/read-only', '/ro'];
const UP_PATHS = ['/up', '/health', '/read'];

async function stats(base: string): Promise<CollectorStat[]> {
  return ((await (await fetch(`${base}/stat?format=json`)).json()) as { collectors: CollectorStat[] }).collectors;
}

async function metrics(base: string): Promise<Map<string, ParsedFamily>> {
  const r = await fetch(`${base}/metrics`);
  expect(r.status).to.equal(200);
  return parseExposition(await r.text());
}

function collectorSamples(families: Map<string, ParsedFamily>): number {
  let n = 0;
  for (const [name, f] of families) if (!/^(db_exporter_|db_up$|db_version$|db_in_recovery$|process_|nodejs_)/.test(name)) n += f.samples.length;
  return n;
}

async function expectChecks(base: string, codes: { up: number; primary: number; replica: number }): Promise<void> {
  for (const p of UP_PATHS) expect(await statusOf(base, p), p).to.equal(codes.up);
  for (const p of PRIMARY_PATHS) expect(await statusOf(base, p), p).to.equal(codes.primary);
  for (const p of REPLICA_PATHS) expect(await statusOf(base, p), p).to.equal(codes.replica);
}

describe('exporter against real PostgreSQL 15 (primary and streaming replica)', function () {
  this.timeout(180_000);
  let primary: PgServer;
  let replica: PgServer;
  let onPrimary: Exporter;
  let onReplica: Exporter;
  let defaults: readonly CollectorDefinition[];

  before(async () => {
    primary = await startPrimary({ parameters: PRIMARY_PARAMETERS });
    await primary.psql("SELECT pg_create_physical_replication_slot('replica_slot')");
    await primary.psql(SCHEMA_SQL);
    replica = await startReplica(primary, { parameters: { primary_slot_name: 'replica_slot', hot_standby_feedback: true } });
    const lsn = await primary.psql('SELECT pg_current_wal_lsn()');
    const caughtUp = await waitFor(async () => (await replica.psql(`SELECT pg_last_wal_replay_lsn() >= '${lsn}'`)) === 't', 30_000);
    expect(caughtUp, 'replica caught up').to.equal(true);
    defaults = (await loadCollectorFiles()).collectors;
    onPrimary = await startTestExporter(primary);
    onReplica = await startTestExporter(replica);
    const ready = async (e: Exporter) => (await statusOf(e.url, '/readiness')) === 200;
    expect(await waitFor(() => ready(onPrimary), 15_000), 'primary exporter ready').to.equal(true);
    expect(await waitFor(() => ready(onReplica), 15_000), 'replica exporter ready').to.equal(true);
  });

  after(async () => {
    await onPrimary?.stop();
    await onReplica?.stop();
    await destroyAllServers();
  });

  it('on the primary: every planned default collector runs without error; valid text; 500+ samples', async () => {
    const families = await metrics(onPrimary.url);
    const s = await stats(onPrimary.url);
    const failed = s.filter((c) => c.errors > 0).map((c) => `${c.name}: ${c.lastError}`);
    expect(failed).to.deep.equal([]);
    const active = onPrimary.service.explain().split('\n\n').filter((b) => /Status:\s+Active/.test(b)).length;
    expect(s.filter((c) => c.runs > 0)).to.have.length(active);
    expect(families.get('db_up')!.samples[0]!.value).to.equal(1);
    expect(families.get('db_in_recovery')!.samples[0]!.value).to.equal(0);
    expect(families.get('db_version')!.samples[0]!.value).to.be.within(150000, 159999);
    expect(families.get('db_exporter_build_info')!.samples[0]!.labels['version']).to.equal('0.1.0');
    for (const f of families.values()) expect(f.help, f.name).to.be.a('string').and.not.equal('');
    const collected = collectorSamples(families);
    const statements = [...families.values()].filter((f) => f.name.startsWith('db_statements_')).reduce((n, f) => n + f.samples.length, 0);
    console.log(`      primary: ${active} active collectors, ${collected} collector samples (${statements} of them from pg_stat_statements), ${sampleCount(families)} samples in all`);
    expect(collected).to.be.greaterThanOrEqual(500);
    expect(families.get('db_replication_replay_lag_bytes')!.samples[0]!.labels).to.include({ appname: 'walreceiver', address: '127.0.0.1', state: 'streaming' });
    expect(families.get('db_slot_retained_bytes')!.samples.map((x) => x.labels['slot_name'])).to.deep.equal(['replica_slot']);
    expect(families.get('db_table_n_live_tup')!.samples.find((x) => x.labels['relname'] === 'accounts')!.labels['datname']).to.equal('postgres');
    expect(families.has('db_statements_calls_total')).to.equal(true);
  });

  it('on the replica: every planned default collector runs without error; valid text; replication lag in bytes and seconds', async () => {
    const families = await metrics(onReplica.url);
    const failed = (await stats(onReplica.url)).filter((c) => c.errors > 0).map((c) => `${c.name}: ${c.lastError}`);
    expect(failed).to.deep.equal([]);
    expect(families.get('db_in_recovery')!.samples[0]!.value).to.equal(1);
    expect(families.get('db_recovery_lag_bytes')!.samples[0]!.value).to.be.at.least(0);
    expect(families.get('db_recovery_lag_seconds')!.samples[0]!.value).to.be.at.least(0);
    expect(families.get('db_wal_receiver_streaming')!.samples[0]!.value).to.equal(1);
    expect(families.get('db_wal_receiver_streaming')!.samples[0]!.labels['slot_name']).to.equal('replica_slot');
    console.log(`      replica: ${collectorSamples(families)} collector samples, ${sampleCount(families)} samples in all`);
    expect(collectorSamples(families)).to.be.greaterThanOrEqual(500);
  });

  it('every default collector for this version runs on the primary or the replica (none left untested)', async () => {
    const version = (await metrics(onPrimary.url)).get('db_version')!.samples[0]!.value;
    const ran = new Set([...(await stats(onPrimary.url)), ...(await stats(onReplica.url))].filter((c) => c.runs > 0 && c.errors === 0).map((c) => c.name));
    const applicable = defaults.filter((d) => versionInRange(d, version) && !d.skip).map((d) => d.key);
    expect(applicable.filter((k) => !ran.has(k))).to.deep.equal([]);
    expect(applicable.length).to.be.greaterThanOrEqual(40);
  });

  it('role checks: /primary 200 and /replica 404 on the primary, the reverse on the replica; /liveness 200', async () => {
    await expectChecks(onPrimary.url, { up: 200, primary: 200, replica: 404 });
    await expectChecks(onReplica.url, { up: 200, primary: 404, replica: 200 });
    expect(await (await fetch(`${onPrimary.url}/primary`)).text()).to.equal('primary\n');
    expect(await (await fetch(`${onReplica.url}/replica`)).text()).to.equal('replica\n');
    expect(await statusOf(onPrimary.url, '/liveness')).to.equal(200);
  });

  it('/explain lists every configured collector with the seven attributes', async () => {
    const text = await (await fetch(`${onPrimary.url}/explain`)).text();
    const blocks = text.trimEnd().split('\n\n');
    expect(blocks.map((b) => /^Collector: (\S+)/.exec(b)?.[1])).to.deep.equal(defaults.map((d) => d.key));
    for (const b of blocks) {
      expect(b, b).to.match(/^Collector: \S+\nQuery:     \S.*\nTags:      \[[^\]]*\]\nTTL:       \d+(ms|s|m|h)\nTimeout:   \d+(ms|s|m|h)\nVersion:   \d+-\d+\nStatus:    (Active|Active \(primary only\)|Active \(replica only\)|Inactive \(.+\))$/);
    }
    expect(text).to.contain('Collector: db_recovery\n').and.contain('Status:    Inactive (replica only; server is a primary)');
    const onRep = await (await fetch(`${onReplica.url}/explain`)).text();
    expect(onRep).to.match(/Collector: db_recovery\n(.*\n){5}Status:    Active \(replica only\)/);
  });

  it('/stat lists every collector as a table and as JSON', async () => {
    const table = await (await fetch(`${onPrimary.url}/stat`)).text();
    const rows = table.trimEnd().split('\n');
    expect(rows[0]).to.match(/^COLLECTOR\s+RUNS\s+CACHE_HITS\s+ERRORS\s+LAST_DURATION\s+METRICS\s+LAST_ERROR$/);
    expect(rows).to.have.length(defaults.length + 1);
    expect((await stats(onPrimary.url)).map((c) => c.name)).to.deep.equal(defaults.map((d) => d.key));
  });

  it('scrapes are served from the cache: median of 50 scrapes (in process and over HTTP) and sample count', async () => {
    await metrics(onPrimary.url);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const inProcess: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      await onPrimary.service.scrape();
      inProcess.push(performance.now() - t0);
    }
    const agent = new Agent({ keepAlive: true });
    const overHttp: number[] = [];
    let body = '';
    try {
      for (let i = 0; i < 50; i++) {
        const t0 = performance.now();
        body = await new Promise<string>((resolve, reject) => {
          httpGet(`${onPrimary.url}/metrics`, { agent }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve(Buffer.concat(chunks).toString()));
          }).on('error', reject);
        });
        overHttp.push(performance.now() - t0);
      }
    } finally {
      agent.destroy();
    }
    const samples = sampleCount(parseExposition(body));
    console.log(`      scrape median: ${median(inProcess).toFixed(3)} ms in process, ${median(overHttp).toFixed(2)} ms over HTTP (keep-alive), ${samples} samples, ${body.length} bytes`);
    expect(samples).to.be.greaterThanOrEqual(500);
    // The goal is <= 6 ms; the bound here only catches a scrape that stopped using the cache (a full run takes 100+ ms).
    expect(median(inProcess)).to.be.below(20);
  });

  it('/reload with a broken file answers 500 and the previous collectors keep working; a fixed file reloads', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'warden-exporter-conf-'));
    await cp(BUNDLED_COLLECTORS_DIR, dir, { recursive: true });
    const e = await startTestExporter(primary, { configPath: dir });
    try {
      expect(await waitFor(async () => (await statusOf(e.url, '/readiness')) === 200, 15_000)).to.equal(true);
      const before = collectorSamples(await metrics(e.url));
      await writeFile(join(dir, '99-broken.yml'), 'db_broken:\n  query: SELECT 1 AS v\n  ttl: soon\n  metrics:\n    - v: {usage: GAUGE, bogus: 1}\n');
      const bad = await fetch(`${e.url}/reload`, { method: 'POST' });
      expect(bad.status).to.equal(500);
      const body = (await bad.json()) as { status: string; message: string; timestamp: string };
      expect(body.status).to.equal('error');
      expect(body.message).to.contain('db_broken.ttl').and.contain('db_broken.metrics[0].v.bogus');
      expect(Number.isNaN(Date.parse(body.timestamp))).to.equal(false);
      const after = await metrics(e.url);
      expect(after.get('db_up')!.samples[0]!.value).to.equal(1);
      expect(collectorSamples(after)).to.be.greaterThan(before / 2);
      expect(await (await fetch(`${e.url}/explain`)).text()).not.to.contain('db_broken');
      await writeFile(join(dir, '99-broken.yml'), 'db_fixed:\n  query: SELECT 42 AS v\n  tags: [cluster]\n  metrics:\n    - v: {usage: GAUGE, description: The answer}\n');
      const good = await fetch(`${e.url}/reload`);
      expect(good.status).to.equal(200);
      expect(((await good.json()) as { status: string }).status).to.equal('success');
      expect((await metrics(e.url)).get('db_fixed_v')!.samples[0]!.value).to.equal(42);
    } finally {
      await e.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('custom collectors on the real server: server-side timeout, NULL default, scale, histogram from an array, predicate', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'warden-exporter-custom-'));
    await writeFile(
      join(dir, 'custom.yml'),
      [
        'db_slow:',
        '  query: SELECT pg_sleep(2)::text AS label, 1 AS v',
        '  timeout: 100ms',
        '  ttl: 0',
        '  tags: [cluster]',
        '  metrics:',
        '    - label: {usage: LABEL}',
        '    - v: {usage: GAUGE, description: never}',
        'db_shapes:',
        "  query: SELECT 'a' AS k, NULL::int AS missing, 2500 AS ms, '{1,3}'::int[] AS h, 2.5 AS h_sum, 4 AS h_count",
        '  tags: [cluster]',
        '  metrics:',
        '    - k: {usage: LABEL}',
        '    - missing: {usage: GAUGE, default: -1, description: defaulted}',
        '    - ms: {usage: GAUGE, scale: 0.001, rename: seconds, description: scaled}',
        '    - h: {usage: HISTOGRAM, bucket: [1, 2], description: a histogram}',
        'db_gated:',
        '  query: SELECT 1 AS v',
        '  tags: [cluster]',
        '  predicate_queries:',
        '    - {name: is_replica, predicate_query: SELECT pg_is_in_recovery()}',
        '  metrics:',
        '    - v: {usage: GAUGE, description: only on replicas}',
        '',
      ].join('\n'),
    );
    const e = await startTestExporter(primary, { configPath: dir });
    try {
      expect(await waitFor(async () => (await statusOf(e.url, '/readiness')) === 200, 15_000)).to.equal(true);
      const t0 = performance.now();
      const f = await metrics(e.url);
      expect(performance.now() - t0, 'the 2 s query was cut by statement_timeout').to.be.below(1500);
      expect(f.get('db_up')!.samples[0]!.value).to.equal(1);
      expect(f.has('db_slow_v')).to.equal(false);
      expect(f.get('db_shapes_missing')!.samples[0]!.value).to.equal(-1);
      expect(f.get('db_shapes_seconds')!.samples[0]!.value).to.equal(2.5);
      expect(f.get('db_shapes_h')!.samples.map((x) => [x.name, x.labels['le'] ?? '', x.value])).to.deep.equal([
        ['db_shapes_h_bucket', '1', 1],
        ['db_shapes_h_bucket', '2', 3],
        ['db_shapes_h_bucket', '+Inf', 4],
        ['db_shapes_h_sum', '', 2.5],
        ['db_shapes_h_count', '', 4],
      ]);
      expect(f.has('db_gated_v')).to.equal(false);
      const s = await stats(e.url);
      expect(s.find((c) => c.name === 'db_slow')!.lastError).to.contain('statement timeout');
      expect(s.find((c) => c.name === 'db_shapes')!.errors).to.equal(0);
      expect(await (await fetch(`${e.url}/explain`)).text()).to.contain('Status:    Inactive (predicate is_replica returned false)');
      const again = await metrics(e.url);
      expect(again.get('db_shapes_seconds')!.samples[0]!.value).to.equal(2.5);
      expect((await stats(e.url)).find((c) => c.name === 'db_slow')!.errors).to.equal(2);
    } finally {
      await e.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a non-superuser monitoring role (pg_monitor) runs every default collector without error', async () => {
    await primary.psql('CREATE ROLE monitor LOGIN IN ROLE pg_monitor');
    const url = primary.connString.replace('postgres://postgres@', 'postgres://monitor@');
    const e = await startTestExporter(primary, { url });
    try {
      expect(await waitFor(async () => (await statusOf(e.url, '/readiness')) === 200, 15_000)).to.equal(true);
      const f = await metrics(e.url);
      expect((await stats(e.url)).filter((c) => c.errors > 0).map((c) => `${c.name}: ${c.lastError}`)).to.deep.equal([]);
      expect(collectorSamples(f)).to.be.greaterThanOrEqual(500);
    } finally {
      await e.stop();
    }
  });

  it('--auto-discovery runs per-database collectors on every database, each sample with its datname', async () => {
    await primary.psql('CREATE DATABASE app');
    await primary.psql('CREATE TABLE widgets (id serial PRIMARY KEY, name text); INSERT INTO widgets (name) VALUES (\'a\'), (\'b\');', 'app');
    const e = await startTestExporter(primary, { autoDiscovery: true, excludeDatabases: ['template1'] });
    try {
      expect(await waitFor(async () => (await statusOf(e.url, '/readiness')) === 200, 15_000)).to.equal(true);
      const f = await metrics(e.url);
      const tables = f.get('db_table_n_live_tup')!.samples.map((s) => `${s.labels['datname']}.${s.labels['relname']}`);
      expect(tables).to.include('app.widgets').and.include('postgres.accounts');
      expect(f.get('db_database_xact_commit_total')!.samples.map((s) => s.labels['datname'])).to.include('app');
      expect((await stats(e.url)).filter((c) => c.errors > 0)).to.deep.equal([]);
    } finally {
      await e.stop();
    }
  });

  it('stopping the server: every role check 503 (never waiting on the database), db_up 0, liveness 200; back when it restarts', async () => {
    await replica.stop('fast');
    expect(await waitFor(async () => (await statusOf(onReplica.url, '/up')) === 503, 5_000), '/up 503 after stop').to.equal(true);
    await expectChecks(onReplica.url, { up: 503, primary: 503, replica: 503 });
    expect(await statusOf(onReplica.url, '/readiness')).to.equal(503);
    expect(await statusOf(onReplica.url, '/liveness')).to.equal(200);
    const t0 = performance.now();
    await statusOf(onReplica.url, '/primary');
    expect(performance.now() - t0).to.be.below(500);
    const down = await metrics(onReplica.url);
    expect(down.get('db_up')!.samples[0]!.value).to.equal(0);
    expect(down.has('db_recovery_lag_bytes')).to.equal(false);
    await replica.start();
    expect(await waitFor(async () => (await statusOf(onReplica.url, '/replica')) === 200, 15_000), 'replica back').to.equal(true);
    expect((await metrics(onReplica.url)).get('db_up')!.samples[0]!.value).to.equal(1);
  });

  it('a failover under the exporter just works: the promoted replica answers /primary 200 and is replanned', async () => {
    await replica.promote();
    expect(await waitFor(async () => (await statusOf(onReplica.url, '/primary')) === 200, 5_000), '/primary 200 after promote').to.equal(true);
    expect(await statusOf(onReplica.url, '/replica')).to.equal(404);
    const f = await metrics(onReplica.url);
    expect(f.get('db_in_recovery')!.samples[0]!.value).to.equal(0);
    expect(f.has('db_recovery_lag_bytes')).to.equal(false);
    expect(await (await fetch(`${onReplica.url}/explain`)).text()).to.contain('Status:    Inactive (replica only; server is a primary)');
    expect((await stats(onReplica.url)).filter((c) => c.errors > 0).map((c) => `${c.name}: ${c.lastError}`)).to.deep.equal([]);
  });
});
