import type { PendingChange, ReplicationRow, SlotFact } from '../../domain/cluster/model/facts.js';
import { parseLsn } from '../../domain/cluster/model/lsn.js';
import type { ReplicationState } from '../../domain/cluster/model/states.js';
import { upstreamUrlFromConninfo } from './conninfo.js';
import type { PgSession } from './pg-session.js';

/** What one query round trip tells about a server that answers. */
export interface Observation {
  readonly inRecovery: boolean;
  readonly systemIdentifier: string;
  readonly serverVersion: number;
  readonly postmasterStartTime: string;
  readonly timeline: number | null;
  readonly checkpointTimeline: number | null;
  readonly walLocation: number | null;
  readonly receivedLocation: number | null;
  readonly replayedLocation: number | null;
  readonly replayedTimestamp: string | null;
  readonly replayPaused: boolean;
  readonly replicationState: ReplicationState | null;
  readonly replication: readonly ReplicationRow[];
  readonly upstreamConnUrl: string | null;
  readonly upstreamSlotName: string | null;
  readonly pendingRestart: boolean;
  readonly pendingRestartReason: Readonly<Record<string, PendingChange>>;
  readonly synchronousStandbyNames: string;
  readonly slots: readonly SlotFact[];
}

// One round trip. CASE keeps functions that fail in recovery (or outside it) from running.
const OBSERVE_SQL = `
SELECT pg_is_in_recovery() AS in_recovery,
  current_setting('server_version_num')::int AS server_version,
  pg_postmaster_start_time()::text AS start_time,
  (SELECT system_identifier::text FROM pg_control_system()) AS system_identifier,
  CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_flush_lsn()::text END AS wal_flush,
  CASE WHEN pg_is_in_recovery() THEN NULL
       ELSE ('x' || substr(pg_walfile_name(pg_current_wal_flush_lsn()), 1, 8))::bit(32)::int END AS primary_tli,
  (SELECT timeline_id FROM pg_control_checkpoint()) AS checkpoint_tli,
  (SELECT min_recovery_end_timeline FROM pg_control_recovery()) AS min_recovery_tli,
  CASE WHEN pg_is_in_recovery() THEN
    (SELECT max(('x' || substr(w.name, 1, 8))::bit(32)::int) FROM pg_ls_waldir() w WHERE w.name ~ '^[0-9A-F]{24}$'
       AND (substr(w.name, 1, 8) = '00000001' OR EXISTS (SELECT 1 FROM pg_ls_waldir() h WHERE h.name = substr(w.name, 1, 8) || '.history'))) END AS wal_file_tli,
  pg_last_wal_receive_lsn()::text AS received,
  pg_last_wal_replay_lsn()::text AS replayed,
  pg_last_xact_replay_timestamp()::text AS replay_ts,
  CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END AS paused,
  (SELECT status FROM pg_stat_wal_receiver LIMIT 1) AS receiver_status,
  (SELECT received_tli FROM pg_stat_wal_receiver LIMIT 1) AS received_tli,
  current_setting('primary_conninfo') AS primary_conninfo,
  current_setting('primary_slot_name') AS primary_slot_name,
  current_setting('synchronous_standby_names') AS sync_names,
  (SELECT coalesce(json_agg(json_build_object(
      'usename', usename, 'application_name', application_name, 'client_addr', host(client_addr),
      'state', state, 'sync_state', sync_state, 'sync_priority', sync_priority,
      'write_lsn', write_lsn::text, 'flush_lsn', flush_lsn::text, 'replay_lsn', replay_lsn::text)
      ORDER BY application_name), '[]'::json) FROM pg_stat_replication) AS replication,
  (SELECT coalesce(json_agg(json_build_object(
      'name', slot_name, 'type', slot_type, 'database', database, 'plugin', plugin, 'active', active,
      'restart_lsn', restart_lsn::text, 'confirmed_flush_lsn', confirmed_flush_lsn::text, 'xmin', xmin IS NOT NULL)
      ORDER BY slot_name), '[]'::json) FROM pg_replication_slots WHERE NOT temporary) AS slots,
  pg_conf_load_time()::text AS conf_loaded,
  -- pending_restart changes only when this session re-reads the files: not parsed again until then
  CASE WHEN pg_conf_load_time()::text IS DISTINCT FROM $1 THEN
  (SELECT coalesce(json_agg(json_build_object('name', s.name, 'old', current_setting(s.name),
      'new', coalesce(f.setting, s.boot_val)) ORDER BY s.name), '[]'::json)
     FROM pg_settings s
     LEFT JOIN LATERAL (SELECT fs.setting FROM pg_file_settings fs
                        WHERE fs.name = s.name ORDER BY fs.seqno DESC LIMIT 1) f ON true
     WHERE s.pending_restart) END AS pending`;

/** One row of the observation query. */
export interface ObserveRow {
  in_recovery: boolean;
  server_version: number;
  start_time: string;
  system_identifier: string;
  wal_flush: string | null;
  primary_tli: number | null;
  checkpoint_tli: number | null;
  min_recovery_tli: number | null;
  wal_file_tli: number | null;
  received: string | null;
  replayed: string | null;
  replay_ts: string | null;
  paused: boolean;
  receiver_status: string | null;
  received_tli: number | null;
  primary_conninfo: string;
  primary_slot_name: string;
  sync_names: string;
  replication: {
    usename: string | null;
    application_name: string | null;
    client_addr: string | null;
    state: string | null;
    sync_state: string | null;
    sync_priority: number | null;
    write_lsn: string | null;
    flush_lsn: string | null;
    replay_lsn: string | null;
  }[];
  conf_loaded: string;
  /** null: the files were not re-read since the `conf_loaded` the query was given. */
  pending: { name: string; old: string; new: string }[] | null;
  slots: {
    name: string;
    type: string;
    database: string | null;
    plugin: string | null;
    active: boolean;
    restart_lsn: string | null;
    confirmed_flush_lsn: string | null;
    xmin: boolean;
  }[];
}

