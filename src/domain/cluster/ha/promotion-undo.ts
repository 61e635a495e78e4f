import type { SyncPromotion, SyncState } from '../model/cluster.js';

/** What a fencer reads from the data directory of the server it stopped (pg_control and pg_wal). */
export interface StoppedServer {
  /** pg_control says the server ran (or stopped) in recovery: it accepted no write since it last started. */
  readonly inRecovery: boolean;
  /** The highest timeline the data directory knows (pg_control and the history files): a promotion raises it. */
  readonly timeline: number;
}

/**
 * The sync key a fencer puts back for its agent, which died holding the leader key: the key that
 * agent replaced just before promoting, when the promotion provably never happened (the server
 * is still in recovery, on the timeline it was on). The new primary then acknowledged nothing,
 * so the replaced key still says who holds every acknowledged commit, and the cluster can fail
 * over to them instead of waiting for this node. Null when there is nothing to put back: the key
 * is another's, or this node's as a primary, or the server may have promoted.
 */
export function syncKeyToRestore(sync: SyncState | null, me: string, server: StoppedServer | null): SyncPromotion['replaced'] | null {
  if (sync === null || server === null || sync.promoting === undefined) return null;
  if (sync.leader !== me || sync.syncStandby.length > 0) return null;
  if (!server.inRecovery || server.timeline > sync.promoting.timeline) return null;
  return sync.promoting.replaced;
}
