import type { LeaderWatch } from './leader-watch.js';
import { agentLog, firstMatch, pgLog, type LogFiles } from './log-timeline.js';
import type { SwitchWriter } from './switch-writer.js';

/** The phases of a switchover, in order: each one ends where the next begins. */
export const PHASES = [
  { name: 'decide', short: 'POST->demote', what: "old primary's agent: request read, candidate checked, 'demoting gracefully' logged" },
  { name: 'checkpoint', short: 'checkpoint', what: "decision (or, without the agent's line, the CHECKPOINT's start) -> PostgreSQL logs the CHECKPOINT before the shutdown complete" },
  { name: 'stopSignal', short: 'stop signal', what: "checkpoint done -> PostgreSQL logs 'received fast shutdown request'" },
  { name: 'shutdown', short: 'shutdown', what: 'fast shutdown: sessions ended, then the shutdown checkpoint, until PostgreSQL logs it complete' },
  { name: 'handoff', short: 'key handoff', what: 'shutdown checkpoint complete -> the leader key released in etcd (watch)' },
  { name: 'notice', short: 'cand. notices', what: "key released -> the candidate's agent logs its 'promoting' decision" },
  { name: 'act', short: 'cand. acts', what: "decision -> the candidate's PostgreSQL logs 'received promote request'" },
  { name: 'promote', short: 'promote', what: "promote request -> 'archive recovery complete' (the new timeline's first WAL segment written)" },
  { name: 'firstCommit', short: 'first commit', what: 'end-of-recovery record, then the first commit on the new primary (writer)' },
] as const;

/** Name of a phase. */
export type PhaseName = (typeof PHASES)[number]['name'];

/** One switchover taken apart. */
export interface SwitchoverPhases {
  /** Last commit on the old primary -> first commit on the new one, ms. */
  readonly writeGap: number;
  /** Leader key released -> the candidate's PostgreSQL asked to promote (the candidate's notice and act together), ms. */
  readonly candidate: number;
  /** The old primary's shutdown checkpoint complete -> its postmaster gone ('database system is shut down'), ms: the WAL senders' hand-over and the processes' exit. */
  readonly exit: number;
  /** Each phase's duration, ms (NaN when a mark is missing). */
  readonly phases: Readonly<Record<PhaseName, number>>;
  /** The marks (epoch ms) the phases are cut at. */
  readonly marks: Readonly<Record<string, number | undefined>>;
}

const span = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? Number.NaN : b - a);

/**
 * Cuts one switchover (POST at `t0`, epoch ms) into phases, from the old primary's and the
 * candidate's agent and PostgreSQL logs, the leader key's watch and the writer's commits. A
 * phase whose marks are missing (another HA manager logs other lines) is NaN.
 */
export function switchoverPhases(o: {
  readonly logs: LogFiles;
  readonly watch: LeaderWatch;
  readonly writer: SwitchWriter;
  readonly oldPrimary: string;
  readonly candidate: string;
  readonly t0: number;
  readonly until: number;
}): SwitchoverPhases {
  const { logs, t0, until } = o;
  const oldAgent = agentLog(logs.agent(o.oldPrimary), t0 - 5, until);
  const oldPg = pgLog(logs.postgres(o.oldPrimary), t0 - 5, until);
  const candAgent = agentLog(logs.agent(o.candidate), t0 - 5, until);
  const candPg = pgLog(logs.postgres(o.candidate), t0 - 5, until);
  const decided = firstMatch(oldAgent, /^demoting gracefully/, t0);
  const ckptStarted = firstMatch(oldPg, /checkpoint starting: immediate force wait/, decided ?? t0);
  const ckptDone = firstMatch(oldPg, /checkpoint complete/, ckptStarted);
  const stopAsked = firstMatch(oldPg, /received (fast|smart|immediate) shutdown request/, t0);
  const shutdownCheckpoint = firstMatch(oldPg, /checkpoint complete/, firstMatch(oldPg, /checkpoint starting: shutdown/, stopAsked));
  const shutDown = firstMatch(oldPg, /database system is shut down/, stopAsked);
  const perfT0 = t0 - performance.timeOrigin;
  const released = o.watch.events.find((e) => e.at >= perfT0 && (e.kind === 'delete' || e.value === o.candidate));
  const releasedAt = released ? released.at + performance.timeOrigin : undefined;
  const noticed = firstMatch(candAgent, /promoting/, releasedAt !== undefined ? Math.floor(releasedAt) : t0);
  const promoteAsked = firstMatch(candPg, /received promote request/, t0);
  const ready = firstMatch(candPg, /archive recovery complete/, promoteAsked);
  const firstNew = o.writer.firstOn(o.candidate, t0);
  const lastOld = o.writer.lastOn(o.oldPrimary, firstNew?.at);
  return {
    writeGap: span(lastOld?.at, firstNew?.at),
    candidate: span(releasedAt, promoteAsked),
    exit: span(shutdownCheckpoint, shutDown),
    phases: {
      decide: span(t0, decided),
      checkpoint: span(decided ?? ckptStarted, ckptDone),
      stopSignal: span(ckptDone, stopAsked),
      shutdown: span(stopAsked, shutdownCheckpoint),
      handoff: span(shutdownCheckpoint, releasedAt),
      notice: span(releasedAt, noticed),
      act: span(noticed, promoteAsked),
      promote: span(promoteAsked, ready),
      firstCommit: span(ready, firstNew?.at),
    },
    marks: { t0, decided, ckptDone, stopAsked, shutdownCheckpoint, shutDown, releasedAt, noticed, promoteAsked, ready, lastOld: lastOld?.at, firstNew: firstNew?.at },
  };
}
