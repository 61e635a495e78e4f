import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

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
