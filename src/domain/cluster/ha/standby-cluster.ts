import type { StandbyClusterConfig } from '../config/config.js';
import { decision, type Action, type Decision, type UpstreamRef } from './decision.js';
import { activeFailoverKey } from './failover-key.js';
import { bootstrapRollback } from './bootstrap-leftovers.js';
import { configureBeforeStart, FRESH_DATA } from './maintenance.js';
import { startTimeoutMs, watchdogTimeoutSeconds, type TickContext } from './tick-context.js';
import { disarmIfActive } from './watchdog-policy.js';

/**
 * A standby cluster replicates from a remote primary: its leader, the standby leader, holds
 * the leader key like a primary does but runs in recovery, streaming from `standby_cluster`
 * host:port (or restoring from an archive with its restore_command), and the other members
 * cascade from it. It is never promoted while the cluster is a standby cluster: a member
 * that wins the key points its server at the remote instead.
 */

/** The remote primary as an upstream; null for a standby cluster fed from an archive only. */
export function remoteUpstream(sc: StandbyClusterConfig): UpstreamRef | null {
  if (sc.host === undefined) return null;
  const port = sc.port ?? 5432;
  const host = sc.host.includes(':') ? `[${sc.host}]` : sc.host;
  return { name: `remote ${sc.host}:${port}`, connUrl: `postgres://${host}:${port}/postgres` };
}

/** The slot the standby leader streams through on the remote primary, when one is configured. */
export function remoteSlot(sc: StandbyClusterConfig): { slotName?: string } {
  return sc.primary_slot_name ? { slotName: sc.primary_slot_name } : {};
}

/** A start (or restart) of this server as the standby leader, following the remote. */
export function startAsStandbyLeaderAction(ctx: TickContext, sc: StandbyClusterConfig, timeoutMs = startTimeoutMs(ctx)): Action {
  return { type: 'start', upstream: remoteUpstream(sc), standby: true, ...remoteSlot(sc), timeoutMs };
}

/** What the loop forgets when this node's server stops being a primary and becomes the standby leader. */
const NOW_STANDBY_LEADER = Object.freeze({ lastRole: 'replica' as const, primaryStartAt: null, ssn: null, checkpointAfterPromote: null });

/**
 * Whether this node's WAL may go past what the remote has: it ran as the primary of its
 * timeline (a primary cluster demoted to a standby one) and has not followed the remote
 * since (a rewind, or streaming onto the remote's later timeline, clears it).
 */
export function mayBeAheadOfRemote(ctx: TickContext): boolean {
  const tl = ctx.facts.timeline;
  return tl !== null && ctx.input.memory.primaryOnTimeline === tl;
}

/**
 * The actions that turn this node's stopped server into the standby leader: a former
 * primary is rewound from the remote first (pg_rewind changes nothing when the remote's
 * timeline did not branch off before this node's last WAL), then the server starts in
 * recovery following the remote. Without pg_rewind (db.use_pg_rewind off, or an
 * archive-only standby cluster), it starts as it is.
 */
