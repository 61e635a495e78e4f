import type { Cluster, Member } from '../../domain/cluster/model/cluster.js';
import { clusterDocument, type ClusterDocumentMember } from '../../domain/cluster/model/cluster-document.js';
import type { ClusterRole } from '../../domain/cluster/model/states.js';
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
  { key: 'Member', header: 'Member' },
  { key: 'Host', header: 'Host' },
  { key: 'Role', header: 'Role' },
  { key: 'State', header: 'State' },
  { key: 'TL', header: 'TL', align: 'right' },
  { key: 'Receive LSN', header: 'Receive LSN', align: 'right' },
  { key: 'Receive Lag', header: 'Lag', align: 'right' },
  { key: 'Replay LSN', header: 'Replay LSN', align: 'right' },
  { key: 'Replay Lag', header: 'Lag', align: 'right' },
];

const EXTRA_COLUMNS: readonly Column[] = [
  { key: 'Pending restart', header: 'Pending restart' },
  { key: 'Pending restart reason', header: 'Pending restart reason' },
  { key: 'Scheduled restart', header: 'Scheduled restart' },
  { key: 'Tags', header: 'Tags' },
];

/** Options of the member table. */
export interface ClusterTableOptions {
  /** Always show the pending/scheduled restart and tags columns (otherwise only when some member has them). */
  readonly extended?: boolean;
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

function reasonText(m: Member): string | null {
  if (!m.pendingRestartReason) return null;
  return Object.entries(m.pendingRestartReason)
    .map(([k, v]) => `${k}: ${String((v as { old_value?: unknown }).old_value ?? '')}->${String((v as { new_value?: unknown }).new_value ?? '')}`)
    .join(', ');
}

function scheduledText(m: Member): string | null {
  const s = m.scheduledRestart;
  if (!s) return null;
  const conds = [s.restart_pending ? 'if pending' : null, s.role ? `role=${s.role}` : null, s.db_version ? `db_version<${s.db_version}` : null].filter(Boolean);
  return conds.length ? `${s.schedule} (${conds.join(', ')})` : s.schedule;
}

function tagsText(m: Member): string | null {
  const entries = Object.entries(m.tags);
  return entries.length ? entries.map(([k, v]) => `${k}: ${String(v)}`).join(', ') : null;
}

/**
 * One member's row, from the same document `GET /cluster` serves, so the two always agree.
 * Lags are in bytes (`unknown` when unknown); the leader's LSN and lag columns are blank.
 */
function memberRow(scope: string, doc: ClusterDocumentMember, m: Member, name: string): Record<string, Cell> {
  const host = doc.host === undefined ? m.connUrl : doc.port === undefined ? doc.host : `${doc.host}:${doc.port}`;
  return {
    Cluster: scope,
    Member: name,
    Host: host,
    Role: ROLE_LABELS[doc.role],
    State: doc.state,
    TL: doc.timeline ?? null,
    'Receive LSN': doc.receive_lsn === 'unknown' ? null : doc.receive_lsn,
    'Receive Lag': doc.receive_lag,
    'Replay LSN': doc.replay_lsn === 'unknown' ? null : doc.replay_lsn,
    'Replay Lag': doc.replay_lag,
    'Pending restart': m.pendingRestart ? true : null,
    'Pending restart reason': reasonText(m),
    'Scheduled restart': scheduledText(m),
    Tags: tagsText(m),
  };
}

/**
 * Members in topology order: the leader, then each member under the one it replicates
 * from (`replicatefrom` tag, else the leader), depth-first, names sorted.
 */
export function topologyOrder(cluster: Cluster): { member: Member; depth: number }[] {
  const names = new Set(cluster.members.map((m) => m.name));
  const leader = cluster.leader?.name && names.has(cluster.leader.name) ? cluster.leader.name : null;
  const parentOf = (m: Member): string | null => {
    if (m.name === leader) return null;
    const from = m.tags['replicatefrom'];
    if (typeof from === 'string' && names.has(from) && from !== m.name) return from;
    return leader;
  };
  const out: { member: Member; depth: number }[] = [];
  const seen = new Set<string>();
  const visit = (m: Member, depth: number) => {
    if (seen.has(m.name)) return;
    seen.add(m.name);
    out.push({ member: m, depth });
    for (const c of cluster.members) if (parentOf(c) === m.name) visit(c, depth + 1);
  };
  for (const m of cluster.members) if (parentOf(m) === null) visit(m, 0);
  // Members in a replicatefrom cycle have no root: show them at the top rather than drop them.
  for (const m of cluster.members) visit(m, 0);
  return out;
}

/** The member table of `list` / `topology`, with title and footers. */
export function clusterTable(scope: string, cluster: Cluster, opts: ClusterTableOptions = {}): TableData {
  const ordered = opts.topology ? topologyOrder(cluster) : cluster.members.map((member) => ({ member, depth: 0 }));
  const docs = new Map(clusterDocument(scope, cluster).members.map((d) => [d.name, d]));
  const rows = ordered.map(({ member, depth }) => memberRow(scope, docs.get(member.name)!, member, depth ? `${'  '.repeat(depth - 1)}+ ${member.name}` : member.name));
  const extras = EXTRA_COLUMNS.filter((c) => opts.extended || rows.some((r) => r[c.key] !== null));
  return { title: clusterTitle(scope, cluster), columns: [...BASE_COLUMNS, ...extras], rows, footers: clusterFooters(cluster) };
}
