import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { access, rm } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { childEnvironment } from './child-environment.js';
import { readFileTail } from './file-tail.js';
import { launcherDirPrefix, removeLauncherDirsOfGoneProcesses } from './launcher-dirs.js';

/** How a launched command ended, with what it wrote. */
export interface LaunchedExit {
  /** Exit code; null when killed by a signal or never started. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** Empty when the output was merged into stdout. */
  readonly stderr: string;
  /** The launcher failed: the command never ran (`handedOver` false) or its end was never told. */
  readonly launchError: Error | null;
  /** The command was handed to the launcher shell (false: it never ran, and may be started another way). */
  readonly handedOver: boolean;
}

/** How to launch one command. */
export interface LaunchOptions {
  /** Added to the agent's environment (without its `WARDEN_*` variables). */
  readonly env?: Readonly<Record<string, string>>;
  /** In a process group (and session) of its own, so a kill of the group reaches its children. */
  readonly ownProcessGroup?: boolean;
  /** What is kept of each stream once it ended: its last bytes, at most this many (default 64 MiB). */
  readonly maxOutputBytes?: number;
  /**
   * stdout and stderr merged, in the order written, into a drain that keeps their first
   * `keepBytes` and reads the rest into /dev/null for as long as anything writes (a child the
   * command left in the background): such a child never fills a file nor dies of a closed pipe.
   * The end waits up to `graceMs` for output still in flight when something else holds them.
   */
  readonly drained?: { readonly keepBytes: number; readonly graceMs: number };
}

/** A command handed to the launcher. */
export interface LaunchedCommand {
  /** Its pid (its process group's with ownProcessGroup) once it runs; null when it never ran. */
  readonly pid: Promise<number | null>;
  /** Settles once the command's own process exited (children it left may run on). */
  readonly done: Promise<LaunchedExit>;
  /** Signals the command (its group with ownProcessGroup); does nothing before it started or once it exited. */
  kill(signal: NodeJS.Signals): void;
  /** Its own process exited. */
  hasExited(): boolean;
}

/**
 * The launcher: reads a request (an id and a mode, then shell text up to the end marker) and runs
 * the text in a subshell, reporting `S id pid` once it runs and `E id status` once it exited. The
 * reporting subshell is orphaned at once (`( ... & )`), so the launcher leaves no zombie and
 * each command is reaped by the one waiting for it. Its commands start as an asynchronous
 * list, which a shell without job control starts with SIGINT and SIGQUIT ignored: `env
 * --default-signal` (coreutils 8.31 and later) gives them back their default, as a process the
 * agent started itself has them. Its own tools (mkfifo, dd, cat, rm, setsid, env) are found
 * whatever PATH the agent was given; the commands it runs get that PATH.
 */
const LAUNCHER_SCRIPT = `end=$1
dir=$2
agent_path=$PATH
PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
mkfifo=$(command -v mkfifo) dd=$(command -v dd) cat=$(command -v cat) rm=$(command -v rm) setsid=$(command -v setsid)
if env --default-signal=INT true 2>/dev/null; then reset="$(command -v env) --default-signal=INT,QUIT"; else reset=; fi
PATH=$agent_path
while IFS=' ' read -r id mode keep; do
  script=
  while IFS= read -r line; do
    [ "$line" = "$end" ] && break
    script="$script$line
"
  done
  ( (
    if [ "$mode" = drained ]; then
      fifo="$dir/$id.fifo"
      "$mkfifo" -m 600 "$fifo" && exec 3<>"$fifo" 4<"$fifo" 5>"$fifo" 3>&- || { "$rm" -f "$fifo"; echo "E $id 125"; exit; }
      "$rm" -f "$fifo"
      { "$dd" bs=1 count="$keep" >"$dir/$id.out"; : >"$dir/$id.drained"; exec "$cat" >/dev/null; } <&4 5>&- 2>/dev/null &
      ( eval "$script" ) >&5 2>&1 4<&- &
      pid=$!
      exec 4<&- 5>&-
    else
      ( eval "$script" ) &
      pid=$!
    fi
    echo "S $id $pid"
    wait $pid
    echo "E $id $?"
  ) & )
  # What the request carried (a password in its environment) is not kept in the launcher.
  script= line=
done
`;

/** Single-quotes `s` for the shell: nothing in it is expanded. */
function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How long a command killed before it started may wait for the launcher to start it. */
const STUCK_MS = 5000;

/** A signal's name from a shell's status of 128 + its number; null for a plain exit code. */
function signalOf(status: number): NodeJS.Signals | null {
  if (status <= 128) return null;
  const found = Object.entries(constants.signals).find(([, n]) => n === status - 128);
  return found ? (found[0] as NodeJS.Signals) : null;
}

