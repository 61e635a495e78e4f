import { startFailureOutsideData } from '../rules/start-failure.js';
import { decision, needs, type Action, type Decision, type UpstreamRef } from './decision.js';
import { releaseLock } from './demote.js';
import { hasDiverged } from '../model/history.js';
import { configureBeforeStart, desiredParameters, FRESH_DATA } from './maintenance.js';
import { cloneRemoteWhenNobodyRuns, startAsStandbyLeader } from './standby-cluster.js';
import { clusterTimeline, copySource, copySourceText, followTarget, leaderUpstream, mySlot, replicaSource, startTimeoutMs, type FollowTarget, type TickContext } from './tick-context.js';
import { disarmIfActive, leaderWatchdogActions } from './watchdog-policy.js';
import { isSilent, silentServer } from './silent-server.js';
import { withReplicaSlots } from './slots.js';
import { acknowledgedCommitHolders } from './sync-mode.js';

/** Server states in which another action would only get in the way. */
const TRANSITIONAL = new Set(['starting', 'restarting', 'stopping', 'creating_replica', 'initdb', 'bootstrap_starting', 'custom_bootstrap']);

/** Failed starts as a replica after which the data directory is repaired: a rewind first, a reinitialize after that. */
export const START_FAILURES_BEFORE_REPAIR = 3;

/**
 * Failed starts in a row after which a leader whose primary does not come back gives its key
 * up before primary_start_timeout, where its synchronous standbys hold every commit it
 * acknowledged: waiting longer costs availability and saves nothing (a full disk, a broken
 * setting or damaged data rarely mend themselves between two attempts).
 */
export const PRIMARY_START_FAILURES_BEFORE_FAILOVER = 2;

/**
 * How long a replica may fail to stream from a leader that answers as a running primary,
 * with no sign of divergence, before it is reinitialized: the WAL it needs is gone from
 * the leader (a leader cloned or promoted after it fell behind; no archive to fetch it
 * from), so it can never catch up on its own.
 */
export function stuckReplicaMs(ctx: TickContext): number {
  return Math.max(30_000, 3 * ctx.loopWaitMs);
}

/** The role the leader runs with once it serves: the primary, or in a standby cluster the standby leader (a valid pg_rewind source too). */
function servingLeaderRole(ctx: TickContext): string {
  return ctx.standby !== null ? 'standby_leader' : 'primary';
}

/**
 * Why the leader cannot serve as pg_rewind's source yet (null: it can). pg_rewind reads
 * the source's timeline from its control file, which a promotion updates only with the
 * checkpoint after it: rewinding earlier compares the wrong timelines. So the leader must
 * be a running primary (the standby leader, in a standby cluster) whose member key shows
 * the cluster's timeline and no pending checkpoint after its promotion.
 */
export function rewindSourceNotReady(ctx: TickContext): string | null {
  const m = ctx.leaderMember;
  if (!m) return `leader ${ctx.leaderName ?? '?'} has not published its member key`;
  const role = servingLeaderRole(ctx);
  if (m.state !== 'running' || m.role !== role) return `leader ${m.name} is not a running ${role === 'primary' ? 'primary' : 'standby leader'} yet`;
  const clusterTl = clusterTimeline(ctx);
  if (clusterTl !== null && (m.timeline ?? 0) < clusterTl) return `leader ${m.name} does not show timeline ${clusterTl} yet`;
  if (m.checkpointAfterPromote === false) return `leader ${m.name} has not finished its checkpoint after the promotion`;
  return null;
}

/** Why a data directory would have to be rebuilt: what decides whether the agent may do it on its own. */
export type RebuildCause = 'diverged' | 'rewind_failed' | 'stuck';

/**
 * Whether the dynamic configuration lets the agent delete and rebuild the data directory for
 * `cause` on its own; otherwise only an operator's reinitialize does (nothing is deleted
 * unless asked).
 */
function rebuildAllowed(ctx: TickContext, cause: RebuildCause): boolean {
  if (cause === 'rewind_failed') return ctx.config.db.remove_data_directory_on_rewind_failure;
  if (cause === 'diverged') return ctx.config.db.remove_data_directory_on_diverged_timelines;
  return false;
}

/** The opt-in that would let the agent rebuild for `cause`, for the operator's message. */
function optInFor(cause: RebuildCause): string {
  if (cause === 'rewind_failed') return ' (or set db.remove_data_directory_on_rewind_failure to let the agent do it)';
  if (cause === 'diverged') return ' (or set db.remove_data_directory_on_diverged_timelines to let the agent do it)';
  return '';
}

