import { findMember, type Cluster, type Member } from '../model/cluster.js';
import type { DynamicConfig, StandbyClusterConfig } from '../config/config.js';
import type { TickInput, UpstreamRef } from './decision.js';
import type { ElectionContext, ElectionKind } from '../rules/eligibility.js';
import { walPosition, type LocalFacts } from '../model/facts.js';
import { tagIsTrue } from '../model/node.js';
import { buildStatus, type NodeStatus } from '../model/status.js';

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
  readonly nofailover: boolean;
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
    nofailover: tagIsTrue(node.tags, 'nofailover'),
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

/** Slot this node uses on its upstream, when slots are on. */
export function mySlot(ctx: TickContext): { slotName?: string } {
  return ctx.config.db.use_slots ? { slotName: slotNameFor(ctx.me) } : {};
}

/** primary_start_timeout in ms (at least a second, so a zero never makes a start fail at once). */
export function startTimeoutMs(ctx: TickContext): number {
  return Math.max(1, ctx.config.primary_start_timeout) * 1000;
}

/** Watchdog timeout: fires `safety_margin` before the leader key would expire (at least 1 s). */
export function watchdogTimeoutSeconds(ctx: TickContext): number {
  return Math.max(1, ctx.config.ttl - ctx.input.local.watchdogSafetyMargin);
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
