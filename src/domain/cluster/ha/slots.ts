import type { Member } from '../model/cluster.js';
import type { SlotFact } from '../model/facts.js';
import { canLead, noStream } from '../model/topology-tags.js';
import { chooseUpstream } from '../rules/upstream.js';
import { decision, type Action, type Decision, type SlotPlan, type SlotSpec } from './decision.js';
import { configureActions } from './maintenance.js';
import { retryDelayMs } from './retry-backoff.js';
import { leaderUpstream, slotNameFor, startTimeoutMs, type TickContext } from './tick-context.js';

/**
 * Replication slots. Every member that can lead keeps, besides the slots its own downstreams
 * use, a physical slot for each other member, advanced to where that member is, and the
 * permanent slots of the configuration: after a failover, the new leader holds the WAL every
 * replica and every consumer still needs. The leader publishes its slots' positions and the
 * member slots it retains in the status key; a departed member's slot is retained for
 * member_slots_ttl (0: only while its member key exists).
 */

/** One slot this node should have. */
export interface WantedSlot extends SlotSpec {
  /**
   * Set on a slot nobody is expected to use here (kept for after a failover): an inactive one
   * is moved forward to this position (0: none known yet). Absent: its consumer moves it.
   */
  readonly advanceTo?: number;
}

/** Most LSN bytes a logical slot is advanced by in one tick: decoding is work, and a tick must stay short. */
export const LOGICAL_ADVANCE_STEP = 64 * 1024 * 1024;

/** Where a member has its WAL up to, as its member key says (the replayed position first: what it asks for on a reconnect is at or after it). */
function memberPosition(m: Member): number | null {
  return m.replayLsn ?? m.receiveLsn ?? m.xlogLocation;
}

/** The member a member streams from by the agents' rule: its name, or null (the archive). */
function effectiveUpstream(ctx: TickContext, m: Member): string | null {
  const choice = chooseUpstream(ctx.cluster, m.name, m.tags);
  if (choice.kind === 'archive') return null;
  if (choice.kind === 'member') return choice.member.name;
  return ctx.leaderName;
}

/**
 * On the leader: the member slots it retains (every member that streams, and each departed
 * one until member_slots_ttl has passed since its key went), and the departures to remember:
 * since when, or null once expired (kept while the status key, read a tick late, still lists
 * it, so it does not come back as a fresh departure). A new leader takes the retained set
 * from the status key its predecessor wrote, each departure counted from now.
 */
export function retainedSlots(ctx: TickContext): { readonly retain: readonly string[]; readonly departed: Readonly<Record<string, number | null>> } {
  const mine = slotNameFor(ctx.me);
  const present = new Set(ctx.cluster.members.filter((m) => m.name !== ctx.me && !noStream(m.tags)).map((m) => slotNameFor(m.name)));
  const departed: Record<string, number | null> = {};
  const ttlMs = ctx.config.member_slots_ttl * 1000;
  if (ttlMs > 0 && ctx.config.db.use_slots) {
    const listed = new Set(ctx.cluster.status?.retainSlots ?? []);
    const memory = ctx.input.memory.departedSlots;
    for (const name of new Set([...listed, ...Object.keys(memory)])) {
      if (name === mine || present.has(name)) continue;
      const since = name in memory ? memory[name]! : ctx.now;
      if (since !== null && ctx.now - since < ttlMs) departed[name] = since;
      else if (listed.has(name)) departed[name] = null;
    }
  }
  const kept = Object.keys(departed).filter((name) => departed[name] !== null);
  const retain = ctx.config.db.use_slots ? [...present, ...kept].sort() : [];
  return { retain, departed };
}

/**
 * The slots this node should have. The leader: a slot for each member that streams from it
 * (its consumer moves it), one for each other retained member (a cascading member's is moved
 * to the position that member reports), and every permanent slot. A replica: a slot for each
 * member that cascades from it; and, when it can lead, one for every other retained member and
 * the permanent physical slots (moved to the leader's published positions), plus the
 * permanent logical slots when it streams (copied from the leader, then moved along). A node
 * that can never lead keeps only what its cascading members use.
 */
