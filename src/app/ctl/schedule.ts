import { CtlError } from './errors.js';

/**
 * Parses a `--scheduled` value into ISO 8601 with zone (UTC), as the API requires.
 * `now` (or nothing) means immediate: null. A time without a zone is local time.
 */
export function parseScheduledAt(value: string | undefined, nowMs: number): string | null {
  if (value === undefined || value === '' || value.toLowerCase() === 'now') return null;
  const ms = Date.parse(value.trim().replace(/^(\d{4}-\d\d-\d\d) (\d)/, '$1T$2'));
  if (Number.isNaN(ms)) throw new CtlError('invalid_schedule', `--scheduled: cannot parse ${JSON.stringify(value)} (use ISO 8601, e.g. 2030-01-31T02:00+01:00, or "now")`);
  if (ms <= nowMs) throw new CtlError('invalid_schedule', `--scheduled: ${value} is in the past`);
  return new Date(ms).toISOString();
}

/** Seconds from a duration: `30`, `30s`, `5min`, `2m`, `1h`. */
export function parseDurationSeconds(value: string | number, flag: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*$/.exec(String(value));
  if (!m || Number(m[1]) <= 0) throw new CtlError('invalid_duration', `${flag}: expected seconds or a duration like 30s, 5min, 1h; got ${value}`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return unit === 'h' ? n * 3600 : unit === 'm' || unit === 'min' ? n * 60 : n;
}
