import { execFile } from 'node:child_process';
import { childEnvironment } from '../process/child-environment.js';
import { sharedLauncher } from '../process/shell-launcher.js';

/** Result of a finished external command. */
export interface CommandOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/** An external command that failed: exit code or signal, whether it timed out, and its stderr. */
export class CommandFailure extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly signal: string | null,
    readonly timedOut: boolean,
    readonly stderr: string,
    readonly stdout: string,
  ) {
    const why = timedOut ? 'timed out' : exitCode !== null ? `exited with code ${exitCode}` : `killed by ${signal ?? 'a signal'}`;
    const tail = stderr.trim() || stdout.trim();
    super(`${command} ${why}${tail ? `: ${tail.slice(-2000)}` : ''}`);
    this.name = 'CommandFailure';
  }
}

/** How to run one external command. */
export interface RunOptions {
  /** Run as this OS user through `runuser` (only possible as root); null runs directly. */
  readonly runAs: string | null;
  /** 0 means no limit. */
  readonly timeoutMs: number;
  /** Added to this process's environment (e.g. PGPASSWORD: never on the command line). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Runs `file args` (optionally as another OS user) from the root directory (a directory every
 * user can enter: some tools refuse to run from an unreadable cwd), capturing output; rejects
 * with CommandFailure. It goes through the launcher shell: forking the agent itself holds its
 * event loop 1-4 ms; started directly only where the launcher cannot run (no writable
 * temporary directory, no /bin/sh).
 */
export async function runCommand(file: string, args: readonly string[], opts: RunOptions): Promise<CommandOutput> {
  const [cmd, argv] = opts.runAs ? ['runuser', ['-u', opts.runAs, '--', file, ...args]] : [file, [...args]];
  const label = [file.split('/').pop(), ...args.filter((a) => !a.includes('password'))].join(' ');
  const launched = sharedLauncher().launch(cmd, argv, opts.env ? { env: opts.env } : {});
  let timedOut = false;
  const timer =
    opts.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          launched.kill('SIGTERM');
        }, opts.timeoutMs)
      : null;
  const r = await launched.done.finally(() => {
    if (timer) clearTimeout(timer);
  });
  if (r.launchError && !r.handedOver) return runDirect(cmd, argv, label, opts);
  if (r.launchError) throw new CommandFailure(label, null, null, false, `${r.launchError.message}\n${r.stderr}`, r.stdout);
  if (r.code === 0) return { stdout: r.stdout, stderr: r.stderr };
  throw new CommandFailure(label, r.code, r.signal, timedOut && r.code === null, r.stderr, r.stdout);
}

/** Starts the command from the agent itself (a fork of it), for where the launcher cannot run. */
function runDirect(cmd: string, argv: readonly string[], label: string, opts: RunOptions): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { cwd: '/', env: childEnvironment(opts.env), timeout: opts.timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) {
        resolve({ stdout, stderr });
        return;
      }
      const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string | null };
      const exitCode = typeof e.code === 'number' ? e.code : null;
      const timedOut = Boolean(e.killed) && opts.timeoutMs > 0 && exitCode === null;
      const spawnError = typeof e.code === 'string' ? `${e.code}: ${e.message}\n` : '';
      reject(new CommandFailure(label, exitCode, e.signal ?? null, timedOut, spawnError + String(stderr), String(stdout)));
    });
  });
}
