import type { FailoverKey } from '../model/cluster.js';
import type { TickContext } from './tick-context.js';

/** A failover key that matters now: immediate, or scheduled and already due. */
export function activeFailoverKey(ctx: TickContext): FailoverKey | null {
  const fk = ctx.cluster.failover;
  if (!fk) return null;
  if (fk.scheduledAt !== null) {
    const at = Date.parse(fk.scheduledAt);
    if (Number.isNaN(at) || at > ctx.now) return null;
  }
  return fk;
}
