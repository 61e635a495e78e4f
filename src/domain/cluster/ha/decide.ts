import { bootstrapDecision, unfinishedBootstrap } from './bootstrap.js';
import { decision, type Action, type Decision, type TickInput } from './decision.js';
import { demoteImmediate, releaseLock } from './demote.js';
import { withoutDcs } from './failsafe.js';
import { emptyDataDirectory, recoverStopped, replicaTick } from './follow.js';
import { holdingLockAsReplica, leaderTick } from './leader.js';
import { leaderRace } from './leader-race.js';
import { commandsWhileBusy, configureActions, withCommands } from './maintenance.js';
import { takeLeadership } from './promotion.js';
import { demoteToStandbyLeader } from './standby-cluster.js';
import { standbyLeaderTick } from './standby-leader.js';
import { withBackoff } from './retry-backoff.js';
import { flagSilentPrimary } from './silent-server.js';
import { clusterTimeline, tickContext, type TickContext } from './tick-context.js';
import { leaderWatchdogActions } from './watchdog-policy.js';

/**
 * A background job runs: nothing touches the database. A leader keeps refreshing its key
 * (a restart must not cost the lock), except while it is demoting past the checkpoint
 * (until then it still is the full primary).
 */
function duringJob(ctx: TickContext, job: string, step: string): Decision {
  const busy = commandsWhileBusy(ctx, job);
  if (ctx.input.dcsReachable && ctx.leaderIsMe && (job !== 'demote' || step === 'checkpoint')) {
    return decision(`${job} in progress; refreshed the leader key`, [{ type: 'refreshLeader' }, ...leaderWatchdogActions(ctx), ...busy]);
  }
  return decision(`${job} in progress`, busy);
}

/** What PostgreSQL's system identifier looks like as text (a 64-bit unsigned number). */
const SYSTEM_IDENTIFIER = /^\d{1,20}$/;

/** The local data belongs to another cluster: never start or lead with it (POST /reinitialize replaces it). */
function foreignData(ctx: TickContext): Decision | null {
  const mine = ctx.facts.systemIdentifier;
  const theirs = ctx.cluster.initialize;
  // A value that is no system identifier at all (a hand edit) says nothing about whose data this is:
  // taken for another cluster's, it had the leader give up its key and nobody lead.
  if (!mine || !theirs || mine === theirs || !SYSTEM_IDENTIFIER.test(theirs)) return null;
  const why = `the local data (system identifier ${mine}) belongs to another cluster than ${theirs}`;
  if (ctx.leaderIsMe) return releaseLock(ctx, why);
  if (ctx.isPrimary && !ctx.paused) return demoteImmediate(ctx, why);
  // Without a leader there is nothing to copy from (reinitialize is refused): when every member
  // was stopped for a pg_upgrade or a restore, the data is right and the stored identifier is not.
  const remedy = ctx.leaderName === null
    ? `no member leads the cluster to copy from: if this data is to be the cluster's from now on (after pg_upgrade or a restore), stop every agent, remove the cluster's keys (wardenctl remove ${ctx.input.node.scope}) and start this agent first; otherwise start the member that holds the cluster's data, then run wardenctl reinit ${ctx.me}`
    : `run wardenctl reinit ${ctx.me} to replace it`;
  return decision(`refusing to use the data directory: ${why}`, [], {
    publish: { failsafeActive: false, reinitializeRequired: `${why}: ${remedy}` },
  });
}

/**
 * An unlocked cluster: the race. In pause only a manual failover's candidate races, and a
 * running primary takes the free key, unless a failover key names someone else or its
 * timeline is behind the cluster's (a forgotten old primary must not lead the others).
 */
