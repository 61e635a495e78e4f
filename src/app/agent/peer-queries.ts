import type { Cluster } from '../../domain/cluster/model/cluster.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { PeerApi } from '../../ports/peer-api.js';

/**
 * Who to ask during a race: every other member, plus (failsafe mode) every node of the
 * failsafe key, whose member key may have expired while it keeps running as primary.
 */
export function peerTargets(cluster: Cluster, me: string, failsafeMode: boolean): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of cluster.members) if (m.name !== me && m.apiUrl) out.set(m.name, m.apiUrl);
  if (failsafeMode) for (const [name, apiUrl] of Object.entries(cluster.failsafe ?? {})) if (name !== me && !out.has(name)) out.set(name, apiUrl);
  return out;
}

/** Asks each target's /node in parallel; null for those that did not answer in time. */
export async function gatherPeerStatuses(peers: PeerApi, targets: ReadonlyMap<string, string>, timeoutMs: number): Promise<Map<string, NodeStatus | null>> {
  const entries = [...targets];
  const answers = await Promise.all(entries.map(([, apiUrl]) => peers.fetchStatus(apiUrl, timeoutMs)));
  return new Map(entries.map(([name], i) => [name, answers[i] ?? null]));
}

/**
 * One failsafe round: POST /failsafe to every other member of the failsafe key, in
 * parallel. True only when every one accepted (a single-member cluster has nobody to ask).
 */
export async function failsafeRound(
  peers: PeerApi,
  members: Readonly<Record<string, string>>,
  me: string,
  timeoutMs: number,
): Promise<boolean> {
  const others = Object.entries(members).filter(([name]) => name !== me);
  const answers = await Promise.all(others.map(([, apiUrl]) => peers.postFailsafe(apiUrl, { name: me, members }, timeoutMs)));
  return answers.every(Boolean);
}
