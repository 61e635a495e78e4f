import { join } from 'node:path';
import type { StopMode } from '../../ports/database.js';
import { postmasterAlive, readPostmasterPid } from './postmaster-pid.js';
import { runCommand, type CommandOutput } from './run-command.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

  /** Sends the stop signal of `mode` (pg_ctl stop -W); false when no postmaster was running. */
  async signalStop(mode: StopMode): Promise<boolean> {
    const pid = await this.livePid();
    if (pid === null) return false;
    await this.run('pg_ctl', ['stop', '-W', '-s', '-m', mode, '-D', this.dataDir], 30_000);
    return true;
  }

  /** SIGHUP through pg_ctl reload. */
  async reload(): Promise<void> {
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

  /** Waits until `pid` has exited, polling; 'timeout' after `timeoutMs` (0: no limit). */
  async waitForExit(pid: number, timeoutMs: number): Promise<ExitWait> {
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
    let delay = 10;
    while (await postmasterAlive(pid)) {
      if (Date.now() >= deadline) return 'timeout';
      await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
      delay = Math.min(delay * 2, 200);
    }
    return 'exited';
  }
}
