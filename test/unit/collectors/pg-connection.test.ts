import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadExporterFiles } from '../../../src/app/exporter/configure.js';
import { parseExporterOptions } from '../../../src/app/exporter/options.js';
import { pgConnectionConfig, pgSslProblems, sslModeOf } from '../../../src/adapters/sql/pg-connection.js';
import { ValidationError } from '../../../src/domain/errors.js';

/** What node-postgres makes of a configuration: its TLS options (false: none), host and database. */
function seen(config: ReturnType<typeof pgConnectionConfig>): { ssl: unknown; host: string; database: string | undefined } {
  const p = (new pg.Client(config) as unknown as { connectionParameters: { ssl: unknown; host: string; database?: string } }).connectionParameters;
  return { ssl: p.ssl, host: p.host, database: p.database };
}

type Tls = false | { ca?: string; rejectUnauthorized?: boolean; checkServerIdentity?: unknown };

describe('exporter: TLS of the PostgreSQL connection as libpq means sslmode', () => {
  let dir: string;
  let ca: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-pgtls-'));
    ca = join(dir, 'ca.crt');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nnot checked here\n-----END CERTIFICATE-----\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const tls = (url: string, env: Record<string, string> = {}, database?: string, plain = false) => seen(pgConnectionConfig(url, env, database, plain)).ssl as Tls;
  const noHostCheck = (t: Tls) => t !== false && typeof t.checkServerIdentity === 'function' && (t.checkServerIdentity as () => unknown)() === undefined;

  it('disable and allow: no TLS', () => {
    expect(tls('postgres://u@h/db?sslmode=disable')).to.equal(false);
    expect(tls('postgres://u@h/db?sslmode=allow')).to.equal(false);
  });

  it('prefer and require: encrypted, the certificate not verified', () => {
    for (const mode of ['prefer', 'require']) expect(tls(`postgres://u@h/db?sslmode=${mode}`), mode).to.deep.equal({ rejectUnauthorized: false });
  });

  it('require with sslrootcert: the chain is verified against it, the host name is not (as verify-ca)', () => {
    const t = tls(`postgres://u@h/db?sslmode=require&sslrootcert=${ca}`);
    expect(t).to.include({ ca: '-----BEGIN CERTIFICATE-----\nnot checked here\n-----END CERTIFICATE-----\n' });
    expect(t !== false && t.rejectUnauthorized).to.not.equal(false);
    expect(noHostCheck(t)).to.equal(true);
  });

  it('verify-ca: the chain, not the host name; verify-full: both', () => {
    const ca1 = tls(`postgres://u@h/db?sslmode=verify-ca&sslrootcert=${ca}`);
    expect(ca1 !== false && ca1.ca).to.be.a('string');
    expect(ca1 !== false && ca1.rejectUnauthorized).to.not.equal(false);
    expect(noHostCheck(ca1)).to.equal(true);
    const full = tls(`postgres://u@h/db?sslmode=verify-full&sslrootcert=${ca}`);
    expect(full !== false && full.ca).to.be.a('string');
    expect(full).to.not.have.property('checkServerIdentity');
    expect(full !== false && full.rejectUnauthorized).to.not.equal(false);
    expect(tls('postgres://u@h/db?sslmode=verify-full')).to.deep.equal({});
  });

  it('the PG* environment fills what the URL leaves out; the URL wins', () => {
    expect(tls('postgres://u@h/db', { PGSSLMODE: 'require' })).to.deep.equal({ rejectUnauthorized: false });
    expect(tls('postgres://u@h/db?sslmode=disable', { PGSSLMODE: 'verify-full' })).to.equal(false);
    expect(tls('postgres://u@h/db', { PGSSLMODE: 'verify-ca', PGSSLROOTCERT: ca })).to.include({ ca: '-----BEGIN CERTIFICATE-----\nnot checked here\n-----END CERTIFICATE-----\n' });
    // Without a URL, the rest of the connection still comes from the environment.
    const env = seen(pgConnectionConfig(undefined, { PGSSLMODE: 'require' }, 'app'));
    expect(env).to.deep.include({ ssl: { rejectUnauthorized: false }, database: 'app' });
  });

  it('another database keeps the TLS settings; a URL without them is given to node-postgres as it is', () => {
    const other = pgConnectionConfig('postgres://u:p%40ss@h:5433/postgres?sslmode=require', {}, 'my db');
    expect(seen(other)).to.deep.equal({ ssl: { rejectUnauthorized: false }, host: 'h', database: 'my db' });
    expect(pgConnectionConfig('postgres://u@h/postgres', {})).to.deep.equal({ connectionString: 'postgres://u@h/postgres' });
    expect(pgConnectionConfig('postgres://u@h/postgres', {}, 'app')).to.deep.equal({ connectionString: 'postgres://u@h/app' });
    expect(pgConnectionConfig(undefined, {}, 'app')).to.deep.equal({ database: 'app' });
  });

  it("node-postgres' own switch in the URL changes nothing: sslmode keeps libpq's meaning", () => {
    expect(tls('postgres://u@h/db?sslmode=require&uselibpqcompat=false')).to.deep.equal({ rejectUnauthorized: false });
    expect(tls('postgres://u@h/db?sslmode=require&uselibpqcompat=true')).to.deep.equal({ rejectUnauthorized: false });
  });

  it('the fallback of prefer connects without TLS', () => {
    expect(tls('postgres://u@h/db?sslmode=prefer', {}, undefined, true)).to.equal(false);
    expect(sslModeOf('postgres://u@h/db?sslmode=prefer', {})).to.equal('prefer');
    expect(sslModeOf(undefined, { PGSSLMODE: 'prefer' })).to.equal('prefer');
    expect(sslModeOf('postgres://u@h/db', {})).to.equal(null);
  });

  it('refuses at start what libpq refuses: an unknown sslmode, verify-ca without its CA, a file it cannot read', () => {
    const p = (url: string | undefined, env: Record<string, string> = {}) => pgSslProblems(url, env, '--url').map((x) => `${x.path}: ${x.message}`);
    expect(p('postgres://u@h/db?sslmode=required')).to.deep.equal(['--url: sslmode "required" is not one of disable, allow, prefer, require, verify-ca, verify-full']);
    expect(p('postgres://u@h/db?sslmode=no-verify')[0]).to.match(/use require\)$/);
    expect(p('postgres://u@h/db?sslmode=verify-ca')).to.deep.equal(['--url: sslmode=verify-ca needs sslrootcert: the file of the CA certificate that signed the server certificate']);
    expect(p(`postgres://u@h/db?sslmode=verify-ca&sslrootcert=${ca}`)).to.deep.equal([]);
    const unreadable = p(`postgres://u@h/db?sslmode=verify-full&sslrootcert=${dir}/none.crt&sslkey=${dir}/none.key`);
    expect(unreadable).to.have.length(2);
    expect(unreadable[0]).to.match(/^--url: cannot read sslrootcert .*none\.crt: ENOENT/);
    expect(unreadable[1]).to.match(/^--url: cannot read sslkey .*none\.key: ENOENT/);
    // Read whole at every connection: a device or an oversized file is refused unread.
    expect(p('postgres://u@h/db?sslmode=verify-ca&sslrootcert=/dev/zero')).to.deep.equal(['--url: cannot read sslrootcert /dev/zero: not a regular file']);
    writeFileSync(`${dir}/huge.crt`, Buffer.alloc(1024 * 1024 + 1, 0x41));
    expect(p(`postgres://u@h/db?sslmode=verify-ca&sslrootcert=${dir}/huge.crt`)[0]).to.match(/huge\.crt: it holds more than 1 MiB, which is no certificate or key file$/);
    expect(p(undefined, { PGSSLMODE: 'require', PGSSLCERT: '/dev/zero' })).to.deep.equal(['PGSSLCERT: cannot read sslcert /dev/zero: not a regular file']);
    expect(p(undefined, { PGSSLMODE: 'verify-ca' })).to.deep.equal(['PGSSLMODE: sslmode=verify-ca needs sslrootcert: the file of the CA certificate that signed the server certificate']);
    expect(p('postgres://u@h/db', { PGSSLMODE: 'bogus' })[0]).to.match(/^PGSSLMODE: sslmode "bogus"/);
    for (const mode of ['disable', 'allow', 'prefer', 'require', 'verify-full']) expect(p(`postgres://u@h/db?sslmode=${mode}`), mode).to.deep.equal([]);
  });

  it('the flags and the targets file are refused with those problems, every one listed', async () => {
    const flagProblems = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
      try {
        parseExporterOptions(argv, env, '0.1.0');
        return [];
      } catch (e) {
        if (e instanceof ValidationError) return e.problems.map((x) => `${x.path}: ${x.message}`);
        throw e;
      }
    };
    expect(flagProblems(['--url', 'postgres://u@h/db?sslmode=verify-ca', '--const-labels', 'version=1'])).to.have.length(2);
    expect(flagProblems([], { PGSSLMODE: 'verify-ca' })[0]).to.match(/^PGSSLMODE: /);
    expect(flagProblems(['--url', `postgres://u@h/db?sslmode=verify-ca&sslrootcert=${ca}`])).to.deep.equal([]);

    const targets = join(dir, 'targets.yml');
    writeFileSync(targets, ['targets:', '  a:', '    url: postgres://u@h/db?sslmode=verify-ca', '  b:', '    url: postgres://u@h/db?sslmode=requir', '  c:', `    url: postgres://u@h/db?sslmode=require&sslrootcert=${ca}`, ''].join('\n'));
    let found: string[] = [];
    try {
      await loadExporterFiles(parseExporterOptions([`--targets=${targets}`], {}, '0.1.0'));
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      found = e.problems.map((x) => x.path);
    }
    expect(found).to.deep.equal([`${targets}.targets.a.url`, `${targets}.targets.b.url`]);
  });
});

