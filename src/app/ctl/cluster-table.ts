import type { Cluster, Member, ScheduledRestart } from '../../domain/cluster/model/cluster.js';
import { clusterDocument, type ClusterDocumentMember } from '../../domain/cluster/model/cluster-document.js';
import type { ClusterRole } from '../../domain/cluster/model/states.js';
import { upstreamNameOf } from '../../domain/cluster/rules/upstream.js';
import type { Cell, Column, TableData } from './table-format.js';

/** Labels of cluster roles in tables. */
export const ROLE_LABELS: Readonly<Record<ClusterRole, string>> = {
  leader: 'Leader',
  standby_leader: 'Standby Leader',
  sync_standby: 'Sync Standby',
  quorum_standby: 'Quorum Standby',
  replica: 'Replica',
};

const BASE_COLUMNS: readonly Column[] = [
  { key: 'Cluster', header: 'Cluster', machineOnly: true },
  // Topology indents each member under the one it replicates from, in pretty only.
  { key: 'Member', header: 'Member', pretty: (v, row) => (typeof row['Depth'] === 'number' && row['Depth'] > 0 ? `${'  '.repeat(row['Depth'] - 1)}+ ${String(v)}` : String(v)) },
  { key: 'Host', header: 'Host' },
  { key: 'Role', header: 'Role' },
  { key: 'State', header: 'State' },
  { key: 'TL', header: 'TL', align: 'right' },
  { key: 'Receive LSN', header: 'Receive LSN', align: 'right' },
  { key: 'Receive Lag', header: 'Lag', align: 'right' },
  { key: 'Replay LSN', header: 'Replay LSN', align: 'right' },
  { key: 'Replay Lag', header: 'Lag', align: 'right' },
];

/** Machine-only columns of `topology`: where each member sits in the tree. */
const TOPOLOGY_COLUMNS: readonly Column[] = [
  { key: 'Upstream', header: 'Upstream', machineOnly: true },
  { key: 'Depth', header: 'Depth', machineOnly: true },
];

const EXTRA_COLUMNS: readonly Column[] = [
  { key: 'Pending restart', header: 'Pending restart', optional: true, pretty: (v) => (v === true ? '*' : '') },
  { key: 'Pending restart reason', header: 'Pending restart reason', optional: true, pretty: (v) => reasonText(v) },
  { key: 'Scheduled restart', header: 'Scheduled restart', optional: true, pretty: (v) => scheduledText(v) },
  { key: 'Tags', header: 'Tags', optional: true, pretty: (v) => tagsText(v) },
];

/** Options of the member table. */
export interface ClusterTableOptions {
  /** Indent members under the node they replicate from (`topology`). */
  readonly topology?: boolean;
}

/** Title of the member table: `Cluster: <scope> (<sysid>)`. */
export function clusterTitle(scope: string, cluster: Cluster): string {
  return `Cluster: ${scope} (${cluster.initialize ?? 'uninitialized'})`;
}

/** Footer lines: maintenance mode and a scheduled switchover. */
export function clusterFooters(cluster: Cluster): string[] {
  const out: string[] = [];
  if (cluster.config?.value['pause'] === true) out.push(' Maintenance mode: on');
  const f = cluster.failover;
  if (f?.scheduledAt) {
    out.push(` Switchover scheduled at: ${f.scheduledAt}`);
    if (f.leader) out.push(`                    from: ${f.leader}`);
    if (f.member) out.push(`                      to: ${f.member}`);
  }
  return out;
}

type Obj = Readonly<Record<string, unknown>>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function reasonText(v: Cell): string {
  if (!isObj(v)) return '';
  return Object.entries(v)
    .map(([k, c]) => `${k}: ${String((c as { old_value?: unknown }).old_value ?? '')}->${String((c as { new_value?: unknown }).new_value ?? '')}`)
    .join(', ');
}

