import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import type { KeyValueStore } from '../../../../src/adapters/cluster-store/key-value.js';
import { freePorts } from '../../../support/free-port.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A 3-member etcd on loopback ports, each member stopped by its PID. */
async function startThreeMembers(): Promise<{ readonly hosts: string[]; readonly procs: ChildProcess[]; readonly dir: string }> {
  const ports = await freePorts(6);
  const dir = mkdtempSync(join(tmpdir(), 'warden-etcd3-'));
  const names = ['m1', 'm2', 'm3'];
  const cluster = names.map((n, i) => `${n}=http://127.0.0.1:${ports[3 + i]}`).join(',');
  const procs = names.map((n, i) =>
    spawn(
      'etcd',
      [
        '--name', n,
        '--data-dir', join(dir, n),
        '--listen-client-urls', `http://127.0.0.1:${ports[i]}`,
        '--advertise-client-urls', `http://127.0.0.1:${ports[i]}`,
        '--listen-peer-urls', `http://127.0.0.1:${ports[3 + i]}`,
        '--initial-advertise-peer-urls', `http://127.0.0.1:${ports[3 + i]}`,
        '--initial-cluster', cluster,
        '--initial-cluster-state', 'new',
        '--logger', 'zap',
        '--log-level', 'error',
      ],
      { stdio: 'ignore' },
    ),
  );
  // A runner that dies must not leave the members behind.
  process.once('exit', () => {
    for (const p of procs) if (p.pid !== undefined && p.exitCode === null && p.signalCode === null) process.kill(p.pid, 'SIGKILL');
  });
  const hosts = ports.slice(0, 3).map((p) => `127.0.0.1:${p}`);
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const r = await fetch(`http://${hosts[0]}/health`, { signal: AbortSignal.timeout(1000) });
      if (((await r.json()) as { health?: string }).health === 'true') break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error('the 3-member etcd did not become healthy');
    await sleep(200);
  }
  return { hosts, procs, dir };
}

async function stopByPid(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
  const gone = new Promise<void>((r) => p.once('exit', () => r()));
  process.kill(p.pid, 'SIGKILL');
  await gone;
}

const adapters: Record<string, (hosts: string[]) => KeyValueStore> = {
  'Etcd3KeyValue (gRPC)': (hosts) => new Etcd3KeyValue({ hosts, prefix: '/service/quorum/', retryTimeoutMs: 2000 }),
  'Etcd3GatewayKeyValue (JSON gateway)': (hosts) => new Etcd3GatewayKeyValue({ hosts, prefix: '/service/quorum/', retryTimeoutMs: 2000 }),
};

describe('a watch on an etcd member cut off from its quorum (real 3-member etcd)', function () {
  this.timeout(60_000);
  let etcd: Awaited<ReturnType<typeof startThreeMembers>> | undefined;

  beforeEach(async () => {
    etcd = await startThreeMembers();
  });
  afterEach(async () => {
    if (!etcd) return;
    await Promise.all(etcd.procs.map(stopByPid));
    rmSync(etcd.dir, { recursive: true, force: true });
  });

  for (const [name, make] of Object.entries(adapters)) {
    it(`${name}: the stream asks for a leader, so it ends and confirms nothing once the member has none`, async () => {
      const e = etcd!;
      // Only the member that will be cut off: nowhere else to go.
      const kv = make([e.hosts[0]!]);
      try {
        kv.watch(() => {});
        expect(await kv.whenWatching(5000)).to.equal(true);
        await kv.put('config', '{}');
        expect(await kv.progress()).to.be.a('string');
        const cut = Date.now();
        await Promise.all([stopByPid(e.procs[1]!), stopByPid(e.procs[2]!)]);
        while (kv.watching() && Date.now() - cut < 15_000) await sleep(100);
        const tookMs = Date.now() - cut;
        console.log(`      ${name}: the watch ended ${tookMs} ms after the member lost its quorum`);
        expect(kv.watching(), 'the stream of a member without a leader ends').to.equal(false);
        expect(tookMs).to.be.below(15_000);
        expect(await kv.progress()).to.equal(null);
        await sleep(1000);
        expect(kv.watching(), 'and is not opened again on that member').to.equal(false);
      } finally {
        await kv.close();
      }
    });
  }
});
