import { findMember, type Cluster, type Member } from '../model/cluster.js';
import type { DynamicConfig, StandbyClusterConfig } from '../config/config.js';
import type { TickInput, UpstreamRef } from './decision.js';
import type { ElectionContext, ElectionKind } from '../rules/eligibility.js';
import { walPosition, type LocalFacts } from '../model/facts.js';
import { canLead, noLeadReason, noStream } from '../model/topology-tags.js';
import { chooseUpstream } from '../rules/upstream.js';
import { cloneSource } from '../rules/clone-source.js';
import { buildStatus, type NodeStatus } from '../model/status.js';
import { fenceWindowSeconds } from './fence-window.js';

/** Facts derived once per tick from the TickInput, shared by every part of decide(). */
export interface TickContext {
  readonly input: TickInput;
  readonly me: string;
  readonly now: number;
  readonly cluster: Cluster;
  /**
   * The dynamic configuration as it applies: in a standby cluster without synchronous
   * replication (its leader cannot make commits wait, and a sync key left from its days as
   * a primary cluster names nobody it could vouch for).
   */
  readonly config: DynamicConfig;
  readonly facts: LocalFacts;
  readonly paused: boolean;
  /** `standby_cluster` of the configuration: the cluster replicates from a remote primary; null for a primary cluster. */
  readonly standby: StandbyClusterConfig | null;
  readonly ttlMs: number;
  readonly loopWaitMs: number;
  /** Name in the leader key (as last read). */
  readonly leaderName: string | null;
  /** The leader key names this node. */
  readonly leaderIsMe: boolean;
  /** Our own deadline has not passed. */
  readonly lockValid: boolean;
  /** The leader's member key (another node's), when it has one. */
  readonly leaderMember: Member | null;
  readonly running: boolean;
  /** Running read-write. */
  readonly isPrimary: boolean;
  /** Running in recovery. */
  readonly isReplica: boolean;
  /** Most advanced local WAL position. */
  readonly myWal: number | null;
  /** Tagged nofailover or failover_priority 0: never leads. */
  readonly nofailover: boolean;
  /** Why it never leads (for messages), when `nofailover`. */
  readonly nofailoverReason: string;
  /** watchdog mode `required` and the device cannot be used. */
  readonly watchdogFailed: boolean;
}

/** Derives the TickContext. */
export function tickContext(input: TickInput): TickContext {
  const { cluster, config, facts, node, now } = input;
  const leaderName = cluster.leader?.name ?? null;
  const leaderIsMe = leaderName === node.name;
  const leaderMember = leaderName !== null && !leaderIsMe ? findMember(cluster, leaderName) ?? null : null;
  const standby = config.standby_cluster;
  return {
    input,
    me: node.name,
    now,
    cluster,
    config: standby !== null && config.synchronous_mode !== false ? { ...config, synchronous_mode: false } : config,
    facts,
    paused: config.pause,
    standby,
    ttlMs: config.ttl * 1000,
    loopWaitMs: config.loop_wait * 1000,
    leaderName,
    leaderIsMe,
    lockValid: input.lockDeadline !== null && now < input.lockDeadline,
    leaderMember,
    running: facts.running,
    isPrimary: facts.running && facts.inRecovery === false,
    isReplica: facts.running && facts.inRecovery === true,
    myWal: walPosition(facts),
    nofailover: !canLead(node.tags),
    nofailoverReason: noLeadReason(node.tags),
    watchdogFailed: node.watchdogMode === 'required' && !input.watchdog.usable,
  };
}

/** Replication slot name of a member on its upstream (PostgreSQL allows [a-z0-9_]). */
export function slotNameFor(member: string): string {
  return member.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 63);
}

/** The leader (another member) as an upstream to follow, when its member key gives a conn_url. */
export function leaderUpstream(ctx: TickContext): UpstreamRef | null {
  const m = ctx.leaderMember;
  return m && m.connUrl ? { name: m.name, connUrl: m.connUrl } : null;
}

/**
 * Where this node copies its data from (a new replica, a reinitialize) when it would stream
 * from `upstream`: a member tagged `clonefrom` in place of the leader (see cloneSource), else `upstream` itself.
 */
