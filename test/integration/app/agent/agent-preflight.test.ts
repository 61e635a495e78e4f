import { expect } from 'chai';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix, ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { assertPostgresBinaries } from '../../../support/postgres-server.js';
import { spawnAgent, until, writeNodeConfig } from './agent-binary.js';

/** The log lines of an agent that are JSON. */
const jsonLines = (lines: readonly string[]) => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: string; msg: string; component?: string });

describe('agent: checks before it starts, and failures that repeat', function () {
  this.timeout(120_000);
  let etcd: EtcdServer;
  const cleanups: (() => Promise<void>)[] = [];

  before(async () => {
    await assertPostgresBinaries();
    etcd = await startEtcd();
  });
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await etcd?.cleanup();
  });

  async function initializeKey(scope: string): Promise<string | undefined> {
    const kv = new Etcd3KeyValue({ hosts: [etcd.host], prefix: clusterPrefix('/service', scope), retryTimeoutMs: 5000 });
    try {
      return (await kv.readAll()).get(ClusterKey.initialize)?.value;
    } finally {
      await kv.close();
    }
  }

  it('a wrong bin_dir exits 2 at once with one clear error, before touching etcd or the data directory', async () => {
    const files = await writeNodeConfig(etcd, 'itest-preflight1', { db: '  bin_dir: /usr/lib/postgresql/99/bin' });
    const started = Date.now();
    const a = spawnAgent(files, cleanups);
    expect(await a.exited).to.equal(2);
    expect(Date.now() - started).to.be.below(10_000);
    const err = a.lines.filter((l) => l.startsWith('stderr: ')).join('');
    expect(err).to.match(/invalid configuration .*node\.yml \(checked on this machine\):/);
    expect(err).to.match(/- db\.bin_dir: \/usr\/lib\/postgresql\/99\/bin is not a directory/);
    expect(await initializeKey('itest-preflight1')).to.equal(undefined);
  });

  it('a file with problems of its own gets the machine checks too: one start lists every problem', async () => {
    const files = await writeNodeConfig(etcd, 'itest-preflight5', { db: '  bin_dir: /usr/lib/postgresql/99/bin\n  pg_hba: 5' });
    const a = spawnAgent(files, cleanups);
    expect(await a.exited).to.equal(2);
    const err = a.lines.filter((l) => l.startsWith('stderr: ')).join('');
    expect(err).to.match(/- db\.pg_hba: /);
    expect(err).to.match(/- db\.bin_dir: \/usr\/lib\/postgresql\/99\/bin is not a directory/);
  });

  it('lists every problem: programs missing from bin_dir, and a data directory with the wrong owner and mode', async function () {
    if (process.getuid?.() !== 0) this.skip();
    const files = await writeNodeConfig(etcd, 'itest-preflight2', { db: `  bin_dir: /usr/lib/postgresql/15/lib` });
    // Root-owned and open to everyone: PostgreSQL (run as postgres) would refuse it.
    await mkdir(files.dataDir, { recursive: true });
    await writeFile(join(files.dataDir, 'PG_VERSION'), '15\n');
    await chmod(files.dataDir, 0o755);
    const a = spawnAgent(files, cleanups);
    expect(await a.exited).to.equal(2);
    const err = a.lines.filter((l) => l.startsWith('stderr: ')).join('');
    expect(err).to.match(/db\.bin_dir: \/usr\/lib\/postgresql\/15\/lib lacks postgres, pg_ctl, initdb, pg_controldata, pg_basebackup, pg_rewind/);
    expect(err).to.match(/db\.data_dir: .* is owned by uid 0, not by postgres: PostgreSQL refuses to run on it/);
    expect(err).to.match(/db\.data_dir: .* has mode 755: PostgreSQL refuses/);
  });

  it("a data directory holding somebody else's files: exits 2 naming them, and deletes nothing", async () => {
    const files = await writeNodeConfig(etcd, 'itest-preflight4', {});
    await mkdir(files.dataDir, { recursive: true });
    await writeFile(join(files.dataDir, 'junk.txt'), 'not a database\n');
    await mkdir(join(files.dataDir, 'lost+found'));
    const a = spawnAgent(files, cleanups);
    expect(await a.exited).to.equal(2);
    const err = a.lines.filter((l) => l.startsWith('stderr: ')).join('');
    expect(err).to.match(/db\.data_dir: .* holds no PostgreSQL data but is not empty \(junk\.txt, lost\+found\): Warden builds a database only in an empty directory/);
    expect(await readFile(join(files.dataDir, 'junk.txt'), 'utf8')).to.equal('not a database\n');
    expect(await initializeKey('itest-preflight4')).to.equal(undefined);
  });

  it('a bootstrap that keeps failing backs off exponentially with one log line per attempt, and says what it waits for on /node', async () => {
    // An initdb option PostgreSQL rejects: nothing a check before the start can know.
    const files = await writeNodeConfig(etcd, 'itest-backoff', { dcs: '{ttl: 20, loop_wait: 1, retry_timeout: 5}', initdb: '[{encoding: NO_SUCH_ENCODING}]' });
    const a = spawnAgent(files, cleanups);
    await until('a second failure', async () => jsonLines(a.lines).filter((l) => l.msg.startsWith('bootstrap failed')).length >= 2, 30_000);
    // /node shows it from the next snapshot, published right after the failure (a moment after its log line).
    let waiting: { waiting_for?: string } = {};
    await until('/node to say what it waits for', async () => {
      waiting = (await (await fetch(`${a.apiUrl}/node`)).json()) as { waiting_for?: string };
      return /^the next attempt to bootstrap \(failed [23] times in a row: /.test(waiting.waiting_for ?? '');
    }, 2000);
    expect(waiting.waiting_for).to.match(/^the next attempt to bootstrap \(failed [23] times in a row: initdb: .*\)$/);
    await new Promise((r) => setTimeout(r, 8000));
    expect(a.child.exitCode).to.equal(null);
    const failures = jsonLines(a.lines).filter((l) => l.msg.startsWith('bootstrap failed'));
    // loop_wait 1: attempts about 1, 2, 4 s apart: 3 or 4 in those ~10 s, not dozens.
    expect(failures.length).to.be.within(3, 4);
    expect(failures[0]!.msg).to.match(/^bootstrap failed \(attempt 1\); next attempt in 1 s: initdb: .*NO_SUCH_ENCODING/);
    expect(failures[2]!.msg).to.match(/^bootstrap failed \(attempt 3\); next attempt in 4 s/);
    // One warning per attempt, nothing else at warn or error level (but a fencer that starts slowly on a loaded machine,
    // the start's warnings about this test's passwordless configuration, and an etcd release whose watch progress
    // answers are not trusted, which are not what this test is about).
    const loud = jsonLines(a.lines).filter(
      (l) =>
        (l.level === 'warn' || l.level === 'error' || l.level === '40' || l.level === '50') &&
        l.component !== 'fencer-client' &&
        !/has no password|watch progress request ahead/.test(l.msg),
    );
    expect(loud.map((l) => l.msg)).to.deep.equal(failures.map((l) => l.msg));
  });
});
