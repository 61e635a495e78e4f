import type { ExporterApi, ReloadResult, ScrapeAnswer } from '../../../src/adapters/http/exporter-api.js';
import type { ServerStatus } from '../../../src/domain/collectors/server-state.js';

/** A scrape answer with `sample` in a body long enough to be compressed. */
export function answer(sample: string): ScrapeAnswer {
  const memos = new Map<string, Buffer>();
  const bytes = (format: 'text' | 'openmetrics') => Buffer.from(`# HELP db_up x\n# TYPE db_up gauge\n${sample}${'#'.repeat(2000)}\n${format === 'openmetrics' ? '# EOF\n' : ''}`);
  return {
    bytes,
    parts: (format) => [bytes(format).subarray(0, 10), bytes(format).subarray(10)],
    memo: (key, make) => memos.get(key) ?? (memos.set(key, make()), memos.get(key)!),
  };
}

/** The exporter behind its HTTP server, faked: a status to answer role checks with, fixed scrapes. */
export class FakeApi implements ExporterApi {
  status: ServerStatus = 'primary';
  ready = true;
  reloads = 0;
  reloadResult: ReloadResult = { status: 'success', message: 'ok', timestamp: '2024-01-01T00:00:00.000Z' };
  get state() {
    return { status: this.status, version: 150004, checkedAt: 0, error: null };
  }
  async scrape(): Promise<ScrapeAnswer> {
    return answer('db_up 1\n');
  }
  async probe(target: string): Promise<ScrapeAnswer> {
    if (target !== 'db2') throw Object.assign(new Error(`no target named "${target}"`), { code: 'unknown_target' });
    return answer('db_up{target="db2"} 1\n');
  }
  async reload() {
    this.reloads++;
    return this.reloadResult;
  }
  explain() {
    return 'Collector: db_a\n';
  }
  stats() {
    return [{ name: 'db_a', runs: 1, cacheHits: 2, errors: 0, lastDurationSeconds: 0.001, lastMetrics: 3, lastError: null }];
  }
}
