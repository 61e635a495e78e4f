import { ValidationError, WardenError } from '../../errors.js';
import type { FailoverKey, ScheduledRestart } from '../model/cluster.js';

/** Refusal of a schedule transition; `code` is one of ScheduleErrorCode. */
export class ScheduleError extends WardenError<ScheduleErrorCode> {}

/** Stable codes of schedule refusals (the API maps them with SCHEDULE_ERROR_STATUS). */
export type ScheduleErrorCode =
  | 'paused'
  | 'not_scheduled'
  | 'already_scheduled'
  | 'timezone_required'
  | 'invalid_schedule'
  | 'schedule_in_past';

/**
 * HTTP status of each refusal, for both machines (400 unless noted; a timestamp in
 * the past or unparseable 422; a restart already scheduled 409; nothing to delete 404).
 */
export const SCHEDULE_ERROR_STATUS: Readonly<Record<ScheduleErrorCode, number>> = Object.freeze({
  paused: 400,
  not_scheduled: 404,
  already_scheduled: 409,
  timezone_required: 400,
  invalid_schedule: 422,
  schedule_in_past: 422,
});

/** The codes of a timestamp parseScheduleTime refuses (a ValidationError). */
export const SCHEDULE_TIME_ERROR_CODES = ['timezone_required', 'invalid_schedule', 'schedule_in_past'] as const satisfies readonly ScheduleErrorCode[];
/** One of SCHEDULE_TIME_ERROR_CODES. */
export type ScheduleTimeErrorCode = (typeof SCHEDULE_TIME_ERROR_CODES)[number];

/** Every code scheduleSwitchover refuses with: its own (`paused`, `already_scheduled`) and the timestamp's. */
export const SWITCHOVER_SCHEDULE_ERROR_CODES = ['paused', 'already_scheduled', ...SCHEDULE_TIME_ERROR_CODES] as const satisfies readonly ScheduleErrorCode[];

// ISO 8601 date-time (extended format) with an optional zone; the zone is checked separately
// so a missing one gets its own error instead of a generic "unparseable".
const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

/**
 * Parses a schedule timestamp: ISO 8601 with an explicit zone (`2030-01-02T03:04:05Z`,
 * `...+02:00`), no earlier than `now` (epoch ms). Returns epoch ms. Throws ValidationError
 * code `timezone_required`, `invalid_schedule` or `schedule_in_past`; `field` names the
 * request field in the error (`scheduled_at`, `schedule`).
 */
export function parseScheduleTime(text: string, now: number, field = 'scheduled_at'): number {
  const fail = (code: ScheduleTimeErrorCode, why: string): never => {
    throw new ValidationError([{ path: field, message: `${why}, got ${JSON.stringify(text)}` }], code);
  };
  const m = typeof text === 'string' ? ISO.exec(text.trim()) : null;
  if (!m) return fail('invalid_schedule', 'expected an ISO 8601 timestamp with a time zone such as 2030-01-02T03:04:05+00:00');
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
  if (!z && !sign) return fail('timezone_required', 'expected a time zone (Z or +HH:MM) in the timestamp; a time without one is ambiguous');
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s ?? 0);
  const ms = frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0;
  const offsetMinutes = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0;
  const local = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(local);
  if (
    check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day ||
    hour > 23 || minute > 59 || second > 59 || Number(oh ?? 0) > 23 || Number(om ?? 0) > 59
  ) {
    return fail('invalid_schedule', 'expected a real calendar date and time');
  }
  const at = local - offsetMinutes * 60_000;
  if (at < now) return fail('schedule_in_past', `expected a time not before now (${new Date(now).toISOString()})`);
  return at;
}

/** An action's moment has come. */
export function isDue(scheduledAt: number, now: number): boolean {
  return now >= scheduledAt;
}

/**
 * A scheduled action missed its moment by more than 1.5 loop_wait: the agent was stalled
 * (or down) when it was due, and running it late could surprise the operator, so it is
 * dropped instead. Same tolerance as the loop's own jitter: an action due between two
 * ticks still runs on the next one.
 */
export function isStale(scheduledAt: number, now: number, loopWaitSeconds: number): boolean {
  return now - scheduledAt > 1.5 * loopWaitSeconds * 1000;
}

/** What the HA loop does with a scheduled action at `now`. */
export type ScheduleVerdict = 'wait' | 'due' | 'stale';

/** wait (not yet), due (run it now), or stale (drop it, see isStale). */
export function scheduleVerdict(scheduledAt: number, now: number, loopWaitSeconds: number): ScheduleVerdict {
  if (!isDue(scheduledAt, now)) return 'wait';
  return isStale(scheduledAt, now, loopWaitSeconds) ? 'stale' : 'due';
}

