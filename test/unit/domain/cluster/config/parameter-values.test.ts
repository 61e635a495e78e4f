import { expect } from 'chai';
import { validateConfig } from '../../../../../src/domain/cluster/config/config.js';
import { parameterValueProblem } from '../../../../../src/domain/cluster/config/parameter-values.js';

/** The problems validateConfig finds in these db.parameters, by name. */
function problems(parameters: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(validateConfig({ db: { parameters } }).map((p) => [p.path.replace('db.parameters.', ''), p.message]));
}

describe('db.parameters values: what PostgreSQL 13-18 would refuse in postgresql.conf is refused before it is written', () => {
  it('refuses the values an operator typo leaves, with what was expected', () => {
    const found = problems({ max_connections: -5, shared_buffers: 'lots', fsync: 'maybe', foo_bar: 1, wal_level: 'bogus', work_mem: '4XB', block_size: 4096 });
    expect(Object.keys(found)).to.deep.equal(['max_connections', 'shared_buffers', 'fsync', 'foo_bar', 'wal_level', 'work_mem', 'block_size']);
    expect(found['max_connections']).to.equal('expected an integer from 1 to 262143, got -5');
    expect(found['shared_buffers']).to.match(/^expected an integer from 16 to \d+ \(in units of 8kB\), with a unit \(B, kB, MB, GB, TB\) or without, got "lots"$/);
    expect(found['fsync']).to.equal('expected on or off (true/false, yes/no, 1/0), got "maybe"');
    expect(found['foo_bar']).to.match(/^unknown parameter: PostgreSQL 13-18 has no setting "foo_bar"/);
    expect(found['wal_level']).to.equal('expected one of minimal, replica, logical, got "bogus"');
    expect(found['block_size']).to.match(/cannot be set: PostgreSQL fixes it/);
  });

  it('accepts what PostgreSQL accepts: units, booleans in every spelling, hidden aliases, any case, a module own parameter', () => {
    expect(
      problems({
        shared_buffers: '128MB',
        work_mem: 4096,
        maintenance_work_mem: '1GB',
        checkpoint_timeout: '15min',
        vacuum_cost_delay: '2ms',
        random_page_cost: 1.1,
        fsync: false,
        hot_standby_feedback: 'yes',
        wal_level: 'hot_standby',
        synchronous_commit: 'true',
        huge_pages: 'try',
        DateStyle: 'ISO, MDY',
        log_min_duration_statement: -1,
        max_wal_size: '2GB',
        effective_cache_size: '4GB',
        'auto_explain.log_min_duration': '1s',
        log_line_prefix: '%m [%p] ',
      }),
    ).to.deep.equal({});
  });

  it('ranges are checked in the parameter own unit after converting, as PostgreSQL rounds', () => {
    expect(parameterValueProblem('shared_buffers', '64kB')).to.match(/^expected/);
    expect(parameterValueProblem('shared_buffers', '128kB')).to.equal(null);
    expect(parameterValueProblem('checkpoint_timeout', '10s')).to.match(/^expected/);
    expect(parameterValueProblem('checkpoint_timeout', '1h')).to.equal(null);
    expect(parameterValueProblem('checkpoint_timeout', '1GB')).to.match(/^expected/);
    expect(parameterValueProblem('max_connections', '100MB')).to.match(/^expected/);
  });
});
