/**
 * The agent's own connections to a real PostgreSQL 15 as libpq's default sslmode=prefer makes
 * them: TLS where the server offers it (a `hostssl`-only rule for the node's address lets the
 * agent in), plain where it offers none or its rules refuse TLS, none on a Unix socket.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';
import { PgSession, withClient } from '../../../../src/adapters/database/pg-session.js';
import { makeCertificates } from '../../../support/pg-certificates.js';
import { destroyAllServers, makeBaseDir, startPrimary, type PgServer } from '../../../support/postgres-server.js';

const LIMITS = { connectTimeoutMs: 5000, statementTimeoutMs: 5000 };
const ENCRYPTED = 'SELECT ssl::text AS ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()';

describe('agent connections to PostgreSQL 15: TLS when the server offers it, as libpq prefers', function () {
  this.timeout(120_000);
  let certs: string;
  let tlsOnly: PgServer;
  let plainOnly: PgServer;
  let noTls: PgServer;
  const sessions: PgSession[] = [];

  const session = (host: string, port: number) => {
    const s = new PgSession(() => ({ host, port, user: 'postgres' }), LIMITS, new NullLogger());
    sessions.push(s);
    return s;
  };
  const ssl = async (s: PgSession) => (await s.query<{ ssl: string }>(ENCRYPTED))[0]!.ssl;

  before(async () => {
    certs = await makeBaseDir();
    makeCertificates(certs);
    const tls = { ssl: true, ssl_cert_file: join(certs, 'server.crt'), ssl_key_file: join(certs, 'server.key') };
    [tlsOnly, plainOnly, noTls] = await Promise.all([
      // The production guide's rules: TCP from the node's address only over TLS.
      startPrimary({ parameters: tls, hba: ['hostnossl all all 127.0.0.1/32 reject', 'hostssl all all 127.0.0.1/32 trust'] }),
      startPrimary({ parameters: tls, hba: ['hostssl all all 127.0.0.1/32 reject', 'hostnossl all all 127.0.0.1/32 trust'] }),
      startPrimary(),
    ]);
  });

  after(async () => {
    for (const s of sessions) s.close();
    await destroyAllServers();
    execFileSync('rm', ['-rf', certs]);
  });

  it('connects over TLS to a server whose rules take only TLS (its certificate from a private CA, for another name)', async () => {
    expect(await ssl(session('127.0.0.1', tlsOnly.port))).to.equal('true');
    const viaShortLived = await withClient({ host: '127.0.0.1', port: tlsOnly.port, user: 'postgres' }, LIMITS, async (c) => (await c.query(ENCRYPTED)).rows[0].ssl);
    expect(viaShortLived).to.equal('true');
  });

  it('connects without TLS where the rules refuse it, and to a server without TLS', async () => {
    expect(await ssl(session('127.0.0.1', plainOnly.port))).to.equal('false');
    expect(await ssl(session('127.0.0.1', noTls.port))).to.equal('false');
    // Again, now that the plain way is the one tried first for these servers.
    expect(await ssl(session('127.0.0.1', noTls.port))).to.equal('false');
  });

  it('takes no TLS on a Unix socket', async () => {
    expect(await ssl(session(tlsOnly.socketDir, tlsOnly.port))).to.equal('false');
  });
});
