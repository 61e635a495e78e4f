import { expect } from 'chai';
import YAML from 'yaml';
import { parseFormat, renderTable, type TableData } from '../../../../src/app/ctl/table-format.js';

const data: TableData = {
  title: 'Cluster: demo (42)',
  columns: [
    { key: 'Cluster', header: 'Cluster', machineOnly: true },
    { key: 'Name', header: 'Name' },
    { key: 'N', header: 'N', align: 'right' },
    { key: 'Flag', header: 'Flag', pretty: (v) => (v === true ? '*' : '') },
    { key: 'Tags', header: 'Tags', optional: true },
  ],
  rows: [
    { Cluster: 'demo', Name: 'alpha', N: 1, Flag: true },
    { Cluster: 'demo', Name: 'beta\tgamma', N: 12345, Flag: null },
  ],
  footers: [' Maintenance mode: on'],
};

describe('ctl table-format', () => {
  it('pretty: ASCII table, title embedded in the top border, right-aligned numbers, * for true, footers below', () => {
    const lines = renderTable(data, 'pretty').split('\n');
    expect(lines[0]).to.equal('+ Cluster: demo (42) +------+');
    expect(lines.slice(1, 6)).to.deep.equal([
      '| Name       |     N | Flag |',
      '+------------+-------+------+',
      '| alpha      |     1 | *    |',
      '| beta gamma | 12345 |      |',
      '+------------+-------+------+',
    ]);
    expect(lines.at(-1)).to.equal(' Maintenance mode: on');
    expect(lines[0]!.length).to.equal(lines[1]!.length);
  });

  it('pretty: a title wider than the table goes on its own line', () => {
    const out = renderTable({ title: 'Cluster: a-very-long-cluster-name (7300000000000000001)', columns: [{ key: 'A', header: 'A' }], rows: [{ A: 'x' }] }, 'pretty');
    expect(out.split('\n')[0]).to.equal('Cluster: a-very-long-cluster-name (7300000000000000001)');
    expect(out.split('\n')[1]).to.equal('+---+');
  });

  it('json: one array of objects keyed by column key; every column present, nulls as null, machine-only and optional columns kept', () => {
    expect(JSON.parse(renderTable(data, 'json'))).to.deep.equal([
      { Cluster: 'demo', Name: 'alpha', N: 1, Flag: true, Tags: null },
      { Cluster: 'demo', Name: 'beta\tgamma', N: 12345, Flag: null, Tags: null },
    ]);
  });

  it('lists and objects stay lists and objects in json/yaml; tsv writes them as JSON; pretty shows an optional column only when a row has a value', () => {
    const rich: TableData = { columns: [{ key: 'A', header: 'A' }, { key: 'Tags', header: 'Tags', optional: true }], rows: [{ A: [1, null], Tags: { nofailover: true } }, { A: null, Tags: {} }] };
    expect(JSON.parse(renderTable(rich, 'json'))).to.deep.equal([{ A: [1, null], Tags: { nofailover: true } }, { A: null, Tags: {} }]);
    expect(YAML.parse(renderTable(rich, 'yaml'))).to.deep.equal([{ A: [1, null], Tags: { nofailover: true } }, { A: null, Tags: {} }]);
    expect(renderTable(rich, 'tsv').split('\n')).to.deep.equal(['A\tTags', '[1,null]\t{"nofailover":true}', '\t{}']);
    expect(renderTable(rich, 'pretty').split('\n')[1]).to.equal('| A        | Tags                |');
    const bare: TableData = { columns: rich.columns, rows: [{ A: 'x', Tags: {} }] };
    expect(renderTable(bare, 'pretty').split('\n')[1]).to.equal('| A |');
    expect(renderTable(bare, 'pretty', { allColumns: true }).split('\n')[1]).to.equal('| A | Tags |');
  });

  it('yaml: the same rows as YAML, no footers', () => {
    const text = renderTable(data, 'yaml');
    expect(YAML.parse(text)).to.deep.equal(JSON.parse(renderTable(data, 'json')));
    expect(text).not.to.include('Maintenance');
  });

  it('tsv: header of keys, one line per row, tabs inside values replaced; another delimiter on request', () => {
    expect(renderTable(data, 'tsv').split('\n')).to.deep.equal(['Cluster\tName\tN\tFlag\tTags', 'demo\talpha\t1\ttrue\t', 'demo\tbeta gamma\t12345\t\t']);
    expect(renderTable(data, 'tsv', { delimiter: ';' }).split('\n')[1]).to.equal('demo;alpha;1;true;');
  });

  it('an empty table renders in every format', () => {
    const empty: TableData = { columns: [{ key: 'A', header: 'A' }], rows: [] };
    expect(renderTable(empty, 'pretty')).to.equal('+---+\n| A |\n+---+');
    expect(renderTable(empty, 'json')).to.equal('[]');
    expect(renderTable(empty, 'yaml')).to.equal('[]');
    expect(renderTable(empty, 'tsv')).to.equal('A');
  });

  it('parseFormat accepts the four formats and rejects others with a clear error', () => {
    expect(parseFormat(undefined)).to.equal('pretty');
    expect(parseFormat('tsv')).to.equal('tsv');
    expect(() => parseFormat('xml')).to.throw(/--format must be one of pretty, json, yaml, tsv; got xml/);
  });
});
