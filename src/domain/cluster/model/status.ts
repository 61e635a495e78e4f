import type { Cluster, ScheduledRestart } from './cluster.js';
import type { DynamicConfig } from '../config/config.js';
import { serverSilent, type LocalFacts, type PendingChange, type ReplicationRow } from './facts.js';
import type { NodeSettings, TagValue } from './node.js';
import { stateText, type Role } from './states.js';

/** WAL positions in the status document: the primary shows one, a replica three plus flags. */
export type XlogDocument =
  | { readonly location: number }
  | {
      readonly received_location: number | null;
      readonly replayed_location: number | null;
      readonly replayed_timestamp: string | null;
      readonly paused: boolean;
    };

/**
 * The node status document: body of `GET /node` and of every health check.
 * Key order matters for readers: builders must create keys in this order.
 */
export interface NodeStatus {
  readonly state: string;
  readonly postmaster_start_time?: string;
  readonly role: string;
  readonly server_version?: number;
  readonly xlog?: XlogDocument;
  readonly sync_standby?: true;
  readonly quorum_standby?: true;
  readonly timeline?: number;
  readonly replication_state?: string;
  readonly replication?: readonly ReplicationRow[];
  readonly pause?: true;
  readonly cluster_unlocked?: true;
  readonly failsafe_mode_is_active?: true;
  readonly dcs_last_seen?: number;
  /** This agent's last DCS call failed: it cannot take the leader key until it reaches the DCS again. */
  readonly dcs_unreachable?: true;
  readonly tags?: Readonly<Record<string, TagValue>>;
  readonly database_system_identifier?: string;
  readonly pending_restart?: true;
  readonly pending_restart_reason?: Readonly<Record<string, PendingChange>>;
  readonly scheduled_restart?: ScheduledRestart;
  readonly watchdog_failed?: true;
  /** Why this replica answers no read-only health check: it may hold WAL the leader lacks. */
  readonly position_unconfirmed?: string;
  /** The fencer's state (`guarding`, `idle`, `unavailable`, `off`), and why it is unavailable. */
  readonly fencer?: 'guarding' | 'idle' | 'unavailable' | 'off';
  readonly fencer_reason?: string;
  /** Why this node keeps its data directory out of service until an operator rebuilds it, and the command to run. */
  readonly reinitialize_required?: string;
  /** A new cluster's data before its post_bootstrap script succeeded and the cluster was registered: it may yet be undone, so no primary health check passes. */
  readonly bootstrap_unfinished?: true;
  /** What this node waits for before it can serve (a leader to clone from, another member's bootstrap...). */
  readonly waiting_for?: string;
  /** This node's server runs without answering and was last seen as a primary: no other node may promote before it is stopped. */
  readonly silent_primary?: true;
  /** Why an automatic failover could not promote this node right now (each reason with its figures); absent when it could, and on the leader. */
  readonly not_eligible?: readonly { readonly code: string; readonly detail: string }[];
  readonly svc: { readonly version: string; readonly scope: string; readonly name: string };
}

/** Everything the status document is built from. */
export interface StatusInput {
  readonly facts: LocalFacts;
  readonly node: NodeSettings;
  readonly config: DynamicConfig;
  /** Last DCS view; null before the first successful read. */
  readonly cluster: Cluster | null;
  /** This node holds the leader lock. */
  readonly isLeader: boolean;
  /** This cluster replicates from a remote primary (standby_cluster configured). */
  readonly standbyCluster: boolean;
  /** epoch seconds */
  readonly dcsLastSeen: number | null;
  /** The agent's last DCS call failed (absent: false). */
  readonly dcsUnreachable?: boolean;
  /**
   * The last successful read of the cluster is older than ttl (see clusterViewStale): the view
   * can no longer say that anyone holds the lock. Absent: false.
   */
  readonly clusterViewStale?: boolean;
  readonly failsafeActive: boolean;
  readonly watchdogFailed: boolean;
  readonly scheduledRestart: ScheduledRestart | null;
  /** Why this replica's WAL position is unconfirmed against the leader (see unconfirmedPosition); null or absent when it is not. */
  readonly positionUnconfirmed?: string | null;
  /** The fencer's state; absent where there is none to report (tests, embedding). */
  readonly fencer?: { readonly state: 'guarding' | 'idle' | 'unavailable' | 'off'; readonly reason: string | null };
  /** Why the data directory must be rebuilt by an operator (the last decision says so); null or absent otherwise. */
  readonly reinitializeRequired?: string | null;
  /** What the node waits for (the last decision says so); null or absent otherwise. */
  readonly waitingFor?: string | null;
  /** The server runs without answering and was last seen as a primary (the last decision says so). */
  readonly silentPrimary?: boolean;
  /** Set by the HA loop while a promote or demote is in flight and the server is down. */
  readonly transitionalRole?: 'demoted' | 'promoted';
}

/**
 * The role a node reports. Running: from pg_is_in_recovery() and the lock. Not running,
 * The API allows only transitional roles: the one the HA loop names, `uninitialized`
 * without a data directory, else `demoted` (it serves nothing until it starts again).
 */
