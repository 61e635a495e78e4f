import { decision, type Action, type Decision } from './decision.js';
import { activeFailoverKey } from './failover-key.js';
import { becomeStandbyLeader } from './standby-cluster.js';
import { prePromoteSyncActions } from './sync-mode.js';
import { startTimeoutMs, type TickContext } from './tick-context.js';
import { leaderWatchdogActions, prePromoteWatchdogActions } from './watchdog-policy.js';

/**
 * How long a switchover's candidate waits for the WAL up to the old leader's shutdown
 * checkpoint before it promotes anyway. A streaming candidate has it when the key is
 * released (the old primary exits only after its replicas confirmed the last WAL); one that
 * lost its connection meanwhile gets this long, then goes ahead as a failover would.
 */
export const SWITCHOVER_CATCH_UP_MS = 2000;

/**
 * Takes (or keeps) the leader key and makes this server the writable primary. The order
 * is the safety argument: the key first (atomic create, or a refresh when we hold it), then
 * the watchdog, then in synchronous mode the sync key naming only us (so no stale standby can
 * be promoted after us), and only then the promotion. The history key records the
 * new timeline afterwards, and a failover key that led here is cleared.
 * With `db.pre_promote` set, the operator's fencing script runs right after the key is taken.
 * A failure before the promotion gives the key back; a failed promotion keeps it (the
 * server may still finish promoting) and the next tick tries again. The checkpoint that
 * puts the new timeline into the control file follows on the leader's next tick
 * (leaderTick), so it never delays writability. `walAtLeast` (a switchover's candidate: the
 * old leader's last position) holds the promotion until the server has the WAL up to there.
 * In a standby cluster the winner becomes the standby leader instead (see becomeStandbyLeader).
 */
export function takeLeadership(ctx: TickContext, opts: { readonly acquire: boolean; readonly why: string; readonly walAtLeast?: number | null }): Decision {
  if (ctx.standby !== null) return becomeStandbyLeader(ctx, ctx.standby, opts);
  const lock: Action = opts.acquire ? { type: 'acquireLeader' } : { type: 'refreshLeader' };
  // A request that led here (immediate, or scheduled and due) is done: clear it, or the new leader would act on it again.
  const fk = activeFailoverKey(ctx);
  const clear: Action[] = fk ? [{ type: 'clearFailover', revision: fk.revision, reason: 'the switchover/failover is done' }] : [];
  if (ctx.isPrimary) {
    return decision(`${opts.why}: took the leader key as the running primary`, [lock, ...leaderWatchdogActions(ctx), ...clear]);
  }
  // The operator's fencing script runs under the key, once the watchdog is armed (a node whose
  // required watchdog cannot be armed gives the key back without fencing anybody, as Patroni
  // arms it before its pre_promote), and before the sync key narrows to this node alone: when
  // it fails, the key goes back and the other synchronous standbys can still be promoted.
  const fence: Action[] = ctx.input.local.prePromote ? [{ type: 'prePromote' }] : [];
  const before: Action[] = [lock, ...prePromoteWatchdogActions(ctx), ...fence, ...prePromoteSyncActions(ctx)];
  const actions: Action[] = [
    ...before,
    // Published until the leader's checkpoint after the promotion is done (rewinders wait for it).
    { type: 'remember', patch: { checkpointAfterPromote: false } },
    {
      type: 'promote',
      timeoutMs: startTimeoutMs(ctx),
      ...(opts.walAtLeast ? { walAtLeast: opts.walAtLeast, catchUpMs: Math.min(SWITCHOVER_CATCH_UP_MS, startTimeoutMs(ctx)) } : {}),
    },
    {
      type: 'recordPromotion',
      previous: ctx.cluster.history?.lines ?? [],
      timeline: ctx.facts.timeline,
      lsn: ctx.myWal,
      at: new Date(ctx.now).toISOString(),
      leader: ctx.me,
      maxLines: ctx.config.max_timelines_history,
    },
    { type: 'remember', patch: { lastRole: 'primary', primaryStartAt: null } },
    ...clear,
  ];
  return decision(`${opts.why}: promoting`, actions, {
    job: 'promote',
    rollback: { fromIndex: 1, untilIndex: before.length, actions: [{ type: 'disarmWatchdog' }, { type: 'releaseLeader' }] },
  });
}
