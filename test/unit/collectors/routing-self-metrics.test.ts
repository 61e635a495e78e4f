import { expect } from 'chai';
import { ProcessMetrics } from '../../../src/adapters/metrics/process-metrics.js';
import { constLabelNameProblem, mergeConstLabels, parseConstLabels } from '../../../src/domain/collectors/metric-naming.js';
import { ROLE_CHECK_PATHS, roleCheckStatus } from '../../../src/domain/collectors/routing.js';
import { renderBuildInfo, renderScrapeSelfStats, renderServerGauges } from '../../../src/domain/collectors/self-metrics.js';
import { parseExposition } from './exposition-parser.js';

describe('collectors: routing checks', () => {
  const table: [string, string, number][] = [
    ['up', 'primary', 200], ['up', 'replica', 200], ['up', 'down', 503], ['up', 'starting', 503],
    ['primary', 'primary', 200], ['primary', 'replica', 404], ['primary', 'down', 503], ['primary', 'starting', 503],
    ['replica', 'replica', 200], ['replica', 'primary', 404], ['replica', 'down', 503], ['replica', 'starting', 503],
  ];
  for (const [check, status, code] of table) {
    it(`${check} on a ${status} server answers ${code}`, () => {
      expect(roleCheckStatus(check as 'up', status as 'primary')).to.equal(code);
    });
  }
  it('maps every alias of the seed', () => {
    expect(Object.entries(ROLE_CHECK_PATHS).filter(([, c]) => c === 'up').map(([p]) => p)).to.deep.equal(['/up', '/health', '/read']);
    expect(Object.entries(ROLE_CHECK_PATHS).filter(([, c]) => c === 'primary').map(([p]) => p)).to.deep.equal(['/primary', '/leader', '/master', '/read-write', '/rw']);
    expect(Object.entries(ROLE_CHECK_PATHS).filter(([, c]) => c === 'replica').map(([p]) => p)).to.deep.equal(['/replica', '/standby', '/slave', '/read-only', '/ro']);
  });
});

describe('collectors: built-in and self metrics', () => {
  it('renders db_up, db_version, db_in_recovery and build info as valid exposition text', () => {
    const text =
      renderServerGauges('db', [['env', 'test']], { up: true, version: 150004, inRecovery: false }) +
      renderBuildInfo('db', [['env', 'test']], { version: '0.1.0', branch: 'main', revision: 'abc' }) +
      renderScrapeSelfStats('db', [['env', 'test']], {
        lastScrapeDurationSeconds: 0.002,
        scrapeRequestsTotal: 9,
        scrapesTotal: 3,
        scrapeErrorsTotal: 1,
        lastScrapeTimestampSeconds: 1700000000.5,
        collectors: [{ name: 'db_a', lastDurationSeconds: 0.001, errors: 0, cacheHits: 2, lastMetrics: 10 }],
      });
    const f = parseExposition(text);
    expect(f.get('db_up')!.samples).to.deep.equal([{ name: 'db_up', labels: { env: 'test' }, value: 1 }]);
    expect(f.get('db_version')!.samples[0]!.value).to.equal(150004);
    expect(f.get('db_in_recovery')!.samples[0]!.value).to.equal(0);
    expect(f.get('db_exporter_build_info')!.samples[0]!.labels).to.deep.equal({ version: '0.1.0', branch: 'main', revision: 'abc', env: 'test' });
    for (const name of ['db_exporter_scrape_duration_seconds', 'db_exporter_scrape_total', 'db_exporter_scrape_errors_total', 'db_exporter_last_scrape_timestamp_seconds', 'db_exporter_query_duration_seconds', 'db_exporter_query_errors_total', 'db_exporter_query_cache_hits_total', 'db_exporter_query_metrics']) {
      expect(f.has(name), name).to.equal(true);
      expect(f.get(name)!.help).to.be.a('string').and.not.equal('');
    }
    expect(f.get('db_exporter_query_cache_hits_total')!.samples[0]!.labels).to.deep.equal({ collector: 'db_a', env: 'test' });
  });

  it('a down server has db_up 0, keeps the last version, and no db_in_recovery', () => {
    const f = parseExposition(renderServerGauges('pg', [], { up: false, version: 150004, inRecovery: null }));
    expect(f.get('pg_up')!.samples[0]!.value).to.equal(0);
    expect(f.get('pg_version')!.samples[0]!.value).to.equal(150004);
    expect(f.has('pg_in_recovery')).to.equal(false);
    expect(parseExposition(renderServerGauges('pg', [], { up: false, version: null, inRecovery: null })).has('pg_version')).to.equal(false);
  });

  it('parses --const-labels, listing every problem', () => {
    expect(parseConstLabels('a=b, c=d')).to.deep.equal({ labels: [['a', 'b'], ['c', 'd']], problems: [] });
    expect(parseConstLabels('')).to.deep.equal({ labels: [], problems: [] });
    expect(parseConstLabels('a').problems).to.deep.equal(['expected name=value, got "a"']);
    expect(parseConstLabels('1a=b').problems).to.deep.equal(['invalid label name "1a"']);
    expect(parseConstLabels('a=b,a=c').problems).to.deep.equal(['label a given twice']);
    const all = parseConstLabels('env=prod,collector=y,a,datname=x');
    expect(all.labels).to.deep.equal([['env', 'prod']]);
    expect(all.problems).to.have.length(3);
    expect(all.problems[0]).to.match(/^label collector is one the exporter sets itself/);
    expect(all.problems[2]).to.match(/^label datname is one the exporter sets itself/);
  });

  it("refuses constant labels named like a label of the exporter's own info metrics (the series would carry it twice)", () => {
    for (const name of ['version', 'branch', 'revision']) expect(parseConstLabels(`${name}=x`).problems[0], name).to.match(new RegExp(`^label ${name} is one the exporter sets itself on \\*_exporter_build_info`));
    for (const name of ['major', 'minor', 'patch']) expect(parseConstLabels(`${name}=x`).problems[0], name).to.match(new RegExp(`^label ${name} is one the exporter sets itself on nodejs_version_info`));
  });

  it("refuses as a constant label every label name of the exporter's own series", () => {
    const own =
      renderBuildInfo('db', [], { version: '1', branch: 'main', revision: 'abc' }) +
      renderScrapeSelfStats('db', [], { lastScrapeDurationSeconds: 0, scrapesTotal: 0, scrapeRequestsTotal: 0, scrapeErrorsTotal: 0, lastScrapeTimestampSeconds: 0, collectors: [{ name: 'c', lastDurationSeconds: 0, errors: 0, cacheHits: 0, lastMetrics: 0 }] }) +
      new ProcessMetrics([]).text();
    const names = new Set([...parseExposition(own).values()].flatMap((f) => f.samples.flatMap((x) => Object.keys(x.labels))));
    expect([...names].sort()).to.include.members(['branch', 'collector', 'major', 'minor', 'patch', 'revision', 'version']);
    for (const name of names) expect(constLabelNameProblem(name), name).to.be.a('string');
  });

  it("merges a target's constant labels over the exporter's: the target's value wins, once", () => {
    expect(mergeConstLabels([['env', 'prod'], ['dc', 'a']], [['env', 'staging'], ['cluster', 'orders']])).to.deep.equal([['env', 'staging'], ['dc', 'a'], ['cluster', 'orders']]);
    expect(mergeConstLabels([], [['a', '1']])).to.deep.equal([['a', '1']]);
    expect(mergeConstLabels([['a', '1']], [])).to.deep.equal([['a', '1']]);
  });
});
