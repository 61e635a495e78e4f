import { readdir, readlink, realpath } from 'node:fs/promises';

/**
 * PIDs of processes whose working directory is `dataDir`. Every PostgreSQL process chdirs
 * there, so after a postmaster was killed this finds its surviving children (they hold the
 * shared memory a new postmaster refuses to share). [] when /proc is not readable.
 */
export async function processesInDataDir(dataDir: string): Promise<number[]> {
  const dir = await realpath(dataDir).catch(() => dataDir);
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const found: number[] = [];
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (e) => {
        const cwd = await readlink(`/proc/${e}/cwd`).catch(() => null);
        if (cwd === dir) found.push(Number(e));
      }),
  );
  return found;
}

/** Waits (bounded) until no process works in `dataDir`; true when none is left. */
export async function waitForDataDirProcesses(dataDir: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await processesInDataDir(dataDir)).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
