import { MAX_DURATION_SECONDS } from '../../domain/cluster/config/config-schema.js';
import { ValidationError } from '../../domain/errors.js';
import type { RestartInput } from '../../usecases/restart.js';
import type { RestartBody } from './schemas.js';

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, sec: 1, min: 60, h: 3600 };
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|sec|min|h)?$/;

/** Seconds of a restart `timeout`: a positive number, or `"30s"`, `"5min"`, `"1h"`, `"500ms"`. ValidationError naming `timeout` otherwise. */
export function parseTimeoutSeconds(value: number | string): number {
  const m = typeof value === 'number' ? null : DURATION.exec(value.trim());
  const seconds = typeof value === 'number' ? value : m ? Number(m[1]) * DURATION_UNITS[m[2] ?? 's']! : NaN;
  if (!(seconds > 0 && seconds <= MAX_DURATION_SECONDS)) {
    throw new ValidationError(
      [{ path: 'timeout', message: `expected seconds as a positive number up to ${MAX_DURATION_SECONDS}, or a duration such as "30s" or "5min", got ${JSON.stringify(value)}` }],
      'invalid_body',
    );
  }
  return seconds;
}

/** The restart use case's input from a validated `POST /restart` body (the timeout in seconds). */
export function restartInput(body: RestartBody): RestartInput {
  return {
    ...(body.restart_pending !== undefined ? { restart_pending: body.restart_pending } : {}),
    ...(body.role !== undefined ? { role: body.role } : {}),
    ...(body.db_version !== undefined ? { db_version: body.db_version } : {}),
    ...(body.timeout !== undefined ? { timeout: parseTimeoutSeconds(body.timeout) } : {}),
    ...(body.schedule !== undefined ? { schedule: body.schedule } : {}),
  };
}
