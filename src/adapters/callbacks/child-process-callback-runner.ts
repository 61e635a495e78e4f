import { spawn, type ChildProcess } from 'node:child_process';
import { childEnvironment } from '../process/child-environment.js';
import type { CallbackAction, CallbackRunner } from '../../ports/callbacks.js';
import type { Logger } from '../../ports/logger.js';

/** Options of the callback runner; the functions are asked at every call, so a reloaded file applies at once. */
export interface ChildProcessCallbackRunnerOptions {
  /** The command configured for each action (`db.callbacks`). */
  readonly commands: () => Readonly<Partial<Record<CallbackAction, string>>>;
  /** Seconds a callback may run before it is killed (`db.callback_timeout`). */
  readonly timeoutSeconds: () => number;
  /** The cluster name, the third argument. */
  readonly scope: string;
  readonly logger: Logger;
  /** Hears every failed callback (non-zero exit, signal, timeout, could not start): counted and reported as an event. */
  readonly onFailure: (action: CallbackAction, role: string, why: string) => void;
  /** Grace between SIGTERM and SIGKILL of a callback that is killed (default 2000 ms). */
  readonly killGraceMs?: number;
}

interface Running {
  readonly action: CallbackAction;
  readonly child: ChildProcess;
  readonly done: Promise<void>;
  superseded: boolean;
}

/**
 * Runs callbacks as child processes, Patroni's way: `<command> <action> <role> <scope>`, one
 * at a time, a newer callback killing the one still running (its process group: a script's
 * children too), except `on_reload`, which runs beside the others and only replaces an
 * earlier `on_reload`. The command line goes through `/bin/sh`, so it may hold arguments and
 * quoting of its own; the three arguments are passed as positional parameters, never
 * pasted into the command text. Output is logged at debug level; a timeout kills the
 * callback; failures go to `onFailure`.
 */
export class ChildProcessCallbackRunner implements CallbackRunner {
  private main: Running | null = null;
  private reload: Running | null = null;

  constructor(private readonly o: ChildProcessCallbackRunnerOptions) {}

  run(action: CallbackAction, role: string): void {
    const command = this.o.commands()[action];
    if (!command) return;
    const slot = action === 'on_reload' ? 'reload' : 'main';
    const previous = this[slot];
    if (previous) {
      previous.superseded = true;
      this.o.logger.info(`callback ${previous.action} still running: killed, ${action} replaces it`);
      this.kill(previous.child);
    }
    try {
      this[slot] = this.start(command, action, role, () => {
        if (this[slot]?.child === running.child) this[slot] = null;
      });
    } catch (error) {
      this.o.onFailure(action, role, `could not start: ${(error as Error).message}`);
      return;
    }
    const running = this[slot]!;
  }

  async idle(): Promise<void> {
    while (this.main || this.reload) await Promise.all([this.main?.done, this.reload?.done]);
  }

  private start(command: string, action: CallbackAction, role: string, finished: () => void): Running {
    const child = spawn('/bin/sh', ['-c', `${command} "$@"`, 'warden-callback', action, role, this.o.scope], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnvironment(),
    });
    const output: string[] = [];
    const keep = (chunk: Buffer) => {
      if (output.join('').length < 4096) output.push(chunk.toString('utf8'));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const startedAt = Date.now();
    const timeoutMs = Math.max(1, this.o.timeoutSeconds()) * 1000;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.kill(child);
    }, timeoutMs);
    timer.unref();
    const running: Running = {
      action,
      child,
      superseded: false,
      done: new Promise<void>((resolve) => {
        const end = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
          clearTimeout(timer);
          finished();
          const text = output.join('').trim().slice(-1000);
          const ms = Date.now() - startedAt;
          if (spawnError) {
            this.o.onFailure(action, role, `could not start: ${spawnError.message}`);
          } else if (timedOut) {
            this.o.onFailure(action, role, `timed out after ${Math.round(timeoutMs / 1000)} s and was killed${text ? `: ${text}` : ''}`);
          } else if (running.superseded) {
            this.o.logger.info(`callback ${action} was killed: a newer callback replaced it`);
          } else if (code !== 0) {
            this.o.onFailure(action, role, `${signal ? `killed by ${signal}` : `exited with code ${code}`}${text ? `: ${text}` : ''}`);
          } else {
            this.o.logger.info(`callback ${action} ${role} finished`, { duration_ms: ms, ...(text ? { output: text } : {}) });
          }
          resolve();
        };
        child.once('error', (e) => end(null, null, e));
        child.once('close', (code, signal) => end(code, signal));
      }),
    };
    this.o.logger.info(`callback ${action} started`, { role, pid: child.pid });
    return running;
  }

  /** SIGTERM to the callback's process group, SIGKILL after the grace if it is still there. */
  private kill(child: ChildProcess): void {
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
    }, this.o.killGraceMs ?? 2000);
    t.unref();
  }
}

/** A runner that runs nothing (no callbacks configured, tests). */
export class NoCallbacks implements CallbackRunner {
  run(): void {}
  async idle(): Promise<void> {}
}
