import { sharedLauncher } from './shell-launcher.js';

/** How an operator's script ended. */
export interface ScriptExit {
  /** Exit code; null when killed by a signal or never started. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Killed because it ran past its time. */
  readonly timedOut: boolean;
  /** The start failed (no /bin/sh, no process left). */
  readonly spawnError: Error | null;
  /** Its stdout and stderr, the last kilobyte, trimmed. */
  readonly output: string;
  readonly durationMs: number;
}

/** A running script: its pid, a way to kill it (with its children) and its end. */
export interface RunningScript {
  /** Its pid, which is also its process group's, once it runs; null when it never ran. */
  readonly pid: Promise<number | null>;
  /** Settles once the script's own process exited (its background children may live on). */
  readonly done: Promise<ScriptExit>;
  /** Kills the script's process group; does nothing once the script exited, so children it left running are spared. */
  kill(): void;
  /** Its own process exited (the end may still wait a moment for output in flight). */
  hasExited(): boolean;
}

/** Options of one script run. */
export interface ScriptOptions {
  /** Positional parameters after the command line (`"$@"`), never pasted into its text. */
  readonly args?: readonly string[];
  /** `$0` of the shell: what `ps` and the script's own messages call it. */
  readonly name: string;
  /** Killed after this long; null: never (it runs until it ends). */
  readonly timeoutMs: number | null;
  /** Added to the script's environment (a password, libpq options). */
  readonly env?: Readonly<Record<string, string>>;
  /** Grace between SIGTERM and SIGKILL of a killed script (default 2000 ms). */
  readonly killGraceMs?: number;
}

/**
 * How long output already written is still waited for once the script exited, when something
 * else (a child it left in the background) keeps its stdout or stderr open: the output
 * normally ends with the script, and this only bounds the wait for what is still in flight.
 */
const OUTPUT_GRACE_MS = 150;

/** What is kept of a script's output (the end reports its last kilobyte of it). */
const KEPT_OUTPUT_BYTES = 4096;

/**
 * Starts an operator's command line through `/bin/sh` (it may carry arguments and quoting of
 * its own) in a process group of its own, so a kill reaches the script's children too. It
 * gets the agent's environment without its `WARDEN_*` variables (they may carry passwords).
 * It is started by the agent's launcher shell, not by a fork of the agent.
 *
 * The script is over when its own process exits, as Patroni waits for it (`wait()`), not when
 * its stdout and stderr close: a child it started in the background (`cmd &`, `nohup`,
 * `ssh -f`) inherits them and may hold them for hours, and, if it called setsid, out of the
 * reach of a kill of the group. Its output goes to a drain of its own, never to the agent:
 * what the script or a child it left writes later, even after the agent exited (on_stop, which
 * the agent's shutdown waits for a few seconds only), is read and thrown away, never refused,
 * so nothing dies of SIGPIPE and nothing piles up on disk.
 */
export function startScript(command: string, o: ScriptOptions): RunningScript {
  const launched = sharedLauncher().launch('/bin/sh', ['-c', o.args?.length ? `${command} "$@"` : command, o.name, ...(o.args ?? [])], {
    ...(o.env ? { env: o.env } : {}),
    ownProcessGroup: true,
    drained: { keepBytes: KEPT_OUTPUT_BYTES, graceMs: OUTPUT_GRACE_MS },
  });
  const startedAt = Date.now();
  let timedOut = false;
  const kill = () => {
    if (launched.hasExited()) return;
    launched.kill('SIGTERM');
    setTimeout(() => launched.kill('SIGKILL'), o.killGraceMs ?? 2000).unref();
  };
  const timer =
    o.timeoutMs === null
      ? null
      : setTimeout(() => {
          // Exited already, its last output being read: it did not run past its time.
          if (launched.hasExited()) return;
          timedOut = true;
          kill();
        }, Math.max(1, o.timeoutMs));
  timer?.unref();
  const done = launched.done.then((r): ScriptExit => {
    if (timer) clearTimeout(timer);
    return { code: r.code, signal: r.signal, timedOut, spawnError: r.launchError, output: r.stdout.trim().slice(-1000), durationMs: Date.now() - startedAt };
  });
  return { pid: launched.pid, done, kill, hasExited: launched.hasExited };
}

/** Why a script that did not succeed failed, in a few words and its output; null for a success. */
export function scriptFailure(e: ScriptExit, timeoutMs: number | null): string | null {
  const text = e.output ? `: ${e.output}` : '';
  if (e.spawnError) return `could not start: ${e.spawnError.message}`;
  if (e.timedOut) return `timed out after ${Math.round((timeoutMs ?? 0) / 1000)} s and was killed${text}`;
  if (e.code === 0) return null;
  return `${e.signal ? `killed by ${e.signal}` : `exited with code ${e.code}`}${text}`;
}