/** The node keeps its data directory and waits for an operator: a clear state on /node, one log line per change, a metric. */
export function reinitializeRequired(ctx: TickContext, why: string, cause: RebuildCause): Decision {
  const cmd = `wardenctl reinit ${ctx.me}`;
  const required = `${why}: the data directory must be rebuilt from the leader; run ${cmd}${optInFor(cause)}`;
  return decision(`keeping the data directory: ${required}`, [], { publish: { failsafeActive: false, reinitializeRequired: required } });
}

/**
 * Whether pg_rewind failed on this node's timeline in a way that says the data needs a rebuild.
 * One that failed for a cause outside the data (its crash recovery refused the configuration,
 * a full disk) before it began rewriting anything is tried again (backing off), never a reason
 * to rebuild: the data may hold the only copy of commits. One that stopped while rewriting
 * always is (see rewindInterrupted): what it held past the branch point was being discarded anyway.
 */
function rewindFailedOnThisTimeline(ctx: TickContext): boolean {
  const failure = rewindFailureHere(ctx);
  if (failure === null) return false;
  return failure.code === 'rewind_interrupted' || startFailureOutsideData(failure.error) === null;
}

/** The last rewind failure, when pg_rewind failed on the timeline this node's data is on now (null: it did not). */
function rewindFailureHere(ctx: TickContext): { readonly error: string; readonly code?: string } | null {
  const timeline = ctx.facts.timeline;
  if (timeline === null || ctx.input.memory.rewindFailedOnTimeline !== timeline) return null;
  return ctx.input.memory.jobFailures.find((f) => f.job === 'rewind') ?? { error: '' };
}

/**
 * The last pg_rewind on this timeline stopped after it began rewriting the data directory
 * (a full disk, a lost source, a killed agent), whatever the cause: PostgreSQL does not vouch
 * for such a directory, so it is neither started nor rewound again, only rebuilt.
 */
function rewindInterrupted(ctx: TickContext): boolean {
  return rewindFailureHere(ctx)?.code === 'rewind_interrupted';
}

/**
 * Brings a diverged server back: pg_rewind when allowed and not already failed on this
 * timeline (once the leader can be its source), else a fresh copy, which deletes the data
 * directory and is therefore done only where the configuration allows it for `cause`
 * (otherwise the node waits for the operator, see reinitializeRequired). Either needs the
 * leader, so it must answer as a running primary now (asked through `peers`).
 * `reinitialize` skips the rewind (it was tried and the server still does not start).
 */
export function rewindOrReinitialize(
  ctx: TickContext,
  upstream: UpstreamRef,
  why: string,
  opts: { readonly reinitialize?: boolean; readonly before?: readonly Action[]; readonly cause?: RebuildCause } = {},
): Decision {
  const timeline = ctx.facts.timeline;
  const start: Action = { type: 'start', standby: true, ...replicaSource(ctx, upstream), timeoutMs: startTimeoutMs(ctx) };
  const before = opts.before ?? [];
  const rewindFailed = rewindFailedOnThisTimeline(ctx);
  const rewind = ctx.config.db.use_pg_rewind && !rewindFailed && !opts.reinitialize;
  if (!rewind) {
    const cause: RebuildCause = opts.cause ?? (rewindFailed ? 'rewind_failed' : 'diverged');
    if (!rebuildAllowed(ctx, cause)) {
      const what = rewindFailed ? `${why}; pg_rewind failed on timeline ${timeline}` : !ctx.config.db.use_pg_rewind && cause === 'diverged' ? `${why}; pg_rewind is not allowed (db.use_pg_rewind)` : why;
      return reinitializeRequired(ctx, what, cause);
    }
  }
  const notReady = rewind ? rewindSourceNotReady(ctx) : ctx.leaderMember?.state !== 'running' ? `leader ${upstream.name} is not running` : null;
  if (notReady) return decision(`${why}: waiting to ${rewind ? 'rewind' : 'reinitialize'}: ${notReady}`);
  // Its member key outlives a dead leader by up to a ttl: only a leader that answers now is worth stopping this server for.
  if (ctx.input.peers === null) return needs('peers', `${why}: asking ${upstream.name} whether it answers`);
  const leaderNow = ctx.input.peers.get(upstream.name) ?? null;
  if (!leaderNow || leaderNow.xlog === undefined || leaderNow.role !== servingLeaderRole(ctx)) {
    return decision(`${why}: waiting to ${rewind ? 'rewind' : 'reinitialize'}: leader ${upstream.name} does not answer as a running ${servingLeaderRole(ctx).replace('_', ' ')}`);
  }
  if (rewind) {
    const here = timeline !== null && ctx.myWal !== null ? { timeline, position: ctx.myWal } : null;
    const actions: Action[] = [
      ...before,
      ...configureBeforeStart(ctx),
      { type: 'stop', mode: 'fast' },
      { type: 'rewind', source: upstream },
      { type: 'remember', patch: { rewoundAt: here } },
      start,
    ];
    const rewindAt = actions.findIndex((a) => a.type === 'rewind');
    return decision(`${why}: rewinding from ${upstream.name}`, actions, {
      job: 'rewind',
      rollback: { fromIndex: rewindAt, untilIndex: rewindAt + 1, actions: [{ type: 'remember', patch: { rewindFailedOnTimeline: timeline } }], unless: ['rewind_source_unreachable'] },
    });
  }
  const source = copySource(ctx, upstream);
  const actions: Action[] = [
    ...before,
    { type: 'stop', mode: 'immediate' },
    { type: 'remember', patch: FRESH_DATA },
    ...configureBeforeStart(ctx, true),
    { type: 'createReplica', source, replacing: true },
    start,
  ];
  return decision(`${why}: reinitializing from ${copySourceText(source, upstream)}`, actions, { job: 'reinitialize' });
}

