import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix, ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { assertPostgresBinaries, freePort, makeBaseDir, pidAlive, stopPostmasterOf } from '../../../support/postgres-server.js';

const BIN = fileURLToPath(new URL('../../../../bin/warden.js', import.meta.url));
const TTL = 20;
const MARGIN = 5;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(stepMs);
  }
}

/** A wait that, when it times out, says what the agent logged last (its folder is removed after the suite). */
async function watching<T>(node: { readonly log: string }, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (e) {
    const tail = existsSync(node.log) ? readFileSync(node.log, 'utf8').trimEnd().split('\n').slice(-40).join('\n') : '(no log)';
    throw new Error(`${(e as Error).message}; the agent's log ends:\n${tail}`);
  }
}

function postmasterPid(dataDir: string): number {
  const f = join(dataDir, 'postmaster.pid');
  return existsSync(f) ? Number(readFileSync(f, 'utf8').split('\n')[0]) : 0;
}

/** One node: an agent process (which starts its fencer), its PostgreSQL, its etcd prefix. */
interface Node {
  readonly child: ChildProcess;
  readonly dataDir: string;
  readonly socket: string;
  readonly url: string;
  readonly kv: Etcd3KeyValue;
  /** The agent's stdout and stderr. */
  readonly log: string;
}

