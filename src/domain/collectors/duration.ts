import { ValidationError } from '../errors.js';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/;

/** Parses `10s`, `100ms`, `1m`, `1h`, a bare number or numeric string of seconds into milliseconds; null when invalid. */
export function parseDurationMs(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : null;
  if (typeof value !== 'string') return null;
  const m = DURATION.exec(value);
  if (!m) return null;
  return Math.round(Number(m[1]) * UNIT_MS[m[2] ?? 's']!);
}

/** Like parseDurationMs, but throws a ValidationError naming `path` when the value is invalid. */
export function requireDurationMs(value: unknown, path: string): number {
  const ms = parseDurationMs(value);
  if (ms === null) {
    throw new ValidationError([{ path, message: `invalid duration ${JSON.stringify(value)} (expected e.g. 10s, 100ms, 1m or a number of seconds)` }], 'invalid_duration');
  }
  return ms;
}

/** Formats milliseconds the way operators write them: `1m`, `10s`, `100ms`, `1.5s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  if (ms < 1000) return `${ms}ms`;
  return `${ms / 1000}s`;
}
