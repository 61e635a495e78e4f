import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { killPending } from './kill-pending.js';
import { readProcStat } from './proc-stat.js';

/** The lines of postmaster.pid that matter (see PostgreSQL's pidfile.h). */
export interface PostmasterPid {
  readonly pid: number;
  /** Seconds since the epoch. */
  readonly startTime: number;
  readonly port: number;
  /** First Unix socket directory ('' when none). */
  readonly socketDir: string;
  /** `starting`, `stopping`, `ready` or `standby`; '' while the postmaster has not written it. */
  readonly status: string;
}

/** Parses postmaster.pid of `dataDir`; null when absent or unreadable. */
export async function readPostmasterPid(dataDir: string): Promise<PostmasterPid | null> {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => null);
  if (text === null) return null;
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return { pid, startTime: Number(lines[2] ?? 0), port: Number(lines[3] ?? 0), socketDir: (lines[4] ?? '').trim(), status: (lines[7] ?? '').trim() };
}

/**
 * True while `pid` is a live postgres process. A zombie (parent has not reaped it yet), a
 * PID reused by another program, or a process stuck in the kernel with a SIGKILL pending (it
 * can run nothing more, see killPending) counts as dead.
 */
export async function postmasterAlive(pid: number): Promise<boolean> {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: exists but belongs to someone else (we are not root): trust /proc below
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = await readProcStat(pid);
  if (stat === null) return process.platform !== 'linux';
  const { comm, state } = stat;
  if (state === 'Z' || state === 'X' || (comm !== 'postgres' && comm !== 'postmaster')) return false;
  // Only a process in uninterruptible sleep lingers with a SIGKILL pending: checked there alone (this is polled every few ms).
  return state !== 'D' || !(await killPending(pid));
}
