import type { ScheduledRestart } from './cluster.js';
import type { PendingChange, ReplicationRow } from './facts.js';
import type { TagValue } from './node.js';

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
 * The node status document (spec §3): body of `GET /node` and of every health check.
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
  readonly tags?: Readonly<Record<string, TagValue>>;
  readonly database_system_identifier?: string;
  readonly pending_restart?: true;
  readonly pending_restart_reason?: Readonly<Record<string, PendingChange>>;
  readonly scheduled_restart?: ScheduledRestart;
  readonly watchdog_failed?: true;
  readonly svc: { readonly version: string; readonly scope: string; readonly name: string };
}
