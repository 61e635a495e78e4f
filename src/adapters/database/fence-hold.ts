import { join } from 'node:path';
import { writeOwnedFile } from './owned-files.js';
import { pathExists } from './path-exists.js';

/**
 * Marks a standby.signal the fencer placed, not the agent: the data directory is a stopped
 * primary's, held read-only until the agent decides its role again (the agent's next start
 * or restart rewrites the role files and removes both).
 */
export const FENCE_HOLD_FILE = 'warden.fenced';

/** What placing a hold did. */
export type FenceHoldResult = 'placed' | 'already_standby' | 'failed';

/**
 * Leaves standby.signal in a fenced primary's data directory, so that a start no agent
 * decided (a restart the agent had under way when it was killed or froze, finishing after the
 * fence) comes up read-only instead of as a second primary on the old timeline. The marker is
 * written first: a standby.signal the fencer placed must never make the data pass for a
 * replica's. Nothing is placed when standby.signal is already there (a replica's directory).
 */
export async function placeFenceHold(dataDir: string, owner: string | null): Promise<FenceHoldResult> {
  const signal = join(dataDir, 'standby.signal');
  try {
    if (await pathExists(signal)) return 'already_standby';
    await writeOwnedFile(join(dataDir, FENCE_HOLD_FILE), 'standby.signal placed by the warden fencer; removed by the agent at its next start\n', owner);
    await writeOwnedFile(signal, '', owner);
    return 'placed';
  } catch {
    return 'failed';
  }
}

/** Whether the data directory's standby.signal is a fence's hold (not a replica's role). */
export function fenceHoldPresent(dataDir: string): Promise<boolean> {
  return pathExists(join(dataDir, FENCE_HOLD_FILE));
}
