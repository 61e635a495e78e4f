import type { Cluster } from '../../domain/cluster/model/cluster.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { PeerApi } from '../../ports/peer-api.js';
import type { FormerLeader } from './cluster-observer.js';

/**
 * Who to ask during a race: every other member, plus every node of the failsafe key, whose
 * member key may have expired while it keeps running as primary on a lock failsafe extended.
 * Failsafe mode does not decide it: turned off, it does not end a lock already extended (the
 * leader empties the key once it holds its lock through the DCS again). Plus the last leader
 * this node saw (`former`) when its member key is gone: a lease revoked before its time takes
 * the leader key and the member key together while that primary still writes, and its answer
 * stops the race.
 */
export function peerTargets(cluster: Cluster, me: string, former: FormerLeader | null = null): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of cluster.members) if (m.name !== me && m.apiUrl) out.set(m.name, m.apiUrl);
  for (const [name, apiUrl] of Object.entries(cluster.failsafe ?? {})) if (name !== me && !out.has(name)) out.set(name, apiUrl);
  if (former !== null && former.name !== me && !out.has(former.name)) out.set(former.name, former.apiUrl);
  return out;
}

/**
 * The answers of peers asked early, for `targets`; null unless every target was asked at the
 * same address. Members that left meanwhile and are no target now are dropped from the answers.
 */
export async function answersFor(early: EarlyPeers | null, targets: ReadonlyMap<string, string>): Promise<Map<string, NodeStatus | null> | null> {
  if (early === null) return null;
  for (const [name, url] of targets) if (early.targets.get(name) !== url) return null;
  const answers = await early.statuses;
  return new Map([...targets.keys()].map((name) => [name, answers.get(name) ?? null]));
}

/** Peers asked at the start of a tick: whom (name -> API URL), and their answers to come. */
export interface EarlyPeers {
  readonly targets: ReadonlyMap<string, string>;
  readonly statuses: Promise<Map<string, NodeStatus | null>>;
}

/**
 * Asks each target's /node in parallel, probed as it answers (a status published a loop ago
 * may lack commits the member received since: the race must not count it behind); null for
 * those that did not answer in time.
 */
export async function gatherPeerStatuses(peers: PeerApi, targets: ReadonlyMap<string, string>, timeoutMs: number): Promise<Map<string, NodeStatus | null>> {
  const entries = [...targets];
  const answers = await Promise.all(entries.map(([, apiUrl]) => peers.fetchStatus(apiUrl, timeoutMs, { fresh: true })));
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
