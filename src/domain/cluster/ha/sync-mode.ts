import type { Action, StandbyProgress } from './decision.js';
import type { Member, SyncState } from '../model/cluster.js';
import type { ReplicationRow } from '../model/facts.js';
import { canLead, syncPriority } from '../model/topology-tags.js';
import type { TickContext } from './tick-context.js';

/**
 * Synchronous replication, managed by the primary. Two things must agree:
 * `synchronous_standby_names` (ssn: who must confirm a commit) and the `sync` key (who may
 * be promoted). The safety rule is that every member the key allows to be promoted holds
 * every acknowledged commit (quorum: any `|L| - k + 1` of them include one that does).
 * Every change is made in steps that keep that rule true at each moment:
 *   1. an empty key is always safe, and so is shrinking the key (members removed first);
 *   2. ssn may be strengthened to "all of the target set" while the key is safe under it;
 *   3. once every member of the target set confirmed everything written up to the moment
 *      ssn became "all of them", the key may name them;
 *   4. then ssn relaxes to the target form (quorum: ANY k).
 */

/** Double-quoted standby name (keeps the member name's exact case). */
function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `FIRST n ("a","b")`: every listed standby must confirm. */
export function allOf(names: readonly string[]): string {
  return names.length ? `FIRST ${names.length} (${names.map(quote).join(',')})` : '';
}

/** `ANY k ("a","b")`: any k of them confirm. */
export function anyOf(k: number, names: readonly string[]): string {
  return names.length ? `ANY ${k} (${names.map(quote).join(',')})` : '';
}

