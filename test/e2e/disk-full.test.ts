import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { postgresIds, type ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep, waitFor } from '../../scripts/lib/processes.js';
import { api, disposeE2eCluster, e2eRunner, sql, startClusterLedBy, suiteFailed, Writer } from './e2e-cluster.js';

/** MiB used on the file system mounted at `path`. */
function usedMiB(path: string): number {
  return Number(execFileSync('df', ['--output=used', '-BM', path], { encoding: 'utf8' }).split('\n')[1]!.trim().replace('M', ''));
}

/**
 * The primary's disk fills up in synchronous mode: PostgreSQL cannot write WAL and stops, and
 * every start fails. Its synchronous standby holds every commit it acknowledged, so its agent
 * gives the leader key up after the second failed start instead of holding it for
 * primary_start_timeout (300 s here, the default). Once there is room again the old primary
 * rejoins. The primary's data directory is a size-limited tmpfs (needs root, as the other
 * real-process suites). Real etcd, agents and PostgreSQL 15.
 */
describe('e2e: the primary\'s disk fills up (synchronous mode)', function () {
  this.timeout(300_000);
  let runner: ClusterRunner;
  let mountPoint: string | null = null;

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    this.timeout(240_000);
    runner = await e2eRunner({ scope: 'diskfull', dcs: { synchronous_mode: true } });
    runner.prepare(true);
    const dataDir = join(runner.layout.dir, 'node1', 'data');
    mkdirSync(dataDir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m,mode=0700', 'tmpfs', dataDir]);
    mountPoint = dataDir;
    const ids = postgresIds()!;
    chownSync(dataDir, ids.uid, ids.gid);
    // node1 starts alone, so its data (on the small disk) is the primary's.
    await startClusterLedBy(runner, 'node1');
  });

  after(async function () {
    this.timeout(120_000);
    if (!runner) return;
    await runner.down();
    if (mountPoint !== null) execFileSync('umount', [mountPoint]);
    await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('fails over after the second failed start, with every acknowledged write; the old primary rejoins once there is room', async () => {
    await sql(runner, 'node1', 'CREATE TABLE e2e_writes (id bigint PRIMARY KEY, at timestamptz DEFAULT now())');
    await sql(runner, 'node1', 'CREATE TABLE filler (b text)');
    await waitFor('a synchronous standby', 30_000, async () => ((await api(runner, 'node1', 'GET', '/cluster')).body.members as { role: string }[]).some((m) => m.role === 'sync_standby') || undefined, 200);
    // Room for a few dozen MB more: the filler reaches the end within seconds.
    execFileSync('mount', ['-o', `remount,size=${usedMiB(mountPoint!) + 48}m`, mountPoint!]);
    const writer = new Writer(runner, 20);
    writer.start();
    const deadline = Date.now() + 90_000;
    let fillerError = '';
    while (Date.now() < deadline) {
      try {
        await sql(runner, 'node1', "INSERT INTO filler SELECT repeat(md5(random()::text), 300) FROM generate_series(1, 2000)");
      } catch (e) {
        fillerError = (e as Error).message;
        break;
      }
    }
    expect(fillerError, 'the primary stopped taking writes').to.not.equal('');
    const leader = await waitFor('another member writable', 60_000, async () => {
      for (const n of ['node2', 'node3']) {
        const doc = (await api(runner, n, 'GET', '/node').catch(() => null))?.body as { role?: string; state?: string } | undefined;
        if (doc?.role === 'primary' && doc.state === 'running') return n;
      }
      return undefined;
    }, 200);
    await sleep(3000);
    await writer.stop();
    console.log(`      filler stopped by: ${fillerError.slice(0, 120)}; longest write gap ${writer.maxGapMs} ms; ${writer.acknowledged.length} writes acknowledged; new primary ${leader}`);
    expect(writer.maxGapMs, 'no write for longer than this (ms)').to.be.below(30_000);
    const stored = await sql(runner, leader, 'SELECT count(*)::int AS n FROM e2e_writes WHERE id = ANY($1)', [writer.acknowledged]);
    expect(stored.rows[0].n, 'acknowledged writes on the new primary').to.equal(writer.acknowledged.length);
    const log = readFileSync(join(runner.layout.dir, 'logs', 'node1.log'), 'utf8');
    expect(log).to.match(/the primary failed to start 2 times in a row and its synchronous standbys \([a-z0-9, ]+\) hold every commit it acknowledged: giving the key up to fail over/);

    // Room again: the old primary follows the new one (rewound if its WAL went past the branch point). A pg_rewind that the
    // full disk stopped mid-way leaves a directory only a rebuild repairs: the agent asks for it, and the operator runs it.
    execFileSync('mount', ['-o', 'remount,size=2g', mountPoint!]);
    const rejoined = await waitFor('node1 streaming, or asking for a rebuild', 120_000, async () => {
      const doc = (await api(runner, 'node1', 'GET', '/node').catch(() => null))?.body as { role?: string; replication_state?: string; reinitialize_required?: string } | undefined;
      if (doc?.role === 'replica' && doc.replication_state === 'streaming') return 'streaming';
      if (doc?.reinitialize_required) return 'reinitialize';
      // A start held back by its growing pauses: the operator's restart starts it now, as the runbook says.
      await api(runner, 'node1', 'POST', '/restart', {}).catch(() => undefined);
      await sleep(2000);
      return undefined;
    }, 500);
    console.log(`      old primary once there was room: ${rejoined}`);
    if (rejoined === 'reinitialize') {
      expect((await api(runner, 'node1', 'POST', '/reinitialize', { force: true })).status).to.equal(200);
      await runner.waitHealthy(120_000);
    }
    await waitFor('node1 holding every acknowledged write', 60_000, async () => {
      const r = await sql(runner, 'node1', 'SELECT count(*)::int AS n FROM e2e_writes WHERE id = ANY($1)', [writer.acknowledged]).catch(() => null);
      return r?.rows[0].n === writer.acknowledged.length || undefined;
    }, 500);
  });
});
