import type { Member } from '../model/cluster.js';
import { activeFailoverKey } from './failover-key.js';
import { confirmedFailsafeUntil, decision, needs, type Decision, type LoopMemory } from './decision.js';
import { demoteImmediate } from './demote.js';
import { eligibility, statusWalPosition, type CandidateInfo, type ElectionKind } from '../rules/eligibility.js';
import { takeLeadership } from './promotion.js';
import { stateText } from '../model/states.js';
import type { NodeStatus } from '../model/status.js';
import { isQuorumKey, quorumMemberMayHoldMore, quorumReached } from './sync-mode.js';
import { failoverPriority } from '../model/topology-tags.js';
import { electionContext, myStatus, startTimeoutMs, type TickContext } from './tick-context.js';
import { cascadeProblem } from '../rules/upstream.js';

/** What the race knows of a peer: its /node document (null: unreachable) and tags. */
export function candidate(ctx: TickContext, member: Member): CandidateInfo {
  const status = ctx.input.peers?.get(member.name) ?? null;
  return { name: member.name, status, tags: status?.tags ?? member.tags };
}

/** Where a member's WAL stands: its timeline, then its position on it. */
interface Position {
  readonly tl: number;
  readonly wal: number;
}

/** (timeline, position) of `a` is ahead of `b`'s: a later timeline wins, then more WAL. */
function ahead(a: Position, b: Position): boolean {
  return a.tl > b.tl || (a.tl === b.tl && a.wal > b.wal);
}

function position(status: NodeStatus): Position {
  return { tl: status.timeline ?? 0, wal: statusWalPosition(status) ?? 0 };
}

/** The member furthest ahead of `self` among `found` (the first of equals; null: none ahead). */
function furthestAhead(found: readonly { m: Member; at: Position }[], self: Position): { m: Member; at: Position } | null {
  let best: { m: Member; at: Position } | null = null;
  for (const f of found) if (ahead(f.at, self) && (best === null || ahead(f.at, best.at))) best = f;
  return best;
}

/**
 * A member whose agent answers that its server is down (not stopping, not silent) and that it
 * holds no lock of any kind (its fencer guards no deadline, no failsafe round): it does not
 * write and cannot start a primary without taking the key again (a switchover's old primary
 * between its stop and its start as a replica).
 */
function holdsNothing(status: NodeStatus): boolean {
  return status.role === 'demoted' && status.state !== 'running' && status.state !== 'stopping' && status.silent_primary !== true && status.fencer === 'idle' && status.failsafe_mode_is_active !== true;
}

/**
 * A primary kept alive by failsafe holds its lock until its round's start + ttl. One that
 * stopped answering (frozen, its API cut off) may still write until then, its fencer stops it
 * only at that deadline: a node that confirmed it waits that long. One that answers is judged
 * by what it answers (a primary stops the race anyway). A confirmation given holds though
 * failsafe mode was turned off since: the lock it extended runs on.
 */
function keptByFailsafe(ctx: TickContext): Decision | null {
  const confirmed = ctx.input.failsafeConfirmedOther ?? null;
  if (confirmed === null || confirmed.name === ctx.me) return null;
  const until = confirmedFailsafeUntil(confirmed, ctx.config.ttl);
  if (ctx.now >= until) return null;
  const status = ctx.input.peers?.get(confirmed.name) ?? null;
  if (status !== null && status.xlog !== undefined) return null;
  if (status !== null && holdsNothing(status)) return null;
  const how = status === null ? 'does not answer' : 'answers that it may still hold a lock';
  const d = backOff(ctx, `${confirmed.name}, a primary this node confirmed in failsafe mode, ${how} and may write for ${Math.ceil((until - ctx.now) / 1000)} s more`);
  // One that answers is mostly a switchover's old primary whose fencer still guards the lock it
  // has just given up: that changes within moments, asked again soon rather than a loop later.
  const wakeAt = status === null ? until : Math.min(until, ctx.now + FAILSAFE_RECHECK_MS);
  return d.actions.length ? d : decision(d.message, [], { wakeAt });
}

/** How soon a member asks again a primary it confirmed in failsafe mode that answers it still holds something. */
const FAILSAFE_RECHECK_MS = 300;

/** How soon a member of a leaderless cluster asks again a member that answered as a running primary. */
const PRIMARY_RECHECK_MS = 500;

