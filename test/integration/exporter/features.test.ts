import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get as httpsGet } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { destroyAllServers, startPrimary, type PgServer } from '../../support/postgres-server.js';
import { freePort } from '../../support/free-port.js';
import { parseExposition } from '../../unit/collectors/exposition-parser.js';
import { PRIMARY_PARAMETERS, SCHEMA_SQL, startTestExporter, statusOf, waitFor } from './fixture.js';
import { promtoolProblems } from './promtool.js';

type Exporter = Awaited<ReturnType<typeof startTestExporter>>;

async function ready(e: Exporter): Promise<void> {
  expect(await waitFor(async () => (await statusOf(e.url, '/readiness')) === 200, 20_000), `${e.url} ready`).to.equal(true);
}

/** GET over HTTPS trusting `ca`, optionally with basic auth; status and body. */
function httpsFetch(url: string, ca: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    httpsGet(url, { ca, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

describe('exporter features against real PostgreSQL 15: names, formats, discovery, probe targets, TLS and basic auth', function () {
  this.timeout(120_000);
  let primary: PgServer;
  let dir: string;
  const started: Exporter[] = [];
  const start = async (...args: Parameters<typeof startTestExporter>) => {
    const e = await startTestExporter(...args);
    started.push(e);
    return e;
  };

  before(async () => {
    primary = await startPrimary({ parameters: PRIMARY_PARAMETERS });
    await primary.psql(SCHEMA_SQL);
    dir = await mkdtemp(join(tmpdir(), 'warden-exporter-features-'));
  });

  after(async () => {
    for (const e of started) await e.stop();
    await destroyAllServers();
    await rm(dir, { recursive: true, force: true });
  });

  it('the compatibility switch serves the old names (text format only); the default ones pass promtool', async () => {
    const conventions = await start(primary);
    const legacy = await start(primary, { naming: 'legacy' });
    await ready(conventions);
    await ready(legacy);
    const accept = { Accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' };
    const newBody = await (await fetch(`${conventions.url}/metrics`)).text();
    const oldResponse = await fetch(`${legacy.url}/metrics`, { headers: accept });
    expect(oldResponse.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    const old = parseExposition(await oldResponse.text());
    const now = parseExposition(newBody);
    expect(old.has('db_database_xact_commit')).to.equal(true);
    expect(old.has('db_activity_count')).to.equal(true);
    expect(old.has('db_database_blk_read_time')).to.equal(true);
    expect(now.has('db_database_xact_commit_total')).to.equal(true);
    expect(now.has('db_activity_connections')).to.equal(true);
    expect(now.has('db_database_blk_read_time_seconds_total')).to.equal(true);
    expect(await promtoolProblems(newBody)).to.deep.equal([]);
  });

  it('OpenMetrics when Prometheus asks for it (# EOF, UNIT, counters as families), gzip when accepted', async () => {
    const e = started[0]!;
    const r = await fetch(`${e.url}/metrics`, { headers: { Accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5', 'Accept-Encoding': 'identity' } });
    expect(r.headers.get('content-type')).to.equal('application/openmetrics-text; version=1.0.0; charset=utf-8');
    const om = await r.text();
    expect(om.endsWith('# EOF\n')).to.equal(true);
    expect(om).to.contain('# TYPE db_database_xact_commit counter\n').and.contain('# UNIT db_database_blk_read_time_seconds seconds\n');
    const gz = await new Promise<{ encoding?: string; body: Buffer }>((resolve, reject) => {
      import('node:http').then(({ get }) =>
        get(`${e.url}/metrics`, { headers: { 'Accept-Encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ ...(res.headers['content-encoding'] ? { encoding: res.headers['content-encoding'] } : {}), body: Buffer.concat(chunks) }));
        }).on('error', reject),
      );
    });
    expect(gz.encoding).to.equal('gzip');
    const text = gunzipSync(gz.body).toString();
    expect(parseExposition(text).get('db_up')!.samples[0]!.value).to.equal(1);
    expect(gz.body.length).to.be.below(text.length / 3);
  });

  it('auto-discovery: per-database collectors on every database with datname; a database created later is picked up without a restart; exclusions hold', async () => {
    await primary.psql('CREATE DATABASE shop');
    await primary.psql("CREATE TABLE carts (id serial PRIMARY KEY); INSERT INTO carts DEFAULT VALUES;", 'shop');
    await primary.psql('CREATE DATABASE scratch');
    const e = await start(primary, { autoDiscovery: true, excludeDatabases: ['scratch'] });
    await ready(e);
    const tables = async () => (parseExposition(await (await fetch(`${e.url}/metrics`)).text()).get('db_table_n_live_tup')?.samples ?? []).map((s) => `${s.labels['datname']}.${s.labels['relname']}`);
    expect(await tables()).to.include('shop.carts').and.include('postgres.accounts');
    expect((await tables()).some((t) => t.startsWith('scratch.'))).to.equal(false);
    await primary.psql('CREATE DATABASE later');
    await primary.psql('CREATE TABLE parcels (id int); INSERT INTO parcels VALUES (1);', 'later');
    expect(await waitFor(async () => (await tables()).includes('later.parcels'), 15_000), 'the new database is collected').to.equal(true);
  });

  it('/probe?target=: targets named in a file (password from a file, not the URL); a server that hangs never delays another', async () => {
    const hung: Socket[] = [];
    const blackhole: Server = createServer((s) => hung.push(s));
    const hungPort = await freePort();
    await new Promise<void>((r) => blackhole.listen(hungPort, '127.0.0.1', r));
    try {
      await writeFile(join(dir, 'pw'), 'not-needed-with-trust\n');
      await writeFile(
        join(dir, 'targets.yml'),
        [
          'targets:',
          '  main-db:',
          `    url: postgres://postgres@127.0.0.1:${primary.port}/postgres`,
          `    password_file: ${join(dir, 'pw')}`,
          '    const_labels: {cluster: alpha}',
          '  hung-db:',
          `    url: postgres://postgres@127.0.0.1:${hungPort}/postgres`,
          '',
        ].join('\n'),
      );
      const e = await start(primary, { targetsFile: join(dir, 'targets.yml'), connectTimeoutMs: 2000 });
      await ready(e);
      const slow = fetch(`${e.url}/probe?target=hung-db`).then(async (r) => ({ status: r.status, body: await r.text(), at: performance.now() }));
      const t0 = performance.now();
      const fast = await fetch(`${e.url}/probe?target=main-db`);
      const fastMs = performance.now() - t0;
      const f = parseExposition(await fast.text());
      expect(fast.status).to.equal(200);
      expect(f.get('db_up')!.samples[0]).to.deep.include({ value: 1, labels: { cluster: 'alpha' } });
      expect(f.get('db_database_xact_commit_total')!.samples.length).to.be.greaterThan(0);
      expect(fastMs, 'main-db answered while hung-db hangs').to.be.below(1500);
      const s = await slow;
      expect(s.status).to.equal(200);
      expect(parseExposition(s.body).get('db_up')!.samples[0]!.value).to.equal(0);
      expect((await fetch(`${e.url}/probe?target=other`)).status).to.equal(404);
      expect((await fetch(`${e.url}/probe`)).status).to.equal(400);
    } finally {
      for (const s of hung) s.destroy();
      blackhole.close();
    }
  });

  it('TLS and basic auth from a web configuration file (exporter-toolkit format); health checks left open on request', async () => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const hash = (await import('bcryptjs')).default.hashSync('s3cret', 4);
    await writeFile(
      join(dir, 'web.yml'),
      [
        'tls_server_config:',
        `  cert_file: ${join(dir, 'cert.pem')}`,
        `  key_file: ${join(dir, 'key.pem')}`,
        '  min_version: TLS12',
        'basic_auth_users:',
        `  prometheus: '${hash}'`,
        '',
      ].join('\n'),
    );
    const e = await start(primary, { webConfigFile: join(dir, 'web.yml'), openHealthChecks: true });
    expect(e.url.startsWith('https://')).to.equal(true);
    const ca = (await import('node:fs')).readFileSync(join(dir, 'cert.pem'), 'utf8');
    expect(await waitFor(async () => (await httpsFetch(`${e.url}/readiness`, ca)).status === 200, 20_000)).to.equal(true);
    expect((await httpsFetch(`${e.url}/primary`, ca)).status).to.equal(200);
    expect((await httpsFetch(`${e.url}/metrics`, ca)).status).to.equal(401);
    const auth = { Authorization: `Basic ${Buffer.from('prometheus:wrong').toString('base64')}` };
    expect((await httpsFetch(`${e.url}/metrics`, ca, auth)).status).to.equal(401);
    const ok = await httpsFetch(`${e.url}/metrics`, ca, { Authorization: `Basic ${Buffer.from('prometheus:s3cret').toString('base64')}` });
    expect(ok.status).to.equal(200);
    expect(parseExposition(ok.body).get('db_up')!.samples[0]!.value).to.equal(1);
    const plain = await fetch(e.url.replace('https://', 'http://') + '/primary').then((r) => r.status, () => 'refused');
    expect(plain, 'plain HTTP on the TLS port').to.not.equal(200);
  });
});