function followRemoteFromStopped(ctx: TickContext, sc: StandbyClusterConfig, before: readonly Action[], why: string, job: string): Decision {
  const remote = remoteUpstream(sc);
  const timeline = ctx.facts.timeline;
  const start = startAsStandbyLeaderAction(ctx, sc);
  if (remote !== null && mayBeAheadOfRemote(ctx) && ctx.config.db.use_pg_rewind) {
    if (ctx.input.memory.rewindFailedOnTimeline === timeline) {
      if (!ctx.config.db.remove_data_directory_on_rewind_failure) {
        // Never rebuilt without the operator's opt-in; a stopped standby leader harms nobody (the key stays, the replicas keep serving).
        const required = `pg_rewind from ${remote.name} failed on timeline ${timeline}: the data directory must be rebuilt from the remote primary; set db.remove_data_directory_on_rewind_failure to let the agent do it`;
        return decision(`keeping the data directory: ${required}`, before, {
          job: before.some((a) => a.type === 'stop') ? job : null,
          publish: { failsafeActive: false, reinitializeRequired: required },
        });
      }
      return decision(`${why}: pg_rewind from ${remote.name} failed before: rebuilding the data directory from it (db.remove_data_directory_on_rewind_failure)`, [
        ...before,
        { type: 'stop', mode: 'immediate' },
        { type: 'remember', patch: FRESH_DATA },
        ...configureBeforeStart(ctx, true),
        { type: 'createReplica', source: remote, ...(sc.create_replica_methods ? { methods: sc.create_replica_methods } : {}), replacing: true },
        start,
      ], { job: 'reinitialize' });
    }
    const actions: Action[] = [
      ...before,
      ...configureBeforeStart(ctx),
      // primaryOnTimeline stays: once the server replays onto the remote's later timeline it no longer applies, and until then
      // another rewind is harmless (PostgreSQL 15's pg_rewind says "no rewind required" while the remote's control file does not
      // show its new timeline yet, and the start that follows fails until it does).
      { type: 'rewind', source: remote },
      start,
    ];
    const at = actions.findIndex((a) => a.type === 'rewind');
    return decision(`${why}: rewinding from ${remote.name} (this node was the primary of timeline ${timeline}), then following it`, actions, {
      job,
      // An unreachable remote left the data untouched: the rewind is tried again, never counted as failed (which could lead to a rebuild).
      rollback: { fromIndex: at, untilIndex: at + 1, actions: [{ type: 'remember', patch: { rewindFailedOnTimeline: timeline } }], unless: ['rewind_source_unreachable'] },
    });
  }
  return decision(`${why}: following ${remote?.name ?? 'the WAL archive (restore_command)'}`, [...before, ...configureBeforeStart(ctx), start], { job });
}

/**
 * The primary of a cluster that has just become a standby cluster (demote-cluster): it keeps
 * the leader key (refreshed throughout: the job runs under the key), stops cleanly (fast:
 * every connected replica receives the last WAL), is rewound from the remote when its WAL
 * may go past the remote's branch point, and starts as the standby leader.
 */
export function demoteToStandbyLeader(ctx: TickContext, sc: StandbyClusterConfig): Decision {
  const stopTimeout = ctx.config.primary_stop_timeout;
  const before: Action[] = [
    { type: 'refreshLeader' },
    { type: 'stop', mode: 'fast', ...(stopTimeout > 0 ? { timeoutMs: stopTimeout * 1000 } : {}) },
    { type: 'disarmWatchdog' },
    { type: 'remember', patch: NOW_STANDBY_LEADER },
  ];
  // The key stays ours throughout: a rewind that fails leaves a stopped standby leader, not a free key.
  return followRemoteFromStopped(ctx, sc, before, 'the cluster became a standby cluster: demoting this primary to the standby leader', 'demote cluster');
}

/** The holder of the key in a standby cluster, its server stopped: starts it as the standby leader (rewound first when needed). */
export function startAsStandbyLeader(ctx: TickContext, sc: StandbyClusterConfig): Decision {
  if (ctx.paused) return decision('PAUSE: the standby leader\'s server is not running; not starting it', [{ type: 'refreshLeader' }]);
  return followRemoteFromStopped(ctx, sc, [{ type: 'refreshLeader' }, { type: 'remember', patch: NOW_STANDBY_LEADER }], 'starting as the standby leader', 'start');
}

/**
 * This node has won (or holds) the leader key of a standby cluster: it becomes the standby
 * leader by pointing its server at the remote, never by promoting. A request that led here is
 * done. A running primary (in pause, or a cluster demoted meanwhile) is demoted to the
 * standby leader.
 */
