import type { Action } from './decision.js';
import { BOOTSTRAP_ROLLBACK } from './maintenance.js';
import type { TickContext } from './tick-context.js';

/**
 * A failed bootstrap is undone (server stopped, key released, its own new data directory
 * removed, but never one its build refused to touch, claim dropped) only up to and including the server's start, or the operator's
 * post_bootstrap script when there is one (a cluster whose script failed is not the cluster
 * the operator asked for; no member copies it before the initialize key names it): from
 * then on the initialize key may name its system identifier. A later step that fails (the
 * DCS did not answer) is finished by the leader's own ticks instead (finishBootstrap), except
 * the initialize write after a post_bootstrap script: that data is still marked unfinished,
 * no health check sent clients to it, and it is undone (unfinishedBootstrap).
 */
export function bootstrapRollback(actions: readonly Action[]): { fromIndex: number; untilIndex: number; actions: Action[]; keepDataOn: string[] } {
  const started = Math.max(
    actions.findIndex((a) => a.type === 'start'),
    actions.findIndex((a) => a.type === 'postBootstrap'),
  );
  // A build that refused the directory (somebody's files, a database) made nothing there: it is not removed.
  return { fromIndex: 1, untilIndex: started < 0 ? actions.length : started + 1, actions: [...BOOTSTRAP_ROLLBACK], keepDataOn: ['data_dir_not_empty'] };
}

/**
 * What a bootstrap that failed after its server started left undone, for the member holding
 * the leader key to finish: the system identifier in the claimed (still empty) initialize key,
 * and the bootstrap configuration when the cluster has none.
 */
export function finishBootstrap(ctx: TickContext): { readonly actions: Action[]; readonly messages: string[] } {
  const actions: Action[] = [];
  const messages: string[] = [];
  if (ctx.cluster.initialize === '') {
    actions.push({ type: 'writeInitialize' });
    messages.push('recording the system identifier the bootstrap did not write');
  }
  if (ctx.cluster.config === null) {
    actions.push({ type: 'writeConfig', value: ctx.input.local.bootstrapDcs });
    messages.push('writing the bootstrap configuration the cluster lacks');
  }
  return { actions, messages };
}
