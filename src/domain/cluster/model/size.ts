import { ValidationError } from '../../errors.js';

/** Size units accepted after a number, each a power of 1024 (case-sensitive, as PostgreSQL writes them). */
export const SIZE_UNITS = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 } as const;

/** A unit name of SIZE_UNITS. */
export type SizeUnit = keyof typeof SIZE_UNITS;

// Decimals only with a unit: a bare "1.5" would be half a byte short of meaning anything.
const SIZE_PATTERN = /^(?:(\d+)|(\d+(?:\.\d+)?)(B|kB|MB|GB|TB))$/;

const ACCEPTED = 'expected bytes as an integer, or a number with a unit B, kB, MB, GB or TB (1024 multiples, case-sensitive, e.g. 16kB, 1.5MB)';

/**
 * Parses a size: plain bytes (`1048576`) or a number with a unit (`16kB`, `1.5MB`).
 * The result is whole bytes (rounded down). Throws ValidationError code `invalid_size`
 * quoting the input; `path` names where it came from (`lag`, `maximum_lag_on_failover`).
 */
export function parseSize(text: string, path = ''): number {
  const fail = (why = ACCEPTED): never => {
    throw new ValidationError([{ path, message: `invalid size ${JSON.stringify(String(text))}: ${why}` }], 'invalid_size');
  };
  if (typeof text !== 'string') return fail();
  const m = SIZE_PATTERN.exec(text);
  if (!m) return fail();
  const bytes = m[1] !== undefined ? Number(m[1]) : Math.floor(Number(m[2]) * SIZE_UNITS[m[3] as SizeUnit]);
  if (!Number.isSafeInteger(bytes)) return fail(`larger than ${Number.MAX_SAFE_INTEGER} bytes`);
  return bytes;
}

/** True when `text` is a valid size for parseSize. */
export function isSize(text: string): boolean {
  try {
    parseSize(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Formats bytes for people: the largest unit not above the value, at most two decimals
 * (`1536` -> `1.5kB`, `1048576` -> `1MB`, `512` -> `512B`). Exact multiples round-trip
 * through parseSize; others are for display only.
 */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  const sign = bytes < 0 ? '-' : '';
  const abs = Math.abs(bytes);
  const units = Object.entries(SIZE_UNITS) as [SizeUnit, number][];
  let [unit, factor] = units[0]!;
  for (const [u, f] of units) if (abs >= f) [unit, factor] = [u, f];
  const value = Math.round((abs / factor) * 100) / 100;
  return `${sign}${value}${unit}`;
}