/**
 * How soon a member that left the race to a better one asks again: that one takes the key within
 * moments (the key's deletion woke it too) unless it cannot (its DCS lost, a long job), which it
 * tells in its next answer; a loop later would keep the cluster without a primary up to loop_wait.
 */
const AHEAD_RECHECK_MS = 1000;

/** A replica's backing-off decision that wakes again after `ms` (a primary's demotion is left as it is). */
function recheckSoon(d: Decision, ctx: TickContext, ms: number): Decision {
  return d.job !== null || d.actions.length > 0 ? d : decision(d.message, [], { wakeAt: ctx.now + ms });
}

/**
 * Failsafe mode: the last leader may still write without the DCS while every member it
 * listed in the failsafe key confirms it, and a node it did not list is never asked. Such a
 * node races only when every listed member answers it (a primary among them stops the race
 * anyway): one that does not answer may be the leader, still writing.
 */
function outsideFailsafe(ctx: TickContext): Decision | null {
  const silent = failsafeSilent(ctx, ctx.me);
  if (silent.length === 0) return null;
  return backOff(ctx, `this node is not among the failsafe members the last leader listed, and ${silent.join(', ')} of them do not answer: the leader may still write under failsafe`);
}

/**
 * The failsafe members that keep `name` out of the race (see outsideFailsafe), as far as this
 * node hears them: none when `name` is listed, failsafe mode is off or the operator chose it.
 * A member they keep out is no better candidate to wait for: it will not race either.
 */
function failsafeSilent(ctx: TickContext, name: string): string[] {
  const listed = ctx.config.failsafe_mode ? ctx.cluster.failsafe : null;
  // A leader alone in its list never stays without the DCS (see withoutDcs); the operator's candidate is the operator's call.
  if (!listed || Object.keys(listed).length < 2 || listed[name] !== undefined) return [];
  if (activeFailoverKey(ctx)?.member === name) return [];
  return Object.keys(listed)
    .filter((n) => n !== ctx.me && (ctx.input.peers?.get(n) ?? null) === null)
    .sort();
}

/**
 * How long the members leave a leaderless cluster to the requested candidate: it takes the key
 * within moments when it can (the watch wakes it); one that cannot (busy with a long job,
 * stuck) must not keep the cluster without a primary.
 */
export function candidateGraceMs(ctx: TickContext): number {
  return Math.max(5000, 2 * ctx.loopWaitMs);
}

/**
 * Leaves the race for candidateGraceMs counted from `since`: the backing-off decision, waking at
 * its end and remembering `remember` (null: already remembered); null once the grace has run out.
 */
function graceBackOff(ctx: TickContext, since: number, why: (secondsLeft: number) => string, remember: Partial<LoopMemory> | null): Decision | null {
  const until = since + candidateGraceMs(ctx);
  if (ctx.now >= until) return null;
  const d = backOff(ctx, why(Math.ceil((until - ctx.now) / 1000)));
  // A primary backing off demotes (a job): nothing to remember or to wake for.
  if (d.job !== null) return d;
  return decision(d.message, remember === null ? d.actions : [...d.actions, { type: 'remember', patch: remember }], { wakeAt: until });
}

/**
 * Leaves the race to the others for candidateGraceMs from when this node first saw the failover
 * key, then races as usual (null): the requested candidate, or for the leader that stepped down
 * without one, the member that can take over.
 */
function leaveRaceForSwitchover(ctx: TickContext, why: (secondsLeft: number) => string): Decision | null {
  const revision = ctx.cluster.failoverRevision;
  const seen = ctx.input.memory.candidateWait;
  const same = seen !== null && seen.revision === revision;
  const since = same ? seen.since : ctx.now;
  return graceBackOff(ctx, since, why, same ? null : { candidateWait: { revision, since } });
}

/** Leaves the race to the requested candidate for candidateGraceMs, then races as usual (null). */
function waitForCandidate(ctx: TickContext, member: string): Decision | null {
  return leaveRaceForSwitchover(ctx, (left) => `${member} is the requested candidate (racing anyway if it has not taken the key within ${left} s)`);
}

