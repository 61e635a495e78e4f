import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoppedServer } from '../../domain/cluster/ha/promotion-undo.js';
import type { Logger } from '../../ports/logger.js';
import { ranInRecovery, readControlFile } from './pg-control-file.js';
import { highestHistoryTimeline } from './pg-timeline-history.js';
import { killDataDirProcesses } from './data-dir-processes.js';
import { FENCE_HOLD_FILE, placeFenceHold } from './fence-hold.js';
import { pathExists } from './path-exists.js';
import { IMMEDIATE_SHUTDOWN_GRACE_MS } from './shutdown-grace.js';
import { postmasterAlive, readPostmasterPid } from './postmaster-pid.js';

/** How long the stop waits for the hold's two small files (a hung disk must not delay the stop itself). */
const HOLD_WAIT_MS = 500;

/** How long the postmaster gets to exit on its shutdown signal before it is killed. */
const GRACE_MS = { immediate: IMMEDIATE_SHUTDOWN_GRACE_MS, fast: 10_000 } as const;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Sends `signal` to `pid`; false when it is gone. */
function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops the PostgreSQL server of a data directory from outside the agent, the way a fence
 * must: the shutdown signal straight to the postmaster (SIGQUIT: immediate, SIGINT: fast; no
 * pg_ctl process to wait for), SIGKILL when it is not down within a bounded time, SIGKILL for
 * any backend left behind, then a check that no process works in the data directory any more
 * (so nothing can accept a write). Needs the right to signal the server's processes (root,
 * or the server's OS user).
 */
export class PgFence {
  constructor(
    private readonly dataDir: string,
    private readonly logger: Logger,
    /** The OS user the server runs as (owner of what the fence writes), null when that is this process's. */
    private readonly owner: string | null = null,
  ) {}

  /**
   * Leaves standby.signal in the data directory (see placeFenceHold), before the stop: a
   * postmaster the stop does not find yet (pg_ctl start sent an instant before) reads it when
   * it starts. Waits at most HOLD_WAIT_MS; never throws.
   */
  async holdReadOnly(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), HOLD_WAIT_MS)));
    const result = await Promise.race([placeFenceHold(this.dataDir, this.owner), late]);
    clearTimeout(timer);
    if (result === 'placed') this.logger.warn('left standby.signal in the data directory: a start the agent did not decide comes up read-only');
    else if (result === 'failed') this.logger.warn('could not leave standby.signal in the data directory (stopping anyway): a start before the agent decides could come up as a primary, and is stopped again');
    else if (result === 'late') this.logger.warn(`leaving standby.signal in the data directory took over ${HOLD_WAIT_MS} ms (stopping anyway)`);
  }

  /**
   * Whether a postmaster runs on the data directory as a primary that takes writes: it
   * accepts connections (postmaster.pid says `ready`, which a hot standby says too) and no
   * standby.signal or recovery.signal keeps it in recovery (PostgreSQL removes them when it
   * promotes; the fence's own hold, placed after that postmaster started, keeps nothing);
   * pg_rewind's single-user recovery writes no postmaster PID at all. What a fence, once it
   * fired, must not let come back before the agent holds the lock again (an agent thawed in
   * the middle of a restart would otherwise finish starting a primary). Never throws; false
   * when it cannot tell.
   */
  async primaryRunning(): Promise<boolean> {
    try {
      const pidFile = await readPostmasterPid(this.dataDir);
      if (pidFile === null || pidFile.status !== 'ready' || !(await postmasterAlive(pidFile.pid))) return false;
      const present = (f: string) => pathExists(join(this.dataDir, f));
      if (!(await present('standby.signal')) && !(await present('recovery.signal'))) return true;
      // The fence's own standby.signal tells nothing of a postmaster that started before it was
      // placed (to the second postmaster.pid records: one started in that second counts too).
      const heldSince = await stat(join(this.dataDir, FENCE_HOLD_FILE)).then((st) => st.mtimeMs, () => null);
      return heldSince !== null && pidFile.startTime * 1000 <= heldSince;
    } catch {
      return false;
    }
  }

  /** What pg_control and pg_wal say of the stopped server (see StoppedServer); null when either cannot be read. Never throws. */
  async stoppedServer(): Promise<StoppedServer | null> {
    const [cf, historyTimeline] = await Promise.all([readControlFile(this.dataDir), highestHistoryTimeline(this.dataDir)]);
    if (cf === null || historyTimeline === null) return null;
    return { inRecovery: ranInRecovery(cf), timeline: Math.max(cf.timeline, historyTimeline) };
  }

  /** Stops the server; true when nothing of it is left. Never throws. */
  async stop(mode: 'immediate' | 'fast'): Promise<boolean> {
    try {
      const pidFile = await readPostmasterPid(this.dataDir);
      const pid = pidFile && (await postmasterAlive(pidFile.pid)) ? pidFile.pid : null;
      if (pid !== null) {
        signal(pid, mode === 'immediate' ? 'SIGQUIT' : 'SIGINT');
        const deadline = Date.now() + GRACE_MS[mode];
        while ((await postmasterAlive(pid)) && Date.now() < deadline) await sleep(20);
        if (await postmasterAlive(pid)) {
          this.logger.warn('the postmaster did not stop in time: killing it', { pid, mode });
          signal(pid, 'SIGKILL');
        }
      }
      // Backends outlive a killed postmaster for a moment and could still commit.
      if (!(await killDataDirProcesses(this.dataDir))) return false;
      return pid === null || !(await postmasterAlive(pid));
    } catch (error) {
      this.logger.error('could not stop PostgreSQL', { error: error instanceof Error ? error.message : String(error) });
      return false;
    }
  }
}
