/**
 * The exporter's connections to a real PostgreSQL 15: sslmode as libpq means it against a
 * server whose certificate comes from a private CA, and queries that queue on a discovered
 * database's single connection.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { PgSqlClient } from '../../../src/adapters/sql/pg-sql-client.js';
import { SqlError } from '../../../src/domain/collectors/sql-error.js';
import { makeCertificates } from '../../support/pg-certificates.js';
import { destroyAllServers, makeBaseDir, startPrimary, type PgServer } from '../../support/postgres-server.js';
import { MemoryLogger } from '../../unit/collectors/fakes.js';
import { startTestExporterAt, waitFor } from './fixture.js';

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
