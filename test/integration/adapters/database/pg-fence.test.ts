import { expect } from 'chai';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { PgFence } from '../../../../src/adapters/database/pg-fence.js';
import { assertPostgresBinaries, destroyAllServers, startPrimary, startReplica } from '../../../support/postgres-server.js';

describe('PgFence on real PostgreSQL: what a fence that fired lets run', function () {
  this.timeout(120_000);
  before(assertPostgresBinaries);
  after(destroyAllServers);

  it('tells a primary that takes writes from a hot standby (both say "ready" in postmaster.pid) and from a stopped server', async () => {
    const primary = await startPrimary();
    const replica = await startReplica(primary);
    const logger = new MemoryLogger();
    expect(await new PgFence(primary.dataDir, logger).primaryRunning()).to.equal(true);
    expect(await new PgFence(replica.dataDir, logger).primaryRunning()).to.equal(false);
    // A fence stops it; then nothing runs.
    expect(await new PgFence(primary.dataDir, logger).stop('immediate')).to.equal(true);
    expect(await new PgFence(primary.dataDir, logger).primaryRunning()).to.equal(false);
    // Promoted, the former standby is a primary.
    await replica.promote();
    expect(await new PgFence(replica.dataDir, logger).primaryRunning()).to.equal(true);
  });
});
