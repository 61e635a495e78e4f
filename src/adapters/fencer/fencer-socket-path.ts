import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The agent's own folder under the temporary directory (like tmux's `/tmp/tmux-UID`): only its user may create files there. */
export function privateRuntimeDir(): string {
  return join(tmpdir(), `warden-${process.getuid?.() ?? 'user'}`);
}

/**
 * Where the fencer of a data directory listens when the configuration names no socket: one
 * path per data directory (the socket is the fencer's claim on it), short enough for a Unix
 * socket address, in the agent's private folder so that no other user can put a socket (a
 * fake fencer) or a link (to a file the fencer's log or PID file would overwrite) in its place.
 */
export function defaultFencerSocket(scope: string, name: string, dataDir: string): string {
  const hash = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 10);
  const label = `${scope}-${name}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
  return join(privateRuntimeDir(), `fencer-${label}-${hash}.sock`);
}

/**
 * Creates the private folder of a default socket path when missing and checks that it is
 * private: a real directory (not a link), owned by this user, no access for others. Throws
 * saying why not. A socket path the configuration names is the operator's to place.
 */
export function ensurePrivateSocketDir(socketPath: string, privateDir = privateRuntimeDir()): void {
  const dir = dirname(socketPath);
  if (dir !== privateDir) return;
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory (a link or a file someone else put there?)`);
  if (uid !== undefined && st.uid !== uid) throw new Error(`${dir} belongs to uid ${st.uid}, not to this user (${uid}): someone else made it; remove it`);
  if ((st.mode & 0o077) !== 0) throw new Error(`${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)}); it must be 0700`);
}

/**
 * Why the socket at `socketPath` cannot be the fencer's, or null: a file there must be a
 * socket owned by this user or root, or another user could pose as the fencer.
 */
export function foreignSocketProblem(socketPath: string): string | null {
  let st;
  try {
    st = lstatSync(socketPath);
  } catch {
    return null;
  }
  const uid = process.getuid?.();
  if (!st.isSocket()) return `${socketPath} is not a socket`;
  if (uid !== undefined && st.uid !== uid && st.uid !== 0) return `${socketPath} belongs to uid ${st.uid}, not to this user (${uid}) or root: not trusted as the fencer`;
  return null;
}
