/**
 * What the chaos suite concludes from what it observed: pure functions over acknowledged
 * writes, health answers and leader-key changes, so each rule has its own unit test.
 */

/** A write whose COMMIT a node acknowledged, at `at` (epoch ms, when the answer arrived). */
export interface Ack {
  readonly node: string;
  readonly id: number;
  readonly at: number;
}

/** An answer of a read-only health check: the status code and the node's document fields that matter. */
export interface HealthAnswer {
  readonly node: string;
  /** When the request was sent: the node answered after that. */
  readonly sentAt: number;
  /** When the answer arrived. */
  readonly at: number;
  readonly status: number;
  readonly timeline: number | null;
  readonly replicationState: string | null;
}

/** A time interval [from, to] in epoch ms. */
export interface Interval {
  readonly from: number;
  readonly to: number;
}

/** Acks further apart than this end one writable stretch of a node (the writers write every 20 ms). */
export const STRETCH_GAP_MS = 1000;

/**
 * A shorter gap ends a stretch too when another node acknowledged a write inside it: a whole
 * term of another primary fits there (switchovers there and back within a second). Two
 * primaries writable at once leave no such gap: each acknowledges every 20 ms.
 */
export const INTERRUPTED_GAP_MS = 100;

/** Some node other than `node` acknowledged a write strictly between `from` and `to` (`sorted`: every node's ack times, ascending). */
function ackedElsewhere(sorted: ReadonlyMap<string, readonly number[]>, node: string, from: number, to: number): boolean {
  for (const [other, times] of sorted) {
    if (other === node) continue;
    // First time above `from` (binary search), then whether it is below `to`.
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (times[mid]! <= from) lo = mid + 1;
      else hi = mid;
    }
    if (lo < times.length && times[lo]! < to) return true;
  }
  return false;
}

/**
 * Each node's stretches of acknowledged writes: maximal runs with no gap above STRETCH_GAP_MS,
 * nor above INTERRUPTED_GAP_MS with another node's ack inside.
 */
export function writableStretches(acks: readonly Ack[]): Map<string, Interval[]> {
  const byNode = new Map<string, number[]>();
  for (const a of acks) (byNode.get(a.node) ?? byNode.set(a.node, []).get(a.node)!).push(a.at);
  for (const times of byNode.values()) times.sort((x, y) => x - y);
  const out = new Map<string, Interval[]>();
  for (const [node, times] of byNode) {
    const runs: Interval[] = [];
    let from = times[0]!;
    let to = from;
    for (const t of times.slice(1)) {
      if (t - to > STRETCH_GAP_MS || (t - to > INTERRUPTED_GAP_MS && ackedElsewhere(byNode, node, to, t))) {
        runs.push({ from, to });
        from = t;
      }
      to = t;
    }
    runs.push({ from, to });
    out.set(node, runs);
  }
  return out;
}

/**
 * How long two nodes acknowledged writes at overlapping times (ms, summed over every pair of
 * stretches of different nodes): the measure of two writable primaries. 0 is the only good
 * answer. A stretch that ends before another begins does not overlap it, however close.
 */
export function writableOverlapMs(acks: readonly Ack[]): number {
  const all = [...writableStretches(acks)].flatMap(([node, runs]) => runs.map((r) => ({ node, ...r })));
  let total = 0;
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const a = all[i]!;
      const b = all[j]!;
      if (a.node === b.node) continue;
      total += Math.max(0, Math.min(a.to, b.to) - Math.max(a.from, b.from));
    }
  }
  return total;
}

/** The ids acknowledged but missing from `present` (the final leader's rows). */
export function lostAcks(acks: readonly Ack[], present: ReadonlySet<number>): number[] {
  return acks.filter((a) => !present.has(a.id)).map((a) => a.id);
}

/** The first ack of a node other than `old` at or after `since` (the new primary's first write), or null. */
export function firstAckElsewhere(acks: readonly Ack[], old: string, since: number): Ack | null {
  let first: Ack | null = null;
  for (const a of acks) if (a.node !== old && a.at >= since && (first === null || a.at < first.at)) first = a;
  return first;
}

/** The last ack of `node` (null when it never acknowledged one). */
export function lastAckOf(acks: readonly Ack[], node: string): Ack | null {
  let last: Ack | null = null;
  for (const a of acks) if (a.node === node && (last === null || a.at > last.at)) last = a;
  return last;
}

/** A timeline seen on a primary: when (the answer's arrival), which, and on which node. */
export interface PrimaryTimeline {
  readonly at: number;
  readonly timeline: number;
  readonly node: string;
}

/**
 * Health answers that let a node take reads while it may hold WAL the leader lacks: a 200
 * from a node on a timeline below one that another node than its own timeline's primary had
 * already shown as primary (`primaryTimelines`, at the arrival of that answer). A primary
 * that re-promoted itself (a new timeline on the same node, after an etcd outage) leaves
 * its replicas' WAL a prefix of its own. Only answers sent after that arrival count: one
 * that crossed the promotion on the way proves nothing. The former primary (`former`, from
 * `since` on) must not answer 200 before it streams at all.
 */
export function untrustworthyHealthy(answers: readonly HealthAnswer[], primaryTimelines: readonly PrimaryTimeline[], former?: { readonly node: string; readonly since: number }): HealthAnswer[] {
  const streamedAt = former ? answers.find((a) => a.node === former.node && a.sentAt >= former.since && a.replicationState === 'streaming')?.sentAt ?? Infinity : Infinity;
  return answers.filter((a) => {
    if (a.status !== 200) return false;
    if (former && a.node === former.node && a.sentAt >= former.since && a.sentAt < streamedAt) return true;
    const own = primaryTimelines.find((p) => p.timeline === a.timeline)?.node ?? null;
    return primaryTimelines.some((p) => p.at < a.sentAt && p.timeline > (a.timeline ?? 0) && p.node !== own);
  });
}

/** The longest time without any acknowledged write between `from` and `to` (ms). */
export function longestWriteGapMs(acks: readonly Ack[], from: number, to: number): number {
  return longestWriteGap(acks, from, to).ms;
}

/** The longest stretch within [from, to] without an acknowledged write, and where it lies. */
export function longestWriteGap(acks: readonly Ack[], from: number, to: number): { readonly ms: number; readonly start: number; readonly end: number } {
  const times = acks.map((a) => a.at).filter((t) => t >= from && t <= to).sort((x, y) => x - y);
  let best = { ms: 0, start: from, end: from };
  let prev = from;
  for (const t of [...times, to]) {
    if (t - prev > best.ms) best = { ms: t - prev, start: prev, end: t };
    prev = t;
  }
  return best;
}
