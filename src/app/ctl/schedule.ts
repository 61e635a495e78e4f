import { CtlError } from './errors.js';

/**
 * Parses a `--scheduled` value into ISO 8601 with zone (UTC), as the API requires.
 * `now` (or no option) means immediate: null. A time without a zone is local time. An empty
 * value is refused: `--scheduled "$WHEN"` with the variable unset must not act at once.
 */
export function parseScheduledAt(value: string | undefined, nowMs: number): string | null {
  if (value === undefined || value.trim().toLowerCase() === 'now') return null;
  if (value.trim() === '') throw new CtlError('invalid_schedule', '--scheduled is empty: give a time (ISO 8601, e.g. 2030-01-31T02:00+01:00) or "now"');
  const ms = isoTimestampMs(value.trim());
  if (ms === null) throw new CtlError('invalid_schedule', `--scheduled: cannot parse ${JSON.stringify(value)} (use ISO 8601, e.g. 2030-01-31T02:00+01:00, or "now")`);
  if (ms <= nowMs) throw new CtlError('invalid_schedule', `--scheduled: ${value} is in the past`);
  return new Date(ms).toISOString();
}

/** `YYYY-MM-DD[T ]HH:MM[:SS[.fff]]` with an optional zone (`Z`, `+HH:MM`, `+HHMM`, `+HH`). */
const ISO = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d\d(?::?\d\d)?)?$/i;

/**
 * Epoch ms of an ISO 8601 timestamp (a time without a zone is local time), or null when it is
 * not one or names a day or time that does not exist (2030-02-30 is refused, not March 2). A
 * date alone, "1/2/2030" or "March 3" are refused: they read differently to different people.
 */
function isoTimestampMs(text: string): number | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute] = [1, 2, 3, 4, 5].map((i) => Number(m[i]));
  const second = Number(m[6] ?? 0);
  if (month! < 1 || month! > 12 || day! < 1 || hour! > 23 || minute! > 59 || second > 59) return null;
  const ms = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  const zone = m[8];
  let at: number;
  if (zone === undefined) {
    const local = new Date(year!, month! - 1, day!, hour!, minute!, second, ms);
    if (local.getFullYear() !== year || local.getMonth() !== month! - 1 || local.getDate() !== day) return null;
    at = local.getTime();
  } else {
    const utc = Date.UTC(year!, month! - 1, day!, hour!, minute!, second, ms);
    const d = new Date(utc);
    if (d.getUTCMonth() !== month! - 1 || d.getUTCDate() !== day) return null;
    const z = /^([+-])(\d\d):?(\d\d)?$/.exec(zone);
    const offset = z ? (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3] ?? 0)) : 0;
    at = utc - offset * 60_000;
  }
  return at;
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