describe('fencer: a separate process stops PostgreSQL when the agent cannot', function () {
  this.timeout(240_000);
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

  async function startNode(scope: string): Promise<Node> {
    const baseDir = await makeBaseDir();
    const dataDir = join(baseDir, 'data');
    const socket = join(baseDir, 'fencer.sock');
    const [pgPort, apiPort] = [await freePort(), await freePort()];
    const configPath = join(baseDir, 'node.yml');
    await writeFile(
      configPath,
      `scope: ${scope}
name: node1
restapi: {listen: 127.0.0.1:${apiPort}}
etcd3: {hosts: [${etcd.host}]}
bootstrap:
  dcs: {ttl: ${TTL}, loop_wait: 2, retry_timeout: 5}
  initdb: [{encoding: UTF8}, {locale: C}, no-sync]
db:
  listen: 127.0.0.1:${pgPort}
  data_dir: ${dataDir}
  authentication: {superuser: {username: postgres}, replication: {username: replicator}}
  parameters: {unix_socket_directories: ${baseDir}, shared_buffers: 16MB, max_connections: 30, fsync: false}
watchdog: {mode: off, safety_margin: ${MARGIN}}
fencer: {socket: ${socket}}
`,
    );
    const log = join(baseDir, 'agent.log');
    const fd = openSync(log, 'a');
    const child = spawn(process.execPath, [BIN, '-c', configPath], { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const kv = new Etcd3KeyValue({ hosts: [etcd.host], prefix: clusterPrefix('/service', scope), retryTimeoutMs: 5000 });
    cleanups.push(async () => {
      if (child.exitCode === null && child.pid) {
        try {
          process.kill(child.pid, 'SIGCONT');
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      const fencerPid = existsSync(`${socket}.pid`) ? Number(readFileSync(`${socket}.pid`, 'utf8')) : 0;
      if (fencerPid > 0 && pidAlive(fencerPid)) process.kill(fencerPid, 'SIGKILL');
      await stopPostmasterOf(dataDir);
      await kv.close();
      await rm(baseDir, { recursive: true, force: true });
    });
    const url = `http://127.0.0.1:${apiPort}`;
    await watching({ log }, until('the agent to lead', async () => (await fetch(`${url}/primary`)).status === 200, 120_000, 250));
    await watching({ log }, until('the fencer to guard', async () => ((await (await fetch(`${url}/node`)).json()) as { fencer?: string }).fencer === 'guarding', 10_000));
    // The server answers as primary before its bootstrap has written the cluster's configuration.
    await watching({ log }, until('the bootstrap configuration to be stored', async () => ((await (await fetch(`${url}/config`)).json()) as { ttl?: number }).ttl === TTL, 10_000));
    return { child, dataDir, socket, url, kv, log };
  }

  it('an agent frozen (SIGSTOP) while primary: PostgreSQL is stopped before the lock can pass to anyone else', async () => {
    const n = await startNode('itest-fence-freeze');
    const pg = postmasterPid(n.dataDir);
    expect(pg).to.be.above(0);
    const frozenAt = Date.now();
    n.child.kill('SIGSTOP');
    const stoppedAt = await until('PostgreSQL to be stopped', () => (pidAlive(pg) ? undefined : Date.now()), (TTL + 5) * 1000);
    const keyStillThere = (await n.kv.readAll()).get(ClusterKey.leader)?.value;
    const goneAt = await until('the leader key to expire', async () => ((await n.kv.readAll()).has(ClusterKey.leader) ? undefined : Date.now()), (TTL + 10) * 1000, 100);
    console.log(`      frozen agent: PostgreSQL stopped ${stoppedAt - frozenAt} ms after SIGSTOP; the lock expired ${goneAt - stoppedAt} ms later`);
    expect(keyStillThere, 'fenced while the lock was still held: nobody else could lead yet').to.equal('node1');
    expect(stoppedAt - frozenAt).to.be.at.most((TTL - MARGIN) * 1000 + 1000);
    expect(goneAt).to.be.greaterThan(stoppedAt);
    n.child.kill('SIGCONT');
    await watching(n, until('the thawed agent to lead again', async () => (await fetch(`${n.url}/primary`)).status === 200, 120_000, 250));
  });

  it('the leader lease revoked before its time: a running agent takes its key back with the same server; under a frozen agent the fencer stops PostgreSQL within a second', async () => {
    const n = await startNode('itest-fence-revoked');
    const revoke = async () => {
      const lease = (await n.kv.readAll()).get(ClusterKey.leader)?.lease;
      expect(lease, 'the leader key sits on a lease').to.be.a('string');
      const r = await fetch(`http://${etcd.host}/v3/lease/revoke`, { method: 'POST', body: JSON.stringify({ ID: lease }) });
      expect(r.status).to.equal(200);
    };
    const pg = postmasterPid(n.dataDir);
    await revoke();
    await watching(n, until('the agent to take its key back', async () => ((await n.kv.readAll()).get(ClusterKey.leader)?.value === 'node1' ? true : undefined), 10_000, 50));
    await sleep(1500);
    expect(pidAlive(pg), 'the same server runs on: nothing was stopped').to.equal(true);
    expect(postmasterPid(n.dataDir)).to.equal(pg);
    // An etcd raft leader resumed after a freeze revokes every lease it counted as expired, the agent frozen meanwhile.
    n.child.kill('SIGSTOP');
    await sleep(300);
    const revokedAt = Date.now();
    await revoke();
    const stoppedAt = await until('PostgreSQL to be stopped', () => (pidAlive(pg) ? undefined : Date.now()), (TTL + 5) * 1000, 20);
    console.log(`      lease revoked under a frozen agent: PostgreSQL stopped ${stoppedAt - revokedAt} ms after the revoke`);
    expect(stoppedAt - revokedAt, 'well before the 2 s the other members wait for an answer').to.be.below(1800);
    n.child.kill('SIGCONT');
    await watching(n, until('the thawed agent to lead again', async () => (await fetch(`${n.url}/primary`)).status === 200, 120_000, 250));
  });

  it('an agent killed (-9) while primary: PostgreSQL stops and the lock is released at once', async () => {
    const n = await startNode('itest-fence-kill');
    const pg = postmasterPid(n.dataDir);
    const killedAt = Date.now();
    n.child.kill('SIGKILL');
    const stoppedAt = await until('PostgreSQL to be stopped', () => (pidAlive(pg) ? undefined : Date.now()), 10_000, 20);
    const releasedAt = await until('the leader key to go', async () => ((await n.kv.readAll()).has(ClusterKey.leader) ? undefined : Date.now()), 10_000, 20);
    console.log(`      killed agent: PostgreSQL stopped ${stoppedAt - killedAt} ms after kill -9; the lock released ${releasedAt - killedAt} ms after it`);
    expect(stoppedAt - killedAt).to.be.below(3000);
    expect(releasedAt - killedAt).to.be.below(5000);
    expect(releasedAt).to.be.at.least(stoppedAt);
  });

  it('a clean stop (SIGTERM) leaves nothing behind: the fencer leaves with its agent', async () => {
    const n = await startNode('itest-fence-clean');
    const fencerPid = Number(readFileSync(`${n.socket}.pid`, 'utf8'));
    expect(pidAlive(fencerPid)).to.equal(true);
    n.child.kill('SIGTERM');
    await until('the agent to exit', () => n.child.exitCode !== null, 60_000);
    await until('the fencer to leave', () => !pidAlive(fencerPid), 10_000);
    expect(existsSync(n.socket)).to.equal(false);
  });

  /** Pauses the cluster through the agent's API and waits until the agent says so. */
  async function pause(n: Node): Promise<void> {
    const r = await fetch(`${n.url}/config`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pause: true }) });
    expect(r.status).to.equal(200);
    await until('the agent to be paused', async () => ((await (await fetch(`${n.url}/node`)).json()) as { pause?: boolean }).pause === true, 10_000);
  }

  it('in maintenance mode a clean stop leaves PostgreSQL running under the fencer; the fencer told to stop stops it first, read-only', async () => {
    const n = await startNode('itest-fence-pause');
    await pause(n);
    const pg = postmasterPid(n.dataDir);
    const fencerPid = Number(readFileSync(`${n.socket}.pid`, 'utf8'));
    n.child.kill('SIGTERM');
    await until('the agent to exit', () => n.child.exitCode !== null, 60_000);
    expect(pidAlive(pg), 'PostgreSQL left running').to.equal(true);
    expect(pidAlive(fencerPid), 'the fencer stays').to.equal(true);
    expect((await n.kv.readAll()).get(ClusterKey.leader)?.value, 'the lock kept').to.equal('node1');
    process.kill(fencerPid, 'SIGTERM');
    await until('PostgreSQL to be stopped', () => !pidAlive(pg), 10_000, 20);
    await until('the fencer to leave', () => !pidAlive(fencerPid), 10_000);
    expect(existsSync(join(n.dataDir, 'standby.signal')), 'a start nobody decided comes up read-only').to.equal(true);
    expect(existsSync(join(n.dataDir, 'warden.fenced'))).to.equal(true);
  });

  it('in maintenance mode, a server stopped by hand after its agent stopped is left as it is when the lock runs out (nothing in the way of pg_upgrade)', async () => {
    const n = await startNode('itest-fence-pause-stopped');
    await pause(n);
    const fencerPid = Number(readFileSync(`${n.socket}.pid`, 'utf8'));
    const stoppedAt = Date.now();
    n.child.kill('SIGTERM');
    await until('the agent to exit', () => n.child.exitCode !== null, 60_000);
    await stopPostmasterOf(n.dataDir);
    // Past the fence point of the lock the agent left (it renewed it as it stopped).
    await until("the fencer to act on the lock's deadline", () => readFileSync(`${n.socket.replace(/\.sock$/, '')}.log`, 'utf8').includes('no agent for this node started again'), (TTL + 5) * 1000, 200);
    console.log(`      the fencer acted ${Date.now() - stoppedAt} ms after the agent stopped`);
    expect(existsSync(join(n.dataDir, 'standby.signal'))).to.equal(false);
    expect(existsSync(join(n.dataDir, 'warden.fenced'))).to.equal(false);
    expect(pidAlive(fencerPid), 'it waits a while for an agent, then leaves').to.equal(true);
  });
});
