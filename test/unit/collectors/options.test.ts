import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseExporterOptions, parseListenAddress } from '../../../src/app/exporter/options.js';
import { ValidationError } from '../../../src/domain/errors.js';

function problems(argv: string[], env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseExporterOptions(argv, env, '0.1.0');
  } catch (e) {
    if (e instanceof ValidationError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  return [];
}

describe('exporter options (flags and environment)', () => {
  it('defaults: port 9630 on every interface, /metrics, namespace db, connect timeout 1s', () => {
    const o = parseExporterOptions([], {}, '0.1.0');
    expect(o).to.include({ listenPort: 9630, telemetryPath: '/metrics', namespace: 'db', connectTimeoutMs: 1000, disableCache: false, autoDiscovery: false, failFast: false, dryRun: false, explain: false, logLevel: 'info' });
    expect(o.listenHost).to.equal(undefined);
    expect(o.url).to.equal(undefined);
    expect(o.configPath).to.equal(undefined);
    expect(o.constLabels).to.deep.equal([]);
    expect(o.tags).to.deep.equal([]);
    expect(o.probeIntervalMs).to.be.at.most(1000);
  });

  it('reads every flag', () => {
    const o = parseExporterOptions(
      ['--url', 'postgres://u@h:5433/db', '--config', '/etc/x', '--web.listen-address', '127.0.0.1:9700', '--web.telemetry-path', '/prom', '--namespace', 'pg', '--const-labels', 'a=b,c=d', '--tag', 'x', '--tag', 'y,z', '--disable-cache', '--auto-discovery', '--exclude-database', 'a,b', '--include-database', 'c', '--connect-timeout', '500ms', '--fail-fast', '--dry-run', '--explain', '--log.level', 'debug', '--concurrency', '3'],
      {},
      '0.1.0',
    );
    expect(o).to.deep.include({
      url: 'postgres://u@h:5433/db',
      configPath: '/etc/x',
      listenHost: '127.0.0.1',
      listenPort: 9700,
      telemetryPath: '/prom',
      namespace: 'pg',
      constLabels: [['a', 'b'], ['c', 'd']],
      tags: ['x', 'y', 'z'],
      disableCache: true,
      autoDiscovery: true,
      excludeDatabases: ['a', 'b'],
      includeDatabases: ['c'],
      connectTimeoutMs: 500,
      failFast: true,
      dryRun: true,
      explain: true,
      logLevel: 'debug',
      concurrency: 3,
    });
  });

  it('reads every environment variable, flags winning over them', () => {
    const env = {
      DB_EXPORTER_URL: 'postgresql://e@h/db',
      DB_EXPORTER_CONFIG: '/env/conf',
      DB_EXPORTER_WEB_LISTEN_ADDRESS: ':9999',
      DB_EXPORTER_WEB_TELEMETRY_PATH: '/m',
      DB_EXPORTER_NAMESPACE: 'pgx',
      DB_EXPORTER_CONST_LABELS: 'k=v',
      DB_EXPORTER_TAG: 'a,b',
      DB_EXPORTER_DISABLE_CACHE: 'true',
      DB_EXPORTER_AUTO_DISCOVERY: '1',
      DB_EXPORTER_EXCLUDE_DATABASE: 'x',
      DB_EXPORTER_INCLUDE_DATABASE: 'y',
      DB_EXPORTER_CONNECT_TIMEOUT: '2s',
      DB_EXPORTER_FAIL_FAST: 'yes',
      DB_EXPORTER_DRY_RUN: 'false',
      DB_EXPORTER_EXPLAIN: '0',
      DB_EXPORTER_LOG_LEVEL: 'warn',
    };
    const o = parseExporterOptions([], env, '0.1.0');
    expect(o).to.deep.include({ url: 'postgresql://e@h/db', configPath: '/env/conf', listenPort: 9999, telemetryPath: '/m', namespace: 'pgx', constLabels: [['k', 'v']], tags: ['a', 'b'], disableCache: true, autoDiscovery: true, excludeDatabases: ['x'], includeDatabases: ['y'], connectTimeoutMs: 2000, failFast: true, dryRun: false, explain: false, logLevel: 'warn' });
    expect(parseExporterOptions(['--namespace', 'flag', '--url', 'postgres://f@h/db'], env, '0.1.0')).to.include({ namespace: 'flag', url: 'postgres://f@h/db' });
  });

  it('reads the URL from DB_EXPORTER_URL_FILE when no URL is given', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-exporter-opts-'));
    writeFileSync(join(dir, 'url'), 'postgres://secret@h/db\n');
    expect(parseExporterOptions([], { DB_EXPORTER_URL_FILE: join(dir, 'url') }, '0.1.0').url).to.equal('postgres://secret@h/db');
    expect(problems([], { DB_EXPORTER_URL_FILE: join(dir, 'missing') })[0]).to.match(/^DB_EXPORTER_URL_FILE: cannot read/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every invalid flag at once', () => {
    const p = problems(['--url', 'http://x', '--web.listen-address', 'nope', '--web.telemetry-path', 'metrics', '--namespace', '1db', '--const-labels', 'x', '--connect-timeout', 'soon', '--log.level', 'loud', '--concurrency', '0'], { DB_EXPORTER_FAIL_FAST: 'maybe' });
    expect(p.map((x) => x.split(':')[0]).sort()).to.deep.equal(['DB_EXPORTER_FAIL_FAST', '--url', '--web.listen-address', '--web.telemetry-path', '--namespace', '--const-labels', '--connect-timeout', '--concurrency', '--log.level'].sort());
    expect(problems(['--bogus'])).to.deep.equal(["flags: unknown option '--bogus'"]);
    // A telemetry path no request can name is refused (it started, then answered 404 forever).
    for (const path of ['/metrics?x', '/a b', '/m#x', '/%41']) expect(problems(['--url', 'postgres://u@h/db', '--web.telemetry-path', path]), path).to.have.length(1);
    expect(problems(['--url', 'postgres://u@h/db', '--web.telemetry-path', '/prom/metrics_v2'])).to.deep.equal([]);
  });

  it('--connect-timeout is at most 60s; a bare number is seconds, and pg_exporter\'s milliseconds are named', () => {
    expect(problems(['--url', 'postgres://u@h/db', '--connect-timeout', '100'])).to.deep.equal(['--connect-timeout: at most 60s, got "100" (a bare number is seconds here: for milliseconds write 100ms)']);
    expect(problems(['--url', 'postgres://u@h/db', '--connect-timeout', '2m'])).to.deep.equal(['--connect-timeout: at most 60s, got "2m"']);
    for (const ok of ['100ms', '2', '60s']) expect(problems(['--url', 'postgres://u@h/db', '--connect-timeout', ok]), ok).to.deep.equal([]);
  });

  it('parses listen addresses', () => {
    expect(parseListenAddress(':9630')).to.deep.equal({ port: 9630 });
    expect(parseListenAddress('0.0.0.0:1')).to.deep.equal({ host: '0.0.0.0', port: 1 });
    expect(parseListenAddress('[::1]:9630')).to.deep.equal({ host: '::1', port: 9630 });
    expect(parseListenAddress('9630')).to.be.a('string');
    expect(parseListenAddress(':70000')).to.be.a('string');
  });
});
