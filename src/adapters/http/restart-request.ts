import { parseScheduleTime } from '../../domain/cluster/rules/schedule.js';
import { ValidationError } from '../../domain/errors.js';
import type { RestartRequest } from '../../ports/agent-control.js';
import type { RestartBody } from './schemas.js';

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, sec: 1, min: 60, h: 3600 };
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|sec|min|h)?$/;

/** Seconds of a restart `timeout`: a positive number, or `"30s"`, `"5min"`, `"1h"`, `"500ms"`. ValidationError naming `timeout` otherwise. */
export function parseTimeoutSeconds(value: number | string): number {
  if (typeof value === 'number') return value;
  const m = DURATION.exec(value.trim());
  const seconds = m ? Number(m[1]) * DURATION_UNITS[m[2] ?? 's']! : NaN;
  if (!(seconds > 0)) {
    throw new ValidationError(
      [{ path: 'timeout', message: `expected seconds as a positive number, or a duration such as "30s" or "5min", got ${JSON.stringify(value)}` }],
      'invalid_body',
    );
  }
  return seconds;
}

/**
 * The restart request of a validated body: timeout in seconds; a `schedule` must be
 * ISO 8601 with a zone and not in the past (400/422 naming `schedule`), and cannot be set
 * while the cluster is paused (400).
 */
export function restartRequest(body: RestartBody, paused: boolean, now: number): RestartRequest {
  const req: { -readonly [K in keyof RestartRequest]: RestartRequest[K] } = {};
  if (body.restart_pending !== undefined) req.restart_pending = body.restart_pending;
  if (body.role !== undefined) req.role = body.role;
  if (body.db_version !== undefined) req.db_version = body.db_version;
  if (body.timeout !== undefined) req.timeout = parseTimeoutSeconds(body.timeout);
  if (body.schedule !== undefined) {
    if (paused) {
      throw new ValidationError([{ path: 'schedule', message: "can't schedule a restart while the cluster is in maintenance mode (pause)" }], 'paused');
    }
    parseScheduleTime(body.schedule, now, 'schedule');
    req.schedule = body.schedule;
  }
  return req;
}
