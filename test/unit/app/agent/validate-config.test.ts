import { expect } from 'chai';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import YAML from 'yaml';
import { effectiveConfigYaml, hostProblems } from '../../../../src/app/agent/local-config-checks.js';
import { parseLocalConfig } from '../../../../src/app/agent/local-config.js';
import { parseAgentArgs } from '../../../../src/app/agent/agent-args.js';
import { validateConfigCommand } from '../../../../src/app/agent/validate-config.js';
import { configWarnings } from '../../../../src/app/agent/config-warnings.js';

/** A node file whose paths live under `dir` (bin_dir holds fake PostgreSQL programs). */
function nodeYaml(dir: string, extra = ''): string {
  return `
scope: demo
name: node1
restapi: {listen: 127.0.0.1:8008, authentication: {username: admin, password: secret}}
etcd3: {hosts: [127.0.0.1:2379]}
db:
  listen: 127.0.0.1:15432
  data_dir: ${dir}/data/node1
  bin_dir: ${dir}/bin
  authentication: {superuser: {username: postgres, password: pw}, replication: {username: replicator, password: rpw}}
watchdog: {mode: off}
${extra}`;
}

/** Runs the command, capturing what it writes. */
async function run(path: string, print: boolean, env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [o, e] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((s: string) => (out.push(s), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => (err.push(s), true)) as typeof process.stderr.write;
  try {
    const code = await validateConfigCommand(path, print, env);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}

describe('warden --validate-config', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-validate-'));
    // Run as root, the check runs `postgres -V` as the postgres user: it must reach the programs.
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'data'));
    for (const p of ['postgres', 'pg_ctl', 'initdb', 'pg_basebackup', 'pg_controldata', 'pg_rewind']) writeFileSync(join(dir, 'bin', p), '#!/bin/sh\necho "postgres (PostgreSQL) 15.18"\n', { mode: 0o755 });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('parses --validate-config and --print; --print alone is a usage error', () => {
    expect(parseAgentArgs(['--validate-config', '-c', 'a.yml'], '1')).to.deep.equal({ configPath: 'a.yml', validate: true, print: false });
    expect(parseAgentArgs(['--validate-config', '--print', 'a.yml'], '1')).to.deep.equal({ configPath: 'a.yml', validate: true, print: true });
    expect(() => parseAgentArgs(['--print', 'a.yml'], '1')).to.throw(/--print goes with --validate-config/);
  });

  it('--help says what the signals do, maintenance mode included', () => {
    let out = '';
    expect(parseAgentArgs(['--help'], '1', { out: (t) => (out += t), err: () => undefined })).to.equal(null);
    expect(out).to.match(/SIGTERM, SIGINT +stop: PostgreSQL is stopped and the leader lock released; in\n +maintenance mode/);
    expect(out).to.match(/SIGHUP +re-read the configuration file/);
  });

  it('a valid file on a ready host: exit 0; --print shows the effective config with passwords masked', async () => {
    writeFileSync(join(dir, 'node.yml'), nodeYaml(dir));
    const r = await run(join(dir, 'node.yml'), true, { WARDEN_LOG_FORMAT: 'text' });
    expect(r.code, r.err).to.equal(0);
    expect(r.err).to.match(/is valid\n$/);
    const printed = YAML.parse(r.out) as Record<string, any>;
    expect(printed['restapi']).to.deep.include({ listen: '127.0.0.1:8008', connect_address: '127.0.0.1:8008', authentication: { username: 'admin', password: '********' } });
    expect(printed['db']['authentication']['superuser']['password']).to.equal('********');
    expect(printed['log']).to.deep.equal({ level: 'info', levels: {}, format: 'text', file: null });
    expect(r.out).not.to.include('secret');
  });

  it('warns, and still accepts the file, about what an operator may not mean: no passwords, an open API on the network, a readable file with passwords', async () => {
    const open = nodeYaml(dir)
      .replace('restapi: {listen: 127.0.0.1:8008, authentication: {username: admin, password: secret}}', 'restapi: {listen: 0.0.0.0:8008, connect_address: 10.0.0.11:8008}')
      .replace('{superuser: {username: postgres, password: pw}, replication: {username: replicator, password: rpw}}', '{superuser: {username: postgres}, replication: {username: replicator, password: rpw}}');
    writeFileSync(join(dir, 'node.yml'), open, { mode: 0o644 });
    chmodSync(join(dir, 'node.yml'), 0o644);
    const r = await run(join(dir, 'node.yml'), false);
    expect(r.code, r.err).to.equal(0);
    const warnings = r.err.split('\n').filter((l) => l.startsWith('warden: warning: '));
    expect(warnings.map((w) => w.slice('warden: warning: '.length).split(':')[0])).to.deep.equal([
      'db.authentication.superuser has no password',
      'restapi.authentication is not set',
      `${join(dir, 'node.yml')} holds passwords and every user of this machine may read it (mode 0644); chmod 0600 it`.split(':')[0],
    ]);
    chmodSync(join(dir, 'node.yml'), 0o600);
    writeFileSync(join(dir, 'node.yml'), nodeYaml(dir));
    expect((await run(join(dir, 'node.yml'), false)).err).not.to.include('warning');
  });

  it('a rewind role without a password is warned about (other members could not rewind from this one); the superuser named as it is not', () => {
    const config = parseLocalConfig(nodeYaml(dir));
    const withRewind = (rewind: { username: string; password?: string }) => configWarnings({ ...config, db: { ...config.db, authentication: { ...config.db.authentication, rewind } } });
    expect(withRewind({ username: 'rewinder' }).filter((w) => w.startsWith('db.authentication.rewind'))[0]).to.match(/^db\.authentication\.rewind has no password: only this machine may log in as rewinder/);
    expect(withRewind({ username: 'rewinder', password: 'rw' }).filter((w) => w.startsWith('db.authentication.rewind'))).to.deep.equal([]);
    expect(withRewind({ username: config.db.authentication.superuser.username }).filter((w) => w.startsWith('db.authentication.rewind'))).to.deep.equal([]);
  });

  it('a superuser without a password is not warned about with db.use_unix_socket: peer authentication, no trust line', () => {
    const config = parseLocalConfig(nodeYaml(dir));
    const noPassword = { ...config, db: { ...config.db, authentication: { ...config.db.authentication, superuser: { username: 'postgres' } } } };
    const superuserWarnings = (c: typeof config) => configWarnings(c).filter((w) => w.startsWith('db.authentication.superuser'));
    expect(superuserWarnings(noPassword)[0]).to.match(/trusts every connection from this machine .* or set db\.use_unix_socket/);
    expect(superuserWarnings({ ...noPassword, db: { ...noPassword.db, use_unix_socket: true } })).to.deep.equal([]);
  });

  it('db.use_unix_socket with an agent whose OS user is not the superuser: peer authentication would refuse it, unless a local line of the operator maps it', () => {
    const config = parseLocalConfig(nodeYaml(dir));
    const socket = { ...config, db: { ...config.db, use_unix_socket: true } };
    const peerWarnings = (c: typeof config, osUser: string) => configWarnings(c, undefined, osUser).filter((w) => w.startsWith('db.use_unix_socket'));
    expect(peerWarnings(socket, 'root')[0]).to.match(/runs as root and logs in as postgres.*map=agent.*"agent root postgres"/);
    expect(peerWarnings(socket, 'postgres')).to.deep.equal([]);
    expect(peerWarnings({ ...socket, db: { ...socket.db, pg_hba: ['local all postgres peer map=agent'] } }, 'root')).to.deep.equal([]);
    expect(peerWarnings(config, 'root'), 'over TCP peer authentication plays no part').to.deep.equal([]);
  });

  it('warns when the data directory holds a database but not the server\'s settings file (a configuration kept in a Patroni config_dir)', () => {
    const config = parseLocalConfig(nodeYaml(dir));
    const data = join(dir, 'data', 'node1');
    const warned = () => configWarnings(config).filter((w) => w.includes('no postgresql.base.conf'));
    expect(warned(), 'no database yet').to.deep.equal([]);
    mkdirSync(data);
    writeFileSync(join(data, 'PG_VERSION'), '15\n');
    expect(warned()[0]).to.match(/^db\.data_dir: .* holds a database but no postgresql\.base\.conf: PostgreSQL will run on its built-in defaults/);
    writeFileSync(join(data, 'postgresql.conf'), '# Generated by Warden: do not edit, every change is overwritten.\n');
    expect(warned(), 'the generated file includes a base file that is not there').to.have.length(1);
    writeFileSync(join(data, 'postgresql.conf'), "timezone = 'Asia/Tokyo'\n");
    expect(warned(), 'initdb\'s postgresql.conf becomes the base file at the start').to.deep.equal([]);
    writeFileSync(join(data, 'postgresql.conf'), '# Generated by Warden: do not edit, every change is overwritten.\n');
    writeFileSync(join(data, 'postgresql.base.conf'), "timezone = 'Asia/Tokyo'\n");
    expect(warned()).to.deep.equal([]);
  });

  it('the API certificate, key and key password must make a TLS context, as the start needs', async () => {
    const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    ssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'plain.key', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=x']);
    ssl(['pkey', '-in', 'plain.key', '-aes256', '-passout', 'pass:right', '-out', 'enc.key']);
    ssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'other.key']);
    const withTls = (key: string, password?: string) =>
      nodeYaml(dir).replace(
        'restapi: {listen: 127.0.0.1:8008, authentication: {username: admin, password: secret}}',
        `restapi: {listen: 127.0.0.1:8008, authentication: {username: admin, password: secret}, certfile: ${dir}/cert.pem, keyfile: ${dir}/${key}${password ? `, keyfile_password: ${password}` : ''}}`,
      );
    for (const [key, password, code, path] of [
      ['enc.key', 'right', 0, null],
      ['plain.key', undefined, 0, null],
      ['enc.key', 'wrong', 1, 'restapi.keyfile_password'],
      ['other.key', undefined, 1, 'restapi.keyfile'],
    ] as const) {
      writeFileSync(join(dir, 'node.yml'), withTls(key, password), { mode: 0o600 });
      const r = await run(join(dir, 'node.yml'), false);
      expect(r.code, `${key} ${password}: ${r.err}`).to.equal(code);
      if (path) expect(r.err).to.include(`${path}: expected a key that goes with restapi.certfile`);
    }
  });

  it('a role name that pg_hba.conf or a conninfo would read otherwise is refused', async () => {
    for (const name of ['all,app', 'repl all', 'a"b']) {
      writeFileSync(join(dir, 'node.yml'), nodeYaml(dir).replace('{username: replicator, password: rpw}', `{username: ${JSON.stringify(name)}, password: rpw}`));
      const r = await run(join(dir, 'node.yml'), false);
      expect(r.code, name).to.equal(1);
      expect(r.err).to.include('db.authentication.replication.username: expected a role name of letters, digits');
    }
  });

  it('lists every problem of the file and of the host, exit 1', async () => {
    writeFileSync(join(dir, 'node.yml'), nodeYaml(dir, 'log: {level: loud}\ncolour: red\n'));
    const bad = await run(join(dir, 'node.yml'), false);
    expect(bad.code).to.equal(1);
    expect(bad.err).to.include('log.level').and.to.include('colour: unknown field');
    rmSync(join(dir, 'bin', 'pg_ctl'));
    writeFileSync(join(dir, 'node.yml'), nodeYaml(dir, `restapi: {listen: 127.0.0.1:8008, certfile: ${dir}/missing.pem}`).replace(/^restapi: \{listen: 127.0.0.1:8008, auth.*$/m, ''));
    const host = await run(join(dir, 'node.yml'), false);
    expect(host.code).to.equal(1);
    expect(host.err).to.include('restapi.certfile: expected a readable file').and.to.match(/db\.bin_dir: .*\/bin lacks pg_ctl/);
    expect((await run(join(dir, 'nope.yml'), false)).code).to.equal(1);
  });

  it('host checks: the log file directory, and PostgreSQL as every start checks it (a data directory of another version)', async () => {
    mkdirSync(join(dir, 'data', 'node1'), { mode: 0o700 });
    writeFileSync(join(dir, 'data', 'node1', 'PG_VERSION'), '14\n');
    if (process.getuid?.() === 0) chownSync(join(dir, 'data', 'node1'), Number(execFileSync('id', ['-u', 'postgres']).toString()), 0);
    // Folders the logger would create are fine; a file where a folder must go is not.
    const creatable = await hostProblems(parseLocalConfig(nodeYaml(dir) + `log: {file: ${dir}/x/y/z/warden.log}\n`));
    expect(creatable.map((p) => p.path)).to.deep.equal(['db.data_dir']);
    writeFileSync(join(dir, 'x'), 'not a folder');
    const config = parseLocalConfig(nodeYaml(dir) + `log: {file: ${dir}/x/y/warden.log}\n`);
    const problems = await hostProblems(config);
    expect(problems.map((p) => p.path)).to.deep.equal(['log.file', 'db.data_dir']);
    expect(problems[0]!.message).to.equal(`expected ${dir}/x to be a directory (the log file's folder is created under it), got a file`);
    expect(problems[1]!.message).to.match(/holds PostgreSQL 14 data but db.bin_dir has PostgreSQL 15/);
    expect(effectiveConfigYaml(config)).to.include('file: ');
  });
});