/** How a replica's upstream reads in log lines: `leader node1`, `node3 (replicatefrom)`, `the archive (nostream)`. */
function targetText(t: FollowTarget, leaderName: string): string {
  if (t.kind === 'archive') return 'the archive only (nostream)';
  if (t.kind === 'member') return `${t.upstream!.name} (replicatefrom)`;
  return `leader ${leaderName}${t.fallback ? ` (replicatefrom not used: ${t.fallback})` : ''}`;
}

/**
 * A running replica with another node as leader. One whose WAL goes past the point where
 * the leader's timeline branched off its own has diverged: it can never stream from the
 * leader (PostgreSQL follows a timeline switch only from before the switch point, and a
 * "streaming" it shows then is a WAL receiver that connects and is refused), so it is
 * rewound (or reinitialized) as soon as the leader can be the source. Otherwise it is
 * pointed at its follow target when it follows something else: the member named in
 * `replicatefrom` while that one runs as a replica, else the leader; nothing but the archive
 * when tagged `nostream`. One that has not diverged but still cannot stream for
 * stuckReplicaMs from a leader that answers needs an operator; one that cascades from a
 * member waits for it (that member catches up from the leader on its own).
 */
export function replicaTick(ctx: TickContext): Decision {
  return withReplicaSlots(ctx, followDecision(ctx));
}

