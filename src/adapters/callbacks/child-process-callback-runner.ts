import { scriptFailure, startScript } from '../process/script-process.js';
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
  readonly kill: () => void;
  readonly hasExited: () => boolean;
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
    // One that already exited is only reading its last output: nothing to kill (its
    // background children are left alone), and its own outcome stands.
    if (previous && !previous.hasExited()) {
      previous.superseded = true;
      this.o.logger.info(`callback ${previous.action} still running: killed, ${action} replaces it`);
      previous.kill();
    }
    try {
      this[slot] = this.start(command, action, role, () => {
        if (this[slot] === running) this[slot] = null;
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
    const timeoutMs = Math.max(1, this.o.timeoutSeconds()) * 1000;
    const script = startScript(command, { name: 'warden-callback', args: [action, role, this.o.scope], timeoutMs, ...(this.o.killGraceMs === undefined ? {} : { killGraceMs: this.o.killGraceMs }) });
    const running: Running = {
      action,
      kill: script.kill,
      hasExited: script.hasExited,
      superseded: false,
      done: script.done.then((exit) => {
        finished();
        const why = scriptFailure(exit, timeoutMs);
        if (running.superseded && !exit.spawnError && !exit.timedOut) this.o.logger.info(`callback ${action} was killed: a newer callback replaced it`);
        else if (why !== null) this.o.onFailure(action, role, why);
        else this.o.logger.info(`callback ${action} ${role} finished`, { duration_ms: exit.durationMs, ...(exit.output ? { output: exit.output } : {}) });
      }),
    };
    void script.pid.then((pid) => pid !== null && this.o.logger.info(`callback ${action} started`, { role, pid }));
    return running;
  }
}

/** A runner that runs nothing (no callbacks configured, tests). */
export class NoCallbacks implements CallbackRunner {
  run(): void {}
  async idle(): Promise<void> {}
}
