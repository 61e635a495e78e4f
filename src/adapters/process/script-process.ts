import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { childEnvironment } from './child-environment.js';

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

/** A running script: its process, a way to kill it (with its children) and its end. */
export interface RunningScript {
  readonly child: ChildProcess;
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
 * How long output already written is still read once the script exited, when something else
 * (a child it left in the background) keeps its stdout or stderr open: the pipes normally
 * close with the script, and this only bounds the wait for what is still in flight.
 */
const OUTPUT_GRACE_MS = 150;

/**
 * Starts an operator's command line through `/bin/sh` (it may carry arguments and quoting of
 * its own) in a process group of its own, so a kill reaches the script's children too. It
 * gets the agent's environment without its `WARDEN_*` variables (they may carry passwords).
 *
 * The script is over when its own process exits, as Patroni waits for it (`wait()`), not when
 * its stdout and stderr close: a child it started in the background (`cmd &`, `nohup`,
 * `ssh -f`) inherits them and may hold them for hours, and, if it called setsid, out of the
 * reach of a kill of the group. What the children write afterwards is read and thrown away,
 * never refused: closing the pipes would kill them with SIGPIPE at their next write, and
 * Patroni leaves children that outlive their script alone.
 */
export function startScript(command: string, o: ScriptOptions): RunningScript {
  const child = spawn('/bin/sh', ['-c', o.args?.length ? `${command} "$@"` : command, o.name, ...(o.args ?? [])], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnvironment(o.env),
  });
  const output: string[] = [];
  let kept = 0;
  let settled = false;
  const keep = (chunk: Buffer) => {
    if (settled || kept >= 4096) return;
    const text = chunk.toString('utf8');
    output.push(text);
    kept += text.length;
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const startedAt = Date.now();
  let timedOut = false;
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const kill = () => {
    if (!exited()) killGroup(child, o.killGraceMs ?? 2000);
  };
  const timer =
    o.timeoutMs === null
      ? null
      : setTimeout(() => {
          timedOut = true;
          kill();
        }, Math.max(1, o.timeoutMs));
  timer?.unref();
  const done = new Promise<ScriptExit>((resolve) => {
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let graceTimer: NodeJS.Timeout | null = null;
    const end = (code: number | null, signal: NodeJS.Signals | null, spawnError: Error | null) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      // Pipes a lingering child still holds go on being drained (the listeners above discard
      // from now on) but no longer keep the agent's event loop alive.
      (child.stdout as Socket | null)?.unref();
      (child.stderr as Socket | null)?.unref();
      resolve({ code, signal, timedOut, spawnError, output: output.join('').trim().slice(-1000), durationMs: Date.now() - startedAt });
    };
    child.once('error', (e) => end(null, null, e));
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      // The script is done: no timeout may kill the children it leaves behind.
      if (timer) clearTimeout(timer);
      // 'close' follows at once unless something else holds the pipes; then what was
      // already in flight gets a short grace to be read before the end is told.
      graceTimer = setTimeout(() => end(code, signal, null), OUTPUT_GRACE_MS);
    });
    child.once('close', (code, signal) => end(exit ? exit.code : code, exit ? exit.signal : signal, null));
  });
  return { child, done, kill, hasExited: exited };
}

/** Why a script that did not succeed failed, in a few words and its output; null for a success. */
export function scriptFailure(e: ScriptExit, timeoutMs: number | null): string | null {
  const text = e.output ? `: ${e.output}` : '';
  if (e.spawnError) return `could not start: ${e.spawnError.message}`;
  if (e.timedOut) return `timed out after ${Math.round((timeoutMs ?? 0) / 1000)} s and was killed${text}`;
  if (e.code === 0) return null;
  return `${e.signal ? `killed by ${e.signal}` : `exited with code ${e.code}`}${text}`;
}

/** SIGTERM to the script's process group, SIGKILL after the grace if it is still there. */
function killGroup(child: ChildProcess, graceMs: number): void {
  const pid = child.pid;
  if (pid === undefined) return;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const t = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) signal('SIGKILL');
  }, graceMs);
  t.unref();
}
