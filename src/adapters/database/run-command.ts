import { childEnvironment } from '../process/child-environment.js';
import { execFile } from 'node:child_process';

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
 * Resolves in a later turn of the event loop, once it has polled for I/O again: starting a
 * process forks the agent, which holds its event loop 1-2 ms, and that cost then comes on its
 * own rather than on top of the work that asked for the command (a tick, a request).
 */
const afterNextPoll = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

/** Runs `file args` (optionally as another OS user), capturing output; rejects with CommandFailure. */
export async function runCommand(file: string, args: readonly string[], opts: RunOptions): Promise<CommandOutput> {
  const [cmd, argv] = opts.runAs ? ['runuser', ['-u', opts.runAs, '--', file, ...args]] : [file, [...args]];
  const label = [file.split('/').pop(), ...args.filter((a) => !a.includes('password'))].join(' ');
  await afterNextPoll();
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      argv,
      {
        // a directory every user can enter: some tools refuse to run from an unreadable cwd
        cwd: '/',
        env: childEnvironment(opts.env),
        timeout: opts.timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (!err) {
          resolve({ stdout, stderr });
          return;
        }
        const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string | null };
        const exitCode = typeof e.code === 'number' ? e.code : null;
        const timedOut = Boolean(e.killed) && opts.timeoutMs > 0 && exitCode === null;
        const spawnError = typeof e.code === 'string' ? `${e.code}: ${e.message}\n` : '';
        reject(new CommandFailure(label, exitCode, e.signal ?? null, timedOut, spawnError + String(stderr), String(stdout)));
      },
    );
  });
}
