import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { buildConninfo, type Endpoint } from './conninfo.js';
import type { ResolvedPgOptions } from './pg-options.js';
import { ensureOwnedDir } from './owned-files.js';
import { runCommand } from './run-command.js';

/** Entries of `dir`; [] when it does not exist. */
export async function directoryEntries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** Deletes what is inside `dir`, keeping the directory (its parent may not be ours to write). */
export async function emptyDirectory(dir: string): Promise<void> {
  for (const entry of await directoryEntries(dir)) await rm(join(dir, entry), { recursive: true, force: true });
}

/**
 * pg_basebackup from `source` into the (empty or missing) data directory, WAL streamed
 * alongside so the copy is consistent on its own. On failure the directory is emptied again.
 */
export async function baseBackup(opts: ResolvedPgOptions, source: Endpoint): Promise<void> {
  const existing = await directoryEntries(opts.dataDir);
  if (existing.length) throw new Error(`data directory ${opts.dataDir} is not empty (${existing.slice(0, 5).join(', ')})`);
  await ensureOwnedDir(opts.dataDir, opts.runAsUser);
  const conninfo = buildConninfo({
    host: source.host,
    port: source.port,
    user: opts.replication.username,
    application_name: `${opts.name}_basebackup`,
    connect_timeout: 10,
  });
  try {
    await runCommand(
      join(opts.binDir, 'pg_basebackup'),
      ['-D', opts.dataDir, '-d', conninfo, '-X', 'stream', '-c', 'fast', '-w'],
      {
        runAs: opts.runAsUser,
        timeoutMs: opts.createReplicaTimeoutMs,
        env: opts.replication.password ? { PGPASSWORD: opts.replication.password } : {},
      },
    );
  } catch (e) {
    await emptyDirectory(opts.dataDir).catch(() => undefined);
    throw e;
  }
}