/**
 * A member whose REST API does not answer this node while its agent still reaches the DCS (its
 * member key lives), published as a running replica that may lead, with more WAL than this
 * node by the position it published: cut off from this node, not from the cluster. It races
 * too, and holds commits this node lacks; without this, both wait out the peer timeout and the
 * faster atomic create wins. This node leaves the race to it for candidateGraceMs (while its
 * published position stays the same), then races as usual: that member may be unable to lead
 * for a reason its key does not show. Never waited for: the last leader (its key outlives its
 * agent), a member that answers (judged by its answer), one the failsafe rule keeps out, one
 * the automatic rules keep from leading (its tags, not in the sync key).
 */
function silentMemberAhead(ctx: TickContext, others: readonly Member[], self: Position): Decision | null {
  const best = furthestAhead(
    others
      .filter((m) => (ctx.input.peers?.get(m.name) ?? null) === null && m.role === 'replica' && m.state === stateText('running') && m.xlogLocation !== null)
      .filter((m) => failsafeSilent(ctx, m.name).length === 0 && mayLeadUnheard(ctx, m))
      .map((m) => ({ m, at: { tl: m.timeline ?? 0, wal: m.xlogLocation ?? 0 } })),
    self,
  );
  if (best === null) return null;
  const { m, at } = best;
  const seen = ctx.input.memory.silentAheadWait ?? null;
  const same = seen !== null && seen.member === m.name && seen.position === at.wal;
  const since = same ? seen.since : ctx.now;
  const why = (left: number): string => `${m.name} does not answer this node, but its member key shows it running with more WAL (timeline ${at.tl}, WAL ${at.wal}; this node ${self.wal}): leaving the race to it (racing anyway if it has not taken the key within ${left} s)`;
  return graceBackOff(ctx, since, why, same ? null : { silentAheadWait: { member: m.name, position: at.wal, since } });
}

/**
 * Whether the automatic rules let `m` lead but for its silence (its tags, the sync key): one
 * they keep out never takes the key, and waiting for it would only keep the cluster without a
 * primary. Its lag needs no check: it is ahead of this node, which may lead.
 */
function mayLeadUnheard(ctx: TickContext, m: Member): boolean {
  const verdict = eligibility({ name: m.name, status: null, tags: m.tags }, electionContext(ctx, 'automatic', false));
  return verdict.reasons.every((r) => r === 'unreachable');
}

/**
 * A quorum key's primary answers as a replica on this node's timeline with no more WAL than this
 * node, nor than the position last handed over in the status key: it flushed every commit before
 * acknowledging it, so every acknowledged commit is here, whichever members of the list confirmed
 * it. (A switchover without candidate whose other quorum members are gone would otherwise wait
 * for them, the old primary leaving the race to this node.)
 */
function holdsLastPrimaryWal(ctx: TickContext, self: Position): boolean {
  const key = ctx.cluster.sync;
  if (!isQuorumKey(key) || key.leader === null || key.leader === ctx.me) return false;
  const status = ctx.input.peers?.get(key.leader) ?? null;
  if (status === null || status.xlog === undefined || status.role !== 'replica' || status.timeline == null || status.timeline !== self.tl) return false;
  const theirs = statusWalPosition(status);
  return theirs !== null && theirs <= self.wal && (ctx.cluster.status?.optime ?? 0) <= self.wal;
}

/** Not taking part in the race: a replica just waits; a primary without the key must stop writing. */
function backOff(ctx: TickContext, why: string): Decision {
  if (ctx.isPrimary) return demoteImmediate(ctx, `no leader key and ${why}`);
  return decision(`not racing for the leader key: ${why}`);
}

/** The member furthest ahead of this node among those that answer and could feed it WAL as a cascade (null: none). */
function memberAhead(ctx: TickContext, others: readonly Member[]): Member | null {
  const self = { tl: ctx.facts.timeline ?? 0, wal: ctx.myWal ?? 0 };
  const found: { m: Member; at: Position }[] = [];
  for (const m of others) {
    const status = ctx.input.peers?.get(m.name) ?? null;
    if (status && status.xlog !== undefined && status.role === 'replica' && cascadeProblem(ctx.cluster, ctx.me, m.name) === null) found.push({ m, at: position(status) });
  }
  return furthestAhead(found, self)?.m ?? null;
}

/**
 * `member` is ahead of this node and this node may not lead without what it holds: quorum mode,
 * where that member may hold commits acknowledged by it alone and may not lead itself; or this
 * node lags the last leader by more than maximum_lag_on_failover. This node backs off as before,
 * and as a replica streams from that member (a cascade) until it holds what that member holds;
 * then it races as usual. Where that member cannot feed it (not running as a replica, no
 * address, a cascade cycle), it only waits.
 */