/** replicaTick() before the slot upkeep. */
function followDecision(ctx: TickContext): Decision {
  const upstream = leaderUpstream(ctx);
  if (!upstream) return decision(`following nobody: leader ${ctx.leaderName} has not published its address yet`);
  const tl = ctx.facts.timeline;
  // The leader's member key lags a promotion by up to a tick; the history key is written right after it.
  const leaderTl = clusterTimeline(ctx);
  const diverged = tl !== null && leaderTl !== null && ctx.myWal !== null && hasDiverged(tl, ctx.myWal, leaderTl, ctx.cluster.history?.lines ?? []) === true;
  const target = followTarget(ctx);
  const from = targetText(target, upstream.name);
  const mine = `I am ${ctx.me}, a replica following ${from}${ctx.paused ? '; PAUSE' : ''}`;
  // pg_rewind ran here and found nothing to undo (the position said otherwise: a receiver that restarted reports the
  // start of its segment): rewinding again would loop stop, rewind, start every tick.
  const rewound = ctx.input.memory.rewoundAt ?? null;
  const rewoundHere = rewound !== null && rewound.timeline === tl && ctx.myWal !== null && ctx.myWal <= rewound.position;
  if (diverged && !rewoundHere) {
    if (ctx.paused) return decision(`no action: ${mine}; timeline ${tl} diverged from the leader's (timeline ${leaderTl})`);
    const formerPrimary = ctx.input.memory.primaryOnTimeline === tl;
    const why = formerPrimary
      ? `this node was the primary of timeline ${tl} and its WAL goes past where leader ${upstream.name} (timeline ${leaderTl}) branched off`
      : `timeline ${tl} diverged from leader ${upstream.name} (timeline ${leaderTl}): its WAL goes past the branch point`;
    return rewindOrReinitialize(ctx, upstream, why);
  }
  const wanted = target.kind === 'leader' ? upstream : target.upstream;
  if (ctx.facts.upstreamConnUrl !== (wanted?.connUrl ?? null)) {
    // The stuck timer starts afresh: the loop times "not streaming" per configured upstream.
    const what = target.kind === 'leader' && !target.fallback ? `the new leader ${upstream.name}` : from;
    return decision(`following ${what}`, [{ type: 'follow', upstream: wanted, ...(wanted ? mySlot(ctx) : {}), timeoutMs: startTimeoutMs(ctx) }], { job: 'follow' });
  }
  const blocked = replayBlocked(ctx, mine);
  if (blocked !== null) return blocked;
  if (target.kind === 'archive') {
    // An archive-only replica restores what the primary archives: without a restore_command it gets nothing at all.
    if (String(desiredParameters(ctx)['restore_command'] ?? '') !== '') return decision(`no action: ${mine}`);
    const waiting = 'a restore_command in db.parameters: this node is tagged nostream and gets WAL from the archive only';
    return decision(`no action: ${mine}; waiting for ${waiting}`, [], { publish: { failsafeActive: false, waitingFor: waiting } });
  }
  // Streaming proves the WAL agrees with the upstream's.
  if (ctx.facts.replicationState === 'streaming') return decision(`no action: ${mine}`);
  if (ctx.paused) return decision(`no action: ${mine} (not streaming)`);
  const since = ctx.input.memory.notStreamingSince;
  const start = since !== null && since.upstream === wanted?.connUrl ? since.since : ctx.now;
  const waited = `not streaming for ${Math.round((ctx.now - start) / 1000)} s`;
  const until = start + stuckReplicaMs(ctx);
  if (ctx.now < until) return decision(`no action: ${mine} (${waited})`, [], { wakeAt: until });
  const error = ctx.facts.receiverError ?? null;
  if (error?.cause === 'connection') {
    // A password, pg_hba.conf or the network: a new copy of the data would fail the same way.
    const waiting = `a replication connection to ${wanted?.name ?? upstream.name} (${error.message})`;
    return decision(`no action: ${mine}; ${waited}: it cannot connect for replication`, [], { publish: { failsafeActive: false, waitingFor: waiting } });
  }
  if (error?.cause === 'storage') {
    // A full disk, a read-only file system: its data is fine, and a new copy would need the same space.
    const waiting = `space or write access in this node's pg_wal to store the WAL it receives (${error.message})`;
    return decision(`no action: ${mine}; ${waited}: it cannot write the WAL it receives`, [], { publish: { failsafeActive: false, waitingFor: waiting } });
  }
  if (target.kind === 'member') {
    // Its upstream may be behind this node (it streamed from the leader meanwhile): it catches up from the leader on its own.
    const waiting = `${target.upstream!.name} to stream WAL to this node`;
    return decision(`no action: ${mine}; waiting for ${waiting} (${waited})`, [], { publish: { failsafeActive: false, waitingFor: waiting } });
  }
  // Worded without the growing count of seconds: the reason is published and logged when it changes.
  const stuck = `not streaming for over ${Math.round(stuckReplicaMs(ctx) / 1000)} s from leader ${upstream.name}${error ? ` (${error.message})` : ''}`;
  return rewindOrReinitialize(ctx, upstream, stuck, { reinitialize: true, cause: 'stuck' });
}

/** Least time between two restarts of a replica whose replay waits for one: a restart that did not help is not repeated every loop. */
export const REPLAY_RESTART_PAUSE_MS = 300_000;

/**
 * A replica whose replay PostgreSQL paused until a restart: a hot-standby setting
 * (max_connections and its kin) is below the value the primary now runs with, which happens
 * when the primary restarted with a higher one first. It applies no WAL and its promotion
 * would abort, so it restarts at once: the restart raises the setting to the primary's value
 * from the control file. Not in pause, and not twice within REPLAY_RESTART_PAUSE_MS.
 */
