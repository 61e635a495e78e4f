import type { LocalFacts } from '../model/facts.js';
import type { Cluster } from '../model/cluster.js';

/** The leader a replica confirms its WAL position against: its name, address and timeline. */
export interface LeaderRef {
  readonly name: string;
  readonly connUrl: string | null;
  /** The cluster's timeline (the leader's, else one past the last history line); null when unknown. */
  readonly timeline: number | null;
  /**
   * The leader's member record shows it running as the leader it is (primary, or the standby
   * leader of a standby cluster): until then its timeline may be the one it had as a replica.
   */
  readonly runsAsPrimary?: boolean;
  /** conn_urls of the other members, which a cascading replica may stream from (`replicatefrom`). */
  readonly relays?: readonly string[];
}

/** Proof that this node's WAL is a prefix of the leader's: it streamed from `leader` on `timeline`. */
export interface PositionConfirmation {
  readonly leader: string;
  readonly timeline: number | null;
}

/** The leader of `cluster` as a reference, or null when there is none. */
export function leaderRef(cluster: Cluster): LeaderRef | null {
  const name = cluster.leader?.name ?? null;
  if (name === null) return null;
  const member = cluster.members.find((m) => m.name === name);
  const lines = cluster.history?.lines ?? [];
  const fromHistory = lines.length ? lines[lines.length - 1]![0] + 1 : null;
  const known = [fromHistory, member?.timeline ?? null].filter((v): v is number => v !== null);
  const relays = cluster.members.filter((m) => m.name !== name && m.connUrl).map((m) => m.connUrl);
  const runsAsPrimary = (member?.role === 'primary' || member?.role === 'standby_leader') && member.state === 'running';
  return { name, connUrl: member?.connUrl || null, timeline: known.length ? Math.max(...known) : null, runsAsPrimary, relays };
}

/** How this node gets WAL, for confirmPosition: `archive` for a node tagged nostream (restore_command only). */
export interface ConfirmOptions {
  readonly archiveOnly?: boolean;
}

/**
 * The confirmation after one probe. A node that ran as primary has none: its WAL may go past
 * what the leader has. Streaming on the leader's timeline proves the WAL is a prefix of the
 * leader's (PostgreSQL refuses to stream otherwise), and the proof holds until another leader
 * takes over, whose WAL may be shorter than what this node already received. The WAL may come
 * from the leader itself or, for a cascading replica, from another member relaying it: WAL
 * of one timeline has one writer, so the leader's timeline is what proves it (a relay on an
 * older timeline passes on that one). A node tagged nostream proves it by replaying the
 * archive on the leader's timeline (recovery follows a timeline only from before its switch
 * point). Only a leader whose record shows it running as primary can give a proof: before
 * that, the timeline it shows is the one it had as a replica, and a WAL receiver may look
 * "streaming" for the instant before the new primary refuses it. With no leader at all, the
 * last proof stands.
 */
export function confirmPosition(prev: PositionConfirmation | null, facts: LocalFacts, leader: LeaderRef | null, opts: ConfirmOptions = {}): PositionConfirmation | null {
  if (facts.running && facts.inRecovery === false) return null;
  let next = prev;
  if (leader !== null && next !== null && next.leader !== leader.name) next = null;
  const replica = leader !== null && leader.runsAsPrimary !== false && facts.running && facts.inRecovery === true;
  const upstream = facts.upstreamConnUrl;
  const fromLeader = leader !== null && leader.connUrl !== null && upstream === leader.connUrl && (leader.timeline === null || facts.timeline === leader.timeline);
  // A relay is trusted on a known leader timeline only.
  const fromRelay = leader !== null && upstream !== null && (leader.relays ?? []).includes(upstream) && leader.timeline !== null && facts.timeline === leader.timeline;
  const streamed = replica && facts.replicationState === 'streaming' && (fromLeader || fromRelay);
  const restored =
    replica && opts.archiveOnly === true && upstream === null && facts.replicationState === 'in archive recovery' && leader.timeline !== null && facts.timeline === leader.timeline;
  if ((streamed || restored) && (next === null || next.timeline !== facts.timeline)) next = { leader: leader!.name, timeline: facts.timeline };
  return next;
}

/**
 * Why a running replica may hold WAL the leader lacks (null: it does not, or it is not a
 * replica): a former primary, a node on another timeline, or one that has not yet streamed
 * from the current leader. Such a node answers no read-only health check until it streams
 * from the leader on the leader's timeline.
 */
export function unconfirmedPosition(facts: LocalFacts, confirmed: PositionConfirmation | null, leader: LeaderRef | null, holdsLock: boolean): string | null {
  if (!facts.running || facts.inRecovery !== true || holdsLock) return null;
  // A proof holds on the leader's timeline only: one taken against a stale view of it (the leader's key before its promotion showed) proves nothing now.
  if (leader !== null && leader.timeline !== null && facts.timeline !== null && facts.timeline !== leader.timeline) {
    return `on timeline ${facts.timeline} while the leader ${leader.name} is on timeline ${leader.timeline}: it may hold WAL the leader lacks`;
  }
  if (confirmed !== null) return null;
  if (leader === null) return 'no leader to confirm its WAL position against yet';
  const upstream = facts.upstreamConnUrl;
  if (upstream === null && facts.replicationState === 'in archive recovery') return `has not restored WAL of the leader ${leader.name}'s timeline from the archive yet: its WAL position is unconfirmed`;
  if (upstream !== null && (leader.relays ?? []).includes(upstream)) return `has not streamed WAL of the leader ${leader.name}'s timeline from its upstream yet: its WAL position is unconfirmed`;
  if (leader.connUrl === null || upstream !== leader.connUrl) return `not yet following the leader ${leader.name}: its WAL position is unconfirmed`;
  return `has not streamed from the leader ${leader.name} yet: its WAL position is unconfirmed`;
}
