import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';

/** True while a process with this PID exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A process that exited but is not reaped yet (a zombie) answers signals too: it is gone all the same.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch (e) {
    // Gone since the signal; any other failure (no /proc) leaves the signal's answer.
    return (e as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** Starts a detached process whose output goes to `logFile`; returns its PID. */
export function spawnDetached(cmd: string, args: readonly string[], logFile: string, env: NodeJS.ProcessEnv = process.env): number {
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(cmd, args, { detached: true, stdio: ['ignore', fd, fd], env });
    if (child.pid === undefined) throw new Error(`could not start ${cmd}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** Sends `signal`, waits up to `timeoutMs` for the process to go, then SIGKILLs it. */
export async function stopPid(pid: number, timeoutMs = 20_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
  while (isAlive(pid)) await sleep(50);
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `probe` until it returns a value (not undefined) or the deadline passes. */
export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}