function unlocked(ctx: TickContext): Decision {
  if (!ctx.paused) return leaderRace(ctx);
  const candidate = ctx.cluster.failover?.member ?? null;
  if (candidate === ctx.me) return leaderRace(ctx);
  // A primary in a standby cluster leads nothing: it would have to be demoted, which pause forbids.
  if (ctx.isPrimary && candidate === null && ctx.standby === null) {
    const clusterTl = clusterTimeline(ctx);
    if (clusterTl !== null && (ctx.facts.timeline ?? 0) < clusterTl) {
      return decision(`PAUSE: running as primary on timeline ${ctx.facts.timeline}, behind the cluster's ${clusterTl}: not taking the leader key`);
    }
    return takeLeadership(ctx, { acquire: true, why: 'PAUSE: the running primary takes the free leader key' });
  }
  return decision('PAUSE: the cluster has no leader; no automatic failover');
}

/**
 * A running server in a cluster that is up and initialized. In a standby cluster the holder
 * of the key runs in recovery as the standby leader; a primary holding it there is demoted to
 * one (demote-cluster), unless paused.
 */
function running(ctx: TickContext): Decision {
  if (ctx.leaderIsMe && ctx.standby !== null) {
    if (!ctx.isPrimary) return standbyLeaderTick(ctx, ctx.standby);
    return ctx.paused ? leaderTick(ctx) : demoteToStandbyLeader(ctx, ctx.standby);
  }
  if (ctx.leaderIsMe) return ctx.isPrimary ? leaderTick(ctx) : holdingLockAsReplica(ctx);
  if (ctx.leaderName !== null) {
    if (!ctx.isPrimary) return replicaTick(ctx);
    if (ctx.paused) return decision(`PAUSE: running as primary while ${ctx.leaderName} holds the leader key`);
    return demoteImmediate(ctx, `${ctx.leaderName} holds the leader key`);
  }
  return unlocked(ctx);
}

/** Adds configure() to a decision that starts no job and asks for nothing. */
function withConfigure(ctx: TickContext, d: Decision): Decision {
  if (d.job !== null || d.need !== null) return d;
  const extra: Action[] = configureActions(ctx);
  return extra.length ? { ...d, actions: [...d.actions, ...extra] } : d;
}

/**
 * One HA tick: from the cluster view, the local facts, the dynamic config, pending
 * commands and `now`, what this node does. Pure and total. When it needs the other
 * members' state (a leader race, a switchover) or a failsafe round, it says so in
 * `need` and the loop calls it again with the answers.
 */
export function decide(input: TickInput): Decision {
  const ctx = tickContext(input);
  return flagSilentPrimary(ctx, withBackoff(ctx, decideNow(ctx)));
}

/** decide() before repeated failures are backed off. */
function decideNow(ctx: TickContext): Decision {
  const input = ctx.input;
  if (input.job) return duringJob(ctx, input.job.name, input.job.step);
  // A primary that could not renew its lock for retry_timeout (each tick tries again: another etcd member may answer) is
  // as blind as one that cannot read: failsafe, or step down now, not at the deadline. A leader whose server is down
  // goes the usual way, which tries the renewal again.
  const renewalSince = input.lockRenewalFailingSince ?? null;
  const cannotRenew = renewalSince !== null && input.now - renewalSince >= ctx.config.retry_timeout * 1000;
  if (!input.dcsReachable || (ctx.leaderIsMe && ctx.isPrimary && cannotRenew)) return withoutDcs(ctx);
  if (ctx.facts.bootstrapUnfinished) return unfinishedBootstrap(ctx);
  const c = ctx.cluster;
  if (c.initialize === null || (c.initialize === '' && c.leader === null)) return bootstrapDecision(ctx);
  const foreign = foreignData(ctx);
  if (foreign) return withCommands(ctx, foreign);
  if (!ctx.facts.initialized) return withCommands(ctx, emptyDataDirectory(ctx));
  if (!ctx.running) return withCommands(ctx, withConfigure(ctx, recoverStopped(ctx)));
  return withCommands(ctx, withConfigure(ctx, running(ctx)));
}
