import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readdirSync, readFileSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix, ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { assertPostgresBinaries, pidAlive } from '../../../support/postgres-server.js';
import { postmasterPid, spawnAgent, until, writeNodeConfig, type AgentProcess, type NodeFiles } from './agent-binary.js';

describe('agent: the warden binary and its signals', function () {
  this.timeout(180_000);
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

  async function startBinary(scope: string): Promise<AgentProcess> {
    const a = spawnAgent(await writeNodeConfig(etcd, scope), cleanups);
    await until('the agent to lead', async () => (await fetch(`${a.apiUrl}/primary`)).status === 200, 120_000);
    return a;
  }

  it('writes JSON logs; SIGTERM stops PostgreSQL cleanly, releases the leader key and exits 0', async () => {
    const a = await startBinary('itest-proc');
    const pgPid = postmasterPid(a.dataDir);
    expect(pgPid).to.be.above(0);
    // PostgreSQL's server log lives outside the data directory (a base backup never copies it, a reinitialize never deletes it).
    expect(readFileSync(`${a.dataDir}-log/postgresql.log`, 'utf8')).to.match(/database system is ready to accept connections/);
    expect(readdirSync(a.dataDir).filter((f) => /\.log$/.test(f) || f === 'log')).to.deep.equal([]);
    a.child.kill('SIGTERM');
    expect(await a.exited).to.equal(0);
    expect(pidAlive(pgPid)).to.equal(false);
    const json = a.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(json.length).to.be.above(2);
    expect(json.every((l) => typeof l['level'] === 'string' && typeof l['msg'] === 'string')).to.equal(true);
    expect(json.some((l) => l['msg'] === 'termination signal received')).to.equal(true);
    const dcs = new Etcd3KeyValue({ hosts: [etcd.host], prefix: clusterPrefix('/service', 'itest-proc'), retryTimeoutMs: 5000 });
    try {
      expect((await dcs.readAll()).get(ClusterKey.leader)).to.equal(undefined);
    } finally {
      await dcs.close();
    }
  });

  /**
   * A one-node cluster that bootstrapped and led, its agent stopped cleanly, then every key of
   * the cluster deleted from etcd (the runbook's "etcd lost all data"): its files, a client on
   * the cluster's keys (closed by the cleanups) and the system identifier of the data it left.
   */
  async function ledThenWiped(scope: string): Promise<{ files: NodeFiles; dcs: Etcd3KeyValue; sysid: string }> {
    const files = await writeNodeConfig(etcd, scope);
    const a = spawnAgent(files, cleanups);
    await until('the agent to lead', async () => (await fetch(`${a.apiUrl}/primary`)).status === 200, 120_000);
    const dcs = new Etcd3KeyValue({ hosts: [etcd.host], prefix: clusterPrefix('/service', scope), retryTimeoutMs: 5000 });
    cleanups.push(() => dcs.close());
    await until('the bootstrap to finish', async () => ((await dcs.readAll()).get(ClusterKey.initialize)?.value ?? '') !== '' && (await dcs.readAll()).has(ClusterKey.config), 30_000);
    const sysid = (await dcs.readAll()).get(ClusterKey.initialize)!.value;
    const pgPid = postmasterPid(a.dataDir);
    a.child.kill('SIGTERM');
    expect(await a.exited).to.equal(0);
    expect(pidAlive(pgPid)).to.equal(false);
    for (const key of (await dcs.readAll()).keys()) await dcs.delete(key);
    expect((await dcs.readAll()).size, 'etcd holds nothing of the cluster').to.equal(0);
    return { files, dcs, sysid };
  }

  it('all etcd data lost: restarted on its data, the agent registers that data in the initialize key and leads again, nothing recreated', async () => {
    const { files, dcs, sysid } = await ledThenWiped('itest-wiped');
    const b = spawnAgent(files, cleanups);
    await until('the restarted agent to lead', async () => (await fetch(`${b.apiUrl}/primary`)).status === 200, 120_000);
    await until('the initialize key and configuration registered', async () => (await dcs.readAll()).get(ClusterKey.initialize)?.value === sysid && (await dcs.readAll()).has(ClusterKey.config), 30_000);
    expect(b.lines.some((l) => l.includes('registering the system identifier'))).to.equal(true);
    expect(b.lines.some((l) => l.includes('bootstrapping a new cluster')), 'no new cluster over the data').to.equal(false);
  });

  it('etcd lost everything but an empty bootstrap claim: restarted on its data, the agent puts its system identifier in place of the claim after a ttl and leads again', async () => {
    const { files, dcs, sysid } = await ledThenWiped('itest-claimed');
    // What a bootstrapper that lost its lock before recording its system identifier leaves.
    expect(await dcs.create(ClusterKey.initialize, '')).to.be.a('string');
    const claimed = Date.now();
    const b = spawnAgent(files, cleanups);
    await until('the claim replaced by the system identifier', async () => (await dcs.readAll()).get(ClusterKey.initialize)?.value === sysid, 90_000);
    const replacedAfterMs = Date.now() - claimed;
    await until('the restarted agent to lead', async () => (await fetch(`${b.apiUrl}/primary`)).status === 200, 60_000);
    console.log(`      abandoned claim replaced ${replacedAfterMs} ms after the agent started (ttl 20)`);
    expect(replacedAfterMs, 'after one ttl, not two').to.be.within(20_000, 40_000);
    expect(b.lines.some((l) => l.includes('abandoned: registering the system identifier'))).to.equal(true);
    expect(b.lines.some((l) => l.includes('bootstrapping a new cluster')), 'no new cluster over the data').to.equal(false);
  });

  it('a log reader that stops reading holds nothing: the agent starts, leads past a ttl and answers its health checks, and its lines come out once read', async () => {
    const files = await writeNodeConfig(etcd, 'itest-stalled-log');
    // Standard output is a pipe already full that nobody reads, as into a stalled journald or a
    // container runtime's blocking log driver: every write() into it would wait.
    const fifo = join(files.baseDir, 'stdout.fifo');
    execFileSync('mkfifo', [fifo]);
    const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const agentEnd = openSync(fifo, constants.O_WRONLY);
    const fill = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const filler = Buffer.from('#'.repeat(4095) + '\n');
    let filled = 0;
    try {
      for (;;) filled += writeSync(fill, filler);
    } catch (e) {
      expect((e as NodeJS.ErrnoException).code).to.equal('EAGAIN');
    }
    closeSync(fill);
    cleanups.push(async () => closeSync(readEnd));
    const a = spawnAgent(files, cleanups, agentEnd);
    closeSync(agentEnd);
    await until('the agent to lead', async () => (await fetch(`${a.apiUrl}/primary`)).status === 200, 120_000);
    const pgPid = postmasterPid(a.dataDir);
    // A ttl (20 s) and more: an agent stuck in a write would be fenced and lose its lock well within it.
    const slowest = { ms: 0 };
    const holdUntil = Date.now() + 22_000;
    while (Date.now() < holdUntil) {
      const started = performance.now();
      const r = await fetch(`${a.apiUrl}/primary`);
      slowest.ms = Math.max(slowest.ms, performance.now() - started);
      expect(r.status, 'still the primary').to.equal(200);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(slowest.ms, 'health checks answered at once').to.be.below(1000);
    expect(postmasterPid(a.dataDir), 'the same server, never fenced').to.equal(pgPid);
    expect(a.child.exitCode).to.equal(null);
    // Read the pipe: the filler first, then the agent's lines, in order, none of them lost.
    const buf = Buffer.alloc(65536);
    let text = '';
    let hupSent = false;
    const deadline = Date.now() + 10_000;
    while (!text.includes('"msg":"SIGHUP') && Date.now() < deadline) {
      try {
        const n = readSync(readEnd, buf, 0, buf.length, null);
        text += buf.toString('utf8', 0, n);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
        if (text.length >= filled && !hupSent) {
          // Everything written so far is read: a line logged now must come out last.
          hupSent = true;
          a.child.kill('SIGHUP');
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const json = text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(text.startsWith('#'.repeat(4095))).to.equal(true);
    expect(json.some((l) => /log lines? lost/.test(String(l['msg'])))).to.equal(false);
    expect(json.length).to.be.above(5);
    expect(json[json.length - 1]!['msg']).to.match(/^SIGHUP/);
  });

  it('a second SIGTERM exits at once, while the clean shutdown is stuck', async () => {
    const a = await startBinary('itest-proc2');
    // A hung etcd keeps the clean shutdown waiting (releasing the leader key), as in a real outage.
    etcd.freeze();
    cleanups.push(async () => etcd.thaw());
    a.child.kill('SIGTERM');
    // Two signals sent back to back may merge into one: send the second once the first is being handled.
    await until('the first signal to be handled', async () => a.lines.some((l) => l.includes('termination signal received')), 10_000);
    a.child.kill('SIGTERM');
    const started = Date.now();
    const code = await a.exited;
    expect(code).to.equal(1);
    expect(Date.now() - started).to.be.below(3000);
    expect(a.lines.some((l) => l.includes('second termination signal'))).to.equal(true);
    etcd.thaw();
  });
});
