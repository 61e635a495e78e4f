import { serverSilent } from '../model/facts.js';
import { decision, type Decision } from './decision.js';
import { startTimeoutMs, type TickContext } from './tick-context.js';
import { disarmIfActive, leaderWatchdogActions } from './watchdog-policy.js';

const WHY = 'the server runs but does not answer';

/** The server runs without answering (see serverSilent): not a crash, and not a server to start over. */
export function isSilent(ctx: TickContext): boolean {
  return serverSilent(ctx.facts);
}

/**
 * A silent server that was last seen running as a primary, on a node that may not keep a
 * primary (it does not hold the leader key, or cannot reach the DCS): stopped at once, killed
 * where it does not react. Once it answers again it would take writes beside the leader
 * until the next tick noticed; as a stopped former primary it rejoins the usual way.
 */
export function stopSilentPrimary(ctx: TickContext, why: string): Decision {
  return decision(`${WHY} and was last seen as a primary, ${why}: stopping it`, [
    { type: 'stop', mode: 'immediate' },
    ...disarmIfActive(ctx),
  ], { job: 'stop' });
}

/**
 * Marks the status of a node whose silent server was last seen as a primary, whatever this
 * tick decided: the other nodes read it before they promote (see the leader race), since
 * the server would take writes again the moment it answers.
 */
export function flagSilentPrimary(ctx: TickContext, d: Decision): Decision {
  if (!isSilent(ctx) || ctx.input.memory.lastRole !== 'primary') return d;
  return { ...d, publish: { ...d.publish, silentPrimary: true } };
}

/** Whether a silent server must be stopped because it may come back as a primary nobody leads with (never in pause). */
export function silentPrimaryAtRisk(ctx: TickContext): boolean {
  return isSilent(ctx) && !ctx.paused && ctx.input.memory.lastRole === 'primary';
}

/**
 * The postmaster runs but its server does not answer: nothing is started over it. The
 * leader holds its key for up to primary_start_timeout, as for a crash, then stops the server
 * (killed where it does not react) and gives the key up only once it is down: a server that
 * answers again after the key went would be a second primary. Any other node waits, unless
 * its server was last seen as a primary (see stopSilentPrimary).
 */
export function silentServer(ctx: TickContext): Decision {
  // On /node as waiting_for, and logged once: a decision of routine actions is logged at debug level only.
  const waiting = (then: string) => ({ publish: { failsafeActive: false, waitingFor: `the server to answer (its postmaster runs; ${then})` } });
  if (!ctx.leaderIsMe) {
    if (silentPrimaryAtRisk(ctx)) return stopSilentPrimary(ctx, 'and this node does not hold the leader key');
    return decision(`waiting: ${WHY}`, [], waiting('nothing is started over it'));
  }
  const since = ctx.input.memory.primaryStartAt;
  if (!ctx.paused && since !== null && ctx.now - since > startTimeoutMs(ctx)) {
    return decision(`${WHY} after primary_start_timeout: stopping it, then giving the key up`, [
      { type: 'stop', mode: 'immediate' },
      { type: 'disarmWatchdog' },
      { type: 'releaseLeader' },
      { type: 'remember', patch: { primaryStartAt: null, lastRole: 'replica' } },
    ], { job: 'stop' });
  }
  const until = ctx.paused ? 'PAUSE: not failing over' : `failing over ${ctx.config.primary_start_timeout} s after it stopped answering`;
  return decision(`${WHY}: holding the leader key (${until})`, [
    { type: 'refreshLeader' },
    ...(ctx.standby !== null ? disarmIfActive(ctx) : leaderWatchdogActions(ctx)),
    ...(since === null ? [{ type: 'remember' as const, patch: { primaryStartAt: ctx.now } }] : []),
  ], waiting(`holding the leader key, ${until}`));
}
