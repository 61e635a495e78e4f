import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { PgFence } from '../../../../src/adapters/database/pg-fence.js';
import { FENCE_HOLD_FILE } from '../../../../src/adapters/database/fence-hold.js';
import { defaultRunAsUser } from '../../../../src/adapters/database/pg-options.js';
import { osUserIds } from '../../../../src/adapters/database/owned-files.js';
import { assertPostgresBinaries, destroyAllServers, startPrimary, startReplica } from '../../../support/postgres-server.js';

const exists = (path: string) => access(path).then(() => true, () => false);

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

  it('says of a stopped server whether it ran in recovery, and the highest timeline of its data (a promotion raises it)', async () => {
    const primary = await startPrimary();
    const replica = await startReplica(primary);
    const logger = new MemoryLogger();
    const standbyFence = new PgFence(replica.dataDir, logger);
    expect(await standbyFence.stop('immediate')).to.equal(true);
    expect(await standbyFence.stoppedServer()).to.deep.equal({ inRecovery: true, timeline: 1 });
    const primaryFence = new PgFence(primary.dataDir, logger);
    expect(await primaryFence.stop('immediate')).to.equal(true);
    expect(await primaryFence.stoppedServer()).to.deep.equal({ inRecovery: false, timeline: 1 });
    // Promoted, then killed at once: out of recovery, on timeline 2.
    await replica.start();
    await replica.promote();
    expect(await standbyFence.stop('immediate')).to.equal(true);
    expect(await standbyFence.stoppedServer()).to.deep.equal({ inRecovery: false, timeline: 2 });
  });

  it('a fenced primary is held read-only: started again before the agent decides (a restart finishing late), it comes up in recovery', async () => {
    const primary = await startPrimary();
    // The harness commits asynchronously: this commit must be on disk before the crash.
    await primary.psql('SET synchronous_commit = on; CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
    // A replica's directory keeps its own standby.signal; no marker claims it for a primary's.
    const replica = await startReplica(primary);
    await new PgFence(replica.dataDir, new MemoryLogger(), defaultRunAsUser()).holdReadOnly();
    expect(await exists(join(replica.dataDir, FENCE_HOLD_FILE)), 'no marker in a replica').to.equal(false);
    const fence = new PgFence(primary.dataDir, new MemoryLogger(), defaultRunAsUser());
    await fence.holdReadOnly();
    // Placed under a running primary, the hold's standby.signal does not hide it from the fence.
    expect(await fence.primaryRunning(), 'started before the hold: still a primary').to.equal(true);
    expect(await fence.stop('immediate')).to.equal(true);
    expect(await exists(join(primary.dataDir, 'standby.signal'))).to.equal(true);
    expect(await exists(join(primary.dataDir, FENCE_HOLD_FILE))).to.equal(true);
    const owner = defaultRunAsUser();
    if (owner) expect((await stat(join(primary.dataDir, 'standby.signal'))).uid).to.equal((await osUserIds(owner)).uid);
    // postmaster.pid records its start to the second: one that started in the hold's second counts as started before it.
    await new Promise((r) => setTimeout(r, 1100));
    await primary.start();
    expect((await primary.psql('SELECT pg_is_in_recovery()')).trim()).to.equal('t');
    expect((await primary.psql('SELECT count(*) FROM t')).trim(), 'read-only, with its data').to.equal('1');
    expect(await fence.primaryRunning()).to.equal(false);
  });
});
