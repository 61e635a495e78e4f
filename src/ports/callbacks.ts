/** The callback actions, as Patroni names them (the first argument of the command). */
export type CallbackAction = 'on_start' | 'on_stop' | 'on_restart' | 'on_reload' | 'on_role_change';

/**
 * Runs the operator's callback commands (`db.callbacks`) in the background: `<command>
 * <action> <role> <scope>`. `run` returns at once and never throws; the HA loop never waits
 * for a callback. A failure (exit code, signal, timeout) is reported by the runner itself.
 */
export interface CallbackRunner {
  /** Starts the command configured for `action` (if any) with the node's `role`. */
  run(action: CallbackAction, role: string): void;
  /** Resolves when no callback runs (tests, shutdown). */
  idle(): Promise<void>;
}
/** Inversify token of the CallbackRunner port. */
export const CallbackRunner = Symbol.for('warden.CallbackRunner');
