/** A 3-member etcd cluster on loopback for the tests that need members to come and go. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './free-port.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A 3-member etcd on loopback ports, each member stopped by its PID. */
export async function startThreeMembers(): Promise<{ readonly hosts: string[]; readonly procs: ChildProcess[]; readonly dir: string }> {
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

export async function stopByPid(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
  const gone = new Promise<void>((r) => p.once('exit', () => r()));
  process.kill(p.pid, 'SIGKILL');
  await gone;
}


/** Starts a 3-member etcd before each test of the suite and stops it (by PID) after; the getter gives the running one. */
export function threeMembersEachTest(): () => Awaited<ReturnType<typeof startThreeMembers>> {
  let etcd: Awaited<ReturnType<typeof startThreeMembers>> | undefined;
  beforeEach(async () => {
    etcd = await startThreeMembers();
  });
  afterEach(async () => {
    if (!etcd) return;
    await Promise.all(etcd.procs.map(stopByPid));
    rmSync(etcd.dir, { recursive: true, force: true });
    etcd = undefined;
  });
  return () => {
    if (!etcd) throw new Error('the 3-member etcd is not running');
    return etcd;
  };
}
