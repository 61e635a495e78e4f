/**
 * db.use_unix_socket on a real PostgreSQL 15 server: the agent's own sessions go over the
 * server's Unix socket, so a superuser without a password logs in by peer authentication and
 * no loopback line trusts it; a server with no socket directory is reached over TCP, said once.
 */
import { expect } from 'chai';
import pg from 'pg';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { destroyNodes, makeNode, probeUntil, sql, type TestNode } from './pg-test-nodes.js';

const START_MS = 30_000;

async function overTcp(n: TestNode): Promise<unknown> {
  const c = new pg.Client({ host: '127.0.0.1', port: n.port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 5000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.end();
    return null;
  } catch (e) {
    return e;
  }
}

describe('PgDatabase: db.use_unix_socket (real PostgreSQL 15)', function () {
  this.timeout(90_000);
  after(destroyNodes);

  it('a superuser without a password: the agent logs in over the socket by peer authentication; TCP trusts nobody', async () => {
    // The tests run as root and the server as postgres: a map lets root in as postgres, as an operator's pg_ident would.
    const n = await makeNode('socket', { superuser: { username: 'postgres' }, replication: { username: 'replicator' } }, {
      useUnixSocket: true,
      pgIdent: ['agent root postgres', 'agent postgres postgres'],
      pgHba: ['local all postgres peer map=agent'],
    });
    await n.db.initdb();
    await n.db.start({ upstream: null, timeoutMs: START_MS });
    await probeUntil(n, (f) => f.state === 'running' && f.inRecovery === false);
    const sessions = await sql<{ client_addr: string | null }>(n, "SELECT client_addr::text FROM pg_stat_activity WHERE application_name = 'warden'", [], n.baseDir);
    expect(sessions.length, "the agent's session").to.be.at.least(1);
    expect(sessions.every((s) => s.client_addr === null), 'over the Unix socket').to.equal(true);
    const refused = await overTcp(n);
    expect(String((refused as Error | null)?.message), 'no loopback trust line for the superuser').to.match(/no pg_hba\.conf entry/);
    await n.db.stop('fast');
  });

  it('a server listening on no socket directory is reached over TCP, and the log says so once', async () => {
    const logger = new MemoryLogger();
    const n = await makeNode('no-socket', { superuser: { username: 'postgres', password: 'pw' }, replication: { username: 'replicator', password: 'rpw' } }, {
      useUnixSocket: true,
      logger,
      localParameters: { unix_socket_directories: '', shared_buffers: '16MB', max_connections: 30, fsync: false },
    });
    await n.db.initdb();
    await n.db.start({ upstream: null, timeoutMs: START_MS });
    await probeUntil(n, (f) => f.state === 'running' && f.inRecovery === false);
    n.db.close();
    await probeUntil(n, (f) => f.state === 'running');
    const said = logger.messages('warn').filter((m) => /use_unix_socket is set but the server listens on no Unix socket directory/.test(m));
    expect(said).to.have.length(1);
    await n.db.stop('fast');
  });
});
