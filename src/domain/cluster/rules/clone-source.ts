import type { Cluster, Member } from '../model/cluster.js';
import { tagIsTrue } from '../model/node.js';
import { majorVersion } from '../model/server-version.js';
import type { UpstreamRef } from '../ha/decision.js';

/**
 * Whether `m` can serve a base backup in place of the leader: tagged `clonefrom`, running as a
 * replica that streams on the leader's timeline (its copy then holds what the leader had a
 * moment ago, and its replicas catch up from the leader), with an address, and the leader's
 * major version where both are known.
 */
function canServeClone(m: Member, leader: Member | null): boolean {
  if (!tagIsTrue(m.tags, 'clonefrom') || m.state !== 'running' || m.role !== 'replica' || m.replicationState !== 'streaming' || !m.connUrl) return false;
  if (leader?.timeline != null && m.timeline !== leader.timeline) return false;
  const theirs = majorVersion(leader?.serverVersion);
  const mine = majorVersion(m.serverVersion);
  return theirs === null || mine === null || mine === theirs;
}

/**
 * Where a new or reinitialized replica `me` copies its data from: a member tagged `clonefrom`
 * that can serve it (see canServeClone; the one furthest ahead, then the first by name), so
 * the base backup does not load the primary; else `leader`. The copy then streams from its
 * own upstream as usual.
 */
export function cloneSource(cluster: Cluster, me: string, leader: UpstreamRef): UpstreamRef {
  const leaderMember = cluster.members.find((m) => m.name === leader.name) ?? null;
  const sources = cluster.members
    .filter((m) => m.name !== me && m.name !== leader.name && canServeClone(m, leaderMember))
    .sort((a, b) => (b.xlogLocation ?? 0) - (a.xlogLocation ?? 0) || a.name.localeCompare(b.name));
  const best = sources[0];
  return best ? { name: best.name, connUrl: best.connUrl } : leader;
}
