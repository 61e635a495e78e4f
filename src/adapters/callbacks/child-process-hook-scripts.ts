import type { HookName, HookOutcome, HookScripts } from '../../ports/hook-scripts.js';
import type { Logger } from '../../ports/logger.js';
import { scriptFailure, startScript } from '../process/script-process.js';

/** What a hook is called with beyond its own command line. */
export interface HookCall {
  /** Positional parameters (`"$@"`). */
  readonly args?: readonly string[];
  /** Added to its environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Runs until it ends instead of being killed after `callback_timeout` (a bootstrap's script may load a whole schema). */
  readonly untimed?: boolean;
}

/** Options of the hook runner; the functions are asked at every run, so a reloaded file applies at once. */
export interface ChildProcessHookScriptsOptions {
  /** The command configured for each hook (`db.pre_promote`, `db.before_stop`, `bootstrap.post_bootstrap`). */
  readonly commands: () => Readonly<Partial<Record<HookName, string>>>;
  /** Seconds a script may run before it is killed (`db.callback_timeout`). */
  readonly timeoutSeconds: () => number;
  /** Arguments and environment of each hook; absent: none, as Patroni calls pre_promote and before_stop. */
  readonly callOf?: (name: HookName) => HookCall;
  readonly logger: Logger;
  /** Hears every failed script, and reports it (counted, an event): the runner does not log it itself. */
  readonly onFailure: (name: HookName, why: string) => void;
  /** Grace between SIGTERM and SIGKILL of a script that is killed (default 2000 ms). */
  readonly killGraceMs?: number;
}

/**
 * Runs a hook as Patroni does (pre_promote and before_stop with no arguments, their command
 * lines may carry their own; post_bootstrap with a connection URL) and waits for it: through
 * `/bin/sh`, in a process group of its own that a timeout kills whole. It is over when its own
 * process exits: a child it leaves in the background neither holds the promotion, the stop or
 * the bootstrap nor is killed.
 */
export class ChildProcessHookScripts implements HookScripts {
  constructor(private readonly o: ChildProcessHookScriptsOptions) {}

  async run(name: HookName): Promise<HookOutcome> {
    const command = this.o.commands()[name];
    if (!command) return { ran: false };
    const call = this.o.callOf?.(name) ?? {};
    const timeoutMs = call.untimed ? null : Math.max(1, this.o.timeoutSeconds()) * 1000;
    let why: string | null;
    try {
      const script = startScript(command, {
        name: `warden-${name.replace('_', '-')}`,
        timeoutMs,
        ...(call.args ? { args: call.args } : {}),
        ...(call.env ? { env: call.env } : {}),
        ...(this.o.killGraceMs === undefined ? {} : { killGraceMs: this.o.killGraceMs }),
      });
      void script.pid.then((pid) => pid !== null && this.o.logger.info(`${name} script started`, { pid }));
      const exit = await script.done;
      why = scriptFailure(exit, timeoutMs);
      if (why === null) {
        this.o.logger.info(`${name} script finished`, { duration_ms: exit.durationMs, ...(exit.output ? { output: exit.output } : {}) });
        return { ran: true, ok: true };
      }
    } catch (error) {
      why = `could not start: ${(error as Error).message}`;
    }
    // onFailure reports it (an event, logged); a pre_promote failure is also the promotion's failure, logged with it.
    this.o.onFailure(name, why);
    return { ran: true, ok: false, why };
  }
}
