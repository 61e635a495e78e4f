import { lstat, readdir, rm } from 'node:fs/promises';
import { readlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The launcher's temporary directories carry their process's pid, and the pid namespace it is
 * counted in, so a later process can tell those of processes that are gone: a process removes
 * its own at exit, but one killed (kill -9, the OOM killer) leaves it behind, and an agent a
 * supervisor restarts after each such death would fill /tmp with them.
 */
const PREFIX = 'warden-launcher-';

let namespace: string | null | undefined;

/** The pid namespace's inode (`pid:[4026531836]` -> `4026531836`), read once; null where /proc does not tell it. */
function pidNamespace(): string | null {
  if (namespace !== undefined) return namespace;
  try {
    namespace = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? null;
  } catch {
    namespace = null;
  }
  return namespace;
}

/** The prefix of this process's launcher directory (for mkdtemp). */
export function launcherDirPrefix(): string {
  const ns = pidNamespace();
  return ns === null ? PREFIX : `${PREFIX}${ns}-${process.pid}-`;
}

/** Whether `pid` names no process in this pid namespace (EPERM: one of another user, alive). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Removes, under `tmp`, the launcher directories of processes of this pid namespace that are
 * gone: only directories (not links) owned by this user, named as `launcherDirPrefix` names
 * them. A directory whose pid is alive stays, even if that pid was reused by another process:
 * removing a live launcher's directory would fail its next command. Returns what was removed.
 */
export async function removeLauncherDirsOfGoneProcesses(tmp: string): Promise<string[]> {
  const ns = pidNamespace();
  if (ns === null) return [];
  const pattern = new RegExp(`^${PREFIX}${ns}-(\\d+)-[^-]+$`);
  const uid = process.getuid?.() ?? -1;
  const removed: string[] = [];
  for (const name of await readdir(tmp).catch(() => [] as string[])) {
    const pid = Number(pattern.exec(name)?.[1] ?? NaN);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || !gone(pid)) continue;
    const path = join(tmp, name);
    const st = await lstat(path).catch(() => null);
    if (!st?.isDirectory() || st.uid !== uid) continue;
    await rm(path, { recursive: true, force: true }).then(() => removed.push(path), () => undefined);
  }
  return removed;
}
