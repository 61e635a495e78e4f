import { decision, needs, type Decision } from './decision.js';
import { demoteImmediate } from './demote.js';
import { configureBeforeStart } from './maintenance.js';
import { isSilent, silentPrimaryAtRisk, stopSilentPrimary } from './silent-server.js';
import { leaderUpstream, mySlot, startTimeoutMs, type TickContext } from './tick-context.js';

/**
 * The DCS read failed this tick, or the leader could not renew its lock. A primary may not keep writing without a lock it can
 * refresh: it demotes at once, unless paused (nothing automatic happens in pause) or
 * failsafe mode applies: it was the leader, the failsafe key lists the members, and every
 * one of them accepted our POST /failsafe this round (the loop runs the round on
 * request). A stopped replica is started read-only; a server that runs without answering and
 * was last seen as a primary is stopped (it cannot be confirmed); nothing else changes while blind.
 */
export function withoutDcs(ctx: TickContext): Decision {
  if (ctx.isPrimary) {
    if (ctx.paused) return decision('PAUSE: DCS is not accessible; not demoting');
    const failsafeMembers = ctx.cluster.failsafe;
    // Only other members can confirm a primary: a leader that listed none (alone when it wrote the key) does not
    // stay without the DCS, or members that came up since, unlisted and never asked, could never elect anyone.
    const others = failsafeMembers ? Object.keys(failsafeMembers).filter((n) => n !== ctx.me) : [];
    if (ctx.config.failsafe_mode && ctx.leaderIsMe && failsafeMembers && failsafeMembers[ctx.me] !== undefined && others.length > 0) {
      if (ctx.input.failsafeConfirmed === null) return needs('failsafe', 'DCS is not accessible: asking the failsafe members to confirm this primary');
      if (ctx.input.failsafeConfirmed) {
        const kick = ctx.input.watchdog.active ? [{ type: 'kickWatchdog' as const, required: ctx.input.node.watchdogMode === 'required' }] : [];
        // Reads work but the renewal failed: try it again, after the extension it cannot undo.
        const retry = ctx.input.dcsReachable ? [{ type: 'refreshLeader' as const }] : [];
        return decision('DCS is not accessible: continuing as primary because failsafe mode is enabled and every member confirmed', [
          { type: 'extendLockByFailsafe' },
          ...kick,
          ...retry,
        ], { publish: { failsafeActive: true } });
      }
      return demoteImmediate(ctx, 'DCS is not accessible and not every failsafe member confirmed this primary');
    }
    return demoteImmediate(ctx, 'DCS is not accessible');
  }
  // As an answering primary would be demoted; a leader in failsafe mode keeps it until its lease runs out (the
  // fencer's deadline): one probe that timed out on a loaded machine must not end a primary the members confirm.
  const failsafeLeader = ctx.config.failsafe_mode && ctx.leaderIsMe;
  if (silentPrimaryAtRisk(ctx) && !failsafeLeader) return stopSilentPrimary(ctx, 'and the DCS is not accessible');
  if (isSilent(ctx)) return decision('DCS is not accessible; the server runs but does not answer: nothing to do');
  if (!ctx.running && ctx.facts.initialized && !ctx.paused && ctx.facts.state !== 'starting' && ctx.facts.state !== 'restarting') {
    const upstream = ctx.leaderIsMe ? null : leaderUpstream(ctx);
    return decision('DCS is not accessible: starting read-only', [
      ...configureBeforeStart(ctx),
      { type: 'start', upstream, standby: true, ...(upstream ? mySlot(ctx) : {}), timeoutMs: startTimeoutMs(ctx) },
    ], { job: 'start' });
  }
  return decision('DCS is not accessible: nothing to do');
}
