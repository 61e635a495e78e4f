import { expect } from 'chai';
import { destroyAllServers, pidAlive, startPrimary, startReplica, type PgServer } from '../../support/postgres-server.js';

describe('test harness: real PostgreSQL 15 servers', function () {
  this.timeout(60_000);
  let primary: PgServer;
  let replica: PgServer;

  after(destroyAllServers);

  it('starts a primary and a streaming replica', async () => {
    primary = await startPrimary();
    expect(primary.pid).to.be.greaterThan(0);
    expect(await primary.psql('SELECT pg_is_in_recovery()')).to.equal('f');
    replica = await startReplica(primary);
    expect(await replica.psql('SELECT pg_is_in_recovery()')).to.equal('t');
    // The harness runs with synchronous_commit off: this row must survive the kill -9 below.
    await primary.psql('SET synchronous_commit = on; CREATE TABLE t(x int); INSERT INTO t VALUES (1)');
    for (let i = 0; i < 100 && (await primary.psql('SELECT count(*) FROM pg_stat_replication')) !== '1'; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await primary.psql("SELECT state FROM pg_stat_replication")).to.equal('streaming');
  });

  it('promotes the replica and stops servers by PID', async () => {
    await replica.promote();
    expect(await replica.psql('SELECT pg_is_in_recovery()')).to.equal('f');
    primary.kill9();
    await primary.start(); // restarts over the crash leftovers
    expect(await primary.psql('SELECT count(*) FROM t')).to.equal('1');
    const pid = primary.pid;
    await primary.stop('fast');
    expect(pidAlive(pid)).to.equal(false);
    expect(primary.pid).to.equal(0);
  });
});
