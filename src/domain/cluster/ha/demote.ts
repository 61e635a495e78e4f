import { decision, type Action, type Decision, type UpstreamRef } from './decision.js';
import { leaderUpstream, mySlot, startTimeoutMs, type TickContext } from './tick-context.js';

/**
 * Immediate demotion of a primary that may no longer write (lock lost, refresh failed,
 * DCS gone, another leader): client sessions are cut first so writes stop at once, then
 * the server is stopped without a checkpoint and started again as a replica (of the known
 * leader, or of nobody until one appears). `release` also drops the leader key when we
 * still hold it (watchdog required but failing, a lost start race...).
 */
export function demoteImmediate(ctx: TickContext, why: string, opts: { readonly release?: boolean } = {}): Decision {
  const upstream: UpstreamRef | null = leaderUpstream(ctx);
  const actions: Action[] = [
    { type: 'forgetLock' },
    { type: 'terminateSessions' },
    { type: 'stop', mode: 'immediate' },
    { type: 'disarmWatchdog' },
  ];
  if (opts.release) actions.push({ type: 'releaseLeader' });
  actions.push(
    { type: 'remember', patch: { lastRole: 'replica', primaryStartAt: null, ssn: null, checkpointAfterPromote: null } },
    { type: 'start', upstream, standby: true, ...mySlot(ctx), timeoutMs: startTimeoutMs(ctx) },
  );
  return decision(`demoting immediately: ${why}`, actions, { job: 'demote' });
}

/**
 * Graceful demotion for a switchover: a checkpoint keeps the shutdown short, a fast
 * shutdown lets every connected replica receive the last WAL, and the leader key is released
 * only once the shutdown checkpoint is written, so nobody can promote while this server still
 * accepts writes. The shutdown checkpoint's position goes to the status key first: the
 * candidate promotes only once it holds WAL up to there (see takeLeadership), which the WAL
 * senders still hand over while the old primary's processes exit.
 */
export function demoteGraceful(ctx: TickContext, why: string): Decision {
  // An immediate stop writes no shutdown checkpoint, so the candidate has no final position to
  // wait for: only synchronous replication still guarantees it holds every acknowledged commit.
  // Without it the shutdown is waited for, whatever primary_stop_timeout says (as in Patroni).
  const stopTimeout = ctx.config.synchronous_mode === false ? 0 : ctx.config.primary_stop_timeout;
  const actions: Action[] = [
    { type: 'checkpoint' },
    // primary_stop_timeout > 0 in synchronous mode: a shutdown that takes longer is escalated to immediate. The key goes once the
    // shutdown checkpoint is written (no write can follow it), not after the processes have exited.
    { type: 'stop', mode: 'fast', ...(stopTimeout > 0 ? { timeoutMs: stopTimeout * 1000 } : {}), untilShutdownCheckpoint: true },
    { type: 'disarmWatchdog' },
    { type: 'writeFinalPosition' },
    { type: 'releaseLeader' },
    { type: 'remember', patch: { lastRole: 'replica', primaryStartAt: null, ssn: null, checkpointAfterPromote: null } },
    { type: 'start', upstream: null, standby: true, timeoutMs: startTimeoutMs(ctx) },
  ];
  return decision(`demoting gracefully: ${why}`, actions, { job: 'demote' });
}

/**
 * Gives the leader key back without touching a server that is not a writable primary. One
 * whose promotion may still complete is stopped first: it could become writable after the
 * key went to someone else.
 */
export function releaseLock(ctx: TickContext, why: string): Decision {
  if (ctx.running && ctx.input.promotionMayComplete === true) {
    return decision(`stopping the server (its promotion may still complete), then releasing the leader key: ${why}`, [
      { type: 'stop', mode: 'immediate' },
      { type: 'disarmWatchdog' },
      { type: 'releaseLeader' },
      { type: 'remember', patch: { lastRole: 'replica', primaryStartAt: null, checkpointAfterPromote: null } },
      // A replica of nobody until the next tick names the new leader.
      { type: 'start', upstream: null, standby: true, timeoutMs: startTimeoutMs(ctx) },
    ], { job: 'demote' });
  }
  const actions: Action[] = [{ type: 'releaseLeader' }];
  if (ctx.input.watchdog.active) actions.push({ type: 'disarmWatchdog' });
  return decision(`releasing the leader key: ${why}`, actions);
}
