import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
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
  /**
   * The script may still run when the agent exits (on_stop at shutdown): its output goes
   * through a relay that outlives the agent. Off for the others, whose start it would slow
   * (a FIFO and a second process: about 3 ms more of the agent's event loop per start).
   */
  readonly mayOutliveAgent?: boolean;
}

/**
 * How long output already written is still read once the script exited, when something else
 * (a child it left in the background) keeps its stdout or stderr open: the pipes normally
 * close with the script, and this only bounds the wait for what is still in flight.
 */
const OUTPUT_GRACE_MS = 150;

/** Where the output relay finds `mkfifo` and `cat`, whatever PATH the agent was given. */
const RELAY_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The output relay: copies the script's output to the agent; once the agent is gone (the copy
 * fails with EPIPE, SIGPIPE being ignored), reads the rest into /dev/null until every writer
 * (the script and any child holding its output) has closed it, then exits.
 */
const RELAY_SCRIPT = "trap '' PIPE; cat || exec cat >/dev/null";

/** A relay started for one script: `fd`, the write end of its pipe, goes to the script as stdout and stderr. */
interface OutputRelay {
  readonly fd: number;
  readonly process: ChildProcess;
}

/**
 * Starts the output relay of one script, or null when it cannot be (no FIFO in the temporary
 * directory, no relay process): the script then writes into pipes to the agent itself, as
 * before. The pipe between the script and the relay is a FIFO opened here and unlinked at
 * once: blocking at both ends (a pipe Node makes is non-blocking at the agent's end, and a
 * shared descriptor would be non-blocking in the script too), and read by a process that does
 * not die with the agent.
 */
function startRelay(): OutputRelay | null {
  const fds: number[] = [];
  let dir: string | null = null;
  try {
    dir = mkdtempSync(join(tmpdir(), 'warden-output-'));
    const fifo = join(dir, 'out');
    if (spawnSync('mkfifo', ['-m', '600', fifo], { env: { PATH: RELAY_PATH }, stdio: 'ignore', timeout: 2000 }).status !== 0) return null;
    // A reader that does not wait, so the blocking write end opens at once; then the blocking read end.
    const probe = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    fds.push(probe);
    const write = openSync(fifo, constants.O_WRONLY);
    fds.push(write);
    const read = openSync(fifo, constants.O_RDONLY);
    fds.push(read);
    const relay = spawn('/bin/sh', ['-c', RELAY_SCRIPT, 'warden-output'], { detached: true, stdio: [read, 'pipe', 'ignore'], env: { PATH: RELAY_PATH } });
    relay.on('error', () => undefined);
    if (relay.pid === undefined) return null;
    fds.splice(fds.indexOf(write), 1);
    return { fd: write, process: relay };
  } catch {
    return null;
  } finally {
    for (const fd of fds) closeSync(fd);
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  }
}

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
 *
 * A script that may outlive the agent (`mayOutliveAgent`: on_stop, which the agent's shutdown
 * waits for a few seconds only) does not depend on the agent staying alive to write: its
 * stdout and stderr go to a relay process of their own (`warden-output`, detached), which
 * passes the output on to the agent and, once the agent is gone, reads it into /dev/null. It,
 * or a child it left, that writes after the agent exited goes on instead of dying of SIGPIPE
 * (writing to a pipe nobody reads). Other scripts, and any where the relay cannot start,
 * write into pipes to the agent, and such a write after the agent died kills them.
 */
export function startScript(command: string, o: ScriptOptions): RunningScript {
  const relay = o.mayOutliveAgent === true ? startRelay() : null;
  let child: ChildProcess;
  try {
    child = spawn('/bin/sh', ['-c', o.args?.length ? `${command} "$@"` : command, o.name, ...(o.args ?? [])], {
      detached: true,
      stdio: relay ? ['ignore', relay.fd, relay.fd] : ['ignore', 'pipe', 'pipe'],
      env: childEnvironment(o.env),
    });
  } finally {
    // The script holds the write end now (or failed to start: the relay then reads its end and exits).
    if (relay) closeSync(relay.fd);
  }
  const streams: Readable[] = relay ? [relay.process.stdout!] : [child.stdout!, child.stderr!];
  const output: string[] = [];
  let kept = 0;
  let settled = false;
  const keep = (chunk: Buffer) => {
    if (settled || kept >= 4096) return;
    const text = chunk.toString('utf8');
    output.push(text);
    kept += text.length;
  };
  for (const stream of streams) stream.on('data', keep);
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
    let open = streams.length;
    const end = (code: number | null, signal: NodeJS.Signals | null, spawnError: Error | null) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      // Output a lingering child still writes goes on being drained (the listeners above
      // discard from now on) but no longer keeps the agent's event loop alive.
      for (const stream of streams) (stream as Socket).unref?.();
      relay?.process.unref();
      resolve({ code, signal, timedOut, spawnError, output: output.join('').trim().slice(-1000), durationMs: Date.now() - startedAt });
    };
    child.once('error', (e) => end(null, null, e));
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      // The script is done: no timeout may kill the children it leaves behind.
      if (timer) clearTimeout(timer);
      // The output ends at once unless something else holds it (a child in the background);
      // then what was already in flight gets a short grace to be read before the end is told.
      if (open === 0) end(code, signal, null);
      else graceTimer = setTimeout(() => end(code, signal, null), OUTPUT_GRACE_MS);
    });
    for (const stream of streams) {
      stream.once('close', () => {
        if (--open === 0 && exit) end(exit.code, exit.signal, null);
      });
    }
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
