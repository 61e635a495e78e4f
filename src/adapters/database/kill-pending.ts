import { readFile } from 'node:fs/promises';

/** SIGKILL's bit in the pending-signal masks of /proc/<pid>/status. */
const SIGKILL_BIT = 1n << 8n;

/**
 * Whether `pid` has a SIGKILL pending. Such a process can run no code of its own again: the
 * kernel ends it on its way back from the kernel. One stuck there (state D: a hung disk or
 * mount, a frozen cgroup) stays in the process table until the kernel lets go of it, holding
 * its files and shared memory, yet it can accept, commit or acknowledge nothing more.
 * False when /proc does not tell.
 */
export async function killPending(pid: number): Promise<boolean> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  for (const m of status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-fA-F]+)\s*$/gm)) {
    if ((BigInt(`0x${m[1]}`) & SIGKILL_BIT) !== 0n) return true;
  }
  return false;
}
