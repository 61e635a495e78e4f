import { expect } from 'chai';
import { loadDefinitions } from '../../../src/domain/collectors/definitions.js';
import { planCollectors, versionRangeText, type PlanInput } from '../../../src/domain/collectors/select.js';

const metrics = [{ v: { usage: 'GAUGE' } }];
function defs(doc: Record<string, Record<string, unknown>>) {
  return loadDefinitions([{ source: 't.yml', doc: Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, { query: `SELECT '${k}'`, metrics, ...v }])) }]);
}
const input = (over: Partial<PlanInput> = {}): PlanInput => ({
  server: { version: 150004, role: 'primary' },
  main: { name: 'postgres', extensions: new Set(['plpgsql']) },
  others: [],
  exporterTags: new Set(),
  ...over,
});
function statuses(plan: ReturnType<typeof planCollectors>) {
  return Object.fromEntries(plan.collectors.map((c) => [c.def.key, c.status.active ? c.status.label : `Inactive (${c.status.reason})`]));
}

describe('collectors: selection (which collectors run where)', () => {
  it('version range: min inclusive, max exclusive, open ends', () => {
    const d = defs({ db_a: { min_version: 150004 }, db_b: { max_version: 150004 }, db_c: { min_version: 130000, max_version: 170000 }, db_d: {} });
    expect(statuses(planCollectors(d, input()))).to.deep.equal({
      db_a: 'Active',
      db_b: 'Inactive (server version 150004 outside 0-150004)',
      db_c: 'Active',
      db_d: 'Active',
    });
    expect(versionRangeText(d[3]!)).to.equal('0-999999');
    expect(versionRangeText(d[2]!)).to.equal('130000-170000');
  });

  it('role tags: primary (master, leader) and replica (standby, slave)', () => {
    const d = defs({ db_p: { tags: ['primary'] }, db_m: { tags: ['master'] }, db_r: { tags: ['replica'] }, db_s: { tags: ['standby'] }, db_any: {} });
    expect(statuses(planCollectors(d, input()))).to.deep.equal({
      db_p: 'Active (primary only)',
      db_m: 'Active (primary only)',
      db_r: 'Inactive (replica only; server is a primary)',
      db_s: 'Inactive (replica only; server is a primary)',
      db_any: 'Active',
    });
    expect(statuses(planCollectors(d, input({ server: { version: 150004, role: 'replica' } })))).to.deep.equal({
      db_p: 'Inactive (primary only; server is a replica)',
      db_m: 'Inactive (primary only; server is a replica)',
      db_r: 'Active (replica only)',
      db_s: 'Active (replica only)',
      db_any: 'Active',
    });
  });

  it('skip, custom tags and not: tags against the exporter tags', () => {
    const d = defs({ db_skip: { skip: true }, db_big: { tags: ['big'] }, db_notbig: { tags: ['not:big'] } });
    expect(statuses(planCollectors(d, input()))).to.deep.equal({ db_skip: 'Inactive (skip)', db_big: 'Inactive (tag big not given to the exporter)', db_notbig: 'Active' });
    expect(statuses(planCollectors(d, input({ exporterTags: new Set(['big']) })))).to.deep.equal({ db_skip: 'Inactive (skip)', db_big: 'Active', db_notbig: 'Inactive (exporter has tag big)' });
  });

  it('cluster collectors run on the main database only; others on every monitored database', () => {
    const d = defs({ db_c: { tags: ['cluster'] }, db_t: {} });
    const plan = planCollectors(d, input({ others: [{ name: 'app', extensions: new Set() }, { name: 'b', extensions: new Set() }] }));
    expect(plan.databases).to.deep.equal(['postgres', 'app', 'b']);
    expect(plan.collectors[0]).to.include({ clusterLevel: true });
    expect(plan.collectors[0]!.targets).to.deep.equal(['postgres']);
    expect(plan.collectors[1]!.targets).to.deep.equal(['postgres', 'app', 'b']);
  });

  it('extension:<x> and dbname:<x> pick the databases that fit, or make the collector inactive', () => {
    const others = [{ name: 'app', extensions: new Set(['pg_stat_statements']) }];
    const d = defs({ db_ext: { tags: ['extension:pg_stat_statements'] }, db_extc: { tags: ['cluster', 'extension:pg_stat_statements'] }, db_app: { tags: ['dbname:app'] }, db_nodb: { tags: ['dbname:nope'] } });
    const plan = planCollectors(d, input({ others }));
    expect(plan.collectors.map((c) => c.targets)).to.deep.equal([['app'], [], ['app'], []]);
    expect(statuses(plan)).to.deep.equal({
      db_ext: 'Active',
      db_extc: 'Inactive (extension pg_stat_statements not installed)',
      db_app: 'Active',
      db_nodb: 'Inactive (database nope not monitored)',
    });
    expect(plan.active.map((c) => c.def.key)).to.deep.equal(['db_ext', 'db_app']);
  });
});
