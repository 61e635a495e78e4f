// The package as a user gets it: `npm pack` of the sources (prepack builds), then
// `npm install -g` of the tarball into a temp prefix, then the commands and the embedding
// example of docs/embedding.md run from that installation only.
import { expect } from 'chai';
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { memberToJson } from '../../../src/adapters/cluster-store/codec.js';
import { Etcd3GatewayKeyValue } from '../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { startEtcd, type EtcdServer } from '../../support/etcd-server.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs a program; returns its result (never throws on a non-zero exit). */
function run(file: string, args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}): SpawnSyncReturns<string> {
  return spawnSync(file, [...args], { encoding: 'utf8', timeout: opts.timeout ?? 120_000, cwd: opts.cwd ?? repo, env: { ...process.env, ...opts.env } });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  expect(r.status, `${what} exited ${r.status}:\n${r.stderr}\n${r.stdout}`).to.equal(0);
  return r.stdout;
}

/** The files a fresh clone has: tracked ones, plus new ones not ignored (a working tree under change). */
function sourceFiles(): string[] {
  return execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: repo, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && existsSync(join(repo, f)));
}

/** The ```ts blocks of a markdown text that start with `// file: NAME`. */
function examples(markdown: string): { name: string; code: string }[] {
  return [...markdown.matchAll(/```ts\n\/\/ file: (\S+)\n([\s\S]*?)```/g)].map((m) => ({ name: m[1]!, code: m[2]! }));
}