function scheduledText(v: Cell): string {
  if (!isObj(v)) return '';
  const s = v as Partial<ScheduledRestart>;
  const conds = [s.restart_pending ? 'if pending' : null, s.role ? `role=${s.role}` : null, s.db_version ? `db_version<${s.db_version}` : null].filter(Boolean);
  return conds.length ? `${String(s.schedule)} (${conds.join(', ')})` : String(s.schedule);
}

function tagsText(v: Cell): string {
  return isObj(v) ? Object.entries(v).map(([k, t]) => `${k}: ${String(t)}`).join(', ') : '';
}

/**
 * One member's row, from the same document `GET /cluster` serves, so the two always agree.
 * Lags are in bytes (`unknown` when unknown); the leader's LSN and lag columns are blank.
 */
function memberRow(scope: string, doc: ClusterDocumentMember, m: Member): Record<string, Cell> {
  const host = doc.host === undefined ? m.connUrl : doc.port === undefined ? doc.host : `${doc.host}:${doc.port}`;
  return {
    Cluster: scope,
    Member: m.name,
    Host: host,
    Role: ROLE_LABELS[doc.role],
    State: doc.state,
    TL: doc.timeline ?? null,
    'Receive LSN': doc.receive_lsn === 'unknown' ? null : doc.receive_lsn,
    'Receive Lag': doc.receive_lag,
    'Replay LSN': doc.replay_lsn === 'unknown' ? null : doc.replay_lsn,
    'Replay Lag': doc.replay_lag,
    'Pending restart': m.pendingRestart,
    'Pending restart reason': m.pendingRestart ? (m.pendingRestartReason as Cell) ?? null : null,
    'Scheduled restart': (m.scheduledRestart as Cell) ?? null,
    Tags: { ...m.tags },
  };
}

/**
 * Members in topology order: the leader, then each member under the one it streams from
 * (the member named in `replicatefrom` while that one runs as a replica, else the leader),
 * depth-first, names sorted.
 */
export function topologyOrder(cluster: Cluster): { member: Member; depth: number; upstream: string | null }[] {
  const names = new Set(cluster.members.map((m) => m.name));
  const leader = cluster.leader?.name && names.has(cluster.leader.name) ? cluster.leader.name : null;
  // The agents' own rule: the replicatefrom member while it runs as a replica, else the leader.
  const parentOf = (m: Member): string | null => (m.name === leader ? null : upstreamNameOf(cluster, m) ?? leader);
  const out: { member: Member; depth: number; upstream: string | null }[] = [];
  const seen = new Set<string>();
  const visit = (m: Member, depth: number, upstream: string | null) => {
    if (seen.has(m.name)) return;
    seen.add(m.name);
    out.push({ member: m, depth, upstream });
    for (const c of cluster.members) if (parentOf(c) === m.name) visit(c, depth + 1, m.name);
  };
  for (const m of cluster.members) if (parentOf(m) === null) visit(m, 0, null);
  // Members in a replicatefrom cycle have no root: show them at the top rather than drop them.
  for (const m of cluster.members) visit(m, 0, null);
  return out;
}

/**
 * The member table of `list` / `topology`, with title and footers. The restart and tag
 * columns show in pretty when a member has them; json, yaml and tsv always carry them.
 */
export function clusterTable(scope: string, cluster: Cluster, opts: ClusterTableOptions = {}): TableData {
  const ordered = opts.topology ? topologyOrder(cluster) : cluster.members.map((member) => ({ member, depth: 0, upstream: null }));
  const docs = new Map(clusterDocument(scope, cluster).members.map((d) => [d.name, d]));
  const rows = ordered.map(({ member, depth, upstream }) => ({
    ...memberRow(scope, docs.get(member.name)!, member),
    ...(opts.topology ? { Upstream: upstream, Depth: depth } : {}),
  }));
  const columns = [...BASE_COLUMNS, ...(opts.topology ? TOPOLOGY_COLUMNS : []), ...EXTRA_COLUMNS];
  return { title: clusterTitle(scope, cluster), columns, rows, footers: clusterFooters(cluster) };
}
