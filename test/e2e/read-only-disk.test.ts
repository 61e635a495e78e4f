import { execFileSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { chownSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { expect } from 'chai';
import { postgresIds, type ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep, waitFor } from '../../scripts/lib/processes.js';
import { api, disposeE2eCluster, e2eRunner, sql, startClusterLedBy, suiteFailed, Writer } from './e2e-cluster.js';

/** The block device behind the file system mounted at `path` (`/dev/loop3`). */
function sourceOf(path: string): string {
  return execFileSync('findmnt', ['-no', 'SOURCE', path], { encoding: 'utf8' }).trim();
}

/** Whether the file system at `path` is mounted read-only now (ext4's emergency remount shows as `ro` or `emergency_ro`). */
function readOnly(path: string): boolean {
  const options = execFileSync('findmnt', ['-no', 'OPTIONS', path], { encoding: 'utf8' }).trim().split(',');
  return options.includes('ro') || options.includes('emergency_ro');
}

/**
 * The primary's data disk turns read-only under load, as ext4 does after an I/O error
 * (`errors=remount-ro`): PostgreSQL cannot write WAL and stops, and no start can succeed.
 * In synchronous mode its synchronous standby holds every commit it acknowledged, so the
 * key goes to it after the second failed start. The data directory is never touched while
 * the disk is read-only; once the operator has checked and remounted it, the old primary
 * rejoins. The data directory is an ext4 image on a loop device, made read-only through
 * ext4's own error trigger (needs root, as the other real-process suites). Real etcd,
 * agents and PostgreSQL 15.
 */
describe("e2e: the primary's data disk turns read-only (synchronous mode)", function () {
  this.timeout(300_000);
  let runner: ClusterRunner;
  let mountPoint: string | null = null;
  let image: string | null = null;

  const mount = () => execFileSync('mount', ['-o', 'loop,errors=remount-ro', image!, mountPoint!]);

  /** The operator's repair: node1's agent stopped, the file system checked and mounted again, the agent started. */
  async function repairDisk(): Promise<void> {
    await runner.stopAgent('node1');
    execFileSync('umount', [mountPoint!]);
    try {
      execFileSync('e2fsck', ['-f', '-y', image!], { stdio: 'ignore' });
    } catch (e) {
      // Exit code 1: errors were corrected, which the triggered error leaves to correct.
      if ((e as { status?: number }).status !== 1) throw e;
    }
    mount();
    runner.startAgent('node1');
  }

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    try {
      execFileSync('losetup', ['-f'], { stdio: 'ignore' });
    } catch {
      // No loop device on this machine: nothing to mount the image on.
      this.skip();
    }
    this.timeout(240_000);
    runner = await e2eRunner({ scope: 'rodisk', dcs: { synchronous_mode: true } });
    runner.prepare(true);
    const dataDir = join(runner.layout.dir, 'node1', 'data');
    mkdirSync(dataDir, { recursive: true });
    image = join(runner.layout.dir, 'node1-data.ext4');
    writeFileSync(image, '');
    execFileSync('truncate', ['-s', '512M', image]);
    execFileSync('mkfs.ext4', ['-q', '-F', image]);
    mountPoint = dataDir;
    try {
      mount();
    } catch {
      // A machine that cannot mount a loop device (no loop module in a container): nothing to test on.
      mountPoint = null;
      this.skip();
    }
    // A fresh ext4 has lost+found: a data directory must hold nothing else when initdb runs.
    rmSync(join(dataDir, 'lost+found'), { recursive: true, force: true });
    const ids = postgresIds()!;
    chownSync(dataDir, ids.uid, ids.gid);
    // node1 starts alone, so its data (on the loop device) is the primary's.
    await startClusterLedBy(runner, 'node1');
  });

  after(async function () {
    this.timeout(120_000);
    if (!runner) return;
    await runner.down();
    if (mountPoint !== null) {
      try {
        execFileSync('umount', [mountPoint]);
      } catch {
        // Not mounted (the test failed between an unmount and its mount).
      }
    }
    await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('fails over after the second failed start with every acknowledged write, leaves the data alone, and the old primary rejoins once the disk is writable', async () => {
    await sql(runner, 'node1', 'CREATE TABLE e2e_writes (id bigint PRIMARY KEY, at timestamptz DEFAULT now())');
    await waitFor('a synchronous standby', 30_000, async () => ((await api(runner, 'node1', 'GET', '/cluster')).body.members as { role: string }[]).some((m) => m.role === 'sync_standby') || undefined, 200);
    const writer = new Writer(runner, 20);
    writer.start();
    await sleep(1500);
    const device = sourceOf(mountPoint!);
    const faultAt = Date.now();
    writeFileSync(`/sys/fs/ext4/${basename(device)}/trigger_fs_error`, '1');
    expect(readOnly(mountPoint!), 'the file system went read-only').to.equal(true);
    const leader = await waitFor('another member writable', 90_000, async () => {
      for (const n of ['node2', 'node3']) {
        const doc = (await api(runner, n, 'GET', '/node').catch(() => null))?.body as { role?: string; state?: string } | undefined;
        if (doc?.role === 'primary' && doc.state === 'running') return n;
      }
      return undefined;
    }, 200);
    const failedOverMs = Date.now() - faultAt;
    await sleep(3000);
    await writer.stop();
    console.log(`      read-only disk: ${leader} writable ${failedOverMs} ms after the fault; longest write gap ${writer.maxGapMs} ms; ${writer.acknowledged.length} writes acknowledged`);
    expect(writer.maxGapMs, 'no write for longer than this (ms)').to.be.below(60_000);
    const stored = await sql(runner, leader, 'SELECT count(*)::int AS n FROM e2e_writes WHERE id = ANY($1)', [writer.acknowledged]);
    expect(stored.rows[0].n, 'acknowledged writes on the new primary').to.equal(writer.acknowledged.length);
    const log = readFileSync(join(runner.layout.dir, 'logs', 'node1.log'), 'utf8');
    expect(log).to.match(/the primary failed to start 2 times in a row and its synchronous standbys \([a-z0-9, ]+\) hold every commit it acknowledged: giving the key up to fail over/);
    // A rewind is tried (the node was the primary of the old timeline) but refused before it touches anything; no rebuild.
    expect(log, 'no rewind ran on the read-only data').to.not.match(/"event":"rewind_finished"[^\n]*"ok":true/);
    expect(log, 'no rebuild of the read-only data').to.not.match(/"event":"basebackup_started"/);
    if (/"event":"rewind_started"/.test(log)) expect(log).to.match(/pg_rewind from node[23] not started: the data directory cannot be written/);

    await repairDisk();
    const rejoined = await waitFor('node1 streaming, or asking for a rebuild', 120_000, async () => {
      const doc = (await api(runner, 'node1', 'GET', '/node').catch(() => null))?.body as { role?: string; replication_state?: string; reinitialize_required?: string } | undefined;
      if (doc?.role === 'replica' && doc.replication_state === 'streaming') return 'streaming';
      if (doc?.reinitialize_required) return 'reinitialize';
      return undefined;
    }, 500);
    console.log(`      old primary once its disk was writable again: ${rejoined}`);
    expect(rejoined).to.equal('streaming');
    await waitFor('node1 holding every acknowledged write', 60_000, async () => {
      const r = await sql(runner, 'node1', 'SELECT count(*)::int AS n FROM e2e_writes WHERE id = ANY($1)', [writer.acknowledged]).catch(() => null);
      return r?.rows[0].n === writer.acknowledged.length || undefined;
    }, 500);
  });

  it("a replica's disk turns read-only: commits go on (another synchronous standby if it was the one), nothing is rebuilt, and it streams again once repaired", async () => {
    const primary = await runner.waitHealthy(60_000);
    expect(primary, 'node1 rejoined as a replica').to.not.equal('node1');
    const writer = new Writer(runner, 20);
    writer.start();
    await sleep(1500);
    const wasSync = ((await api(runner, primary, 'GET', '/cluster')).body.members as { name: string; role: string }[]).some((m) => m.name === 'node1' && m.role === 'sync_standby');
    const faultAt = Date.now();
    writeFileSync(`/sys/fs/ext4/${basename(sourceOf(mountPoint!))}/trigger_fs_error`, '1');
    // A replica notices when it next writes: the WAL it receives.
    await waitFor('node1 no longer streaming', 60_000, async () => {
      const doc = (await api(runner, 'node1', 'GET', '/node').catch(() => null))?.body as { replication_state?: string } | undefined;
      return doc?.replication_state !== 'streaming' || undefined;
    }, 200);
    await sleep(8000);
    await writer.stop();
    console.log(`      read-only replica disk (${wasSync ? 'the synchronous standby' : 'an asynchronous replica'}): longest write gap on the primary ${writer.maxGapMs} ms over ${Date.now() - faultAt} ms; ${writer.acknowledged.length} writes acknowledged`);
    expect(writer.maxGapMs, 'commits go on').to.be.below(20_000);
    expect(await runner.waitHealthy(5000, [primary]), 'the primary stays').to.equal(primary);
    const log = readFileSync(join(runner.layout.dir, 'logs', 'node1.log'), 'utf8').slice(-400_000);
    expect(log, 'no rebuild of the read-only data').to.not.match(/"event":"basebackup_started"/);

    await repairDisk();
    await waitFor('node1 streaming again', 120_000, async () => {
      const doc = (await api(runner, 'node1', 'GET', '/node').catch(() => null))?.body as { role?: string; replication_state?: string } | undefined;
      return (doc?.role === 'replica' && doc.replication_state === 'streaming') || undefined;
    }, 500);
    await waitFor('node1 holding every acknowledged write', 60_000, async () => {
      const r = await sql(runner, 'node1', 'SELECT count(*)::int AS n FROM e2e_writes WHERE id = ANY($1)', [writer.acknowledged]).catch(() => null);
      return r?.rows[0].n === writer.acknowledged.length || undefined;
    }, 500);
  });
});
