/** The operator's blocking scripts, named as in Patroni: `pre_promote` (a fencing script), `before_stop` and `post_bootstrap`. */
export type HookName = 'pre_promote' | 'before_stop' | 'post_bootstrap';

/** How a hook script ran: none configured, succeeded, or failed (exit code, signal, timeout, could not start) and why. */
export type HookOutcome = { readonly ran: false } | { readonly ran: true; readonly ok: true } | { readonly ran: true; readonly ok: false; readonly why: string };

/**
 * Runs the operator's blocking scripts (`db.pre_promote`, `db.before_stop`,
 * `bootstrap.post_bootstrap`) and waits for them, unlike callbacks: a promotion goes ahead
 * only when `pre_promote` succeeded, a stop waits for `before_stop`, a new cluster is
 * registered only once `post_bootstrap` succeeded. `run` never throws; the runner logs and
 * reports each outcome.
 */
export interface HookScripts {
  run(name: HookName): Promise<HookOutcome>;
}
/** Inversify token of the HookScripts port. */
export const HookScripts = Symbol.for('warden.HookScripts');