/**
 * The pending restarts last read on a session, with the configuration load time they were read
 * at: pg_settings joined to pg_file_settings parses the configuration files, the costliest part
 * of a probe, and its answer changes only when the session re-reads them.
 */
export class PendingRestartCache {
  confLoaded: string | null = null;
  pending: readonly { name: string; old: string; new: string }[] = [];
}

/** `2024-05-01 12:00:00.123+02` (PostgreSQL text) to ISO 8601 with a full offset. */
export function pgTimestampToIso(text: string): string {
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?(?::?(\d\d))?$/.exec(text);
  if (!m) return text;
  return `${m[1]}T${m[2]}${m[3]}:${m[4] ?? '00'}`;
}

function lsn(text: string | null): number | null {
  return text === null ? null : (parseLsn(text) ?? null);
}

/**
 * A replica's timeline: no SQL function of PostgreSQL 15 shows the replay timeline, and
 * each one that does show a timeline can lag it (the WAL receiver's exists only while it
 * runs, the last restartpoint's and the minimum recovery point's can be several timelines
 * old). The newest WAL segment in pg_wal names the timeline of the last WAL this server
 * received (or recycled a segment for), which a restarting WAL receiver does not hide.
 * Each is at most the timeline of the newest WAL the server holds, so the highest is the
 * best estimate. A segment counts only on timeline 1 or beside its timeline's history file:
 * a server gets the history file before any WAL of a new timeline, and pg_rewind leaves
 * segments of the abandoned branch behind without their history file (counted, they made a
 * rewound replica look diverged again and rewound at every tick).
 */
export function replicaTimeline(r: Pick<ObserveRow, 'received_tli' | 'checkpoint_tli' | 'min_recovery_tli' | 'wal_file_tli'>): number | null {
  const known = [r.received_tli, r.checkpoint_tli, r.min_recovery_tli, r.wal_file_tli].filter((v): v is number => v !== null && v > 0);
  return known.length ? Math.max(...known) : null;
}

/** Observes a server through `session`. Rejects when the server does not answer. */
export async function observe(session: PgSession, cache: PendingRestartCache = new PendingRestartCache()): Promise<Observation> {
  const [r] = await session.query<ObserveRow>(OBSERVE_SQL, [cache.confLoaded]);
  if (!r) throw new Error('observation query returned no row');
  if (r.pending !== null) {
    cache.pending = r.pending;
    cache.confLoaded = r.conf_loaded;
  }
  const pendingRestartReason: Record<string, PendingChange> = {};
  // PostgreSQL also flags a postmaster parameter merely removed from the file (e.g. the
  // recovery settings after a promotion) even when its value does not change: not a reason.
  for (const p of cache.pending) {
    if (p.old !== p.new) pendingRestartReason[p.name] = { old_value: p.old, new_value: p.new };
  }
  return {
    inRecovery: r.in_recovery,
    systemIdentifier: r.system_identifier,
    serverVersion: r.server_version,
    postmasterStartTime: pgTimestampToIso(r.start_time),
    timeline: r.in_recovery ? replicaTimeline(r) : r.primary_tli,
    checkpointTimeline: r.checkpoint_tli,
    walLocation: lsn(r.wal_flush),
    receivedLocation: r.in_recovery ? lsn(r.received) : null,
    replayedLocation: r.in_recovery ? lsn(r.replayed) : null,
    replayedTimestamp: r.in_recovery && r.replay_ts ? pgTimestampToIso(r.replay_ts) : null,
    replayPaused: r.paused,
    replicationState: r.in_recovery ? (r.receiver_status === 'streaming' ? 'streaming' : 'in archive recovery') : null,
    replication: r.replication.map((x) => ({
      usename: x.usename ?? '',
      application_name: x.application_name ?? '',
      client_addr: x.client_addr,
      state: x.state ?? '',
      sync_state: x.sync_state ?? '',
      sync_priority: x.sync_priority ?? 0,
      write_lsn: lsn(x.write_lsn),
      flush_lsn: lsn(x.flush_lsn),
      replay_lsn: lsn(x.replay_lsn),
    })),
    upstreamConnUrl: r.in_recovery ? upstreamUrlFromConninfo(r.primary_conninfo) : null,
    upstreamSlotName: r.in_recovery && r.primary_slot_name ? r.primary_slot_name : null,
    pendingRestart: Object.keys(pendingRestartReason).length > 0,
    pendingRestartReason,
    synchronousStandbyNames: r.sync_names,
    slots: (r.slots ?? []).map((x) => ({
      name: x.name,
      type: x.type === 'logical' ? 'logical' : 'physical',
      database: x.database,
      plugin: x.plugin,
      active: x.active,
      restartLsn: lsn(x.restart_lsn),
      confirmedFlushLsn: lsn(x.confirmed_flush_lsn),
      hasXmin: x.xmin,
    })),
  };
}