export function copySource(ctx: TickContext, upstream: UpstreamRef): UpstreamRef {
  return upstream.name === ctx.leaderName ? cloneSource(ctx.cluster, ctx.me, upstream) : upstream;
}

/** How a log line names the copy's source: `node3 (tagged clonefrom)`, or the name alone. */
export function copySourceText(source: UpstreamRef, upstream: UpstreamRef): string {
  return source.name === upstream.name ? source.name : `${source.name} (tagged clonefrom)`;
}

/** Slot this node uses on its upstream, when slots are on (a node tagged nostream streams from nobody). */
export function mySlot(ctx: TickContext): { slotName?: string } {
  return ctx.config.db.use_slots && !noStream(ctx.input.node.tags) ? { slotName: slotNameFor(ctx.me) } : {};
}

/**
 * What this replica streams from (see chooseUpstream): the member it cascades from, the
 * leader (null upstream while the leader has published no address), or nobody (archive only).
 * `fallback` says why a member named in `replicatefrom` is not used now.
 */
export interface FollowTarget {
  readonly kind: 'leader' | 'member' | 'archive';
  readonly upstream: UpstreamRef | null;
  readonly fallback: string | null;
}

/** This node's follow target in the current view. */
export function followTarget(ctx: TickContext): FollowTarget {
  const choice = chooseUpstream(ctx.cluster, ctx.me, ctx.input.node.tags);
  if (choice.kind === 'archive') return { kind: 'archive', upstream: null, fallback: null };
  if (choice.kind === 'member') return { kind: 'member', upstream: { name: choice.member.name, connUrl: choice.member.connUrl }, fallback: null };
  return { kind: 'leader', upstream: leaderUpstream(ctx), fallback: choice.fallback };
}

/** How a replica whose leader is `leader` starts: from its follow target (the leader while it has no other), with its slot. */
export function replicaSource(ctx: TickContext, leader: UpstreamRef | null): { readonly upstream: UpstreamRef | null; readonly slotName?: string } {
  const t = followTarget(ctx);
  const upstream = t.kind === 'leader' ? leader : t.upstream;
  return { upstream, ...(upstream ? mySlot(ctx) : {}) };
}

/** primary_start_timeout in ms (at least a second, so a zero never makes a start fail at once). */
export function startTimeoutMs(ctx: TickContext): number {
  return Math.max(1, ctx.config.primary_start_timeout) * 1000;
}

/** Watchdog timeout: fires `safety_margin` before the leader key would expire (at least 1 s). */
export function watchdogTimeoutSeconds(ctx: TickContext): number {
  return fenceWindowSeconds(ctx.config.ttl, ctx.input.local.watchdogSafetyMargin);
}

/** This node's own status document, as peers would see it over /node. */
export function myStatus(ctx: TickContext): NodeStatus {
  return buildStatus({
    facts: ctx.facts,
    node: ctx.input.node,
    config: ctx.config,
    cluster: ctx.cluster,
    isLeader: ctx.leaderIsMe && ctx.lockValid,
    standbyCluster: ctx.standby !== null,
    dcsLastSeen: null,
    failsafeActive: false,
    watchdogFailed: ctx.watchdogFailed,
    scheduledRestart: null,
  });
}

/** Highest timeline the cluster knows of: the history key's last switch + 1, or the leader's. */
export function clusterTimeline(ctx: TickContext): number | null {
  const lines = ctx.cluster.history?.lines ?? [];
  const fromHistory = lines.length ? lines[lines.length - 1]![0] + 1 : null;
  const fromLeader = ctx.leaderMember?.timeline ?? null;
  const known = [fromHistory, fromLeader].filter((v): v is number => v !== null);
  return known.length ? Math.max(...known) : null;
}

/** Election context for the eligibility rules. */
export function electionContext(ctx: TickContext, kind: ElectionKind, clusterHasLeader: boolean): ElectionContext {
  return {
    kind,
    clusterHasLeader,
    config: ctx.config,
    clusterTimeline: clusterTimeline(ctx),
    leaderOptime: ctx.cluster.status?.optime ?? null,
    sync: ctx.cluster.sync,
  };
}
