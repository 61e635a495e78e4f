import type { Cluster, Member, ScheduledRestart } from './cluster.js';
import { formatLsn } from './lsn.js';
import type { TagValue } from './node.js';
import type { ClusterRole } from './states.js';
import { upstreamNameOf } from '../rules/upstream.js';

/** `"unknown"` stands for a position or lag nobody has reported. */
export type Unknown = 'unknown';

/** One member of the cluster document (`GET /cluster`). Lag fields appear on non-leaders only. */
export interface ClusterDocumentMember {
  readonly name: string;
  readonly role: ClusterRole;
  readonly state: string;
  readonly api_url: string;
  readonly host?: string;
  readonly port?: number;
  readonly timeline?: number;
  readonly tags?: Readonly<Record<string, TagValue>>;
  /** The member a cascading replica streams from (its `replicatefrom` member while that one runs as a replica); absent: the leader, or the archive for a node tagged nostream. */
  readonly upstream?: string;
  readonly pending_restart?: true;
  readonly scheduled_restart?: ScheduledRestart;
  readonly lsn: string | Unknown;
  readonly lag?: number | Unknown;
  readonly receive_lsn?: string | Unknown;
  readonly receive_lag?: number | Unknown;
  readonly replay_lsn?: string | Unknown;
  readonly replay_lag?: number | Unknown;
}

/** The body of `GET /cluster`. */
export interface ClusterDocument {
  readonly scope: string;
  readonly members: readonly ClusterDocumentMember[];
  readonly pause?: true;
  readonly scheduled_switchover?: { readonly at: string; readonly from?: string; readonly to?: string };
}

/** Role of a member in the cluster document: the leader-key holder, a sync/quorum standby, or a replica. */
export function clusterRoleOf(cluster: Cluster, m: Member): ClusterRole {
  const config = cluster.config?.value;
  if (cluster.leader?.name === m.name) {
    return m.role === 'standby_leader' || (config?.['standby_cluster'] ?? null) !== null ? 'standby_leader' : 'leader';
  }
  const sync = cluster.sync;
  if (sync && sync.syncStandby.includes(m.name) && (sync.leader === null || sync.leader === cluster.leader?.name)) {
    return config?.['synchronous_mode'] === 'quorum' ? 'quorum_standby' : 'sync_standby';
  }
  return 'replica';
}

/** The leader's WAL position: the larger of the status key's optime and the leader member's own location. */
export function leaderWalPosition(cluster: Cluster): number | null {
  const fromMember = cluster.members.find((m) => m.name === cluster.leader?.name)?.xlogLocation ?? null;
  const fromStatus = cluster.status?.optime ?? null;
  if (fromStatus === null) return fromMember;
  return fromMember === null ? fromStatus : Math.max(fromStatus, fromMember);
}

/** Host and port of a member's database, from its conn_url (`postgres://host:port/db`). */
export function connHostPort(connUrl: string): { host?: string; port?: number } {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?(\[[^\]]+\]|[^:/?#]+)(?::(\d+))?/i.exec(connUrl);
  if (!m) return {};
  const host = m[1]!.replace(/^\[|\]$/g, '');
  return m[2] !== undefined ? { host, port: Number(m[2]) } : { host };
}

const lsnOrUnknown = (pos: number | null): string | Unknown => (pos === null ? 'unknown' : formatLsn(pos));
const lagOrUnknown = (leader: number | null, pos: number | null): number | Unknown =>
  leader === null || pos === null ? 'unknown' : Math.max(0, leader - pos);

function memberDocument(cluster: Cluster, m: Member, leaderPos: number | null): ClusterDocumentMember {
  const role = clusterRoleOf(cluster, m);
  const isLeader = role === 'leader' || role === 'standby_leader';
  // A running replica shows how it replicates (`streaming`), as operators read it in `list`.
  const state = !isLeader && m.state === 'running' && m.replicationState ? m.replicationState : m.state;
  const doc: Record<string, unknown> = { name: m.name, role, state, api_url: m.apiUrl, ...connHostPort(m.connUrl) };
  if (m.timeline !== null) doc['timeline'] = m.timeline;
  if (Object.keys(m.tags).length) doc['tags'] = m.tags;
  const upstream = isLeader ? null : upstreamNameOf(cluster, m);
  if (upstream !== null) doc['upstream'] = upstream;
  if (m.pendingRestart) doc['pending_restart'] = true;
  if (m.scheduledRestart) doc['scheduled_restart'] = m.scheduledRestart;
  if (isLeader) {
    doc['lsn'] = lsnOrUnknown(m.xlogLocation);
  } else {
    const known = [m.receiveLsn, m.replayLsn].filter((v): v is number => v !== null);
    const pos = known.length ? Math.max(...known) : null;
    doc['lsn'] = lsnOrUnknown(pos);
    doc['lag'] = lagOrUnknown(leaderPos, pos);
    // A restarted WAL receiver reports the start of its first segment until new WAL arrives,
    // which read as megabytes behind its own replay: a replica holds at least what it replayed.
    const received = m.receiveLsn !== null && m.replayLsn !== null ? Math.max(m.receiveLsn, m.replayLsn) : m.receiveLsn;
    doc['receive_lsn'] = lsnOrUnknown(received);
    doc['receive_lag'] = lagOrUnknown(leaderPos, received);
    doc['replay_lsn'] = lsnOrUnknown(m.replayLsn);
    doc['replay_lag'] = lagOrUnknown(leaderPos, m.replayLsn);
  }
  return doc as unknown as ClusterDocumentMember;
}

/** Builds the `GET /cluster` document from one DCS view; members sorted by name. */
export function clusterDocument(scope: string, cluster: Cluster): ClusterDocument {
  const leaderPos = leaderWalPosition(cluster);
  const members = [...cluster.members]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((m) => memberDocument(cluster, m, leaderPos));
  const doc: { -readonly [K in keyof ClusterDocument]: ClusterDocument[K] } = { scope, members };
  if (cluster.config?.value['pause'] === true) doc.pause = true;
  const f = cluster.failover;
  if (f?.scheduledAt) {
    doc.scheduled_switchover = { at: f.scheduledAt, ...(f.leader ? { from: f.leader } : {}), ...(f.member ? { to: f.member } : {}) };
  }
  return doc;
}