function replayBlocked(ctx: TickContext, mine: string): Decision | null {
  const why = ctx.facts.replayBlockedBy ?? null;
  if (why === null) return null;
  const waiting = `a restart: replay is paused because ${why}`;
  if (ctx.paused) return decision(`no action: ${mine}; replay waits for ${waiting}`, [], { publish: { failsafeActive: false, waitingFor: waiting } });
  const last = ctx.input.memory.replayRestartAt ?? null;
  if (last !== null && ctx.now - last < REPLAY_RESTART_PAUSE_MS) {
    return decision(`no action: ${mine}; replay still waits for ${waiting} (restarted for it ${Math.round((ctx.now - last) / 1000)} s ago)`, [], {
      publish: { failsafeActive: false, waitingFor: waiting },
      wakeAt: last + REPLAY_RESTART_PAUSE_MS,
    });
  }
  return decision(
    `restarting: replay is paused until a restart because ${why}`,
    [{ type: 'remember', patch: { replayRestartAt: ctx.now } }, { type: 'restart', timeoutMs: startTimeoutMs(ctx) }],
    { job: 'restart' },
  );
}

/**
 * The data directory is empty (a new node, or wiped): clone the leader. In a registered
 * cluster without a leader, a node with a method that needs no running server (`no_leader`)
 * restores a backup and starts as a replica of nobody (its restore_command catches it up) and
 * may then take part in the race, as in Patroni: how a cluster whose every member was lost
 * comes back from its backups.
 */
export function emptyDataDirectory(ctx: TickContext): Decision {
  if (ctx.leaderIsMe) return releaseLock(ctx, 'this node has no data');
  if (ctx.paused) return decision('PAUSE: no data directory; not creating a replica');
  const upstream = leaderUpstream(ctx);
  const fromRemote = ctx.standby !== null ? cloneRemoteWhenNobodyRuns(ctx, ctx.standby) : null;
  if (fromRemote) return fromRemote;
  // Until the initialize key names the new cluster its bootstrap may still be undone (its
  // post_bootstrap script failed): a copy taken now would outlive the cluster it came from.
  if (ctx.cluster.initialize === '' && ctx.cluster.leader !== null) {
    const waiting = `leader ${ctx.cluster.leader.name} to finish bootstrapping the cluster, to create a replica from it`;
    return decision(`waiting for ${waiting}`, [], { publish: { failsafeActive: false, waitingFor: waiting } });
  }
  if (ctx.leaderName === null && ctx.input.local.replicaWithoutLeader && ctx.cluster.initialize) {
    return decision('no leader to create a replica from: restoring a backup (a create_replica_methods method marked no_leader)', [
      { type: 'remember', patch: FRESH_DATA },
      ...configureBeforeStart(ctx, true),
      { type: 'createReplica', source: null },
      { type: 'start', upstream: null, standby: true, timeoutMs: startTimeoutMs(ctx) },
    ], { job: 'create replica' });
  }
  if (!upstream || ctx.leaderMember?.state !== 'running') {
    const waiting = upstream ? `leader ${upstream.name} to run, to create a replica from it` : 'a leader to create a replica from';
    return decision(`waiting for ${waiting}`, [], { publish: { failsafeActive: false, waitingFor: waiting } });
  }
  const source = copySource(ctx, upstream);
  return decision(`creating a replica from ${copySourceText(source, upstream)}`, [
    { type: 'remember', patch: FRESH_DATA },
    ...configureBeforeStart(ctx, true),
    { type: 'createReplica', source },
    { type: 'start', standby: true, ...replicaSource(ctx, upstream), timeoutMs: startTimeoutMs(ctx) },
  ], { job: 'create replica' });
}

/**
 * A stopped server that was the primary of a timeline the cluster has left: a crashed
 * (or forgotten) old primary. Its WAL may go past the point where the new leader branched
 * off, and PostgreSQL then refuses to start it as a replica ("requested timeline does
 * not contain minimum recovery point"), so it is rewound before its first start; pg_rewind
 * runs the crash recovery itself and changes nothing when the WAL did not go past.
 * Known from this loop's memory, or from the history key: the line of timeline N-1 names
 * the node promoted into N. A stopped server's timeline comes from its last checkpoint,
 * which can predate its promotion (killed before the checkpoint after it finished): a
 * promotion into a later timeline than that counts too.
 */
