import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const idCache = new Map<string, { uid: number; gid: number }>();

/** uid and gid of an OS user (cached). */
export async function osUserIds(user: string): Promise<{ uid: number; gid: number }> {
  const cached = idCache.get(user);
  if (cached) return cached;
  const [u, g] = await Promise.all([execFileAsync('id', ['-u', user]), execFileAsync('id', ['-g', user])]);
  const ids = { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
  idCache.set(user, ids);
  return ids;
}

/**
 * Writes a file atomically (temp + rename) with mode 0600, owned by `owner` when given: the
 * server runs as that user and must read what the agent (maybe root) writes.
 */
export async function writeOwnedFile(path: string, content: string | Uint8Array, owner: string | null): Promise<void> {
  const tmp = join(dirname(path), `.${Date.now()}.${process.pid}.warden.tmp`);
  try {
    // wx: a new file, never through a link someone left at the name.
    await writeFile(tmp, content, { mode: 0o600, flag: 'wx' });
    if (owner) {
      const { uid, gid } = await osUserIds(owner);
      await chown(tmp, uid, gid);
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** Creates `dir` (and parents) with mode 0700, owned by `owner` when given. */
export async function ensureOwnedDir(dir: string, owner: string | null): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  if (owner) {
    const { uid, gid } = await osUserIds(owner);
    await chown(dir, uid, gid);
  }
}