interface Pending {
  pid: number | null;
  exited: boolean;
  /** A kill asked for before the command reported its pid, sent once it does. */
  signal: NodeJS.Signals | null;
  /** Told the pid once the command runs. */
  started: ((pid: number) => void) | null;
  readonly kill: (signal: NodeJS.Signals) => void;
  /** `handedOver` false: the launcher never ran (its shell could not start), nor did the command. */
  readonly finish: (status: number | null, error: Error | null, handedOver?: boolean) => void;
}

/** One running launcher shell and the commands it reports on. */
interface Instance {
  readonly child: ChildProcess;
  readonly pending: Map<number, Pending>;
  alive: boolean;
}

/**
 * Starts commands through one long-lived `/bin/sh` instead of forking the agent for each: a
 * fork copies the page tables of the whole process (~60 MiB resident), which holds the agent's
 * event loop 1-4 ms per command, at the moments it starts most of them (a switchover's
 * `pg_ctl start`, the callbacks). The shell is small; starting it costs one such fork, once.
 *
 * A command's stdout and stderr go to files in a private temporary directory (mode 0700),
 * read once it exited (PostgreSQL's tools), or to a drain (`drained`: operators' scripts, whose
 * background children may write for hours): nothing waits on a pipe that a child holds, and
 * nothing dies of one once the agent is gone. Passwords reach a command through its
 * environment, never its command line or a file.
 */
export class ShellLauncher {
  private current: Instance | null = null;
  private dir: string | null = null;
  private nextId = 1;
  private readonly end = `__warden_end_${randomBytes(12).toString('hex')}__`;
  /** The environment the running shell was started with (what a request changes is exported). */
  private baseEnv: NodeJS.ProcessEnv = {};

  /** `shell`: the POSIX shell that runs the launcher (another only in tests). */
  constructor(private readonly shell = '/bin/sh') {}

  /** Runs `file args` with the agent's environment (plus `o.env`) from the root directory. */
  launch(file: string, args: readonly string[], o: LaunchOptions = {}): LaunchedCommand {
    const id = this.nextId++;
    let pending: Pending | null = null;
    const done = new Promise<LaunchedExit>((resolve) => {
      const fail = (e: Error): void => resolve({ code: null, signal: null, stdout: '', stderr: '', launchError: e, handedOver: false });
      let instance: Instance;
      let dir: string;
      try {
        instance = this.instance();
        dir = this.dir!;
      } catch (e) {
        fail(e as Error);
        return;
      }
      const out = join(dir, `${id}.out`);
      const err = join(dir, `${id}.err`);
      const drained = o.drained ?? null;
      const lines = [drained ? 'exec </dev/null' : `exec </dev/null >${quote(out)} 2>${quote(err)} || exit 126`, 'cd / || exit 126'];
      // The shell has the agent's environment as it was when the shell started (the agent
      // changes its own only before it starts anything); a request adds to it. Reading
      // process.env again for every command costs a lookup in C++ per variable, tens of
      // microseconds a command, in the middle of a promotion.
      for (const [k, v] of Object.entries(o.env ?? {})) {
        // A name the shell cannot export (none the agent sets) stays as the launcher got it.
        if (this.baseEnv[k] === v || !NAME.test(k)) continue;
        lines.push(`export ${k}=${quote(v)}`);
      }
      lines.push(`exec $reset ${o.ownProcessGroup ? '$setsid ' : ''}${[file, ...args].map(quote).join(' ')}`);
      const text = lines.join('\n');
      if (text.split('\n').includes(this.end)) {
        fail(new Error('an argument holds the launcher end marker'));
        return;
      }
      const limit = o.maxOutputBytes ?? 64 * 1024 * 1024;
      pending = {
        pid: null,
        exited: false,
        signal: null,
        started: null,
        kill: (signal) => {
          const p = pending!;
          if (p.exited) return;
          if (p.pid === null) {
            // Sent once it reports its pid; a launcher that has not started it by then is stuck
            // (frozen, starved): it is killed, so it cannot start the command later, and the
            // command ends as never told.
            if (p.signal === null) {
              setTimeout(() => {
                if (p.pid !== null || p.exited) return;
                instance.pending.delete(id);
                instance.child.kill('SIGKILL');
                p.finish(null, new Error(`the launcher shell did not start the command within ${STUCK_MS / 1000} s of its kill`));
                this.release(instance);
              }, STUCK_MS).unref();
            }
            p.signal = signal;
            return;
          }
          const send = (target: number) => {
            try {
              process.kill(target, signal);
              return true;
            } catch {
              return false;
            }
          };
          // No group of its own (no setsid found): then the command alone. Already gone: nothing.
          if (!(o.ownProcessGroup && send(-p.pid))) send(p.pid);
        },
        finish: (status, error, handedOver = true) => {
          pending!.exited = true;
          const marker = join(dir, `${id}.drained`);
          const settled = drained ? appears(marker, drained.graceMs) : Promise.resolve();
          void settled.then(() => Promise.all([readFileTail(out, limit), drained ? '' : readFileTail(err, limit)])).then(([stdout, stderr]) => {
            for (const f of drained ? [out, marker] : [out, err]) void rm(f, { force: true });
            if (error) resolve({ code: null, signal: null, stdout, stderr, launchError: error, handedOver });
            else {
              const signal = status === null ? null : signalOf(status);
              resolve({ code: signal ? null : status, signal, stdout, stderr, launchError: null, handedOver: true });
            }
          });
        },
      };
      instance.pending.set(id, pending);
      this.hold(instance);
      instance.child.stdin!.write(`${id} ${drained ? `drained ${Math.max(0, Math.floor(drained.keepBytes))}` : 'files 0'}\n${text}\n${this.end}\n`);
    });
    return {
      pid: new Promise<number | null>((resolve) => {
        void done.then(() => resolve(pending?.pid ?? null));
        if (pending) pending.started = resolve;
      }),
      done,
      kill: (signal) => pending?.kill(signal),
      hasExited: () => pending?.exited ?? true,
    };
  }