function catchUpFrom(ctx: TickContext, member: Member, why: string): Decision {
  const d = backOff(ctx, why);
  if (ctx.isPrimary || d.job !== null || !ctx.facts.running || ctx.facts.inRecovery !== true) return d;
  const problem = cascadeProblem(ctx.cluster, ctx.me, member.name);
  if (problem !== null) return decision(`${d.message}; cannot stream from it to catch up: ${problem}`);
  if (ctx.facts.upstreamConnUrl === member.connUrl) {
    // Not streaming may mean this node's WAL forked off that member's timeline: only a rewind would help, and a leaderless cluster does not rewind.
    const how = ctx.facts.replicationState === 'streaming' ? 'streaming from it to catch up' : 'set to stream from it to catch up, not streaming';
    return decision(`${d.message}; ${how}`);
  }
  return decision(`${d.message}; streaming from it to catch up`, [{ type: 'follow', upstream: { name: member.name, connUrl: member.connUrl }, timeoutMs: startTimeoutMs(ctx) }], { job: 'follow' });
}

/** How soon a switchover candidate catching up from a member ahead looks again: a stream on loopback takes moments, and the others wait for it. */
const CANDIDATE_CATCH_UP_RECHECK_MS = 250;

/**
 * How long a catching-up switchover candidate's WAL may stand still before it gives the
 * switchover up: a stream that works moves within moments of being pointed at its source,
 * and the others would otherwise wait out their whole grace (20 s at loop_wait 10).
 */
const CANDIDATE_STALL_MS = 3000;

/** A catch-up last looked at longer ago than this was interrupted: its stall counts from now. */
const CANDIDATE_LOOK_GAP_MS = 1000;

/**
 * This switchover candidate is behind `member`, which answers (quorum mode: it may hold commits
 * only it and the old leader acknowledged): it streams from that member and races as the
 * candidate once it holds as much. Racing under the automatic rules instead would defer to that
 * member, which itself leaves the race to the candidate: neither would lead until the others'
 * grace ran out. A candidate whose WAL stands still for CANDIDATE_STALL_MS while it catches up
 * (its stream broken, its WAL forked off that member's) clears the failover key: the members
 * race at once under the automatic rules (the member ahead wins, or the old leader takes its
 * key back), as they would have after their grace.
 */
function candidateCatchUp(ctx: TickContext, member: Member, fk: { readonly revision: string }): Decision {
  const why = `this node is the requested candidate, but ${member.name} holds WAL it lacks and may hold acknowledged commits: taking it before taking the key`;
  const d = catchUpFrom(ctx, member, why);
  if (d.job !== null) return d;
  const wal = ctx.myWal ?? 0;
  const revision = fk.revision;
  const seen = ctx.input.memory.candidateCatchUp ?? null;
  // Only a catch-up looked at without a break counts: time spent waiting on something else (a silent member ahead) does not.
  const same = seen !== null && seen.revision === revision && seen.wal === wal && ctx.now - seen.at <= CANDIDATE_LOOK_GAP_MS;
  const since = same ? seen.since : ctx.now;
  if (ctx.now - since >= CANDIDATE_STALL_MS) {
    const reason = `the requested candidate could not catch up with ${member.name} (its WAL stood at ${wal} for ${Math.round((ctx.now - since) / 1000)} s)`;
    return decision(`giving the switchover up: ${reason}; clearing the request so the members race as usual`, [
      { type: 'clearFailover', revision, reason },
      { type: 'remember', patch: { candidateCatchUp: null } },
    ]);
  }
  return decision(d.message, [...d.actions, { type: 'remember', patch: { candidateCatchUp: { revision, wal, since, at: ctx.now } } }], { wakeAt: ctx.now + CANDIDATE_CATCH_UP_RECHECK_MS });
}

/**
 * A quorum key: this switchover candidate has less WAL than the old leader wrote before it
 * released the key, or than a member that answers. The old leader's last position is only
 * final when it handed over; one whose agent stopped while its server wrote on (commits
 * acknowledged by the other quorum members) left an older one, and a member ahead shows it.
 */