export function statusRole(input: Pick<StatusInput, 'facts' | 'isLeader' | 'standbyCluster' | 'transitionalRole'>): Role {
  const { facts } = input;
  if (facts.running && facts.inRecovery === false) return 'primary';
  if (facts.running) return input.isLeader && input.standbyCluster ? 'standby_leader' : 'replica';
  return input.transitionalRole ?? (facts.initialized ? 'demoted' : 'uninitialized');
}

/** A standby's entry as the document lists it: the positions it confirmed are the agent's own business. */
function replicationEntry(r: ReplicationRow): ReplicationRow {
  return { usename: r.usename, application_name: r.application_name, client_addr: r.client_addr, state: r.state, sync_state: r.sync_state, sync_priority: r.sync_priority };
}

function xlogOf(facts: LocalFacts, role: Role): XlogDocument {
  if (role === 'primary') return { location: facts.walLocation ?? 0 };
  return {
    // A replica not streaming (restoring from the archive, its receiver not connected yet) has
    // received at least what it replayed: a position, as the document promises, not null.
    received_location: facts.receivedLocation ?? facts.replayedLocation,
    replayed_location: facts.replayedLocation,
    replayed_timestamp: facts.replayedTimestamp,
    paused: facts.replayPaused,
  };
}

/**
 * Whether a cluster view read at `readAt` (epoch ms; null: never read) is too old at `now` to
 * show the lock: older than ttl, any lock it shows has run out unless renewed since, and the DCS
 * has not answered to say whether it was. Patroni resets its view once a DCS read fails and
 * reports `cluster_unlocked` from then on; this keeps the view (decisions still use it) and
 * reports the lock as gone once it must have expired.
 */
export function clusterViewStale(readAt: number | null, now: number, ttlSeconds: number): boolean {
  return readAt !== null && now - readAt > ttlSeconds * 1000;
}

/**
 * Builds the node status document (body of `/node` and every health check).
 * Keys are created in the spec's order; optional keys appear only when they apply, and
 * there is no `xlog` unless the database answers (peers read that as unreachable).
 */
export function buildStatus(input: StatusInput): NodeStatus {
  const { facts, node, config, cluster } = input;
  const role = statusRole(input);
  const running = facts.running;
  const serving = role === 'primary' || role === 'replica' || role === 'standby_leader';
  const inSyncKey = role === 'replica' && cluster?.sync?.syncStandby.includes(node.name) === true;
  const doc: Record<string, unknown> = { state: stateText(facts.state) };
  if (running && facts.postmasterStartTime !== null) doc['postmaster_start_time'] = facts.postmasterStartTime;
  doc['role'] = role;
  if (running && facts.serverVersion !== null) doc['server_version'] = facts.serverVersion;
  if (running && serving) doc['xlog'] = xlogOf(facts, role);
  if (inSyncKey) doc[config.synchronous_mode === 'quorum' ? 'quorum_standby' : 'sync_standby'] = true;
  if (running && facts.timeline !== null) doc['timeline'] = facts.timeline;
  if (running && role !== 'primary' && facts.replicationState !== null) doc['replication_state'] = facts.replicationState;
  if (role === 'primary' && facts.replication.length > 0) doc['replication'] = facts.replication.map(replicationEntry);
  if (config.pause) doc['pause'] = true;
  // A lock we refreshed ourselves means locked, even while the view published with it predates the
  // acquisition; a lock kept only by failsafe (DCS gone) is the documented "unlocked with failsafe" case.
  // A view older than ttl shows a lock that has run out since (only a report: no decision reads this flag).
  const heldInDcs = input.isLeader && !input.failsafeActive;
  if (!heldInDcs && (cluster === null || cluster.leader === null || input.clusterViewStale === true)) doc['cluster_unlocked'] = true;
  if (input.failsafeActive) doc['failsafe_mode_is_active'] = true;
  if (input.dcsLastSeen !== null) doc['dcs_last_seen'] = input.dcsLastSeen;
  if (input.dcsUnreachable === true) doc['dcs_unreachable'] = true;
  if (Object.keys(node.tags).length > 0) doc['tags'] = node.tags;
  if (facts.systemIdentifier !== null) doc['database_system_identifier'] = facts.systemIdentifier;
  if (facts.pendingRestart) {
    doc['pending_restart'] = true;
    if (Object.keys(facts.pendingRestartReason).length > 0) doc['pending_restart_reason'] = facts.pendingRestartReason;
  }
  if (input.scheduledRestart !== null) doc['scheduled_restart'] = input.scheduledRestart;
  if (input.watchdogFailed) doc['watchdog_failed'] = true;
  if (input.positionUnconfirmed) doc['position_unconfirmed'] = input.positionUnconfirmed;
  if (input.fencer) {
    doc['fencer'] = input.fencer.state;
    if (input.fencer.reason) doc['fencer_reason'] = input.fencer.reason;
  }
  if (input.reinitializeRequired) doc['reinitialize_required'] = input.reinitializeRequired;
  if (facts.bootstrapUnfinished) doc['bootstrap_unfinished'] = true;
  if (input.waitingFor) doc['waiting_for'] = input.waitingFor;
  // Only while the server is still silent: once stopped (the step that stops it publishes at once) the others may race.
  if (input.silentPrimary && serverSilent(facts)) doc['silent_primary'] = true;
  doc['svc'] = { version: node.svcVersion, scope: node.scope, name: node.name };
  return Object.freeze(doc) as unknown as NodeStatus;
}
