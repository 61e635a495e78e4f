import { expect } from 'chai';
import { loadDefinitions } from '../../../src/domain/collectors/definitions.js';
import { mergeFamilies, renderFamilies } from '../../../src/domain/collectors/exposition.js';
import { CollectorDataError, compileCollector, rowsToOutput } from '../../../src/domain/collectors/samples.js';
import { parseExposition } from './exposition-parser.js';

function compile(raw: Record<string, unknown>) {
  return compileCollector(loadDefinitions([{ source: 't.yml', doc: { db_t: { query: 'SELECT', ...raw } } }])[0]!);
}

describe('collectors: rows to samples', () => {
  it('names metrics <name>_<column or rename> (counters with _total), labels from LABEL columns, types from usage', () => {
    const cc = compile({
      name: 'db_database',
      desc: 'Per-database statistics',
      metrics: [
        { datname: { usage: 'LABEL' } },
        { xact_commit: { usage: 'COUNTER', description: 'Transactions committed' } },
        { xact_rollback: { usage: 'COUNTER', rename: 'rollbacks' } },
        { numbackends: { usage: 'GAUGE' } },
        { oid: { usage: 'DISCARD' } },
      ],
    });
    const out = rowsToOutput(cc, { columns: ['datname', 'xact_commit', 'xact_rollback', 'numbackends', 'oid', 'extra'], rows: [['postgres', '12', '3', '1', '5', 'x']] }, []);
    const text = renderFamilies(out.families);
    expect(text).to.equal(
      [
        '# HELP db_database_xact_commit_total Transactions committed',
        '# TYPE db_database_xact_commit_total counter',
        'db_database_xact_commit_total{datname="postgres"} 12',
        '# HELP db_database_rollbacks_total Per-database statistics (xact_rollback)',
        '# TYPE db_database_rollbacks_total counter',
        'db_database_rollbacks_total{datname="postgres"} 3',
        '# HELP db_database_numbackends Per-database statistics (numbackends)',
        '# TYPE db_database_numbackends gauge',
        'db_database_numbackends{datname="postgres"} 1',
        '',
      ].join('\n'),
    );
    expect(out.samples).to.equal(3);
    parseExposition(text);
  });

  it('applies scale, uses default for NULL, leaves a NULL without default out', () => {
    const cc = compile({ metrics: [{ k: { usage: 'LABEL' } }, { ms: { usage: 'GAUGE', scale: 0.001 } }, { d: { usage: 'GAUGE', default: 7 } }, { n: { usage: 'GAUGE' } }] });
    const out = rowsToOutput(cc, { columns: ['k', 'ms', 'd', 'n'], rows: [['a', '1500', null, null], ['b', null, '2', '3']] }, []);
    const text = renderFamilies(out.families);
    expect(text).to.contain('db_t_ms{k="a"} 1.5\n').and.contain('db_t_d{k="a"} 7\n').and.contain('db_t_d{k="b"} 2\n').and.contain('db_t_n{k="b"} 3\n');
    expect(text).not.to.contain('db_t_ms{k="b"}');
    expect(text).not.to.contain('db_t_n{k="a"}');
    expect(out.samples).to.equal(4);
  });

  it('reads booleans, Infinity and NaN; a NULL label becomes empty', () => {
    const cc = compile({ metrics: [{ k: { usage: 'LABEL' } }, { v: { usage: 'GAUGE' } }] });
    const out = rowsToOutput(cc, { columns: ['k', 'v'], rows: [['t', 't'], ['f', 'f'], ['i', 'Infinity'], ['m', '-Infinity'], ['n', 'NaN'], [null, '1e+21']] }, []);
    const text = renderFamilies(out.families);
    for (const line of ['db_t_v{k="t"} 1', 'db_t_v{k="f"} 0', 'db_t_v{k="i"} +Inf', 'db_t_v{k="m"} -Inf', 'db_t_v{k="n"} NaN', 'db_t_v{k=""} 1e+21']) {
      expect(text).to.contain(`${line}\n`);
    }
    parseExposition(text);
  });

  it('escapes label values and HELP text', () => {
    const cc = compile({ desc: 'a \\ b\nc', metrics: [{ k: { usage: 'LABEL' } }, { v: { usage: 'GAUGE' } }] });
    const text = renderFamilies(rowsToOutput(cc, { columns: ['k', 'v'], rows: [['say "hi"\\\n', '1']] }, []).families);
    expect(text).to.contain('# HELP db_t_v a \\\\ b\\nc (v)\n');
    expect(text).to.contain('db_t_v{k="say \\"hi\\"\\\\\\n"} 1\n');
    const parsed = parseExposition(text);
    expect(parsed.get('db_t_v')!.samples[0]!.labels['k']).to.equal('say "hi"\\\n');
  });

  it('adds extra labels (datname, const labels) unless the collector sets the same label', () => {
    const cc = compile({ metrics: [{ datname: { usage: 'LABEL' } }, { v: { usage: 'GAUGE' } }] });
    const text = renderFamilies(rowsToOutput(cc, { columns: ['datname', 'v'], rows: [['app', '1']] }, [['datname', 'postgres'], ['env', 'prod']]).families);
    expect(text).to.contain('db_t_v{datname="app",env="prod"} 1\n');
    const bare = compile({ metrics: [{ v: { usage: 'GAUGE' } }] });
    expect(renderFamilies(rowsToOutput(bare, { columns: ['v'], rows: [['2']] }, [['env', 'prod']]).families)).to.contain('db_t_v{env="prod"} 2\n');
    expect(renderFamilies(rowsToOutput(bare, { columns: ['v'], rows: [['2']] }, []).families)).to.contain('\ndb_t_v 2\n');
  });

  it('drops rows whose labels repeat an earlier row (no duplicate series) and counts them', () => {
    const cc = compile({ metrics: [{ k: { usage: 'LABEL' } }, { v: { usage: 'GAUGE' } }] });
    const out = rowsToOutput(cc, { columns: ['k', 'v'], rows: [['a', '1'], ['a', '2'], ['b', '3']] }, []);
    expect(out.duplicates).to.equal(1);
    const text = renderFamilies(out.families);
    expect(text).to.contain('db_t_v{k="a"} 1\n').and.not.contain('db_t_v{k="a"} 2');
    parseExposition(text);
  });

  it('renders HISTOGRAM columns as cumulative buckets with +Inf, _sum and _count', () => {
    const cc = compile({ metrics: [{ k: { usage: 'LABEL' } }, { lat: { usage: 'HISTOGRAM', bucket: [0.1, 1], scale: 0.001, description: 'Latency' } }] });
    const out = rowsToOutput(cc, { columns: ['k', 'lat', 'lat_sum', 'lat_count'], rows: [['a', '{2,5}', '4000', '6']] }, []);
    const text = renderFamilies(out.families);
    expect(text).to.equal(
      [
        '# HELP db_t_lat Latency',
        '# TYPE db_t_lat histogram',
        'db_t_lat_bucket{k="a",le="0.1"} 2',
        'db_t_lat_bucket{k="a",le="1"} 5',
        'db_t_lat_bucket{k="a",le="+Inf"} 6',
        'db_t_lat_sum{k="a"} 4',
        'db_t_lat_count{k="a"} 6',
        '',
      ].join('\n'),
    );
    expect(out.samples).to.equal(5);
    parseExposition(text);
    const noCount = rowsToOutput(cc, { columns: ['k', 'lat'], rows: [['a', '{1,3}']] }, []);
    expect(renderFamilies(noCount.families)).to.contain('db_t_lat_bucket{k="a",le="+Inf"} 3\n').and.contain('db_t_lat_count{k="a"} 3\n').and.not.contain('_sum');
  });

  it('fails with a typed error naming the collector and column when the result does not fit', () => {
    const cc = compile({ metrics: [{ k: { usage: 'LABEL' } }, { v: { usage: 'GAUGE' } }, { h: { usage: 'HISTOGRAM', bucket: [1, 2] } }] });
    expect(() => rowsToOutput(cc, { columns: ['k', 'h'], rows: [] }, [])).to.throw(CollectorDataError, 'collector db_t: column v is not in the query result (got k, h)');
    expect(() => rowsToOutput(cc, { columns: ['k', 'v', 'h'], rows: [['a', 'abc', null]] }, [])).to.throw(CollectorDataError, 'column v has non-numeric value "abc"');
    expect(() => rowsToOutput(cc, { columns: ['k', 'v', 'h'], rows: [['a', '1', '{1}']] }, [])).to.throw(CollectorDataError, /column h must hold 2 \(or 3\) cumulative bucket counts/);
    // Counts that go down are not cumulative: a parser would refuse the whole scrape.
    expect(() => rowsToOutput(cc, { columns: ['k', 'v', 'h'], rows: [['a', '1', '{5,2}']] }, [])).to.throw(CollectorDataError, /never decreasing/);
    expect(() => rowsToOutput(cc, { columns: ['k', 'v', 'h'], rows: [['a', '1', '{1,2,1}']] }, [])).to.throw(CollectorDataError, /never decreasing/);
    try {
      rowsToOutput(cc, { columns: ['k', 'v', 'h'], rows: [['a', ' 1', null]] }, []);
      expect.fail('should throw');
    } catch (e) {
      expect((e as CollectorDataError).code).to.equal('collector_data');
    }
  });

  it('merges the outputs of one collector on several databases under one header per family', () => {
    const cc = compile({ metrics: [{ v: { usage: 'GAUGE' } }, { w: { usage: 'GAUGE' } }] });
    const a = rowsToOutput(cc, { columns: ['v', 'w'], rows: [['1', null]] }, [['datname', 'a']]);
    const b = rowsToOutput(cc, { columns: ['v', 'w'], rows: [['2', '3']] }, [['datname', 'b']]);
    const text = mergeFamilies([a.families, b.families]);
    const parsed = parseExposition(text);
    expect(parsed.get('db_t_v')!.samples.map((s) => s.labels['datname'])).to.deep.equal(['a', 'b']);
    expect(parsed.get('db_t_w')!.samples.map((s) => s.labels['datname'])).to.deep.equal(['b']);
    expect(text.match(/# TYPE db_t_v/g)).to.have.length(1);
  });
});
