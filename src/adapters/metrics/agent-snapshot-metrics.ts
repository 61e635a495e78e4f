import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import { stateNumber } from '../../domain/cluster/model/states.js';

/** One node metric: name, Prometheus type and HELP text. */
export interface SnapshotMetric {
  readonly name: string;
  readonly type: 'gauge' | 'counter';
  readonly help: string;
}

/** Every `svc_*` node metric, in the documented order. */
export const SNAPSHOT_METRICS: readonly SnapshotMetric[] = [
  { name: 'svc_version', type: 'gauge', help: 'Agent version without periods (010200 for 1.2.0).' },
  { name: 'svc_database_running', type: 'gauge', help: 'Value is 1 if the database is running, 0 otherwise.' },
  { name: 'svc_postmaster_start_time', type: 'gauge', help: 'Epoch seconds since the database started, 0 if not running.' },
  { name: 'svc_primary', type: 'gauge', help: 'Value is 1 if this node is the leader (primary), 0 otherwise.' },
  { name: 'svc_xlog_location', type: 'counter', help: 'Current WAL location of the primary in bytes, 0 if this node is not the primary.' },
  { name: 'svc_standby_leader', type: 'gauge', help: 'Value is 1 if this node is the standby leader, 0 otherwise.' },
  { name: 'svc_replica', type: 'gauge', help: 'Value is 1 if this node is a replica, 0 otherwise.' },
  { name: 'svc_sync_standby', type: 'gauge', help: 'Value is 1 if this node is a synchronous standby, 0 otherwise.' },
  { name: 'svc_quorum_standby', type: 'gauge', help: 'Value is 1 if this node is a quorum standby, 0 otherwise.' },
  { name: 'svc_xlog_received_location', type: 'counter', help: 'Last received WAL location in bytes, 0 if this node is not a replica.' },
  { name: 'svc_xlog_replayed_location', type: 'counter', help: 'Last replayed WAL location in bytes, 0 if this node is not a replica.' },
  { name: 'svc_xlog_replayed_timestamp', type: 'gauge', help: 'Epoch seconds of the last replayed transaction, 0 if unknown.' },
  { name: 'svc_xlog_paused', type: 'gauge', help: 'Value is 1 if WAL replay is paused, 0 otherwise.' },
  { name: 'svc_database_streaming', type: 'gauge', help: 'Value is 1 if the database is streaming from its upstream, 0 otherwise.' },
  { name: 'svc_database_in_archive_recovery', type: 'gauge', help: 'Value is 1 if the database replicates from the WAL archive, 0 otherwise.' },
  { name: 'svc_database_server_version', type: 'gauge', help: 'Server version of the database (150018 for 15.18) if running, 0 otherwise.' },
  { name: 'svc_cluster_unlocked', type: 'gauge', help: 'Value is 1 if the cluster has no leader lock, 0 if locked.' },
  { name: 'svc_failsafe_mode_is_active', type: 'gauge', help: 'Value is 1 if failsafe mode is active, 0 if inactive.' },
  { name: 'svc_database_timeline', type: 'gauge', help: 'Timeline of the database if running, 0 otherwise.' },
  { name: 'svc_dcs_last_seen', type: 'gauge', help: 'Epoch seconds of the last successful contact with the DCS.' },
  { name: 'svc_pending_restart', type: 'gauge', help: 'Value is 1 if the database needs a restart to apply settings, 0 otherwise.' },
  { name: 'svc_is_paused', type: 'gauge', help: 'Value is 1 if automatic failover is paused (maintenance mode), 0 otherwise.' },
  { name: 'svc_database_state', type: 'gauge', help: 'Database state (the mapping is in the HELP text).' },
  { name: 'svc_fencer_available', type: 'gauge', help: 'Value is 1 if the fencer process runs and is attached (or is switched off), 0 if it is unavailable.' },
  { name: 'svc_fencer_guarding', type: 'gauge', help: 'Value is 1 if the fencer guards a leader lock deadline of this node, 0 otherwise.' },
  { name: 'svc_position_unconfirmed', type: 'gauge', help: 'Value is 1 if this replica may hold WAL the leader lacks (it answers no read-only health check), 0 otherwise.' },
  { name: 'svc_reinitialize_required', type: 'gauge', help: 'Value is 1 if this node keeps its data directory out of service until an operator reinitializes it, 0 otherwise.' },
  { name: 'svc_waiting', type: 'gauge', help: 'Value is 1 if this node waits for something before it can serve (see waiting_for on /node), 0 otherwise.' },
];

/** `1.2.0` -> 10200 (printed `010200` by convention); 0 when the version is not X.Y.Z. */
export function versionNumber(version: string): number {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  return m ? Number(m[1]) * 10000 + Number(m[2]) * 100 + Number(m[3]) : 0;
}

function epochSeconds(iso: string | null | undefined): number {
  if (!iso) return 0;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms / 1000 : 0;
}

const flag = (v: unknown): number => (v ? 1 : 0);

/** The value of every SNAPSHOT_METRICS metric for one snapshot. */
export function snapshotMetricValues(snap: NodeSnapshot): Record<string, number> {
  const { status, facts } = snap;
  const xlog = status.xlog as Record<string, unknown> | undefined;
  const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const isReplicaXlog = xlog !== undefined && !('location' in xlog);
  return {
    svc_version: versionNumber(status.svc.version),
    svc_database_running: flag(facts.running),
    svc_postmaster_start_time: epochSeconds(status.postmaster_start_time),
    svc_primary: flag(status.role === 'primary'),
    svc_xlog_location: status.role === 'primary' ? num(xlog?.['location']) : 0,
    svc_standby_leader: flag(status.role === 'standby_leader'),
    svc_replica: flag(status.role === 'replica'),
    svc_sync_standby: flag(status.sync_standby),
    svc_quorum_standby: flag(status.quorum_standby),
    svc_xlog_received_location: isReplicaXlog ? num(xlog['received_location']) : 0,
    svc_xlog_replayed_location: isReplicaXlog ? num(xlog['replayed_location']) : 0,
    svc_xlog_replayed_timestamp: isReplicaXlog ? epochSeconds(xlog['replayed_timestamp'] as string | null) : 0,
    svc_xlog_paused: flag(isReplicaXlog && xlog['paused'] === true),
    svc_database_streaming: flag(status.replication_state === 'streaming'),
    svc_database_in_archive_recovery: flag(status.replication_state === 'in archive recovery'),
    svc_database_server_version: facts.running ? num(status.server_version) : 0,
    svc_cluster_unlocked: flag(status.cluster_unlocked),
    svc_failsafe_mode_is_active: flag(status.failsafe_mode_is_active),
    svc_database_timeline: facts.running ? num(status.timeline) : 0,
    svc_dcs_last_seen: num(status.dcs_last_seen),
    svc_pending_restart: flag(status.pending_restart),
    svc_is_paused: flag(status.pause),
    svc_database_state: stateNumber(facts.state),
    svc_fencer_available: flag(status.fencer !== 'unavailable'),
    svc_fencer_guarding: flag(status.fencer === 'guarding'),
    svc_position_unconfirmed: flag(status.position_unconfirmed !== undefined),
    svc_reinitialize_required: flag(status.reinitialize_required !== undefined),
    svc_waiting: flag(status.waiting_for !== undefined),
  };
}
