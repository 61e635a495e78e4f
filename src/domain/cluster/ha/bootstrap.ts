import { decision, type Action, type Decision } from './decision.js';
import { stateText, type DatabaseState } from '../model/states.js';
import { bootstrapRollback } from './bootstrap-leftovers.js';
import { bootstrapStandbyCluster } from './standby-cluster.js';
import { configureBeforeStart } from './maintenance.js';
import { isSilent } from './silent-server.js';
import { startTimeoutMs, watchdogTimeoutSeconds, type TickContext } from './tick-context.js';

/** States in which a member is creating the cluster (its member key shows it while it works). */
const BOOTSTRAPPING_STATES = new Set([stateText('initdb'), stateText('custom_bootstrap'), stateText('bootstrap_starting'), stateText('creating_replica')]);

/** States of a stopped server the agent may start (not one still stopping, or being started). */
const STARTABLE_STATES: ReadonlySet<DatabaseState> = new Set<DatabaseState>(['stopped', 'crashed', 'start_failed']);

/**
 * A cluster with no `initialize` key, or with the empty one a bootstrap in progress
 * leaves and no leader yet.
 *
 * No key and an empty data directory: race for the key by atomic create of an empty
 * value; the winner runs initdb, takes the leader key, starts read-write, runs the
 * operator's post_bootstrap script if any, then writes the system identifier and the
 * `bootstrap.dcs` configuration. Losers wait for the system identifier and then clone the
 * leader. A node that already holds data (the DCS was wiped) registers its system
 * identifier instead. An empty key whose bootstrapper vanished is replaced or deleted (see
 * abandonedClaim). A new standby cluster copies the remote primary instead of running
 * initdb (see bootstrapStandbyCluster).
 */
export function bootstrapDecision(ctx: TickContext): Decision {
  const init = ctx.cluster.initialize;
  const facts = ctx.facts;
  if (init === null) {
    if (facts.initialized) {
      if (facts.systemIdentifier === null) return waiting('the system identifier of the local data (no initialize key yet)');
      // A server running as a replica of another one is not what the cluster restarts from: its
      // primary is, and may be taking writes. Registered here, it would be promoted beside that
      // primary, which would then be rewound to follow it, its last commits discarded.
      if (facts.running && facts.inRecovery === true && facts.upstreamConnUrl !== null && ctx.standby === null) {
        return waiting(
          `the primary's agent to register the cluster: there is no initialize key and PostgreSQL runs here as a replica of ${facts.upstreamConnUrl}; ` +
            'start the agent of the primary first (if there is no primary any more, stop PostgreSQL here and this node takes over)',
        );
      }
      const replicaData = replicaDataWaits(ctx);
      if (replicaData) return replicaData;
      // Data without an initialize key: the DCS lost its keys (or this is an adopted server). Say what comes back from where.
      const config = ctx.cluster.config === null ? '; the DCS holds no configuration: bootstrap.dcs is written (settings changed since the first bootstrap, and the history, are not in it)' : '';
      return decision(`no initialize key: registering the system identifier ${facts.systemIdentifier} of the local data${config}`, registerLocalData(ctx, facts.systemIdentifier));
    }
    if (ctx.nofailover) return waiting(`another member to bootstrap the cluster: this one is ${ctx.nofailoverReason} and never creates it`);
    if (ctx.watchdogFailed) return waiting('another member to bootstrap the cluster: the watchdog is required here but not usable');
    if (ctx.standby !== null) return bootstrapStandbyCluster(ctx, ctx.standby);
    const mode = ctx.input.node.watchdogMode;
    const actions: Action[] = [
      { type: 'createInitialize', value: '' },
      ctx.input.local.postBootstrap ? { type: 'initdb', unfinished: true } : { type: 'initdb' },
      { type: 'acquireLeader' },
      // Synchronous modes: the sync key names this node, and no standby, before its server takes
      // a commit (none is named yet): a failover in the moments before its first loop would
      // otherwise count any replica as holding every commit.
      ...(ctx.config.synchronous_mode === false ? [] : [{ type: 'writeSync', leader: ctx.me, syncStandby: [], quorum: 0, ifRevision: ctx.cluster.sync?.revision ?? '0' } as Action]),
      ...(mode === 'off' ? [] : [{ type: 'armWatchdog', timeoutSeconds: watchdogTimeoutSeconds(ctx), required: mode === 'required' } as Action]),
      { type: 'start', upstream: null, standby: false, timeoutMs: startTimeoutMs(ctx) },
      ...(ctx.input.local.postBootstrap ? [{ type: 'postBootstrap' } as Action] : []),
      { type: 'writeInitialize' },
      ...(ctx.input.local.postBootstrap ? [{ type: 'clearBootstrapMark' } as Action] : []),
      { type: 'writeConfig', value: ctx.input.local.bootstrapDcs },
      { type: 'remember', patch: { lastRole: 'primary' } },
    ];
    return decision('bootstrapping a new cluster', actions, {
      job: 'bootstrap',
      rollback: bootstrapRollback(actions),
    });
  }
  return abandonedClaim(ctx) ?? waiting('the member that took the initialize key to finish bootstrapping the cluster');
}

/**
 * An empty initialize key nobody works on (no leader, no member bootstrapping) for a ttl
 * (the loop tracks since when it sees this revision of it: memory.initializeSeen). A node
 * with data (e.g. the bootstrapper itself, whose initialize write failed after its server
 * started and whose lock then went) registers that data in place of the claim, in one
 * write; an empty node deletes the claim, but only after a second ttl, so a running node
 * with data gets there before anyone can create a new cluster beside it.
 */