describe('package: npm pack, npm install -g of the tarball, the commands and the embedding example', function () {
  this.timeout(240_000);
  let dir: string;
  let prefix: string;
  let bin: (name: string) => string;
  let tarball: string;
  let etcd: EtcdServer | undefined;

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'warden-package-'));
    // A copy of the sources without dist/, as a fresh clone has them; its node_modules are the repository's.
    const src = join(dir, 'src');
    for (const f of sourceFiles()) {
      mkdirSync(dirname(join(src, f)), { recursive: true });
      cpSync(join(repo, f), join(src, f));
    }
    symlinkSync(join(repo, 'node_modules'), join(src, 'node_modules'));
    expect(existsSync(join(src, 'dist'))).to.equal(false);
    const packed = ok(run('npm', ['pack', '--pack-destination', dir, '--loglevel=error'], { cwd: src }), 'npm pack');
    tarball = join(dir, packed.trim().split('\n').at(-1)!);
    prefix = join(dir, 'prefix');
    // The dependencies come from npm's cache when it has them (as after `npm ci`).
    ok(run('npm', ['install', '-g', '--prefix', prefix, tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir }), 'npm install -g');
    bin = (name) => join(prefix, 'bin', name);
    etcd = await startEtcd();
  });

  after(async () => {
    await etcd?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the tarball holds the build (with the one-file bundle of each command), type declarations, LICENSE, README, docs, the default collectors and the systemd units; no tests, sources or maps', () => {
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
    for (const f of ['LICENSE', 'README.md', 'package.json', 'docs/embedding.md', 'docs/production.md', 'collectors/00-server.yml', 'packaging/systemd/warden.service', 'packaging/systemd/warden-exporter.service', 'dist/index.js', 'dist/index.d.ts', 'dist/testing.d.ts', 'dist/adapters/index.d.ts', 'dist/agent.d.ts', 'dist/app/ctl/main.js', 'bin/warden.js', 'dist/app/agent/main.bundle.js', 'dist/app/fencer/main.bundle.js', 'dist/app/exporter/main.bundle.js', 'dist/app/ctl/main.bundle.js']) {
      expect(files, f).to.include(f);
    }
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('src/') || f.startsWith('bench/') || f.endsWith('.map') || f.endsWith('.ts') && !f.endsWith('.d.ts'))).to.deep.equal([]);
  });

  it('every command answers --version with the package version', () => {
    const version = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
    for (const name of ['warden', 'wardenctl', 'warden-exporter', 'warden-fencer']) {
      expect(ok(run(bin(name), ['--version']), `${name} --version`), name).to.include(version);
    }
  });

  it('warden --validate-config --print checks a node file; an invalid one exits 1 listing every problem', () => {
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    const file = join(dir, 'node1.yml');
    writeFileSync(
      file,
      [
        'scope: demo',
        'name: node1',
        'restapi: {listen: 127.0.0.1:8008, authentication: {username: admin, password: secret}}',
        `etcd3: {hosts: ['${etcd!.host}']}`,
        `db: {listen: 127.0.0.1:15432, data_dir: ${data}/node1, authentication: {superuser: {username: postgres, password: pw}, replication: {username: replicator, password: rpw}}}`,
        'watchdog: {mode: off}',
        'log: {format: text}',
      ].join('\n'),
    );
    const r = run(bin('warden'), ['--validate-config', '--print', file]);
    // bin_dir is Debian's PostgreSQL 15 (scripts/setup.sh installs it).
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.include('format: text').and.to.include('password: "********"');
    writeFileSync(file, 'scope: demo\nname: node1\ncolour: red\n');
    const bad = run(bin('warden'), ['--validate-config', file]);
    expect(bad.status).to.equal(1);
    expect(bad.stderr).to.include('colour: unknown field').and.to.include('restapi').and.to.include('etcd3');
  });

  it('wardenctl reads a cluster from etcd; warden-exporter lists its bundled collectors', async () => {
    const kv = new Etcd3GatewayKeyValue({ hosts: [etcd!.host], prefix: '/service/demo/', retryTimeoutMs: 5000 });
    try {
      await kv.put('initialize', '7300000000000000001');
      await kv.put('leader', 'node1');
      await kv.put(
        'members/node1',
        memberToJson({
          connUrl: 'postgres://127.0.0.1:15432/postgres', apiUrl: 'http://127.0.0.1:8008', state: 'running', role: 'primary', version: '1',
          xlogLocation: 1, receiveLsn: null, replayLsn: null, replicationState: null, timeline: 1, tags: { dc: 'east' },
          pendingRestart: false, pendingRestartReason: null, scheduledRestart: null,
        }),
      );
    } finally {
      await kv.close();
    }
    const rows = JSON.parse(ok(run(bin('wardenctl'), ['-d', etcd!.host, '--scope', 'demo', 'list', '-f', 'json']), 'wardenctl list')) as Record<string, unknown>[];
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({ Member: 'node1', Role: 'Leader', Tags: { dc: 'east' }, 'Receive LSN': null });
    const collectors = ok(run(bin('warden-exporter'), ['--dry-run']), 'warden-exporter --dry-run');
    expect(collectors).to.match(/collectors/);
  });

  it('the systemd units verify against the installed commands', function () {
    if (run('systemd-analyze', ['--version']).status !== 0) this.skip();
    const units = join(dir, 'units');
    mkdirSync(units);
    const shipped = join(prefix, 'lib', 'node_modules', 'warden', 'packaging', 'systemd');
    for (const f of readdirSync(shipped)) writeFileSync(join(units, f), readFileSync(join(shipped, f), 'utf8').replaceAll('/usr/local/bin/', `${prefix}/bin/`));
    const r = run('systemd-analyze', ['verify', ...readdirSync(units).map((f) => join(units, f))]);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr.trim()).to.equal('');
  });

  it('the examples of docs/embedding.md type-check against the installed declarations and run', () => {
    const lib = join(prefix, 'lib');
    const docs = readFileSync(join(lib, 'node_modules', 'warden', 'docs', 'embedding.md'), 'utf8');
    const found = examples(docs);
    expect(found.map((e) => e.name)).to.deep.equal(['failover-policy.ts', 'single-node.ts', 'production-root.ts', 'production-container.ts']);
    for (const e of found) writeFileSync(join(lib, e.name.replace(/\.ts$/, '.mts')), e.code);
    // inversify is the package's dependency; an embedding project that imports it adds it too.
    symlinkSync(join(lib, 'node_modules', 'warden', 'node_modules', 'inversify'), join(lib, 'node_modules', 'inversify'));
    const program = ts.createProgram(
      found.map((e) => join(lib, e.name.replace(/\.ts$/, '.mts'))),
      { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(repo, 'node_modules', '@types')] },
    );
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).to.deep.equal([]);
    // The production roots need a node's file and PostgreSQL: compiled, not run.
    for (const e of found.filter((f) => !f.name.startsWith('production-'))) {
      const js = ts.transpileModule(e.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
      const file = join(lib, e.name.replace(/\.ts$/, '.mjs'));
      writeFileSync(file, js);
      const out = ok(run(process.execPath, [file], { cwd: lib, timeout: 60_000 }), e.name);
      if (e.name === 'failover-policy.ts') expect(out).to.match(/^failed over to node2 in \d+(\.\d+)? s of cluster time$/m);
      if (e.name === 'single-node.ts') expect(out.trim()).to.equal('running');
    }
  });
});
