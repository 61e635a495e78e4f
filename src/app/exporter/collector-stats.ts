import type { CollectorStat } from '../../domain/collectors/stat.js';

/** Mutable runtime counters of one collector (summed over its databases). */
export class CollectorCounters {
  runs = 0;
  cacheHits = 0;
  errors = 0;
  lastDurationSeconds: number | null = null;
  lastMetrics = 0;
  lastError: string | null = null;

  constructor(readonly name: string) {}

  /** A snapshot for /stat. */
  snapshot(): CollectorStat {
    return {
      name: this.name,
      runs: this.runs,
      cacheHits: this.cacheHits,
      errors: this.errors,
      lastDurationSeconds: this.lastDurationSeconds,
      lastMetrics: this.lastMetrics,
      lastError: this.lastError,
    };
  }
}
