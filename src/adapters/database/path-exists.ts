import { access } from 'node:fs/promises';

/** True when `path` exists (any type); false on any error, so callers never throw on a probe. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
