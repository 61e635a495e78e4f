import { expect } from 'chai';
import YAML from 'yaml';
import { parseFormat, renderTable, type TableData } from '../../../../src/app/ctl/table-format.js';

const data: TableData = {
  title: 'Cluster: demo (42)',
  columns: [
    { key: 'Cluster', header: 'Cluster', machineOnly: true },
    { key: 'Name', header: 'Name' },
    { key: 'N', header: 'N', align: 'right' },
    { key: 'Flag', header: 'Flag' },
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

  it('json: one array of objects keyed by column key, blanks omitted, machine-only columns kept', () => {
    expect(JSON.parse(renderTable(data, 'json'))).to.deep.equal([
      { Cluster: 'demo', Name: 'alpha', N: 1, Flag: true },
      { Cluster: 'demo', Name: 'beta\tgamma', N: 12345 },
    ]);
  });

  it('yaml: the same rows as YAML, no footers', () => {
    const text = renderTable(data, 'yaml');
    expect(YAML.parse(text)).to.deep.equal(JSON.parse(renderTable(data, 'json')));
    expect(text).not.to.include('Maintenance');
  });

  it('tsv: header of keys, one line per row, tabs inside values replaced', () => {
    expect(renderTable(data, 'tsv').split('\n')).to.deep.equal(['Cluster\tName\tN\tFlag', 'demo\talpha\t1\ttrue', 'demo\tbeta gamma\t12345\t']);
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