describe("exporter: a target's constant labels", () => {
  it("override the exporter's --const-labels of the same name (one label, the target's value)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-targets-'));
    try {
      const targets = join(dir, 'targets.yml');
      writeFileSync(targets, ['targets:', '  orders:', '    url: postgres://u@h/db', '    const_labels: {env: staging, cluster: orders}', ''].join('\n'));
      const files = await loadExporterFiles(parseExporterOptions([`--targets=${targets}`, '--const-labels', 'env=prod,dc=a'], {}, '0.1.0'));
      expect(files.targets[0]!.settings.constLabels).to.deep.equal([
        ['env', 'staging'],
        ['dc', 'a'],
        ['cluster', 'orders'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are refused when named like a label of the exporter', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-targets-'));
    try {
      const targets = join(dir, 'targets.yml');
      writeFileSync(targets, ['targets:', '  orders:', '    url: postgres://u@h/db', '    const_labels: {revision: x, major: y}', ''].join('\n'));
      let found: string[] = [];
      try {
        await loadExporterFiles(parseExporterOptions([`--targets=${targets}`], {}, '0.1.0'));
      } catch (e) {
        if (!(e instanceof ValidationError)) throw e;
        found = e.problems.map((x) => `${x.path}: ${x.message}`);
      }
      expect(found).to.have.length(2);
      expect(found[0]).to.match(/targets\.orders\.const_labels\.revision: label revision is one the exporter sets itself/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