function abandonedClaim(ctx: TickContext): Decision | null {
  const seen = ctx.input.memory.initializeSeen;
  if (!seen || ctx.cluster.members.some((m) => m.name !== ctx.me && BOOTSTRAPPING_STATES.has(m.state))) return null;
  const facts = ctx.facts;
  const unchangedMs = ctx.now - seen.since;
  if (facts.initialized) {
    if (unchangedMs <= ctx.ttlMs || facts.systemIdentifier === null) return null;
    return decision(
      `the bootstrap in progress was abandoned: registering the system identifier ${facts.systemIdentifier} of the local data in its place`,
      registerLocalData(ctx, facts.systemIdentifier, seen.revision),
    );
  }
  if (unchangedMs <= 2 * ctx.ttlMs) return null;
  return decision('the bootstrap in progress was abandoned: deleting the empty initialize key', [{ type: 'deleteInitialize', revision: seen.revision }]);
}

/**
 * Registers data this node already holds as the cluster's (in place of the abandoned claim of
 * revision `replacing`, when given), with the bootstrap configuration when the cluster has none.
 */
function registerLocalData(ctx: TickContext, systemIdentifier: string, replacing?: string): Action[] {
  const actions: Action[] = [{ type: 'createInitialize', value: systemIdentifier, ...(replacing === undefined ? {} : { replacing }) }];
  if (ctx.cluster.config === null) actions.push({ type: 'writeConfig', value: ctx.input.local.bootstrapDcs });
  return actions;
}

/**
 * Data that was a replica's registers the cluster only after primary_start_timeout without an
 * initialize key (the DCS lost its keys, or a new namespace): registered at once, it would be
 * promoted, and the former primary, started later, rewound to it, losing what only it had. A
 * primary's data registers at once; a running replica of another server waits for it (above).
 * While it waits, stopped data starts read-only with no upstream: it replays what its pg_wal
 * holds and answers with that position, so once a member registers, the leader race sees how
 * far every waiting member got and the most advanced one leads, not the first to register.
 * Once the time is up this data is what the cluster has, and it takes over.
 */
function replicaDataWaits(ctx: TickContext): Decision | null {
  const facts = ctx.facts;
  if (ctx.standby !== null) return null;
  const stoppedReplica = !facts.running && facts.stoppedAsReplica === true;
  const readOnlyAlone = facts.running && facts.inRecovery === true && facts.upstreamConnUrl === null;
  if (!stoppedReplica && !readOnlyAlone) return null;
  const waitMs = ctx.config.primary_start_timeout * 1000;
  const since = ctx.input.memory.noInitializeSince ?? ctx.now;
  if (ctx.now - since >= waitMs) return null;
  const what =
    `a member with a primary's data to register the cluster (at most primary_start_timeout, ${ctx.config.primary_start_timeout} s, from when this node found no initialize key): ` +
    "this node's data was a replica's, and registered first it would be promoted and the former primary rewound to it, losing what only the primary had; start the former primary's agent";
  const publish = { failsafeActive: false, waitingFor: what };
  if (stoppedReplica && STARTABLE_STATES.has(facts.state) && !isSilent(ctx) && !ctx.paused) {
    return decision(
      `starting the local data read-only (no upstream) while waiting for ${what}`,
      [...configureBeforeStart(ctx), { type: 'start', upstream: null, standby: true, timeoutMs: startTimeoutMs(ctx) }],
      { job: 'start', publish },
    );
  }
  return decision(`waiting for ${what}`, [], { publish, wakeAt: since + waitMs });
}

/**
 * Data a bootstrap left before its post_bootstrap script succeeded and the cluster was
 * registered: the agent or the machine stopped meanwhile, or the initialize write failed. It
 * was never registered nor copied (replicas wait for the initialize key), no health check sent
 * clients to it, and it may not be the cluster the operator asked for (no roles, no schema). It is undone
 * as a failed bootstrap is (server stopped, key released, data removed, the empty claim
 * dropped unless another member's bootstrap holds it) and the bootstrap starts over. In
 * pause nothing is removed. The undo is a job of its own, not an attempt of the bootstrap: it
 * is not held back while failed bootstraps back off (a member holding the leader key would keep
 * every other member from bootstrapping that long), and the next attempt still waits its turn.
 */
export function unfinishedBootstrap(ctx: TickContext): Decision {
  const sysid = ctx.facts.systemIdentifier;
  // Registered, and stopped before it could clear the mark: it is the cluster now.
  if (sysid !== null && ctx.cluster.initialize === sysid) return decision('the cluster is registered with the local data: clearing its unfinished mark', [{ type: 'clearBootstrapMark' }]);
  const why = 'the local data is a new cluster whose bootstrap was interrupted before its post_bootstrap script succeeded and the cluster was registered';
  if (ctx.paused) return waiting(`the end of the pause to remove the local data: ${why}`);
  const claim = ctx.cluster.initialize === '' ? ctx.cluster.initializeRevision : null;
  const claimMine = claim !== null && (ctx.leaderIsMe || (ctx.cluster.leader === null && !ctx.cluster.members.some((m) => m.name !== ctx.me && BOOTSTRAPPING_STATES.has(m.state))));
  const actions: Action[] = [
    { type: 'stop', mode: 'immediate' },
    { type: 'disarmWatchdog' },
    ...(ctx.leaderIsMe ? [{ type: 'releaseLeader' } as Action] : []),
    { type: 'removeData' },
    ...(claimMine ? [{ type: 'deleteInitialize', revision: claim } as Action] : []),
  ];
  return decision(`${why}: removing it, the bootstrap starts over`, actions, { job: 'undo bootstrap' });
}

/** A decision to wait, saying for what (on /node, and in the log once per change). */
function waiting(what: string): Decision {
  return decision(`waiting for ${what}`, [], { publish: { failsafeActive: false, waitingFor: what } });
}
