import { decision, type Action, type Decision, type UpstreamRef } from './decision.js';
import { releaseLock } from './demote.js';
import { hasDiverged } from './history.js';
import { clusterTimeline, leaderUpstream, mySlot, startTimeoutMs, type TickContext } from './tick-context.js';
import { leaderWatchdogActions } from './watchdog-policy.js';

/** Server states in which another action would only get in the way. */
const TRANSITIONAL = new Set(['starting', 'restarting', 'stopping', 'creating_replica', 'initdb', 'bootstrap_starting', 'custom_bootstrap']);

/** Brings a diverged server back: pg_rewind when allowed and not already failed on this timeline, else a fresh copy. */
export function rewindOrReinitialize(ctx: TickContext, upstream: UpstreamRef, why: string): Decision {
  const timeline = ctx.facts.timeline;
  const start: Action = { type: 'start', upstream, standby: true, ...mySlot(ctx), timeoutMs: startTimeoutMs(ctx) };
  if (ctx.config.db.use_pg_rewind && ctx.input.memory.rewindFailedOnTimeline !== timeline) {
    const actions: Action[] = [{ type: 'stop', mode: 'fast' }, { type: 'rewind', source: upstream }, start];
    return decision(`${why}: rewinding from ${upstream.name}`, actions, {
      job: 'rewind',
      rollback: { fromIndex: 1, untilIndex: 2, actions: [{ type: 'remember', patch: { rewindFailedOnTimeline: timeline } }] },
    });
  }
  const actions: Action[] = [
    { type: 'stop', mode: 'immediate' },
    { type: 'removeData' },
    { type: 'remember', patch: { rewindFailedOnTimeline: null, lastRole: null, appliedParameters: null } },
    { type: 'createReplica', source: upstream },
    start,
  ];
  return decision(`${why}: reinitializing from ${upstream.name}`, actions, { job: 'reinitialize' });
}

/**
 * A running replica with another node as leader: rewind or reinitialize when its
 * timeline branched off the leader's, point it at the leader when it follows someone else.
 */
export function replicaTick(ctx: TickContext): Decision {
  const upstream = leaderUpstream(ctx);
  if (!upstream) return decision(`following nobody: leader ${ctx.leaderName} has not published its address yet`);
  const tl = ctx.facts.timeline;
  // The leader's member key lags a promotion by up to a tick; the history key is written right after it.
  const leaderTl = clusterTimeline(ctx);
  // Streaming proves the WAL agrees with the upstream's; a wrong upstream is re-pointed below and checked then.
  const streaming = ctx.facts.replicationState === 'streaming';
  if (!ctx.paused && !streaming && tl !== null && leaderTl !== null && ctx.myWal !== null) {
    const diverged = hasDiverged(tl, ctx.myWal, leaderTl, ctx.cluster.history?.lines ?? []);
    if (diverged) return rewindOrReinitialize(ctx, upstream, `timeline ${tl} diverged from leader ${upstream.name} (timeline ${leaderTl})`);
  }
  if (ctx.facts.upstreamConnUrl !== upstream.connUrl) {
    return decision(`following the new leader ${upstream.name}`, [{ type: 'follow', upstream, ...mySlot(ctx), timeoutMs: startTimeoutMs(ctx) }], { job: 'follow' });
  }
  return decision(`no action: I am ${ctx.me}, a replica following ${upstream.name}${ctx.paused ? '; PAUSE' : ''}`);
}

/** The data directory is empty (a new node, or wiped): clone the leader. */
export function emptyDataDirectory(ctx: TickContext): Decision {
  if (ctx.leaderIsMe) return releaseLock(ctx, 'this node has no data');
  if (ctx.paused) return decision('PAUSE: no data directory; not creating a replica');
  const upstream = leaderUpstream(ctx);
  if (!upstream || ctx.leaderMember?.state !== 'running') return decision('waiting for a running leader to create a replica from');
  return decision(`creating a replica from ${upstream.name}`, [
    { type: 'remember', patch: { lastRole: null, rewindFailedOnTimeline: null, appliedParameters: null } },
    { type: 'createReplica', source: upstream },
    { type: 'start', upstream, standby: true, ...mySlot(ctx), timeoutMs: startTimeoutMs(ctx) },
  ], { job: 'create replica' });
}

/**
 * The server is initialized but not running. Paused: leave it (and give the key back).
 * Holding the key after a crash as primary: start it as primary again within
 * primary_start_timeout (0 or timed out: give the key up and start as a replica). Holding
 * the key otherwise: start read-only, the next tick promotes. Else start as a replica of
 * the leader (or of nobody until there is one).
 */
export function recoverStopped(ctx: TickContext): Decision {
  const state = ctx.facts.state;
  if (TRANSITIONAL.has(state)) {
    if (!ctx.leaderIsMe || ctx.paused) return decision(`waiting: the server is ${state}`);
    // A leader whose server does not come up within primary_start_timeout gives the key up.
    const since = ctx.input.memory.primaryStartAt;
    if (since !== null && ctx.now - since > startTimeoutMs(ctx)) {
      return decision(`the server is still ${state} after primary_start_timeout: stopping it and giving the key up`, [
        { type: 'disarmWatchdog' },
        { type: 'releaseLeader' },
        { type: 'remember', patch: { primaryStartAt: null } },
        { type: 'stop', mode: 'immediate' },
      ], { job: 'stop' });
    }
    return decision(`waiting: the server is ${state} (holding the leader key)`, [
      { type: 'refreshLeader' },
      ...leaderWatchdogActions(ctx),
      ...(since === null ? [{ type: 'remember' as const, patch: { primaryStartAt: ctx.now } }] : []),
    ]);
  }
  if (ctx.paused) {
    if (ctx.leaderIsMe) return releaseLock(ctx, 'PAUSE: the server is not running');
    return decision('PAUSE: the server is not running; not starting it');
  }
  const timeoutMs = startTimeoutMs(ctx);
  const asReplicaOf = (upstream: UpstreamRef | null): Action => ({ type: 'start', upstream, standby: true, ...(upstream ? mySlot(ctx) : {}), timeoutMs });
  if (ctx.leaderIsMe) {
    const memory = ctx.input.memory;
    if (memory.lastRole === 'primary') {
      const since = memory.primaryStartAt;
      if (ctx.config.primary_start_timeout === 0 || (since !== null && ctx.now - since > timeoutMs)) {
        return decision('the primary did not come back within primary_start_timeout: giving the key up to fail over', [
          { type: 'disarmWatchdog' },
          { type: 'releaseLeader' },
          { type: 'remember', patch: { primaryStartAt: null, lastRole: 'replica' } },
          asReplicaOf(null),
        ], { job: 'start' });
      }
      const left = since === null ? timeoutMs : Math.max(1000, timeoutMs - (ctx.now - since));
      return decision('starting the primary again after a crash (holding the leader key)', [
        { type: 'refreshLeader' },
        ...leaderWatchdogActions(ctx),
        { type: 'remember', patch: { primaryStartAt: since ?? ctx.now } },
        { type: 'start', upstream: null, standby: false, timeoutMs: left },
      ], { job: 'start' });
    }
    return decision('starting read-only because this node holds the leader key', [{ type: 'refreshLeader' }, asReplicaOf(null)], { job: 'start' });
  }
  const upstream = leaderUpstream(ctx);
  if (upstream) return decision(`starting as a replica of ${upstream.name}`, [asReplicaOf(upstream)], { job: 'start' });
  return decision('starting as a replica (no leader yet)', [asReplicaOf(null)], { job: 'start' });
}