/** The scheduled-switchover machine: nothing, or one switchover at a moment. */
export type SwitchoverSchedule =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'scheduled';
      /** epoch ms */
      readonly at: number;
      /** The timestamp as the operator wrote it (stored in the failover key). */
      readonly scheduledAt: string;
      /** Current leader. */
      readonly from: string;
      /** Candidate; null lets every eligible node race. */
      readonly to: string | null;
    };

/** The scheduled-restart machine: nothing, or one restart with its conditions. */
export type RestartSchedule =
  | { readonly kind: 'none' }
  | { readonly kind: 'scheduled'; /** epoch ms */ readonly at: number; readonly restart: ScheduledRestart };

/** Nothing scheduled. */
export const NONE_SCHEDULED: { readonly kind: 'none' } = Object.freeze({ kind: 'none' });

/** What the transitions need to know besides the request. */
export interface ScheduleContext {
  readonly paused: boolean;
  /** epoch ms */
  readonly now: number;
}

/**
 * The switchover machine's state from the DCS failover key: a key with `scheduled_at` is a
 * scheduled switchover; anything else (no key, an immediate request, an unparseable time)
 * is "none scheduled".
 */
export function switchoverScheduleFromKey(key: FailoverKey | null): SwitchoverSchedule {
  if (key === null || key.scheduledAt === null || key.leader === null) return NONE_SCHEDULED;
  const at = Date.parse(key.scheduledAt);
  if (Number.isNaN(at)) return NONE_SCHEDULED;
  return Object.freeze({ kind: 'scheduled', at, scheduledAt: key.scheduledAt, from: key.leader, to: key.member });
}

/** The restart machine's state from this node's scheduled restart (member key or local state). */
export function restartScheduleFrom(restart: ScheduledRestart | null): RestartSchedule {
  if (restart === null) return NONE_SCHEDULED;
  const at = Date.parse(restart.schedule);
  return Number.isNaN(at) ? NONE_SCHEDULED : Object.freeze({ kind: 'scheduled', at, restart });
}

/**
 * `POST /switchover` with `scheduled_at`: none scheduled -> switchover scheduled (the API
 * answers 202). Refused while paused (`paused`), when one is already scheduled
 * (`already_scheduled`: cancel it first, so two operators cannot silently overwrite each
 * other), and for a bad timestamp (see parseScheduleTime).
 */
export function scheduleSwitchover(
  state: SwitchoverSchedule,
  req: { readonly leader: string; readonly candidate: string | null; readonly scheduledAt: string },
  ctx: ScheduleContext,
): SwitchoverSchedule {
  if (ctx.paused) throw new ScheduleError('paused', "can't schedule a switchover while the cluster is in maintenance mode (pause)");
  const at = parseScheduleTime(req.scheduledAt, ctx.now, 'scheduled_at');
  if (state.kind === 'scheduled') {
    throw new ScheduleError('already_scheduled', `a switchover is already scheduled at ${state.scheduledAt}; delete it first`);
  }
  return Object.freeze({ kind: 'scheduled', at, scheduledAt: req.scheduledAt, from: req.leader, to: req.candidate });
}

/** `DELETE /switchover`: switchover scheduled -> none scheduled; `not_scheduled` (404) when there is none. */
export function cancelSwitchover(state: SwitchoverSchedule): SwitchoverSchedule {
  if (state.kind === 'none') throw new ScheduleError('not_scheduled', 'no switchover is scheduled');
  return NONE_SCHEDULED;
}

/**
 * `POST /restart` with `schedule`: none scheduled -> restart scheduled. Refused while
 * paused (`paused`, 400), when one exists (`already_scheduled`, 409), and for a bad
 * timestamp (see parseScheduleTime).
 */
export function scheduleRestart(state: RestartSchedule, req: ScheduledRestart, ctx: ScheduleContext): RestartSchedule {
  if (ctx.paused) throw new ScheduleError('paused', "can't schedule a restart while the cluster is in maintenance mode (pause)");
  const at = parseScheduleTime(req.schedule, ctx.now, 'schedule');
  if (state.kind === 'scheduled') {
    throw new ScheduleError('already_scheduled', `a restart is already scheduled at ${state.restart.schedule}; delete it first`);
  }
  return Object.freeze({ kind: 'scheduled', at, restart: Object.freeze({ ...req }) });
}

/** `DELETE /restart`: restart scheduled -> none scheduled; `not_scheduled` (404) when there is none. */
export function cancelRestart(state: RestartSchedule): RestartSchedule {
  if (state.kind === 'none') throw new ScheduleError('not_scheduled', 'no restart is scheduled');
  return NONE_SCHEDULED;
}