function position(row: ReplicationRow): number {
  return row.flush_lsn ?? row.write_lsn ?? row.replay_lsn ?? 0;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/**
 * A member whose own agent says its server runs without answering (frozen, stuck on I/O):
 * it confirms no commit, yet its WAL sender shows `streaming` until wal_sender_timeout.
 */
function silentMember(m: Member): boolean {
  return m.state === 'running' && m.role === 'demoted';
}

/**
 * A silent member that also holds back a commit (its confirmed position behind ours): one
 * probe that timed out on a standby that keeps confirming must not reshuffle the sync set.
 */
function silentAndBehind(m: Member | undefined, row: ReplicationRow, ctx: TickContext): boolean {
  const ours = ctx.facts.walLocation;
  return m !== undefined && silentMember(m) && (ours === null || position(row) < ours);
}

/**
 * How long a standby's confirmed position may stand still behind the primary's before the
 * primary names another synchronous standby: a standby cut off by the network (or frozen)
 * confirms nothing, yet its WAL sender shows it `streaming` until wal_sender_timeout, and its
 * member key lives until ttl runs out. A live standby confirms within milliseconds.
 */
export const SYNC_STALL_MS = 5000;

/** Each streaming standby's position now, and since when it has stood still behind ours (see StandbyProgress). */
function progressNow(ctx: TickContext): Record<string, StandbyProgress> {
  const before = ctx.input.memory.standbyProgress ?? {};
  const ours = ctx.facts.walLocation;
  const out: Record<string, StandbyProgress> = {};
  for (const r of ctx.facts.replication) {
    if (r.state !== 'streaming') continue;
    const p = position(r);
    const prev = before[r.application_name];
    const behind = ours !== null && p < ours;
    // Still behind where it stood at the last look: it has stood still since then.
    const stillSince = prev !== undefined && prev.position === p ? prev.behindSince : null;
    out[r.application_name] = { position: p, behindSince: behind ? (stillSince ?? ctx.now) : null };
  }
  return out;
}

/** How long the standby's confirmed position has stood still behind ours (as of the last tick's record); null when it moved or is not behind. */
function standingStillMs(ctx: TickContext, row: ReplicationRow): number | null {
  const prev = ctx.input.memory.standbyProgress?.[row.application_name];
  const ours = ctx.facts.walLocation;
  if (prev === undefined || prev.behindSince === null || prev.position !== position(row) || ours === null || position(row) >= ours) return null;
  return ctx.now - prev.behindSince;
}

/** The standby has stood still behind ours for SYNC_STALL_MS. */
function stalled(ctx: TickContext, row: ReplicationRow): boolean {
  return (standingStillMs(ctx, row) ?? 0) >= SYNC_STALL_MS;
}

/** How far (bytes) the standby's confirmed position lags ours beyond maximum_lag_on_syncnode; null within it, or with no limit set. */
function lagBeyondLimit(ctx: TickContext, row: ReplicationRow): number | null {
  const max = ctx.config.maximum_lag_on_syncnode;
  const ours = ctx.facts.walLocation;
  if (max === null || ours === null) return null;
  const lag = ours - position(row);
  return lag > max ? lag : null;
}

/**
 * The record of the standbys' progress on a primary in synchronous mode (see SYNC_STALL_MS),
 * kept when it changed (dropped outside sync mode), and when the primary should look again:
 * when the next standby behind it would count as stalled (null: none will).
 */
export function standbyProgressStep(ctx: TickContext): { readonly actions: Action[]; readonly wakeAt: number | null } {
  const before = ctx.input.memory.standbyProgress ?? null;
  if (ctx.config.synchronous_mode === false) return { actions: before ? [{ type: 'remember', patch: { standbyProgress: null } }] : [], wakeAt: null };
  const now = progressNow(ctx);
  const same = before !== null && Object.keys(before).length === Object.keys(now).length
    && Object.entries(now).every(([name, p]) => before[name]?.position === p.position && before[name]?.behindSince === p.behindSince);
  // Only times to come: a standby already counted as stalled needs no new look (it would spin the loop).
  const times = Object.values(now).flatMap((p) => (p.behindSince === null || p.behindSince + SYNC_STALL_MS <= ctx.now ? [] : [p.behindSince + SYNC_STALL_MS]));
  return { actions: same ? [] : [{ type: 'remember', patch: { standbyProgress: now } }], wakeAt: times.length ? Math.min(...times) : null };
}

/**
 * Why the members of the sync key that stopped confirming are left out, one line each, for
 * the decision's message: the log says why the set changes (once: the key drops them first).
 */
export function syncStandbysLeftOut(ctx: TickContext): string[] {
  const key = ctx.cluster.sync;
  if (ctx.config.synchronous_mode === false || !key || key.leader !== ctx.me) return [];
  const named = new Set(key.syncStandby);
  const members = new Map(ctx.cluster.members.map((m) => [m.name, m]));
  const out: string[] = [];
  for (const r of ctx.facts.replication) {
    if (r.state !== 'streaming' || !named.has(r.application_name)) continue;
    if (silentAndBehind(members.get(r.application_name), r, ctx)) out.push(`${r.application_name} is left out of the synchronous standbys: its server does not answer its agent and a commit waits for it`);
    else if (stalled(ctx, r)) out.push(`${r.application_name} is left out of the synchronous standbys: it confirmed nothing for ${Math.round((standingStillMs(ctx, r) ?? 0) / 1000)} s while commits wait`);
    else {
      const lag = lagBeyondLimit(ctx, r);
      if (lag !== null) out.push(`${r.application_name} is left out of the synchronous standbys: it lags ${lag} bytes behind, more than maximum_lag_on_syncnode (${ctx.config.maximum_lag_on_syncnode})`);
    }
  }
  return out;
}

/**
 * The standbys that should be synchronous: streaming from us, members with a sync_priority
 * above 0 (not `nosync`, not `nostream`) whose server answers its agent and whose confirmed
 * position does not stand still behind ours (see SYNC_STALL_MS) nor lag it by more than
 * maximum_lag_on_syncnode. Members that may lead first (a `nofailover` standby holding the
 * only copy of the last commits would leave no one to fail over to, as in Patroni), then the
 * highest sync_priority, then the current ones (a set that works is not reshuffled), then
 * the most advanced.
 */
export function syncCandidates(ctx: TickContext, current: readonly string[]): string[] {
  const members = new Map(ctx.cluster.members.filter((m) => m.name !== ctx.me).map((m) => [m.name, m]));
  const prio = (name: string) => {
    const m = members.get(name);
    return m ? syncPriority(m.tags) : 0;
  };
  const leadsLast = (name: string) => {
    const m = members.get(name);
    return m && canLead(m.tags) ? 0 : 1;
  };
  const rows = ctx.facts.replication.filter(
    (r) => r.state === 'streaming' && prio(r.application_name) > 0 && !silentAndBehind(members.get(r.application_name), r, ctx) && !stalled(ctx, r) && lagBeyondLimit(ctx, r) === null,
  );
  rows.sort((a, b) => {
    const ca = current.includes(a.application_name) ? 0 : 1;
    const cb = current.includes(b.application_name) ? 0 : 1;
    return (
      leadsLast(a.application_name) - leadsLast(b.application_name) ||
      prio(b.application_name) - prio(a.application_name) ||
      ca - cb ||
      position(b) - position(a) ||
      (a.application_name < b.application_name ? -1 : 1)
    );
  });
  return [...new Set(rows.map((r) => r.application_name))];
}

/** Target: who should be in the key, the quorum size, and the ssn to end with. */
function target(ctx: TickContext, current: readonly string[]): { names: string[]; k: number; ssn: string } {
  const n = ctx.config.synchronous_node_count;
  const strict = ctx.config.synchronous_mode_strict;
  const candidates = syncCandidates(ctx, current);
  if (ctx.config.synchronous_mode === 'quorum') {
    // Every candidate, those that may not lead included: a commit one of them alone confirmed
    // is streamed from it before a member that may lead promotes (see the race), and a member
    // that may lead stays in the list while it stalls, so it can still take over.
    const names = candidates;
    const k = names.length === 0 ? 0 : strict ? n : Math.min(n, names.length);
    return { names, k, ssn: names.length ? anyOf(k, names) : strict ? '*' : '' };
  }
  const names = candidates.slice(0, n);
  return { names, k: 0, ssn: names.length ? allOf(names) : strict ? '*' : '' };
}

/** Every name in `names` confirmed the WAL written up to when ssn became "all of them". */
function caughtUp(ctx: TickContext, names: readonly string[]): boolean {
  const remembered = ctx.input.memory.ssn;
  const threshold = remembered && remembered.value === ctx.facts.synchronousStandbyNames ? remembered.lsn : ctx.facts.walLocation ?? Infinity;
  return names.every((name) => {
    const row = ctx.facts.replication.find((r) => r.application_name === name && r.state === 'streaming');
    return row !== undefined && position(row) >= threshold;
  });
}

/** The key `(keyNames, k)` stays safe while ssn requires every one of `all`. */
function safeUnderAll(keyNames: readonly string[], k: number, all: readonly string[], quorum: boolean): boolean {
  if (quorum) return keyNames.length === 0 || keyNames.filter((x) => all.includes(x)).length >= k;
  return keyNames.every((x) => all.includes(x));
}

/**
 * One tick of sync management on the leader: the key and ssn actions, in order (a key
 * write that fails stops the sequence before ssn changes).
 */
export function syncActions(ctx: TickContext): Action[] {
  const me = ctx.me;
  const key = ctx.cluster.sync;
  const mode = ctx.config.synchronous_mode;
  const currentSsn = ctx.facts.synchronousStandbyNames;
  if (mode === false) {
    const wanted = String(ctx.input.local.parameters['synchronous_standby_names'] ?? ctx.config.db.parameters['synchronous_standby_names'] ?? '');
    const out: Action[] = [];
    if (key) out.push({ type: 'deleteSync' });
    if (currentSsn !== wanted) out.push({ type: 'setSynchronousStandbyNames', value: wanted });
    return out;
  }
  const revision = key?.revision ?? '0';
  if (!key || key.leader !== me) {
    return [{ type: 'writeSync', leader: me, syncStandby: [], quorum: 0, ifRevision: revision }];
  }
  const keyNames = key.syncStandby;
  // The key is read as it was written, whatever the mode is now: a quorum key (ANY k) names
  // members each of whom may lack commits, and must not be shrunk or relaxed as a priority one
  // after synchronous_mode changed from quorum to true (nor a priority key as a quorum one).
  const keyQuorum = isQuorumKey(key);
  const keyK = keyQuorum ? key.quorum : 0;
  const t = target(ctx, keyNames);
  const write = (names: readonly string[], k: number): Action => ({ type: 'writeSync', leader: me, syncStandby: [...names], quorum: k, ifRevision: revision });
  const setSsn = (value: string): Action[] => (value === currentSsn ? [] : [{ type: 'setSynchronousStandbyNames', value }]);

  // A key written before the promotion is written again once promoted: what it replaced no longer holds.
  if (sameSet(keyNames, t.names) && keyK === t.k) return key.promoting && ctx.isPrimary ? [write(keyNames, keyK), ...setSsn(t.ssn)] : setSsn(t.ssn);
  if (t.names.length === 0) return [write([], 0), ...setSsn(t.ssn)];

  const all = allOf(t.names);
  if (currentSsn === all && caughtUp(ctx, t.names)) return [write(t.names, t.k), ...setSsn(t.ssn)];
  if (safeUnderAll(keyNames, keyK, t.names, keyQuorum)) return setSsn(all);

  // Shrink first: drop the members that will not stay (quorum: lower k by as many).
  const kept = keyNames.filter((x) => t.names.includes(x));
  const keptK = keyQuorum ? keyK - (keyNames.length - kept.length) : 0;
  const shrunk = kept.length === 0 || (keyQuorum && keptK < 1) ? { names: [] as string[], k: 0 } : { names: kept, k: keptK };
  return [write(shrunk.names, shrunk.k), ...setSsn(all)];
}

/**
 * Sync actions a new primary takes before promoting: it alone is promotable until standbys
 * confirm again. The key it replaces goes with it (`promoting`), for its fencer to put back if
 * its agent dies before the server promoted (see syncKeyToRestore).
 */
export function prePromoteSyncActions(ctx: TickContext): Action[] {
  if (ctx.config.synchronous_mode === false) return [];
  const key = ctx.cluster.sync;
  const timeline = ctx.facts.timeline;
  // Its own key of an earlier attempt (a pre_promote script or a promotion that failed) carries
  // what that one replaced, with the timeline of then: a server on a later one has promoted.
  const carried = key !== null && key.leader === ctx.me && key.promoting !== undefined ? key.promoting : null;
  const replacing = key !== null && key.leader !== null && timeline !== null ? { timeline, replaced: { leader: key.leader, syncStandby: key.syncStandby, quorum: key.quorum } } : null;
  const promoting = carried ?? replacing;
  return [
    { type: 'writeSync', leader: ctx.me, syncStandby: [], quorum: 0, ...(promoting ? { promoting } : {}), ifRevision: key?.revision ?? '0' },
    { type: 'setSynchronousStandbyNames', value: ctx.config.synchronous_mode_strict ? '*' : '' },
  ];
}

/**
 * Whether the sync key was written in quorum mode (`ANY k`, k >= 1): any `|L| - k + 1` of its
 * members include one that holds every acknowledged commit, not each of them. A priority key
 * (`FIRST n`, quorum 0) names members that each hold every commit.
 */
export function isQuorumKey(key: SyncState | null): key is SyncState {
  return key !== null && key.quorum > 0 && key.syncStandby.length > 0;
}

/**
 * The standbys that hold every commit this primary acknowledged, as the sync key names them
 * (a quorum key: k of them hold each one, and the leader race finds which). Empty outside
 * synchronous mode, when the key names another primary, or when it names no standby: then
 * commits did not wait for any standby, and a failover could lose some.
 */
export function acknowledgedCommitHolders(ctx: TickContext): readonly string[] {
  const key = ctx.cluster.sync;
  if (ctx.config.synchronous_mode === false || key === null || key.leader !== ctx.me) return [];
  return key.syncStandby.filter((name) => name !== ctx.me);
}

/**
 * Quorum key: a member of the key's list may hold commits acknowledged by it alone, so one
 * ahead of a candidate blocks it even when it cannot lead itself (failover_priority 0,
 * nofailover): the quorum count below assumes the candidate holds all that the members it
 * sees hold. False without a quorum key (whatever the mode is now, unless it is off), and for
 * the primary the key names.
 */
export function quorumMemberMayHoldMore(ctx: TickContext, name: string): boolean {
  const key = ctx.cluster.sync;
  if (ctx.config.synchronous_mode === false || !isQuorumKey(key) || key.leader === ctx.me) return false;
  return key.syncStandby.includes(name);
}

/**
 * A quorum key: a candidate must see at least `|L| - k + 1` members of the key's list
 * (itself included) so that one of them holds every acknowledged commit; `visible` are the
 * members of L whose /node answered. True without a quorum key (whatever the mode is now,
 * unless it is off), and for the primary the key names.
 */
export function quorumReached(ctx: TickContext, visible: readonly string[]): boolean {
  const key = ctx.cluster.sync;
  if (ctx.config.synchronous_mode === false || !isQuorumKey(key)) return true;
  // The last primary the key names holds every commit it acknowledged.
  if (key.leader === ctx.me) return true;
  const needed = key.syncStandby.length - key.quorum + 1;
  const seen = new Set(visible.filter((n) => key.syncStandby.includes(n)));
  if (key.syncStandby.includes(ctx.me)) seen.add(ctx.me);
  return seen.size >= needed;
}