export function becomeStandbyLeader(ctx: TickContext, sc: StandbyClusterConfig, opts: { readonly acquire: boolean; readonly why: string }): Decision {
  const lock: Action = opts.acquire ? { type: 'acquireLeader' } : { type: 'refreshLeader' };
  const fk = activeFailoverKey(ctx);
  const clear: Action[] = fk ? [{ type: 'clearFailover', revision: fk.revision, reason: 'the switchover/failover is done' }] : [];
  if (ctx.isPrimary) {
    const demote = demoteToStandbyLeader(ctx, sc);
    return decision(`${opts.why}: ${demote.message}`, [lock, ...clear, ...demote.actions.filter((a) => a.type !== 'refreshLeader')], {
      job: demote.job,
      rollback: demote.rollback ? { ...demote.rollback, fromIndex: demote.rollback.fromIndex + clear.length, untilIndex: demote.rollback.untilIndex + clear.length } : null,
    });
  }
  const remote = remoteUpstream(sc);
  const actions: Action[] = [lock, ...clear, ...disarmIfActive(ctx), { type: 'remember', patch: { candidateWait: null } }];
  if (ctx.facts.upstreamConnUrl === (remote?.connUrl ?? null)) return decision(`${opts.why}: took the leader key as the standby leader`, actions);
  return decision(`${opts.why}: took the leader key: following ${remote?.name ?? 'the WAL archive'} as the standby leader`, [
    ...actions,
    { type: 'follow', upstream: remote, ...remoteSlot(sc), timeoutMs: startTimeoutMs(ctx) },
  ], { job: 'follow' });
}

/**
 * The first member of a new standby cluster (no initialize key, empty data directory): the
 * race for the initialize key as for any bootstrap, then a copy of the remote primary made
 * with standby_cluster.create_replica_methods (basebackup from host:port by default) instead
 * of initdb, the leader key, a start as the standby leader, and the initialize key set to
 * the remote's system identifier. A failure undoes it all (the copy is this bootstrap's own).
 */
export function bootstrapStandbyCluster(ctx: TickContext, sc: StandbyClusterConfig): Decision {
  const remote = remoteUpstream(sc);
  const mode = ctx.input.node.watchdogMode;
  const actions: Action[] = [
    { type: 'createInitialize', value: '' },
    { type: 'remember', patch: FRESH_DATA },
    ...configureBeforeStart(ctx, true),
    { type: 'createReplica', source: remote, ...(sc.create_replica_methods ? { methods: sc.create_replica_methods } : {}) },
    { type: 'acquireLeader' },
    // Armed only to be sure the device works here; a standby leader never writes, so it is disarmed on its first tick.
    ...(mode === 'required' ? [{ type: 'armWatchdog', timeoutSeconds: watchdogTimeoutSeconds(ctx), required: true } as Action] : []),
    startAsStandbyLeaderAction(ctx, sc),
    { type: 'writeInitialize' },
    { type: 'writeConfig', value: ctx.input.local.bootstrapDcs },
    { type: 'remember', patch: { lastRole: 'replica' } },
  ];
  return decision(`bootstrapping a new standby cluster from ${remote?.name ?? 'a backup (create_replica_methods)'}`, actions, {
    job: 'bootstrap',
    rollback: bootstrapRollback(actions),
  });
}

/**
 * An empty member of a leaderless standby cluster in which no other member runs: nobody in
 * the cluster can serve a copy, and nobody can become the standby leader without data, so it
 * copies the remote primary itself (standby_cluster.create_replica_methods) and starts
 * following it; the race then elects a standby leader. Null when it should wait for a
 * member of its own cluster (the usual case: a copy across data centers costs more than a
 * standby leader's failover).
 */
export function cloneRemoteWhenNobodyRuns(ctx: TickContext, sc: StandbyClusterConfig): Decision | null {
  if (ctx.leaderName !== null || ctx.paused) return null;
  if (ctx.cluster.members.some((m) => m.name !== ctx.me && m.state === 'running')) return null;
  const remote = remoteUpstream(sc);
  return decision(`no member of this standby cluster runs: creating a replica from ${remote?.name ?? 'a backup (create_replica_methods)'}`, [
    { type: 'remember', patch: FRESH_DATA },
    ...configureBeforeStart(ctx, true),
    { type: 'createReplica', source: remote, ...(sc.create_replica_methods ? { methods: sc.create_replica_methods } : {}) },
    // Without the remote's slot: it belongs to the standby leader, whoever wins the race.
    { type: 'start', upstream: remote, standby: true, timeoutMs: startTimeoutMs(ctx) },
  ], { job: 'create replica' });
}