export function formerPrimaryBehind(ctx: TickContext): string | null {
  const tl = ctx.facts.timeline;
  const clusterTl = clusterTimeline(ctx);
  if (clusterTl === null) return null;
  const ledInto = (ctx.cluster.history?.lines ?? []).filter((l) => l[4] === ctx.me).map((l) => l[0] + 1);
  const led = ledInto.length ? Math.max(...ledInto) : null;
  const memory = ctx.input.memory;
  const mine = led !== null && led >= (tl ?? 0) ? led : memory.lastRole === 'primary' || (tl !== null && memory.primaryOnTimeline === tl) ? tl : null;
  if (mine === null || mine >= clusterTl) return null;
  return `this node was the primary of timeline ${mine} and the cluster is on timeline ${clusterTl}`;
}

/** Starts as a replica of `upstream`, counting a failure (repeated ones escalate, see recoverStopped). */
function startAsReplica(ctx: TickContext, upstream: UpstreamRef, advice = ''): Decision {
  const failures = ctx.input.memory.startFailures;
  const actions: Action[] = [
    ...configureBeforeStart(ctx),
    { type: 'start', standby: true, ...replicaSource(ctx, upstream), timeoutMs: startTimeoutMs(ctx) },
  ];
  const at = actions.length - 1;
  const tl = ctx.facts.timeline === null ? '' : ` from timeline ${ctx.facts.timeline}`;
  const note = failures > 0 ? ` (${failures} failed start${failures > 1 ? 's' : ''} so far)` : '';
  return decision(`starting as a replica of ${upstream.name}${tl}${note}${advice}`, actions, {
    job: 'start',
    rollback: { fromIndex: at, untilIndex: at + 1, actions: [{ type: 'remember', patch: { startFailures: failures + 1 } }] },
  });
}

/**
 * A replica that failed to start START_FAILURES_BEFORE_REPAIR times: a rewind once (when
 * pg_rewind may run), then a reinitialize where db.remove_data_directory_on_rewind_failure
 * allows it. Otherwise it keeps trying to start, backing off (the cause may lie outside the
 * data directory: a taken port, a full disk), and tells the operator what would rebuild it.
 */
function repairAfterFailedStarts(ctx: TickContext, upstream: UpstreamRef): Decision {
  const failures = ctx.input.memory.startFailures;
  const why = `the server failed to start as a replica ${failures} times`;
  // Counted first: a rewind that does not cure it leads to a reinitialize next time.
  const count: Action = { type: 'remember', patch: { startFailures: failures + 1 } };
  const rewindPossible = ctx.config.db.use_pg_rewind && !rewindFailedOnThisTimeline(ctx);
  if (failures === START_FAILURES_BEFORE_REPAIR && rewindPossible) return rewindOrReinitialize(ctx, upstream, why, { before: [count], cause: 'rewind_failed' });
  if (ctx.config.db.remove_data_directory_on_rewind_failure) return rewindOrReinitialize(ctx, upstream, why, { reinitialize: true, before: [count], cause: 'rewind_failed' });
  return startAsReplica(ctx, upstream, `; if its data directory is damaged, run wardenctl reinit ${ctx.me} (or set db.remove_data_directory_on_rewind_failure to let the agent rebuild it)`);
}

/**
 * The server is initialized but not running, or runs without answering (see silentServer).
 * Paused: leave it (and give the key back). Holding the key after a crash as primary: start
 * it as primary again within primary_start_timeout (0 or timed out: stop what is left of it,
 * give the key up and start as a replica). Holding the key otherwise: start read-only, the
 * next tick promotes. Else start as a replica of the leader (a former primary left behind is
 * rewound first; repeated start failures are repaired), or of nobody until there is one.
 */
