/** When a cached result was produced, in clock milliseconds. */
export interface Stamped {
  readonly at: number;
}

/**
 * TTL policy: an entry is fresh while younger than `ttlMs`. A TTL of 0, or caching disabled,
 * makes every entry stale (run on every scrape). A clock that went backwards makes it stale too.
 */
export function isFresh(entry: Stamped | undefined, ttlMs: number, now: number, disabled = false): boolean {
  if (!entry || disabled || ttlMs <= 0) return false;
  const age = now - entry.at;
  return age >= 0 && age < ttlMs;
}

/** Key of a cache entry: one per collector and database. */
export function cacheKey(collector: string, database: string): string {
  return `${collector}\u0000${database}`;
}
