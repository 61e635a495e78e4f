import { expect } from 'chai';
import { loadDefinitions } from '../../../src/domain/collectors/definitions.js';
import { renderFamilies } from '../../../src/domain/collectors/exposition.js';
import { acceptsGzip, negotiateFormat } from '../../../src/domain/collectors/negotiation.js';
import { compileCollector, rowsToOutput } from '../../../src/domain/collectors/samples.js';
import { renderScrapeSelfStats } from '../../../src/domain/collectors/self-metrics.js';
import { ValidationError } from '../../../src/domain/errors.js';

const doc = {
  db_t: {
    query: 'SELECT',
    tags: ['cluster'],
    metrics: [
      { k: { usage: 'LABEL' } },
      { count: { usage: 'GAUGE', rename: 'connections', legacy_rename: 'count', description: 'Connections' } },
      { read_time: { usage: 'COUNTER', scale: 0.001, unit: 'seconds', description: 'Time reading "blocks"' } },
      { calls_total: { usage: 'COUNTER', description: 'Calls' } },
      { size: { usage: 'GAUGE', unit: 'bytes', description: 'Size' } },
    ],
  },
};
const rows = { columns: ['k', 'count', 'read_time', 'calls_total', 'size'], rows: [['a', '2', '1500', '7', '8192']] };

describe('metric names: conventions, legacy names, OpenMetrics', () => {
  it('conventions: counters end in _total (once), the unit ends the name, no _count on gauges', () => {
    const cc = compileCollector(loadDefinitions([{ source: 't.yml', doc }])[0]!);
    const text = renderFamilies(rowsToOutput(cc, rows, []).families);
    expect(text).to.contain('db_t_connections{k="a"} 2\n').and.contain('# TYPE db_t_read_time_seconds_total counter\ndb_t_read_time_seconds_total{k="a"} 1.5\n');
    expect(text).to.contain('db_t_calls_total{k="a"} 7\n').and.contain('db_t_size_bytes{k="a"} 8192\n').and.not.contain('_total_total');
  });

  it('legacy: the names as written before the conventions (the compatibility switch)', () => {
    const cc = compileCollector(loadDefinitions([{ source: 't.yml', doc }])[0]!, 'legacy');
    const text = renderFamilies(rowsToOutput(cc, rows, []).families);
    expect(text).to.contain('db_t_count{k="a"} 2\n').and.contain('# TYPE db_t_read_time counter\ndb_t_read_time{k="a"} 1.5\n').and.contain('db_t_calls_total{k="a"} 7\n').and.contain('db_t_size{k="a"} 8192\n');
  });

  it('OpenMetrics: counter families named without _total, UNIT lines, quotes escaped in HELP; sample lines unchanged', () => {
    const cc = compileCollector(loadDefinitions([{ source: 't.yml', doc }])[0]!);
    const om = renderFamilies(rowsToOutput(cc, rows, []).families, 'openmetrics');
    expect(om).to.contain('# HELP db_t_read_time_seconds Time reading \\"blocks\\"\n# TYPE db_t_read_time_seconds counter\n# UNIT db_t_read_time_seconds seconds\ndb_t_read_time_seconds_total{k="a"} 1.5\n');
    expect(om).to.contain('# TYPE db_t_calls counter\ndb_t_calls_total{k="a"} 7\n');
    const self = renderScrapeSelfStats('db', [], { lastScrapeDurationSeconds: 0, scrapesTotal: 1, scrapeRequestsTotal: 2, scrapeErrorsTotal: 0, lastScrapeTimestampSeconds: 1, collectors: [] }, 'openmetrics');
    expect(self).to.contain('# TYPE db_exporter_scrape counter\ndb_exporter_scrape_total 1\n');
  });

  it('a name that collides only under the legacy naming is refused too', () => {
    const clash = { db_u: { query: 'SELECT', metrics: [{ a: { usage: 'GAUGE', rename: 'x', legacy_rename: 'b' } }, { b: { usage: 'GAUGE' } }] } };
    expect(() => loadDefinitions([{ source: 't.yml', doc: clash }])).to.throw(ValidationError, /duplicate metric name db_u_b \(legacy naming\)/);
    expect(() => loadDefinitions([{ source: 't.yml', doc: { db_v: { query: 'SELECT', metrics: [{ a: { usage: 'GAUGE', unit: 'Seconds' } }] } } }])).to.throw(ValidationError, /invalid unit/);
    expect(() => loadDefinitions([{ source: 't.yml', doc: { db_w: { query: 'SELECT', metrics: [{ a: { usage: 'LABEL', unit: 'seconds' } }, { v: { usage: 'GAUGE' } }] } } }])).to.throw(ValidationError, /only value columns/);
  });

  it('negotiates OpenMetrics from Prometheus’ Accept header, text otherwise; gzip when accepted', () => {
    const prometheus = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
    expect(negotiateFormat(prometheus)).to.deep.equal({ format: 'openmetrics', contentType: 'application/openmetrics-text; version=1.0.0; charset=utf-8' });
    expect(negotiateFormat('application/openmetrics-text;version=0.0.1').contentType).to.contain('version=0.0.1');
    expect(negotiateFormat(prometheus, false).format).to.equal('text');
    expect(negotiateFormat('text/plain;version=0.0.4').format).to.equal('text');
    expect(negotiateFormat(undefined).format).to.equal('text');
    expect(negotiateFormat('text/plain;q=1,application/openmetrics-text;q=0.5').format).to.equal('text');
    expect(negotiateFormat('application/openmetrics-text;version=2.0.0').format).to.equal('text');
    expect(acceptsGzip('gzip, deflate')).to.equal(true);
    expect(acceptsGzip('br;q=1, *;q=0.5')).to.equal(true);
    expect(acceptsGzip('gzip;q=0, *')).to.equal(false);
    expect(acceptsGzip('identity')).to.equal(false);
    expect(acceptsGzip(undefined)).to.equal(false);
  });
});
