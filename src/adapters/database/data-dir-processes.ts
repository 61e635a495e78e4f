import { readFile, readlink, realpath } from 'node:fs/promises';
import { killPending } from './kill-pending.js';
import { readProcStat } from './proc-stat.js';
import { scanProcesses } from './proc-scan.js';

/**
 * PIDs of PostgreSQL processes whose working directory is `dataDir`. Every server process
 * chdirs there, so after a postmaster was killed this finds its surviving children (they
 * hold the shared memory a new postmaster refuses to share). Only processes of the
 * `postgres` executable count: an operator's shell or `tail` sitting in the data directory
 * is neither waited for nor killed. [] when /proc is not readable.
 */
export async function serverProcessesInDataDir(dataDir: string): Promise<number[]> {
  const dir = await realpath(dataDir).catch(() => dataDir);
  return scanProcesses(async (pid) => {
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => null);
    // A data directory deleted under the server reads "<path> (deleted)".
    if (cwd !== dir && cwd !== `${dir} (deleted)`) return null;
    // The kernel's name of the executable (PostgreSQL changes what ps shows, not this).
    const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
    return comm.trim() === 'postgres' ? pid : null;
  });
}

/** Waits (bounded) until no PostgreSQL process works in `dataDir`; true when none is left. */
export async function waitForDataDirProcesses(dataDir: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await serverProcessesInDataDir(dataDir)).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * SIGKILLs every PostgreSQL process working in `dataDir` until none is left (bounded, ~1 s): what is
 * left of a server that did not react to its shutdown signal (frozen, or its postmaster
 * killed and its backends not yet gone; they could still commit). True when none is left
 * that could run: a process stuck in the kernel with its SIGKILL pending (a hung disk or
 * mount) cannot commit or answer anything again and dies the moment the kernel lets it go.
 */
export function killDataDirProcesses(dataDir: string): Promise<boolean> {
  return killUntilGone(() => serverProcessesInDataDir(dataDir));
}

/** SIGKILLs what `find` lists, again and again (bounded, ~1 s), until nothing it lists could run. */
async function killUntilGone(find: () => Promise<number[]>): Promise<boolean> {
  for (let round = 0; round < 50; round++) {
    const found = await find();
    const left = (await Promise.all(found.map(async (p) => ((await killPending(p)) ? null : p)))).filter((p): p is number => p !== null);
    if (left.length === 0) return true;
    for (const p of left) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/** A postmaster the probe saw running: its PID and kernel start time, so a PID reused later is never taken for it. */
export interface KnownPostmaster {
  readonly pid: number;
  readonly startTicks: string;
}

/** The postmaster `pid` as a KnownPostmaster (its start time read now); null when it is not a live postgres process. */
export async function knownPostmaster(pid: number): Promise<KnownPostmaster | null> {
  const s = await readProcStat(pid);
  return s && s.comm === 'postgres' && s.state !== 'Z' ? { pid, startTicks: s.startTicks } : null;
}

/**
 * PIDs of `known` and its live postgres children while it is still that very process (same start
 * time), wherever their working directory now is: a data directory renamed, or its file system
 * lazily unmounted (`umount -l`), under a running server moves their cwd away from the
 * configured path, and postmaster.pid with it. [] once it is gone.
 */
export async function processesOfPostmaster(known: KnownPostmaster): Promise<number[]> {
  const pm = await readProcStat(known.pid);
  if (!pm || pm.comm !== 'postgres' || pm.startTicks !== known.startTicks || pm.state === 'Z') return [];
  const children = await scanProcesses(async (pid) => {
    const s = await readProcStat(pid);
    return s && s.ppid === known.pid && s.comm === 'postgres' && s.state !== 'Z' ? pid : null;
  });
  return [known.pid, ...children];
}

/** SIGKILLs `known` and its children until none is left (bounded, ~1 s); true when none is left that could run. */
export function killPostmasterProcesses(known: KnownPostmaster): Promise<boolean> {
  return killUntilGone(() => processesOfPostmaster(known));
}
