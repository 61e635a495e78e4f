import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../support/free-port.js';
import { parseExposition } from '../../unit/collectors/exposition-parser.js';
import { waitFor } from './fixture.js';

const BIN = fileURLToPath(new URL('../../../bin/warden-exporter.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('warden-exporter binary', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'warden-exporter-cli-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('an invalid configuration at start lists every problem and exits 2', async () => {
    await writeFile(join(dir, 'a.yml'), 'db_a:\n  query: SELECT 1 AS v\n  ttl: later\n  metrics:\n    - v: {usage: GAUGE}\n');
    await writeFile(join(dir, 'b.yml'), 'db_b:\n  metrics:\n    - v: {usage: METER}\n');
    const r = await run(['--config', dir, '--web.listen-address', '127.0.0.1:0']);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain('invalid collector configuration (3 problems)');
    expect(r.stderr).to.contain('db_a.ttl: invalid duration "later"').and.contain('db_b.query: is required').and.contain('db_b.metrics[0].v.usage: expected one of LABEL, GAUGE, COUNTER, HISTOGRAM, DISCARD');
  });

  it('invalid flags exit 2 naming each flag', async () => {
    const r = await run(['--web.listen-address', 'nowhere', '--connect-timeout', 'x']);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain('--web.listen-address').and.contain('--connect-timeout');
  });

  it('--dry-run prints the bundled collectors and exits 0', async () => {
    const r = await run(['--dry-run']);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^db_server\s+130000-999999\s+\[cluster\]/m);
    expect(r.stdout).to.match(/\d+ collectors from \d+ file\(s\) in .*collectors: configuration OK/);
  });

  it('--fail-fast exits 2 when the database is down at start', async () => {
    const port = await freePort();
    const r = await run(['--url', `postgres://postgres@127.0.0.1:${port}/postgres`, '--fail-fast', '--web.listen-address', '127.0.0.1:0']);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain('database down at start (--fail-fast)');
  });

  it('without --fail-fast a down database is not fatal: it serves db_up 0 and 503s, and exits 0 on SIGTERM', async () => {
    const [dbPort, port] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [BIN, '--web.listen-address', `127.0.0.1:${port}`], {
      env: { ...process.env, DB_EXPORTER_URL: `postgres://postgres@127.0.0.1:${dbPort}/postgres`, DB_EXPORTER_CONST_LABELS: 'env=test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      expect(await waitFor(async () => (await fetch(`${base}/liveness`)).status === 200, 60_000), 'listening').to.equal(true);
      expect(await waitFor(async () => (await fetch(`${base}/up`)).status === 503 && (await (await fetch(`${base}/up`)).text()) === 'down\n', 10_000)).to.equal(true);
      const f = parseExposition(await (await fetch(`${base}/metrics`)).text());
      expect(f.get('db_up')!.samples[0]).to.deep.include({ value: 0, labels: { env: 'test' } });
      expect(f.get('db_exporter_build_info')!.samples[0]!.labels).to.have.keys('version', 'branch', 'revision', 'env');
      // SIGHUP reloads (systemctl reload); it used to end the process.
      let stderr = '';
      for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (c: Buffer) => (stderr += c.toString()));
      child.kill('SIGHUP');
      expect(await waitFor(async () => /reloaded on SIGHUP/.test(stderr), 20_000), `reloaded (${stderr.slice(-300)})`).to.equal(true);
      expect((await fetch(`${base}/liveness`)).status).to.equal(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
  });
});

describe('warden-exporter binary: reload through the configuration process', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'warden-exporter-reload-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('/reload refuses a broken file (500, previous collectors kept) and applies a fixed one (200)', async () => {
    await writeFile(join(dir, 'a.yml'), 'db_a:\n  query: SELECT 1 AS v\n  tags: [cluster]\n  metrics:\n    - v: {usage: GAUGE, description: one}\n');
    const [dbPort, port] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [BIN, '--config', dir, '--url', `postgres://postgres@127.0.0.1:${dbPort}/postgres`, '--web.listen-address', `127.0.0.1:${port}`], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      expect(await waitFor(async () => (await fetch(`${base}/liveness`)).status === 200, 60_000), 'listening').to.equal(true);
      await writeFile(join(dir, 'b.yml'), 'db_b:\n  query: SELECT 1 AS v\n  ttl: soon\n  metrics:\n    - v: {usage: GAUGE}\n');
      const bad = await fetch(`${base}/reload`, { method: 'POST' });
      expect(bad.status).to.equal(500);
      expect(((await bad.json()) as { message: string }).message).to.contain('db_b.ttl');
      expect(await (await fetch(`${base}/explain`)).text()).to.contain('Collector: db_a').and.not.contain('db_b');
      await writeFile(join(dir, 'b.yml'), 'db_b:\n  query: SELECT 2 AS v\n  tags: [cluster]\n  metrics:\n    - v: {usage: GAUGE, description: two}\n');
      const good = await fetch(`${base}/reload`, { method: 'POST' });
      expect(good.status).to.equal(200);
      expect(await (await fetch(`${base}/explain`)).text()).to.contain('Collector: db_b');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
  });
});
