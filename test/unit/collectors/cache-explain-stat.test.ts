import { expect } from 'chai';
import { cacheKey, isFresh } from '../../../src/domain/collectors/cache.js';
import { loadDefinitions } from '../../../src/domain/collectors/definitions.js';
import { explainBlock, explainText } from '../../../src/domain/collectors/explain.js';
import { planCollectors } from '../../../src/domain/collectors/select.js';
import { statJson, statTable } from '../../../src/domain/collectors/stat.js';

describe('collectors: TTL cache policy', () => {
  it('an entry is fresh while younger than the TTL', () => {
    expect(isFresh({ at: 1000 }, 10_000, 1000)).to.equal(true);
    expect(isFresh({ at: 1000 }, 10_000, 10_999)).to.equal(true);
    expect(isFresh({ at: 1000 }, 10_000, 11_000)).to.equal(false);
    expect(isFresh(undefined, 10_000, 0)).to.equal(false);
  });
  it('TTL 0, disabled caching, or a clock that went backwards make it stale', () => {
    expect(isFresh({ at: 1000 }, 0, 1000)).to.equal(false);
    expect(isFresh({ at: 1000 }, 10_000, 1001, true)).to.equal(false);
    expect(isFresh({ at: 1000 }, 10_000, 999)).to.equal(false);
  });
  it('keys differ per collector and database', () => {
    expect(cacheKey('a', 'b')).not.to.equal(cacheKey('a', 'c'));
    expect(cacheKey('ab', 'c')).not.to.equal(cacheKey('a', 'bc'));
  });
});

describe('collectors: /explain text', () => {
  const defs = loadDefinitions([
    {
      source: 't.yml',
      doc: {
        db_stat_database: { name: 'db_database', query: 'SELECT datname,\n  xact_commit\nFROM pg_stat_database', ttl: '10s', timeout: '100ms', min_version: 100000, max_version: 180000, tags: ['cluster'], metrics: [{ datname: { usage: 'LABEL' } }, { xact_commit: { usage: 'COUNTER' } }] },
        db_repl: { query: 'SELECT 1 AS v', tags: ['cluster', 'primary'], metrics: [{ v: { usage: 'GAUGE' } }] },
        db_old: { query: 'SELECT 1 AS v', max_version: 100000, metrics: [{ v: { usage: 'GAUGE' } }] },
        db_pred: { query: 'SELECT 1 AS v', predicate_queries: [{ name: 'has_x', predicate_query: 'SELECT false' }], metrics: [{ v: { usage: 'GAUGE' } }] },
      },
    },
  ]);

  it('prints the seven attributes per collector, in run order, with the seed layout', () => {
    const plan = planCollectors(defs, { server: { version: 150004, role: 'primary' }, main: { name: 'postgres', extensions: new Set() }, others: [], exporterTags: new Set() });
    const text = explainText({ collectors: defs, plan, unplannedReason: 'x', failedPredicate: (k) => (k === 'db_pred' ? 'has_x' : null) });
    expect(text.split('\n\n')[0]).to.equal(
      [
        'Collector: db_stat_database',
        'Query:     SELECT datname, xact_commit FROM pg_stat_database',
        'Tags:      [cluster]',
        'TTL:       10s',
        'Timeout:   100ms',
        'Version:   100000-180000',
        'Status:    Active',
      ].join('\n'),
    );
    expect(text).to.contain('Collector: db_repl\n').and.contain('Tags:      [cluster, primary]\n').and.contain('Status:    Active (primary only)\n');
    expect(text).to.contain('Version:   0-100000\nStatus:    Inactive (server version 150004 outside 0-100000)\n');
    expect(text).to.contain('Collector: db_pred\n').and.contain('Status:    Inactive (predicate has_x returned false)\n');
    expect(text.match(/^Collector: /gm)).to.have.length(4);
    expect(text.endsWith('\n')).to.equal(true);
  });

  it('without a plan every collector is inactive with the reason', () => {
    const text = explainText({ collectors: defs, plan: null, unplannedReason: 'database down' });
    expect(text.match(/Status:    Inactive \(not planned: database down\)/g)).to.have.length(4);
    expect(explainBlock(defs[1]!, 'Active')).to.contain('TTL:       10s\nTimeout:   1s\n');
  });
});

describe('collectors: /stat', () => {
  const stats = [
    { name: 'db_a', runs: 3, cacheHits: 10, errors: 0, lastDurationSeconds: 0.0021, lastMetrics: 51, lastError: null },
    { name: 'db_longer_name', runs: 1, cacheHits: 0, errors: 1, lastDurationSeconds: null, lastMetrics: 0, lastError: 'canceling statement due to\nstatement timeout' },
  ];
  it('renders an aligned table with one row per collector', () => {
    const lines = statTable(stats).trimEnd().split('\n');
    expect(lines[0]).to.match(/^COLLECTOR\s+RUNS\s+CACHE_HITS\s+ERRORS\s+LAST_DURATION\s+METRICS\s+LAST_ERROR$/);
    expect(lines[1]).to.match(/^db_a\s+3\s+10\s+0\s+2\.10ms\s+51\s+-$/);
    expect(lines[2]).to.match(/^db_longer_name\s+1\s+0\s+1\s+-\s+0\s+canceling statement due to statement timeout$/);
    expect(lines[1]!.indexOf('3')).to.equal(lines[0]!.indexOf('RUNS'));
  });
  it('gives the same rows as JSON', () => {
    expect(statJson(stats)).to.deep.equal({ collectors: stats });
  });
});