export function recoverStopped(ctx: TickContext): Decision {
  const state = ctx.facts.state;
  if (TRANSITIONAL.has(state)) {
    if (!ctx.leaderIsMe || ctx.paused) return decision(`waiting: the server is ${state}`);
    // A leader whose server does not come up within primary_start_timeout gives the key up.
    const since = ctx.input.memory.primaryStartAt;
    if (since !== null && ctx.now - since > startTimeoutMs(ctx)) {
      // Stopped first: a start that finishes after the key went would be a second primary. A stop that fails keeps the key.
      return decision(`the server is still ${state} after primary_start_timeout: stopping it and giving the key up`, [
        { type: 'stop', mode: 'immediate' },
        { type: 'disarmWatchdog' },
        { type: 'releaseLeader' },
        { type: 'remember', patch: { primaryStartAt: null } },
      ], { job: 'stop' });
    }
    return decision(`waiting: the server is ${state} (holding the leader key)`, [
      { type: 'refreshLeader' },
      // A standby leader cannot write: it needs no watchdog.
      ...(ctx.standby !== null ? disarmIfActive(ctx) : leaderWatchdogActions(ctx)),
      ...(since === null ? [{ type: 'remember' as const, patch: { primaryStartAt: ctx.now } }] : []),
    ]);
  }
  if (isSilent(ctx)) return silentServer(ctx);
  if (ctx.leaderIsMe && ctx.standby !== null) return startAsStandbyLeader(ctx, ctx.standby);
  if (ctx.paused) {
    if (ctx.leaderIsMe) return releaseLock(ctx, 'PAUSE: the server is not running');
    return decision('PAUSE: the server is not running; not starting it');
  }
  const timeoutMs = startTimeoutMs(ctx);
  const configure = configureBeforeStart(ctx);
  const asReplicaOf = (upstream: UpstreamRef | null): Action => ({ type: 'start', upstream, standby: true, ...(upstream ? mySlot(ctx) : {}), timeoutMs });
  if (ctx.leaderIsMe) {
    const memory = ctx.input.memory;
    if (memory.lastRole === 'primary') {
      const since = memory.primaryStartAt;
      const timedOut = ctx.config.primary_start_timeout === 0 || (since !== null && ctx.now - since > timeoutMs);
      const failedStarts = memory.jobFailures.find((f) => f.job === 'start')?.count ?? 0;
      const holders = failedStarts >= PRIMARY_START_FAILURES_BEFORE_FAILOVER ? acknowledgedCommitHolders(ctx) : [];
      if (timedOut || holders.length > 0) {
        const why = timedOut
          ? 'the primary did not come back within primary_start_timeout'
          : `the primary failed to start ${failedStarts} times in a row and its synchronous standbys (${holders.join(', ')}) hold every commit it acknowledged`;
        // Stopped first: a postmaster still alive (recovering from a backend's crash) would be a second primary once it is back.
        return decision(`${why}: giving the key up to fail over`, [
          { type: 'stop', mode: 'immediate' },
          { type: 'disarmWatchdog' },
          { type: 'releaseLeader' },
          { type: 'remember', patch: { primaryStartAt: null, lastRole: 'replica' } },
          ...configure,
          asReplicaOf(null),
          // Not a start that backs off: the restarts that failed before must not hold the key past the timeout.
        ], { job: 'demote' });
      }
      const left = since === null ? timeoutMs : Math.max(1000, timeoutMs - (ctx.now - since));
      return decision('starting the primary again after a crash (holding the leader key)', [
        { type: 'refreshLeader' },
        ...leaderWatchdogActions(ctx),
        { type: 'remember', patch: { primaryStartAt: since ?? ctx.now } },
        ...configure,
        { type: 'start', upstream: null, standby: false, timeoutMs: left },
      ], { job: 'start' });
    }
    return decision('starting read-only because this node holds the leader key', [{ type: 'refreshLeader' }, ...configure, asReplicaOf(null)], { job: 'start' });
  }
  const upstream = leaderUpstream(ctx);
  if (upstream) {
    if (rewindInterrupted(ctx)) return rewindOrReinitialize(ctx, upstream, 'pg_rewind stopped after it began rewriting this data directory', { cause: 'rewind_failed' });
    if (ctx.input.memory.startFailures >= START_FAILURES_BEFORE_REPAIR) {
      const lastError = ctx.input.memory.jobFailures.find((f) => f.job === 'start')?.error ?? '';
      const outside = startFailureOutsideData(lastError);
      // Nothing in the data to repair: keep trying (backing off) and say what to fix.
      if (outside !== null) return startAsReplica(ctx, upstream, `; it fails because of ${outside}, not its data: fix that (nothing is rewound or rebuilt)`);
      return repairAfterFailedStarts(ctx, upstream);
    }
    const behind = formerPrimaryBehind(ctx);
    if (behind && ctx.config.db.use_pg_rewind && !rewindFailedOnThisTimeline(ctx)) {
      return rewindOrReinitialize(ctx, upstream, behind);
    }
    return startAsReplica(ctx, upstream);
  }
  return decision('starting as a replica (no leader yet)', [...configure, asReplicaOf(null)], { job: 'start' });
}
