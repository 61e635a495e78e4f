import { join } from 'node:path';
import type { StopMode } from '../../ports/database.js';
import { postmasterAlive, readPostmasterPid } from './postmaster-pid.js';
import { runCommand, type CommandOutput } from './run-command.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The postmaster's shutdown signals (PostgreSQL's "smart", "fast" and "immediate" shutdown). */
const STOP_SIGNALS: Readonly<Record<StopMode, NodeJS.Signals>> = { smart: 'SIGTERM', fast: 'SIGINT', immediate: 'SIGQUIT' };

/** How long an exit is polled every 5 ms before the pace drops to 100 ms. */
const FAST_EXIT_POLL_FOR_MS = 5_000;

/** How a wait for the postmaster to exit ended. */
export type ExitWait = 'exited' | 'timeout';

/** pg_ctl and initdb for one data directory, run as the server's OS user. */
export class PgCtl {
  constructor(
    private readonly binDir: string,
    private readonly dataDir: string,
    private readonly runAs: string | null,
  ) {}

  private run(bin: string, args: readonly string[], timeoutMs: number, env?: Record<string, string>): Promise<CommandOutput> {
    return runCommand(join(this.binDir, bin), args, { runAs: this.runAs, timeoutMs, ...(env ? { env } : {}) });
  }

  /** initdb with extra arguments; the superuser password (if any) goes through a file, never argv. */
  initdb(args: readonly string[], timeoutMs = 300_000): Promise<CommandOutput> {
    return this.run('initdb', ['-D', this.dataDir, ...args], timeoutMs);
  }

  /** Launches the postmaster without waiting (`pg_ctl start -W`); output before logging starts goes to `logFile`. */
  async launch(logFile: string): Promise<void> {
    await this.run('pg_ctl', ['start', '-W', '-s', '-D', this.dataDir, '-l', logFile], 30_000);
  }

  /**
   * Signals the live postmaster itself, as pg_ctl would, without starting pg_ctl (through
   * runuser that is two process start-ups, each a fork of the agent, before pg_ctl runs):
   * 'none' when no postmaster runs (or it exited meanwhile), 'denied' when the agent may not
   * signal the server's OS user (pg_ctl is the caller's fallback then).
   */
  private async signalPostmaster(signal: NodeJS.Signals): Promise<'sent' | 'none' | 'denied'> {
    const pid = await this.livePid();
    if (pid === null) return 'none';
    try {
      process.kill(pid, signal);
      return 'sent';
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ESRCH' ? 'none' : 'denied';
    }
  }

  /**
   * Sends the postmaster the stop signal of `mode`, as `pg_ctl stop -W` would (tens of ms
   * saved on the switchover's critical path); pg_ctl where the agent may not signal it. False
   * when no postmaster was running.
   */
  async signalStop(mode: StopMode): Promise<boolean> {
    const sent = await this.signalPostmaster(STOP_SIGNALS[mode]);
    if (sent === 'none') return false;
    if (sent === 'denied') await this.run('pg_ctl', ['stop', '-W', '-s', '-m', mode, '-D', this.dataDir], 30_000);
    return true;
  }

  /**
   * SIGHUP to the postmaster, as `pg_ctl reload` sends it: a replica re-pointed at a new
   * primary reloads in every switchover. pg_ctl where the agent may not signal it, and to
   * report a server that does not run.
   */
  async reload(): Promise<void> {
    if ((await this.signalPostmaster('SIGHUP')) === 'sent') return;
    await this.run('pg_ctl', ['reload', '-s', '-D', this.dataDir], 30_000);
  }

  /** Asks a standby to promote (pg_ctl promote -W); the caller waits for the result. */
  async requestPromote(): Promise<void> {
    await this.run('pg_ctl', ['promote', '-W', '-s', '-D', this.dataDir], 30_000);
  }

  /** PID of a live postmaster of this data directory, or null. */
  async livePid(): Promise<number | null> {
    const pidFile = await readPostmasterPid(this.dataDir);
    if (!pidFile) return null;
    return (await postmasterAlive(pidFile.pid)) ? pidFile.pid : null;
  }

  /**
   * Waits until `pid` has exited; 'timeout' after `timeoutMs` (0: no limit). Polled every
   * 5 ms for the first seconds (a switchover hands the leader key on the moment the old primary
   * is down; a check is one kill(0) and a read of /proc), then every 100 ms.
   */
  async waitForExit(pid: number, timeoutMs: number): Promise<ExitWait> {
    const started = Date.now();
    const deadline = timeoutMs > 0 ? started + timeoutMs : Infinity;
    while (await postmasterAlive(pid)) {
      if (Date.now() >= deadline) return 'timeout';
      const delay = Date.now() - started < FAST_EXIT_POLL_FOR_MS ? 5 : 100;
      await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
    }
    return 'exited';
  }
}
