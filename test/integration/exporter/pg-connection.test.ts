/**
 * The exporter's connections to a real PostgreSQL 15: sslmode as libpq means it against a
 * server whose certificate comes from a private CA, and queries that queue on a discovered
 * database's single connection.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PgSqlClient } from '../../../src/adapters/sql/pg-sql-client.js';
import { SqlError } from '../../../src/domain/collectors/sql-error.js';
import { destroyAllServers, makeBaseDir, PG_OS_USER, startPrimary, type PgServer } from '../../support/postgres-server.js';
import { MemoryLogger } from '../../unit/collectors/fakes.js';
import { startTestExporterAt, waitFor } from './fixture.js';

/** A CA, a server certificate it signed for the name db.invalid (not the 127.0.0.1 the tests connect to), and a CA that signed nothing. */
function makeCertificates(dir: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=warden test CA');
  openssl('req', '-x509', ...ec, '-keyout', 'other-ca.key', '-out', 'other-ca.crt', '-days', '2', '-subj', '/CN=another CA');
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=db.invalid');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:db.invalid\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext');
  // PostgreSQL reads its key only when the server's user owns it and no one else may read it.
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(execFileSync('id', [flag, PG_OS_USER]).toString().trim());
    for (const f of ['server.crt', 'server.key']) chownSync(join(dir, f), id('-u'), id('-g'));
  }
}

describe('exporter: PostgreSQL connections (real PostgreSQL 15): sslmode as libpq means it, queries queued on a one-connection database', function () {
  this.timeout(120_000);
  let tlsServer: PgServer;
  let plainServer: PgServer;
  let certs: string;
  const clients: PgSqlClient[] = [];
  const logger = new MemoryLogger();

  const client = (url: string, over: Partial<ConstructorParameters<typeof PgSqlClient>[0]> = {}) => {
    const c = new PgSqlClient({ url, connectTimeoutMs: 2_000, maxConnections: 3, applicationName: 'warden-exporter-test', logger, env: {}, ...over });
    clients.push(c);
    return c;
  };
  /** Whether the connection of `url` is encrypted (pg_stat_ssl), or the error it fails with. */
  const encrypted = async (url: string): Promise<boolean | SqlError> => {
    try {
      const r = await client(url).query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()', { timeoutMs: 5_000 });
      return r.rows[0]![0] === 't';
    } catch (e) {
      if (e instanceof SqlError) return e;
      throw e;
    }
  };
  const at = (server: PgServer, params: string) => `postgres://postgres@127.0.0.1:${server.port}/postgres?${params}`;

  before(async () => {
    certs = await makeBaseDir();
    makeCertificates(certs);
    [tlsServer, plainServer] = await Promise.all([
      startPrimary({ parameters: { ssl: true, ssl_cert_file: join(certs, 'server.crt'), ssl_key_file: join(certs, 'server.key') } }),
      startPrimary(),
    ]);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await destroyAllServers();
    execFileSync('rm', ['-rf', certs]);
  });

  it('sslmode=require connects to a server whose certificate comes from a private CA, encrypted', async () => {
    expect(await encrypted(at(tlsServer, 'sslmode=require'))).to.equal(true);
  });

  it('sslmode=verify-full without the CA refuses the certificate', async () => {
    const r = await encrypted(at(tlsServer, 'sslmode=verify-full'));
    expect(r).to.be.instanceOf(SqlError);
    expect((r as SqlError).code).to.equal('sql_unavailable');
    expect((r as SqlError).message).to.match(/certificate/i);
  });

  it('sslmode=verify-ca with sslrootcert connects (the chain is checked, the host name is not); verify-full with it refuses the name', async () => {
    expect(await encrypted(at(tlsServer, `sslmode=verify-ca&sslrootcert=${join(certs, 'ca.crt')}`))).to.equal(true);
    const full = await encrypted(at(tlsServer, `sslmode=verify-full&sslrootcert=${join(certs, 'ca.crt')}`));
    expect(full).to.be.instanceOf(SqlError);
    expect((full as SqlError).message).to.match(/db\.invalid|altnames|host/i);
  });

  it('sslmode=require with the sslrootcert of another CA refuses the certificate, as libpq does', async () => {
    const r = await encrypted(at(tlsServer, `sslmode=require&sslrootcert=${join(certs, 'other-ca.crt')}`));
    expect(r).to.be.instanceOf(SqlError);
  });

  it('sslmode=disable connects without TLS; sslmode=prefer uses TLS when the server has it and falls back when it has not', async () => {
    expect(await encrypted(at(tlsServer, 'sslmode=disable'))).to.equal(false);
    expect(await encrypted(at(tlsServer, 'sslmode=prefer'))).to.equal(true);
    expect(await encrypted(at(plainServer, 'sslmode=prefer'))).to.equal(false);
    expect(logger.lines.some((l) => l.msg.startsWith('the server offers no TLS'))).to.equal(true);
    const required = await encrypted(at(plainServer, 'sslmode=require'));
    expect(required).to.be.instanceOf(SqlError);
  });

  it('PGSSLMODE applies when the URL has no sslmode', async () => {
    const c = client(`postgres://postgres@127.0.0.1:${tlsServer.port}/postgres`, { env: { PGSSLMODE: 'require' } });
    const r = await c.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()', { timeoutMs: 5_000 });
    expect(r.rows[0]![0]).to.equal('t');
  });

  it('the exporter serves db_up 1 over sslmode=require', async () => {
    const exporter = await startTestExporterAt(at(tlsServer, 'sslmode=require'));
    try {
      const up = await waitFor(async () => /^db_up 1$/m.test(await (await fetch(`${exporter.url}/metrics`)).text()), 20_000);
      expect(up, 'db_up 1').to.equal(true);
    } finally {
      await exporter.stop();
    }
  });

  it('two queries on a one-connection database both succeed when the first takes longer than the connect timeout', async () => {
    await plainServer.psql('CREATE DATABASE app');
    const c = client(at(plainServer, 'sslmode=disable'), { connectTimeoutMs: 200 });
    const slow = c.query('SELECT pg_sleep(0.8)', { timeoutMs: 5_000, database: 'app' });
    // The second asks while the first holds the database's only connection.
    await new Promise((r) => setTimeout(r, 100));
    const started = performance.now();
    const [a, b] = await Promise.all([slow, c.query('SELECT 42', { timeoutMs: 5_000, database: 'app' })]);
    expect(a.rows).to.have.length(1);
    expect(b.rows).to.deep.equal([['42']]);
    expect(performance.now() - started, 'the second waited for the first').to.be.greaterThan(500);
    const connections = await plainServer.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = 'app' AND application_name = 'warden-exporter-test'");
    expect(Number(connections)).to.be.at.most(1);
  });
});
