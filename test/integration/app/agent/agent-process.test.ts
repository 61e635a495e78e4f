import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix, ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { assertPostgresBinaries, freePort, makeBaseDir, pidAlive, stopPostmasterOf } from '../../../support/postgres-server.js';

const BIN = fileURLToPath(new URL('../../../../bin/warden.js', import.meta.url));

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly dataDir: string;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function postmasterPid(dataDir: string): number {
  const file = join(dataDir, 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : 0;
}

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

  async function startBinary(scope: string): Promise<Started> {
    const baseDir = await makeBaseDir();
    const dataDir = join(baseDir, 'data');
    const [pgPort, apiPort] = [await freePort(), await freePort()];
    const configPath = join(baseDir, 'node.yml');
    await writeFile(
      configPath,
      `scope: ${scope}
name: node1
restapi: {listen: 127.0.0.1:${apiPort}}
etcd3: {hosts: [${etcd.host}]}
bootstrap:
  dcs: {ttl: 20, loop_wait: 2, retry_timeout: 5}
  initdb: [{encoding: UTF8}, {locale: C}, no-sync]
db:
  listen: 127.0.0.1:${pgPort}
  data_dir: ${dataDir}
  authentication: {superuser: {username: postgres}, replication: {username: replicator}}
  parameters: {unix_socket_directories: ${baseDir}, shared_buffers: 16MB, max_connections: 30, fsync: false}
watchdog: {mode: off}
`,
    );
    const child = spawn(process.execPath, [BIN, '-c', configPath], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WARDEN_LOG_LEVEL: 'info' } });
    const lines: string[] = [];
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      lines.push(...parts);
    });
    child.stderr!.on('data', (d: Buffer) => lines.push(`stderr: ${d.toString()}`));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanups.push(async () => {
      if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
      await stopPostmasterOf(dataDir);
      await rm(baseDir, { recursive: true, force: true });
    });
    const url = `http://127.0.0.1:${apiPort}`;
    await until('the agent to lead', async () => (await fetch(`${url}/primary`)).status === 200, 120_000);
    return { child, url, dataDir, lines, exited };
  }

  it('writes JSON logs; SIGTERM stops PostgreSQL cleanly, releases the leader key and exits 0', async () => {
    const a = await startBinary('itest-proc');
    const pgPid = postmasterPid(a.dataDir);
    expect(pgPid).to.be.above(0);
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
