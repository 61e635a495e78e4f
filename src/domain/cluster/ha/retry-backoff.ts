import { decision, type Action, type Decision } from './decision.js';
import type { TickContext } from './tick-context.js';
import { repeatLogged } from '../rules/repeat-log.js';

/** A background job that failed, and how many times in a row. */
export interface JobFailures {
  /** The job's name (`bootstrap`, `create replica`, `start`, ...). */
  readonly job: string;
  /** Consecutive failures of this job (at least 1). */
  readonly count: number;
  /** epoch ms of the last failure */
  readonly lastAt: number;
  /** Why it failed last (one line). */
  readonly error: string;
  /** The stable code of the last failure's error, where it had one (`rewind_interrupted`, ...). */
  readonly code?: string;
}

/**
 * Jobs the loop would start again on its own after a failure: repeated, they back off.
 * Promote, demote and stop are left out (delaying them costs availability or safety), and so
 * are the operator's commands (restart, a requested reinitialize): the operator asked now.
 */
export const BACKED_OFF_JOBS: ReadonlySet<string> = new Set(['bootstrap', 'create replica', 'start', 'rewind', 'reinitialize', 'follow', 'checkpoint', 'copy slots']);

/**
 * Failures that back off whichever job they stopped, retried at least every ttl (not after the
 * usual five minutes at most):
 * - the operator's fencing script refused a promotion (trying again at once would only take the
 *   key and give it back, loop after loop): a cluster whose fencing works again gets its primary
 *   within about a ttl;
 * - a base backup or a rewind could not connect to its source: nothing was done, another attempt
 *   costs one connection, and the cause is the other member (down, restarting, cut off), which
 *   may come back at any moment: a replica gets its data within about a ttl of its source
 *   running again.
 */
const BACKED_OFF_CODES: Readonly<Record<string, 'ttl'>> = { pre_promote_failed: 'ttl', create_replica_source_unreachable: 'ttl', rewind_source_unreachable: 'ttl' };

/** Whether a job's repeated failures back off: by the job, or by what stopped it. */
export function backsOff(job: string, code?: string | null): boolean {
  return BACKED_OFF_JOBS.has(job) || (code != null && BACKED_OFF_CODES[code] !== undefined);
}

/** Longest pause between two attempts. */
export const MAX_RETRY_DELAY_MS = 300_000;

/**
 * How long to wait after the `count`-th failure in a row before the next attempt: the first
 * retry comes at the normal pace (one loop_wait), then the wait doubles up to `maxMs` (five
 * minutes by default).
 */
export function retryDelayMs(count: number, loopWaitMs: number, maxMs = MAX_RETRY_DELAY_MS): number {
  const base = Math.max(1000, loopWaitMs);
  return Math.min(Math.max(base, maxMs), base * 2 ** Math.max(0, Math.min(count - 1, 20)));
}

/** The pause after a job's `count`-th failure in a row (retryDelayMs), capped at ttl where the failure's code says so (BACKED_OFF_CODES). */
export function jobRetryDelayMs(code: string | null | undefined, count: number, loopWaitMs: number, ttlMs: number): number {
  const byCode = code != null ? BACKED_OFF_CODES[code] : undefined;
  return retryDelayMs(count, loopWaitMs, byCode === 'ttl' ? ttlMs : MAX_RETRY_DELAY_MS);
}

/** A failure this long after the job's last one starts a new count: the job did not fail "in a row" (its longest pause is MAX_RETRY_DELAY_MS). */
export const FAILURE_STREAK_GAP_MS = 2 * MAX_RETRY_DELAY_MS;

/** The failures in a row `job` will have counted after one more at `at`. */
export function nextFailureCount(failures: readonly JobFailures[], job: string, at: number): number {
  const prev = failures.find((f) => f.job === job);
  return prev !== undefined && at - prev.lastAt <= FAILURE_STREAK_GAP_MS ? prev.count + 1 : 1;
}

/** `failures` after `job` failed (at `at`, because of `error`, with its code if any) or succeeded (`error` null): its entry counted up, moved last, or gone. */
export function jobFailuresAfter(failures: readonly JobFailures[], job: string, error: string | null, at: number, code: string | null = null): readonly JobFailures[] {
  const others = failures.filter((f) => f.job !== job);
  if (error === null) return others.length === failures.length ? failures : others;
  return [...others, { job, count: nextFailureCount(failures, job, at), lastAt: at, error, ...(code === null ? {} : { code }) }];
}

/**
 * Whether the `count`-th failure in a row of a job gets a log line. A job that backs off says
 * why at every attempt (its pauses space the lines out); one retried at the loop's pace (a
 * stop, a promote) as any repeated failure is (`repeatLogged`).
 */
export function failureLogged(job: string, count: number, errorChanged: boolean, code?: string | null): boolean {
  return backsOff(job, code) || repeatLogged(count, errorChanged);
}

/** Actions that keep a node's standing while it waits (a leader keeps its key), and nothing else. */
const KEPT_WHILE_WAITING = new Set<Action['type']>(['refreshLeader', 'kickWatchdog', 'writeStatus']);

/**
 * Holds back a job that has failed repeatedly until its retry delay has passed: the decision
 * keeps only what maintains the node's standing, says when the next attempt comes and why
 * the last one failed, and asks to be woken then. A decision that carries out an operator's
 * command is never held.
 */
export function withBackoff(ctx: TickContext, d: Decision): Decision {
  const failures = d.job === null ? undefined : ctx.input.memory.jobFailures.find((f) => f.job === d.job);
  if (failures === undefined || !backsOff(failures.job, failures.code)) return d;
  if (d.actions.some((a) => a.type === 'resolveCommand' && a.ok)) return d;
  // A promotion under a key this node still holds (its release failed) goes ahead: waiting would hold the cluster without a primary.
  if (!BACKED_OFF_JOBS.has(failures.job) && d.actions.some((a) => a.type === 'refreshLeader')) return d;
  const retryAt = failures.lastAt + jobRetryDelayMs(failures.code, failures.count, ctx.loopWaitMs, ctx.ttlMs);
  if (ctx.now >= retryAt) return d;
  const inSeconds = Math.ceil((retryAt - ctx.now) / 1000);
  const times = failures.count === 1 ? 'once' : `${failures.count} times in a row`;
  return decision(
    `${d.message}: waiting ${inSeconds} s before the next attempt (${failures.job} failed ${times}; last error: ${failures.error})`,
    // A refusal is still said: the job it refused around waits as it would have.
    d.actions.filter((a) => KEPT_WHILE_WAITING.has(a.type) || (a.type === 'resolveCommand' && !a.ok)),
    {
      wakeAt: retryAt,
      publish: { ...d.publish, waitingFor: `the next attempt to ${failures.job} (failed ${times}: ${failures.error})`, backoff: { job: failures.job, retryAt } },
    },
  );
}
