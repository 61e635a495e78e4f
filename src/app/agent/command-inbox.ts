import type { Decision, PendingCommands, RestartConditions } from '../../domain/cluster/ha/decision.js';
import { NO_COMMANDS } from '../../domain/cluster/ha/decision.js';
import type { ActionResult } from '../../ports/agent-control.js';

/**
 * What operators asked of the agent and the callers waiting for the outcome: at most one
 * restart and one reinitialize at a time, and a pending reload of the local file. The loop
 * takes the pending commands into a tick; decide() answers them (`resolveCommand`), and a
 * command the tick left unanswered is answered with the tick's reason.
 */
export class CommandInbox {
  private nextId = 1;
  private restart: PendingCommands['restart'] = null;
  private reinit: PendingCommands['reinitialize'] = null;
  private reload = false;
  private readonly waiters = new Map<number, (result: ActionResult) => void>();

  constructor(private readonly onSubmit: () => void) {}

  /** Asks for a restart now; refused while one is pending or `busy` names a running job. */
  submitRestart(conditions: RestartConditions, busy: string | null): Promise<ActionResult> {
    if (this.restart || busy) return Promise.resolve({ ok: false, error: 'action_in_progress', message: `${busy ?? 'restart'} already in progress` });
    return this.submit((id) => (this.restart = { id, conditions }));
  }

  /** Asks for a reinitialization; refused while one is pending. */
  submitReinitialize(force: boolean, fromLeader: boolean): Promise<ActionResult> {
    if (this.reinit) return Promise.resolve({ ok: false, error: 'action_in_progress', message: 'reinitialize already requested' });
    return this.submit((id) => (this.reinit = { id, force, fromLeader }));
  }

  /** Asks for a re-read of the local configuration file. */
  requestReload(): void {
    this.reload = true;
    this.onSubmit();
  }

  /** Whether a reload was asked since the last call (and forgets it). */
  takeReload(): boolean {
    const asked = this.reload;
    this.reload = false;
    return asked;
  }

  /** The commands a tick should decide on. */
  pending(): PendingCommands {
    return this.restart || this.reinit ? { restart: this.restart, reinitialize: this.reinit } : NO_COMMANDS;
  }

  /** Answers the caller waiting on command `id` (no-op when nobody waits). */
  resolve(id: number, result: ActionResult): void {
    const w = this.waiters.get(id);
    if (!w) return;
    this.waiters.delete(id);
    w(result);
  }

  /** After a tick: the commands it decided on leave the inbox; those it did not answer get its reason. */
  settle(taken: PendingCommands, d: Decision): void {
    const answered = new Set(d.actions.flatMap((a) => (a.type === 'resolveCommand' ? [a.id] : [])));
    for (const cmd of [taken.restart, taken.reinitialize]) {
      if (!cmd) continue;
      if (this.restart?.id === cmd.id) this.restart = null;
      if (this.reinit?.id === cmd.id) this.reinit = null;
      if (!answered.has(cmd.id)) this.resolve(cmd.id, { ok: false, error: 'not_possible_now', message: d.message });
    }
  }

  private submit(register: (id: number) => void): Promise<ActionResult> {
    const id = this.nextId++;
    const result = new Promise<ActionResult>((resolve) => this.waiters.set(id, resolve));
    register(id);
    this.onSubmit();
    return result;
  }
}
