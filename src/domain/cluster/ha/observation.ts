import type { LoopMemory } from './decision.js';
import { walPosition, type LocalFacts } from '../model/facts.js';
import { confirmPosition, type ConfirmOptions, type LeaderRef } from '../rules/position.js';

/** The facts as decide() should see them, and what the loop remembers from them. */
export interface Observed {
  readonly facts: LocalFacts;
  /** Memory changes (empty when nothing changed). */
  readonly patch: Partial<LoopMemory>;
}

/**
 * What the loop learns from one probe, before deciding:
 * - the role last seen running (tells a crashed primary from a crashed replica);
 * - a server seen running has no failed starts to count any more;
 * - the highest timeline its data was seen on: a replica's probe can report an older one
 *   (PostgreSQL 15 shows the replay timeline nowhere; see pg-probe.ts) and a stopped
 *   server's control file only knows its last checkpoint's, so the facts are lifted to it;
 * - since when a running replica has neither streamed from its configured upstream nor
 *   made progress (a replica replaying a local backlog is not stuck);
 * - whether its WAL position is confirmed against the current `leader` (see confirmPosition).
 */
export function observeFacts(facts: LocalFacts, memory: LoopMemory, now: number, leader: LeaderRef | null = null, opts: ConfirmOptions = {}): Observed {
  const patch: { -readonly [K in keyof LoopMemory]?: LoopMemory[K] } = {};
  if (facts.running) {
    const role = facts.inRecovery ? 'replica' : 'primary';
    if (memory.lastRole !== role) patch.lastRole = role;
    // Any answer ends the wait primary_start_timeout bounds (a standby leader's too).
    if (memory.primaryStartAt !== null) patch.primaryStartAt = null;
    if (memory.startFailures !== 0) patch.startFailures = 0;
    if (role === 'primary' && facts.timeline !== null && memory.primaryOnTimeline !== facts.timeline) patch.primaryOnTimeline = facts.timeline;
  }

  // Forgotten with the data (FRESH_DATA) or when the data belongs to another system; a failed probe says nothing.
  let seen = memory.timelineSeen;
  if (facts.initialized && facts.systemIdentifier !== null && facts.timeline !== null) {
    const sameData = seen !== null && seen.systemIdentifier === facts.systemIdentifier;
    const highest = sameData ? Math.max(seen!.timeline, facts.timeline) : facts.timeline;
    if (!sameData || highest !== seen!.timeline) seen = { systemIdentifier: facts.systemIdentifier, timeline: highest };
  }
  if (seen !== memory.timelineSeen) patch.timelineSeen = seen;
  let lifted = facts;
  const primary = facts.running && facts.inRecovery === false;
  if (!primary && seen !== null && facts.systemIdentifier === seen.systemIdentifier && (facts.timeline === null || facts.timeline < seen.timeline)) {
    lifted = { ...facts, timeline: seen.timeline };
  }

  const waiting = memory.notStreamingSince;
  if (facts.running && facts.inRecovery === true && facts.replicationState !== 'streaming') {
    const position = walPosition(facts);
    const moved = waiting !== null && position !== null && (waiting.position === null || position > waiting.position);
    if (waiting === null || waiting.upstream !== facts.upstreamConnUrl || moved) {
      patch.notStreamingSince = { since: now, upstream: facts.upstreamConnUrl, position };
    }
  } else if (waiting !== null) {
    patch.notStreamingSince = null;
  }
  const confirmed = confirmPosition(memory.positionConfirmed, lifted, leader, opts);
  if (confirmed !== memory.positionConfirmed) patch.positionConfirmed = confirmed;
  return { facts: lifted, patch };
}
