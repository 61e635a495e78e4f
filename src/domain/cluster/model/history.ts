import type { HistoryLine } from './cluster.js';

/** Reason PostgreSQL writes into a timeline history file for a plain promotion. */
export const PROMOTION_REASON = 'no recovery target specified';

/**
 * The history key after a promotion: `previous` plus one line
 * `[old timeline, switch LSN, reason, ISO timestamp, new leader]`. The switch point comes
 * from the server's own history files when they know the old timeline (they are exact),
 * else from the position observed before promoting. Keeps the last `maxLines` (0: all).
 * A line of the same or a later timeline is replaced (a branch that lost). Null when the
 * old timeline is unknown.
 */
export function historyAfterPromotion(
  previous: readonly HistoryLine[],
  serverHistory: readonly HistoryLine[],
  promotion: { readonly timeline: number | null; readonly lsn: number | null; readonly at: string; readonly leader: string },
  maxLines: number,
): HistoryLine[] | null {
  const fromServer = serverHistory.length ? serverHistory[serverHistory.length - 1]! : null;
  const timeline = fromServer && (promotion.timeline === null || fromServer[0] >= promotion.timeline) ? fromServer[0] : promotion.timeline;
  if (timeline === null) return null;
  const lsn = fromServer && fromServer[0] === timeline ? fromServer[1] : promotion.lsn;
  if (lsn === null) return null;
  const reason = fromServer && fromServer[0] === timeline ? fromServer[2] : PROMOTION_REASON;
  const lines: HistoryLine[] = [...previous.filter((l) => l[0] < timeline), [timeline, lsn, reason, promotion.at, promotion.leader]];
  return maxLines > 0 && lines.length > maxLines ? lines.slice(lines.length - maxLines) : lines;
}

/**
 * The history key from a server's own timeline history (a standby leader's, fetched from the
 * remote primary): its lines, each keeping the date and leader of the `previous` line of the
 * same timeline and switch point. Keeps the last `maxLines` (0: all). Null when the server
 * knows no history or nothing would change.
 */
export function historyFromServer(previous: readonly HistoryLine[], serverHistory: readonly HistoryLine[], maxLines: number): HistoryLine[] | null {
  if (serverHistory.length === 0) return null;
  const lines: HistoryLine[] = serverHistory.map((l) => previous.find((p) => p[0] === l[0] && p[1] === l[1]) ?? l);
  const kept = maxLines > 0 && lines.length > maxLines ? lines.slice(lines.length - maxLines) : lines;
  const same = kept.length === previous.length && kept.every((l, i) => l === previous[i]);
  return same ? null : kept;
}

/**
 * Whether a server on `timeline` at WAL position `position` has diverged from a leader on
 * `leaderTimeline` whose history is `history`: it wrote past the point where the leader's
 * timeline branched off its own (or it is on a timeline the leader never had). Null when
 * the history does not say (a trimmed history key).
 */
export function hasDiverged(
  timeline: number,
  position: number,
  leaderTimeline: number,
  history: readonly HistoryLine[],
): boolean | null {
  if (timeline > leaderTimeline) return true;
  if (timeline === leaderTimeline) return false;
  const branch = history.find((l) => l[0] === timeline);
  if (!branch) return null;
  return position > branch[1];
}
