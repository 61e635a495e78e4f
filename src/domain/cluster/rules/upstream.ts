import { findMember, type Cluster, type Member } from '../model/cluster.js';
import type { TagValue } from '../model/node.js';
import { noStream, replicateFrom } from '../model/topology-tags.js';

/**
 * Where a replica gets its WAL from: the leader; a member it cascades from (`replicatefrom`);
 * or the archive only (`nostream`). `fallback` says why a named upstream is not used now.
 */
export type UpstreamChoice =
  | { readonly kind: 'leader'; readonly fallback: string | null }
  | { readonly kind: 'member'; readonly member: Member }
  | { readonly kind: 'archive' };

/** Member roles that serve WAL to a cascading replica: a running standby (the leader is followed as the leader). */
const CASCADING_ROLES = new Set(['replica']);

/**
 * Why the member `name` cannot feed `me` as a cascading upstream now (null: it can): it must
 * be a member that runs as a replica and publishes its address, and following it must not
 * lead back to `me` (a replicatefrom cycle would leave every member of it without WAL).
 */
export function cascadeProblem(cluster: Cluster, me: string, name: string): string | null {
  const m = findMember(cluster, name);
  if (!m) return `${name} is not a member of the cluster`;
  if (m.state !== 'running') return `${name} is not running (${m.state})`;
  if (!CASCADING_ROLES.has(m.role)) return `${name} does not run as a replica (${m.role})`;
  if (!m.connUrl) return `${name} has not published its address`;
  const seen = new Set([me]);
  let at: Member | undefined = m;
  while (at) {
    if (seen.has(at.name)) return `${name} replicates from ${me} through ${[...seen].slice(1).join(' -> ')}: a cycle`;
    seen.add(at.name);
    const next = replicateFrom(at.tags);
    if (next === null || next === cluster.leader?.name) return null;
    const nm = findMember(cluster, next);
    // A member further up that cannot feed its follower makes that follower fall back to the leader: the chain ends there.
    if (!nm || nm.state !== 'running' || !CASCADING_ROLES.has(nm.role)) return null;
    at = nm;
  }
  return null;
}

/**
 * The upstream of member `me` with `tags` in `cluster`: nothing but the archive when tagged
 * nostream; the member named in `replicatefrom` while it runs as a replica (and no cycle
 * leads back); else the leader, and back to the named member once it runs again. The same
 * rule drives the agent and what `wardenctl topology` and the status page draw.
 */
export function chooseUpstream(cluster: Cluster, me: string, tags: Readonly<Record<string, TagValue>>): UpstreamChoice {
  if (noStream(tags)) return { kind: 'archive' };
  const named = replicateFrom(tags);
  if (named === null || named === me || named === cluster.leader?.name) return { kind: 'leader', fallback: null };
  const problem = cascadeProblem(cluster, me, named);
  if (problem === null) return { kind: 'member', member: findMember(cluster, named)! };
  return { kind: 'leader', fallback: problem };
}

/** Name of the member `m` streams from by the rule (null: the leader, or nobody when it is the leader or tagged nostream). */
export function upstreamNameOf(cluster: Cluster, m: Member): string | null {
  if (m.name === cluster.leader?.name) return null;
  const choice = chooseUpstream(cluster, m.name, m.tags);
  return choice.kind === 'member' ? choice.member.name : null;
}
