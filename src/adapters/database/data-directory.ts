import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathExists } from './path-exists.js';

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
 * Names a PostgreSQL data directory holds (or an interrupted initdb, base backup or restore
 * leaves behind), and the agent's own files in it. Anything else is somebody's.
 */
const POSTGRES_MADE = /^(PG_VERSION|backup_label(\.old)?|backup_manifest|tablespace_map(\.old)?|postmaster\.(opts|pid)|current_logfiles|postgresql(\.auto|\.base)?\.conf|pg_hba\.conf|pg_ident\.conf|(standby|recovery)\.signal|recovery\.(conf|done)|base|global|log|pg_[a-z_]+|warden\.[a-z_]+)$/;

/**
 * Entries of `dir` that neither PostgreSQL nor the agent made (at most `max`): a directory
 * holding any is never emptied to build a database in it. It is the operator's (a wrong
 * data_dir, a mount point with lost+found), and deleting files the agent did not make is not
 * its call.
 */
export async function foreignEntries(dir: string, max = 5): Promise<string[]> {
  return (await directoryEntries(dir)).filter((e) => !POSTGRES_MADE.test(e)).sort().slice(0, max);
}

/** A build refused its data directory: it holds what the agent did not make, and nothing was built or removed there. */
export class DataDirectoryRefused extends Error {}

/** Throws DataDirectoryRefused when `dir` already holds a database (its control file). */
export async function refuseExistingDatabase(dir: string): Promise<void> {
  if (await pathExists(join(dir, 'global', 'pg_control'))) throw new DataDirectoryRefused(`data directory ${dir} already holds a database`);
}

/** Throws DataDirectoryRefused when `dir` holds files the agent did not make (see foreignEntries); says which and what to do. */
export async function refuseForeignFiles(dir: string): Promise<void> {
  const foreign = await foreignEntries(dir);
  if (foreign.length === 0) return;
  throw new DataDirectoryRefused(
    `data directory ${dir} is not empty and holds files that are not PostgreSQL's (${foreign.join(', ')}): Warden does not delete files it did not make; empty it, or set db.data_dir to an empty or new directory`,
  );
}

/**
 * Throws DataDirectoryRefused when `dir` holds a database whose control file is missing or unreadable: PG_VERSION and
 * catalog files in global/ beside no global/pg_control, and no backup_label. initdb writes
 * global/pg_control before any catalog file, and a base backup (or a restore) writes backup_label
 * first: what an interrupted build left may be cleared. A database that lost global/pg_control (a
 * file deleted or moved, permissions, a failing disk) may hold the only copy of commits and can
 * often be repaired (pg_resetwal, a restored pg_control): deleting it is not the agent's call.
 */
export async function refuseDatabaseWithoutControlFile(dir: string, member: string): Promise<void> {
  const entries = await directoryEntries(dir);
  if (!entries.includes('PG_VERSION') || entries.includes('backup_label')) return;
  const catalogs = (await directoryEntries(join(dir, 'global')).catch(() => ['(unreadable)'])).filter((e) => e !== 'pg_control');
  if (catalogs.length === 0) return;
  throw new DataDirectoryRefused(
    `data directory ${dir} holds a database whose global/pg_control is missing or unreadable: Warden does not delete it; check the storage and the file's permissions, or rebuild the member from the leader with wardenctl reinit ${member}`,
  );
}