  /** The running shell, started when there is none (or the last one died). */
  private instance(): Instance {
    if (this.current?.alive) return this.current;
    if (this.dir === null) {
      const dir = mkdtempSync(join(tmpdir(), launcherDirPrefix()));
      removeAtExit(dir);
      void removeLauncherDirsOfGoneProcesses(tmpdir());
      // From a file rather than `-c`: `ps` then shows `warden-launcher <file>`, not the script.
      writeFileSync(join(dir, 'launcher.sh'), LAUNCHER_SCRIPT, { mode: 0o600 });
      this.dir = dir;
    }
    this.baseEnv = childEnvironment();
    const child = spawn(this.shell, [join(this.dir, 'launcher.sh'), this.end, this.dir], { argv0: 'warden-launcher', stdio: ['pipe', 'pipe', 'ignore'], env: this.baseEnv });
    const instance: Instance = { child, pending: new Map(), alive: true };
    // A launcher that died is replaced at the next request; commands it already handed over
    // still report through the pipe their orphaned reporters hold, read to its end below.
    const gone = () => {
      instance.alive = false;
      if (this.current === instance) this.current = null;
    };
    child.on('error', (e) => {
      gone();
      // The shell never started (no /bin/sh, no process left): nothing it was given ran.
      if (child.pid !== undefined) return;
      for (const p of instance.pending.values()) p.finish(null, e, false);
      instance.pending.clear();
    });
    child.on('exit', gone);
    child.stdin!.on('error', () => undefined);
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      const [kind, idText, value] = line.split(' ');
      const p = instance.pending.get(Number(idText));
      if (!p) return;
      if (kind === 'S') {
        p.pid = Number(value);
        p.started?.(p.pid);
        if (p.signal) p.kill(p.signal);
      } else if (kind === 'E') {
        instance.pending.delete(Number(idText));
        p.finish(Number(value), null);
        this.release(instance);
      }
    });
    rl.on('close', () => {
      // Every reporter is gone: what is still pending will never be told.
      const e = new Error('the launcher shell exited before the command reported its end');
      for (const p of instance.pending.values()) p.finish(null, e, child.pid !== undefined);
      instance.pending.clear();
      gone();
    });
    this.current = instance;
    this.release(instance);
    return instance;
  }

  /** Keeps the agent's event loop alive while a command of `instance` runs. */
  private hold(instance: Instance): void {
    instance.child.ref();
    (instance.child.stdout as unknown as { ref?: () => void }).ref?.();
  }

  /** Lets the agent exit once nothing of `instance` is pending. */
  private release(instance: Instance): void {
    if (instance.pending.size > 0) return;
    instance.child.unref();
    (instance.child.stdout as unknown as { unref?: () => void }).unref?.();
    (instance.child.stdin as unknown as { unref?: () => void }).unref?.();
  }
}

/** Resolves once `path` exists, or after `withinMs` (polled every 10 ms: a drain ends within milliseconds when nothing else holds the output). */
async function appears(path: string, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  for (;;) {
    if (await access(path).then(() => true, () => false)) return;
    if (Date.now() >= until) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

const removedAtExit = new Set<string>();

/** Removes `dir` when the process exits (one exit listener for every launcher). */
function removeAtExit(dir: string): void {
  if (removedAtExit.size === 0) process.once('exit', () => removedAtExit.forEach((d) => rmSync(d, { recursive: true, force: true })));
  removedAtExit.add(dir);
}

let shared: ShellLauncher | null = null;

/** The agent's one launcher, started on first use. */
export function sharedLauncher(): ShellLauncher {
  shared ??= new ShellLauncher();
  return shared;
}
