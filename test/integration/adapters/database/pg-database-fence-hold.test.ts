/**
 * PgDatabase and the fencer's hold on real PostgreSQL 15: a restart whose stop the fencer
 * overtook (the agent froze or was cut off during the stop) does not start the server; the
 * agent's next start decides its role and lifts the hold.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { serverProcessesInDataDir } from '../../../../src/adapters/database/data-dir-processes.js';
import { FENCE_HOLD_FILE, placeFenceHold } from '../../../../src/adapters/database/fence-hold.js';
import { pathExists } from '../../../../src/adapters/database/path-exists.js';
import { defaultRunAsUser } from '../../../../src/adapters/database/pg-options.js';
import { DatabaseError } from '../../../../src/domain/errors.js';
import { destroyNodes, makeNode, sql, type TestNode } from './pg-test-nodes.js';

const START_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The PID of the server process whose title names `role` (e.g. checkpointer). */
async function serverProcess(node: TestNode, role: string): Promise<number> {
  for (const pid of await serverProcessesInDataDir(node.dataDir)) {
    if ((await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes(role)) return pid;
  }
  throw new Error(`no ${role} process`);
}

describe("PgDatabase: the fencer's hold (real PostgreSQL 15)", function () {
  this.timeout(90_000);
  let n: TestNode;

  before(async () => {
    n = await makeNode('held', { superuser: { username: 'postgres' }, replication: { username: 'replicator' } });
    await n.db.initdb();
    await n.db.start({ upstream: null, timeoutMs: START_MS });
  });
  after(destroyNodes);

  it('a restart whose stop the fencer overtook fails (restart_failed) and starts nothing; a start as primary then lifts the hold', async () => {
    // The shutdown checkpoint waits while the checkpointer is stopped: the restart's stop is slow.
    const checkpointer = await serverProcess(n, 'checkpointer');
    process.kill(checkpointer, 'SIGSTOP');
    const restart = n.db.restart(START_MS).then(() => null, (e: unknown) => e);
    try {
      await sleep(500);
      // What the fencer does when the lease runs out meanwhile (it then stops the server too).
      expect(await placeFenceHold(n.dataDir, defaultRunAsUser())).to.equal('placed');
    } finally {
      process.kill(checkpointer, 'SIGCONT');
    }
    const error = await restart;
    expect(error).to.be.instanceOf(DatabaseError);
    expect((error as DatabaseError).code).to.equal('restart_failed');
    expect((error as Error).message).to.match(/the fencer stopped this server during the restart/);
    expect((await n.db.probe()).running, 'nothing started').to.equal(false);
    expect(await pathExists(join(n.dataDir, 'standby.signal'))).to.equal(true);

    await n.db.start({ upstream: null, timeoutMs: START_MS });
    const [row] = await sql<{ r: boolean }>(n, 'SELECT pg_is_in_recovery() AS r');
    expect(row!.r, 'the primary the agent decided').to.equal(false);
    expect(await pathExists(join(n.dataDir, FENCE_HOLD_FILE))).to.equal(false);
    // With no hold placed during it, a restart is a restart.
    await n.db.restart(START_MS);
    expect((await n.db.probe()).inRecovery).to.equal(false);
  });
});