export function wantedSlots(ctx: TickContext, role: 'leader' | 'replica'): WantedSlot[] {
  const out = new Map<string, WantedSlot>();
  const mine = slotNameFor(ctx.me);
  const leads = role === 'leader';
  const mayLead = canLead(ctx.input.node.tags);
  const published = ctx.cluster.status?.slots ?? {};
  const ttlOn = ctx.config.member_slots_ttl > 0;
  if (ctx.config.db.use_slots) {
    for (const m of ctx.cluster.members) {
      if (m.name === ctx.me || noStream(m.tags)) continue;
      const name = slotNameFor(m.name);
      const upstream = effectiveUpstream(ctx, m);
      const active = upstream === ctx.me || (leads && upstream === ctx.leaderName);
      if (active) {
        out.set(name, { name, type: 'physical' });
        continue;
      }
      if (!ttlOn || !mayLead) continue;
      // The leader's own slot for a cascading member is idle: the member's own position moves it.
      const cascading = upstream !== null && upstream !== ctx.leaderName;
      const own = cascading ? memberPosition(m) ?? 0 : 0;
      out.set(name, { name, type: 'physical', advanceTo: Math.max(leads ? 0 : published[name] ?? 0, own) });
    }
    const members = new Set(ctx.cluster.members.map((m) => slotNameFor(m.name)));
    const retained = leads ? retainedSlots(ctx).retain : (ctx.cluster.status?.retainSlots ?? []);
    // A departed member's slot stays where it was: nothing moves it until its member comes back or it expires.
    if (mayLead || leads) for (const name of retained) if (name !== mine && !members.has(name)) out.set(name, { name, type: 'physical' });
  }
  if (leads || mayLead) {
    // Hot-standby feedback (which keeps the catalog rows a logical slot needs) reaches the leader only over streaming.
    const target = chooseUpstream(ctx.cluster, ctx.me, ctx.input.node.tags);
    const streams = target.kind === 'leader' || (target.kind === 'member' && !noStream(target.member.tags));
    for (const [name, slot] of Object.entries(ctx.config.slots)) {
      if (out.has(name) || name === mine) continue;
      if (slot.type === 'physical') {
        out.set(name, { name, type: 'physical', ...(leads ? {} : { advanceTo: published[name] ?? 0 }) });
      } else if (leads || streams) {
        // A replica's copy of a logical slot is moved to the leader's confirmed position, no further than it replayed.
        const at = Math.min(published[name] ?? 0, ctx.facts.replayedLocation ?? 0);
        out.set(name, { name, type: 'logical', database: slot.database!, plugin: slot.plugin!, ...(leads ? {} : { advanceTo: at }) });
      }
    }
  }
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** An `ignore_slots` entry matches a slot when every field it gives matches. */
export function slotIgnored(slot: SlotFact, ignore: readonly Readonly<Record<string, string>>[]): boolean {
  return ignore.some(
    (m) =>
      (m['name'] === undefined || m['name'] === slot.name) &&
      (m['type'] === undefined || m['type'] === slot.type) &&
      (m['database'] === undefined || m['database'] === slot.database) &&
      (m['plugin'] === undefined || m['plugin'] === slot.plugin),
  );
}

function sameKind(e: SlotFact, w: WantedSlot): boolean {
  return e.type === w.type && (w.type === 'physical' || (e.database === (w.database ?? null) && e.plugin === (w.plugin ?? null)));
}

/** What the plan leaves to a job: logical slots a replica must copy from the leader. */
export interface SlotReconciliation {
  readonly plan: SlotPlan;
  readonly copy: readonly string[];
}

/**
 * The changes that make `existing` what `wanted` says. Slots nobody wants are dropped unless
 * an `ignore_slots` entry matches them (nothing is dropped while paused); a slot of the wrong
 * kind is dropped and made anew; missing ones are created, except a replica's logical slots,
 * which are copied from the leader (only those the leader publishes a position for). An
 * inactive slot with an `advanceTo` ahead of it moves forward (a logical one by at most
 * LOGICAL_ADVANCE_STEP a tick); one that holds an xmin (left by a standby's
 * hot_standby_feedback, nothing would ever release it) or reserves no WAL is dropped and made
 * anew the next time.
 */
export function reconcileSlots(
  existing: readonly SlotFact[],
  wanted: readonly WantedSlot[],
  opts: { readonly ignore: readonly Readonly<Record<string, string>>[]; readonly paused: boolean; readonly replica: boolean; readonly published?: Readonly<Record<string, number>> },
): SlotReconciliation {
  const want = new Map(wanted.map((w) => [w.name, w]));
  const have = new Map(existing.map((e) => [e.name, e]));
  const drop: string[] = [];
  const create: SlotSpec[] = [];
  const advance: { name: string; lsn: number }[] = [];
  const copy: string[] = [];
  const make = (w: WantedSlot) => {
    if (w.type === 'logical' && opts.replica) {
      if (opts.published?.[w.name] !== undefined) copy.push(w.name);
      return;
    }
    create.push({ name: w.name, type: w.type, ...(w.database ? { database: w.database } : {}), ...(w.plugin ? { plugin: w.plugin } : {}) });
  };
  for (const e of existing) {
    const w = want.get(e.name);
    if (!w) {
      if (!opts.paused && !slotIgnored(e, opts.ignore)) drop.push(e.name);
      continue;
    }
    if (!sameKind(e, w)) {
      if (opts.paused) continue;
      drop.push(e.name);
      make(w);
      continue;
    }
    if (w.advanceTo === undefined || e.active) continue;
    if (e.type === 'physical') {
      if (e.hasXmin || e.restartLsn === null) {
        if (!opts.paused) drop.push(e.name);
      } else if (w.advanceTo > e.restartLsn) {
        advance.push({ name: e.name, lsn: w.advanceTo });
      }
    } else {
      const from = e.confirmedFlushLsn ?? 0;
      if (w.advanceTo > from) advance.push({ name: e.name, lsn: Math.min(w.advanceTo, from + LOGICAL_ADVANCE_STEP) });
    }
  }
  for (const w of wanted) if (!have.has(w.name)) make(w);
  return { plan: { drop, create, advance }, copy };
}

/** True when the plan changes nothing. */
export function emptyPlan(p: SlotPlan): boolean {
  return p.drop.length === 0 && p.create.length === 0 && p.advance.length === 0;
}

/** A syncSlots for `plan`, unless it changes nothing or the last attempts failed and their retry delay has not passed. */
function syncSlotsAction(ctx: TickContext, plan: SlotPlan): Action[] {
  if (emptyPlan(plan)) return [];
  const failed = ctx.input.memory.slotsFailure;
  if (failed !== null && ctx.now < failed.lastAt + retryDelayMs(failed.count, ctx.loopWaitMs)) return [];
  return [{ type: 'syncSlots', plan }];
}

/** The leader's slot actions this tick: a syncSlots when its slots differ from what it should have (failures back off). */
export function leaderSlotActions(ctx: TickContext): Action[] {
  const { plan } = reconcileSlots(ctx.facts.slots, wantedSlots(ctx, 'leader'), { ignore: ctx.config.ignore_slots, paused: ctx.paused, replica: false });
  return syncSlotsAction(ctx, plan);
}

/**
 * A standby leader's slot actions: as a leader's, physical slots only (its server is in
 * recovery: PostgreSQL creates no logical slot there).
 */
export function standbyLeaderSlotActions(ctx: TickContext): Action[] {
  const wanted = wantedSlots(ctx, 'leader').filter((w) => w.type === 'physical');
  const { plan } = reconcileSlots(ctx.facts.slots, wanted, { ignore: ctx.config.ignore_slots, paused: ctx.paused, replica: true });
  return syncSlotsAction(ctx, plan);
}

/**
 * What the leader publishes in the status key besides its optime: the positions of the slots
 * it keeps (physical: restart_lsn; logical: confirmed_flush_lsn) and its own WAL position
 * under its own slot name (the others keep a slot for it), the member slots it retains; and
 * the departure times to remember when they changed.
 */
export function leaderStatus(ctx: TickContext): { readonly slots: Readonly<Record<string, number>>; readonly retainSlots: readonly string[]; readonly remember: Action[] } {
  const wanted = new Set(wantedSlots(ctx, 'leader').map((w) => w.name));
  const slots: Record<string, number> = {};
  for (const s of ctx.facts.slots) {
    if (!wanted.has(s.name)) continue;
    const at = s.type === 'physical' ? s.restartLsn : s.confirmedFlushLsn;
    if (at !== null) slots[s.name] = at;
  }
  // The members keep a slot for the leader too (for when it comes back as a replica): they move it to where the leader is.
  if (ctx.config.db.use_slots && ctx.config.member_slots_ttl > 0 && ctx.facts.walLocation !== null) slots[slotNameFor(ctx.me)] = ctx.facts.walLocation;
  const { retain, departed } = retainedSlots(ctx);
  const before = ctx.input.memory.departedSlots;
  const same = Object.keys(departed).length === Object.keys(before).length && Object.entries(departed).every(([k, v]) => before[k] === v);
  return { slots, retainSlots: retain, remember: same ? [] : [{ type: 'remember', patch: { departedSlots: departed } }] };
}

/**
 * A replica's slot upkeep, added to a steady-state decision (no job, nothing to gather): the
 * slot changes, and a job copying the leader's logical slots that it lacks (the server
 * restarts to load them) when the decision has nothing else to do.
 */
export function withReplicaSlots(ctx: TickContext, d: Decision): Decision {
  if (d.job !== null || d.need !== null || !ctx.isReplica || ctx.leaderName === null || ctx.leaderIsMe) return d;
  if (d.publish.reinitializeRequired) return d;
  const { plan, copy } = reconcileSlots(ctx.facts.slots, wantedSlots(ctx, 'replica'), {
    ignore: ctx.config.ignore_slots,
    paused: ctx.paused,
    replica: true,
    published: ctx.cluster.status?.slots ?? {},
  });
  const actions: Action[] = syncSlotsAction(ctx, plan);
  const leader = leaderUpstream(ctx);
  const streaming = ctx.facts.replicationState === 'streaming';
  // After the parameters are applied: hot_standby_feedback must be on before a copied slot is worth anything.
  if (copy.length && leader && streaming && !ctx.paused && d.actions.length === 0 && configureActions(ctx).length === 0) {
    return decision(`${d.message}; copying the logical slots ${copy.join(', ')} from the leader ${leader.name}`, [
      ...actions,
      { type: 'copyLogicalSlots', source: leader, names: copy, timeoutMs: startTimeoutMs(ctx) },
    ], { job: 'copy slots', publish: d.publish });
  }
  return actions.length ? { ...d, actions: [...d.actions, ...actions] } : d;
}