function quorumCandidateBehind(ctx: TickContext): boolean {
  if (ctx.config.synchronous_mode === false || !isQuorumKey(ctx.cluster.sync)) return false;
  const last = ctx.cluster.status?.optime ?? null;
  if (last !== null && (ctx.myWal ?? 0) < last) return true;
  const self = { tl: ctx.facts.timeline ?? 0, wal: ctx.myWal ?? 0 };
  return [...(ctx.input.peers ?? new Map()).values()].some((s) => s !== null && s.xlog !== undefined && ahead(position(s), self));
}

/**
 * The leader race of an unlocked cluster (spec: "healthy standby" rules). Every other
 * member's /node is asked in parallel (the loop gathers them on request); this node backs
 * off when a reachable member runs as primary, when an eligible member is ahead of it or
 * holds as much WAL with a higher failover_priority, or when a failover key names someone
 * else who can take over. The winner takes the key by
 * atomic create, then promotes.
 */
export function leaderRace(ctx: TickContext): Decision {
  if (ctx.nofailover) return backOff(ctx, `this node is ${ctx.nofailoverReason}`);
  if (ctx.watchdogFailed) return backOff(ctx, 'the watchdog is required but not usable');
  if (ctx.input.peers === null) return needs('peers', 'cluster has no leader: asking the other members for their state');
  const outside = outsideFailsafe(ctx);
  if (outside) return outside;
  const kept = keptByFailsafe(ctx);
  if (kept) return kept;
  const fk = activeFailoverKey(ctx);
  const others = ctx.cluster.members.filter((m) => m.name !== ctx.me);
  let kind: ElectionKind = 'automatic';
  let chosen = false;
  if (fk && fk.member === ctx.me) {
    kind = fk.leader ? 'switchover' : 'failover';
    chosen = true;
  } else if (fk && fk.member) {
    const target = others.find((m) => m.name === fk.member);
    const fkKind: ElectionKind = fk.leader ? 'switchover' : 'failover';
    if (target && eligibility(candidate(ctx, target), electionContext(ctx, fkKind, false)).eligible) {
      const waiting = waitForCandidate(ctx, fk.member);
      if (waiting) return waiting;
    }
  } else if (fk && fk.leader === ctx.me) {
    // Stepped down for a switchover without candidate: leave the race to an eligible member that has
    // everything this node has; if none has, this node stays the best choice (everyone else backs off).
    const auto = electionContext(ctx, 'automatic', false);
    const mineNow = { tl: ctx.facts.timeline ?? 0, wal: ctx.myWal ?? 0 };
    const someone = others.find((m) => {
      const c = candidate(ctx, m);
      return c.status !== null && !ahead(mineNow, position(c.status)) && eligibility(c, auto).eligible;
    });
    // For a grace only: a member the rules let lead may still fail to (its quorum out of sight, a job of its own), and
    // this node, the last primary, holds every commit.
    const waiting = someone ? leaveRaceForSwitchover(ctx, (left) => `this node stepped down for a switchover and ${someone.name} can take over (racing anyway if nobody has taken the key within ${left} s)`) : null;
    if (waiting) return waiting;
  }
  const self_ = { name: ctx.me, status: myStatus(ctx), tags: ctx.input.node.tags };
  if (chosen && kind === 'switchover' && quorumCandidateBehind(ctx)) {
    // A quorum key: a member of its list need not hold every acknowledged commit (ANY k: the
    // others may have confirmed what never reached it). Behind a member that answers, the
    // candidate takes what it lacks from that member while the others leave it the race.
    const feeder = ctx.facts.running && ctx.facts.inRecovery === true ? memberAhead(ctx, others) : null;
    if (feeder && fk && eligibility(self_, electionContext(ctx, kind, false)).eligible) return candidateCatchUp(ctx, feeder, fk);
    // Behind only the old leader's last position, or unable to stream: the automatic rules decide (the old leader may take its key back).
    kind = 'automatic';
    chosen = false;
  }
  let mine = eligibility(self_, electionContext(ctx, kind, false));
  if (!mine.eligible && chosen) {
    // Being the requested candidate never makes a node less able to lead than the automatic rules allow
    // (e.g. the primary the sync key names, asked to take over again).
    kind = 'automatic';
    chosen = false;
    mine = eligibility(self_, electionContext(ctx, kind, false));
  }
  if (!mine.eligible) {
    // Too far behind the last leader, but a member that answers holds more: stream it from that member (it
    // races itself if it may lead). Once this node holds as much, its lag is that member's.
    const feeder = mine.reasons.every((r) => r === 'lag_exceeded') ? memberAhead(ctx, others) : null;
    return feeder ? catchUpFrom(ctx, feeder, mine.detail) : backOff(ctx, mine.detail);
  }
  // Any node that answers as primary (a member, or a failsafe-kept primary whose member key expired) stops
  // the race; one already shutting down does not (it accepts no new connections).
  // So does one whose server runs without answering and was last a primary: it takes writes again the moment it answers.
  for (const [name, status] of ctx.input.peers) {
    if (status && status.xlog !== undefined && status.role === 'primary' && status.state !== stateText('stopping')) {
      // A primary without the key stops within moments (its own loop sees the key gone, or its failsafe
      // confirmations end): asked again soon rather than a loop later.
      return recheckSoon(backOff(ctx, `${name} is running as primary`), ctx, PRIMARY_RECHECK_MS);
    }
    if (status?.silent_primary) return backOff(ctx, `${name}'s server, last seen as a primary, runs without answering: waiting until it is stopped`);
  }
  const self = { tl: ctx.facts.timeline ?? 0, wal: ctx.myWal ?? 0 };
  const myPriority = failoverPriority(ctx.input.node.tags);
  const auto = electionContext(ctx, 'automatic', false);
  const visible: string[] = [];
  for (const m of others) {
    const status = ctx.input.peers.get(m.name) ?? null;
    // A member without a data directory holds no commit at all: it answers the quorum's question too.
    if (status && status.role === 'uninitialized') visible.push(m.name);
    if (!status || status.xlog === undefined) continue;
    visible.push(m.name);
    // The operator's choice needs no WAL comparison: the old leader handed everything over.
    if (chosen) continue;
    const theirs = position(status);
    // A member the failsafe rule keeps out of the race would leave the cluster without a primary if waited for.
    const keptOut = failsafeSilent(ctx, m.name).length > 0;
    if (ahead(theirs, self)) {
      const where = `${m.name} is ahead (timeline ${status.timeline ?? '?'}, WAL ${statusWalPosition(status) ?? '?'})`;
      const verdict = eligibility(candidate(ctx, m), auto);
      if (!keptOut && verdict.eligible) return recheckSoon(backOff(ctx, where), ctx, AHEAD_RECHECK_MS);
      if (quorumMemberMayHoldMore(ctx, m.name)) return catchUpFrom(ctx, m, `${where} and, a synchronous quorum member, may hold acknowledged commits this node lacks`);
      // It would lead but for etcd, which it cannot reach: its WAL is taken before this node leads, not lost with it.
      if (!keptOut && verdict.reasons.every((r) => r === 'dcs_unreachable')) return catchUpFrom(ctx, m, `${where} but cannot reach the DCS: taking its WAL before racing`);
    }
    // Equally good on WAL: the higher failover_priority leads (not a leader that stepped down for a switchover: it leaves the race to the others).
    const c = candidate(ctx, m);
    const steppedDown = fk !== null && fk.leader === m.name;
    if (!keptOut && !steppedDown && !ahead(self, theirs) && failoverPriority(c.tags) > myPriority && eligibility(c, auto).eligible) {
      return recheckSoon(backOff(ctx, `${m.name} has as much WAL and a higher failover_priority (${failoverPriority(c.tags)} > ${myPriority})`), ctx, AHEAD_RECHECK_MS);
    }
  }
  if (!chosen) {
    const waiting = silentMemberAhead(ctx, others, self);
    if (waiting) return waiting;
  }
  if (kind === 'automatic' && !quorumReached(ctx, visible) && !holdsLastPrimaryWal(ctx, self)) {
    return backOff(ctx, 'too few synchronous quorum members answered to be sure this node holds every commit');
  }
  const why = chosen ? `${kind === 'failover' ? 'manual failover' : 'switchover'} to this node` : 'this node is the healthiest';
  // The old leader of a switchover wrote its shutdown checkpoint's position before it released the key.
  const walAtLeast = chosen && kind === 'switchover' ? (ctx.cluster.status?.optime ?? null) : null;
  return takeLeadership(ctx, { acquire: true, why, walAtLeast });
}
