import { expect } from 'chai';
import { loadDefinitions, parseDefinitionDocuments } from '../../../src/domain/collectors/definitions.js';
import { ValidationError } from '../../../src/domain/errors.js';

const ok = {
  query: 'SELECT datname, xact_commit, xact_rollback FROM pg_stat_database',
  metrics: [{ datname: { usage: 'LABEL' } }, { xact_commit: { usage: 'COUNTER', description: 'Transactions committed' } }, { xact_rollback: { usage: 'COUNTER', rename: 'rollbacks' } }],
};

function problemsOf(doc: unknown): string[] {
  return parseDefinitionDocuments([{ source: 'test.yml', doc }]).problems.map((p) => `${p.path}: ${p.message}`);
}

describe('collectors: definitions', () => {
  it('fills defaults: name from the key, ttl 10s, timeout 1s, no tags, not fatal', () => {
    const [def] = loadDefinitions([{ source: 'a.yml', doc: { db_stat: ok } }]);
    expect(def).to.include({ key: 'db_stat', name: 'db_stat', ttlMs: 10_000, timeoutMs: 1000, fatal: false, skip: false, source: 'a.yml' });
    expect(def!.tags).to.deep.equal([]);
    expect(def!.minVersion).to.equal(undefined);
    expect(def!.metrics.map((m) => m.column)).to.deep.equal(['datname', 'xact_commit', 'xact_rollback']);
    expect(def!.metrics[2]).to.deep.include({ usage: 'COUNTER', rename: 'rollbacks' });
  });

  it('reads every field of the spec example', () => {
    const [def] = loadDefinitions([
      {
        source: 'a.yml',
        doc: {
          db_stat_database: {
            ...ok,
            name: 'db_database',
            desc: 'Per-database statistics',
            ttl: '10s',
            timeout: '100ms',
            min_version: 100000,
            max_version: 180000,
            tags: ['cluster'],
            fatal: true,
            skip: false,
            predicate_queries: [{ name: 'has_db', predicate_query: 'SELECT true', ttl: '1m' }],
          },
        },
      },
    ]);
    expect(def).to.include({ name: 'db_database', desc: 'Per-database statistics', ttlMs: 10_000, timeoutMs: 100, minVersion: 100000, maxVersion: 180000, fatal: true });
    expect(def!.predicateQueries).to.deep.equal([{ name: 'has_db', query: 'SELECT true', ttlMs: 60_000 }]);
  });

  it('names the collector and field of an unknown field', () => {
    expect(problemsOf({ db_x: { ...ok, tll: '10s' } })).to.deep.equal(['db_x.tll: unknown field (expected one of name, desc, query, ttl, timeout, min_version, max_version, tags, fatal, skip, priority, predicate_queries, metrics) [test.yml]']);
    const nested = problemsOf({ db_x: { ...ok, metrics: [{ a: { usage: 'GAUGE', descr: 'x' } }] } });
    expect(nested).to.have.length(1);
    expect(nested[0]).to.match(/^db_x\.metrics\[0\]\.a\.descr: unknown field/);
  });

  it('reports a missing query and a missing metrics list', () => {
    expect(problemsOf({ db_x: { metrics: ok.metrics } })).to.deep.equal(['db_x.query: is required [test.yml]']);
    expect(problemsOf({ db_x: { query: 'SELECT 1' } })).to.deep.equal(['db_x.metrics: is required [test.yml]']);
  });

  it('reports a collector without any value column', () => {
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ a: { usage: 'LABEL' } }, { b: { usage: 'DISCARD' } }] } })).to.deep.equal([
      'db_x.metrics: no metric column: at least one column must be GAUGE, COUNTER or HISTOGRAM [test.yml]',
    ]);
  });

  it('reports an unknown usage with the allowed ones', () => {
    const p = problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ a: { usage: 'SUMMARY' } }] } });
    expect(p[0]).to.equal('db_x.metrics[0].a.usage: expected one of LABEL, GAUGE, COUNTER, HISTOGRAM, DISCARD, got "SUMMARY" [test.yml]');
  });

  it('reports bad durations, each with its field', () => {
    const p = problemsOf({ db_x: { ...ok, ttl: 'soon', timeout: '-5ms', predicate_queries: [{ name: 'p', predicate_query: 'SELECT true', ttl: '1y' }] } });
    expect(p).to.deep.equal([
      'db_x.ttl: invalid duration "soon" (expected e.g. 10s, 100ms, 1m or a number of seconds) [test.yml]',
      'db_x.timeout: invalid duration "-5ms" (expected e.g. 10s, 100ms, 1m or a number of seconds) [test.yml]',
      'db_x.predicate_queries[0].ttl: invalid duration "1y" (expected e.g. 10s, 100ms, 1m or a number of seconds) [test.yml]',
    ]);
    expect(problemsOf({ db_x: { ...ok, timeout: 0 } })).to.deep.equal(['db_x.timeout: timeout must be greater than 0 [test.yml]']);
  });

  it('reports invalid and duplicate names', () => {
    expect(problemsOf({ '1bad': ok })[0]).to.match(/^1bad: invalid collector name/);
    expect(problemsOf({ db_x: { ...ok, name: 'db-x' } })).to.deep.equal(['db_x.name: invalid metric prefix "db-x" [test.yml]']);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ 'a-b': { usage: 'GAUGE' } }] } })[0]).to.match(/invalid metric name "db_x_a-b"/);
    // An invalid prefix does not hide an invalid column part: both are listed.
    expect(problemsOf({ db_x: { query: 'SELECT 1', name: 'db-x', metrics: [{ v: { usage: 'COUNTER', legacy_rename: 'x.y' } }] } })).to.deep.equal([
      'db_x.name: invalid metric prefix "db-x" [test.yml]',
      'db_x.metrics[0].v: invalid metric name part "x.y" (legacy naming) [test.yml]',
    ]);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ a: { usage: 'GAUGE' } }, { b: { usage: 'GAUGE', rename: 'a' } }] } })[0]).to.equal(
      'db_x.metrics[1].b: duplicate metric name db_x_a (also from column a) [test.yml]',
    );
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ a: { usage: 'LABEL', rename: '__x' } }, { v: { usage: 'GAUGE' } }] } })[0]).to.match(/invalid label name "__x"/);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ a: { usage: 'LABEL' } }, { b: { usage: 'LABEL', rename: 'a' } }, { v: { usage: 'GAUGE' } }] } })[0]).to.match(/duplicate label name a/);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ a: { usage: 'GAUGE' } }, { a: { usage: 'COUNTER' } }] } })[0]).to.match(/column a is declared twice/);
  });

  it('reports a metrics entry that is not a single column mapping', () => {
    const p = problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ a: { usage: 'GAUGE' }, b: { usage: 'GAUGE' } }] } });
    expect(p[0]).to.match(/^db_x\.metrics\[0\]: each metrics entry maps exactly one column name/);
  });

  it('checks version ranges and tags', () => {
    expect(problemsOf({ db_x: { ...ok, min_version: 170000, max_version: 130000 } })).to.deep.equal([
      'db_x.max_version: max_version (exclusive) must be greater than min_version, got 170000-130000 [test.yml]',
    ]);
    expect(problemsOf({ db_x: { ...ok, min_version: '13' } })[0]).to.match(/^db_x\.min_version: expected integer/);
    expect(problemsOf({ db_x: { ...ok, tags: ['extension:'] } })).to.deep.equal(['db_x.tags[0]: tag "extension:" needs a name after "extension:" [test.yml]']);
    expect(problemsOf({ db_x: { ...ok, tags: ['role:primary'] } })[0]).to.match(/unknown tag prefix "role"/);
    expect(problemsOf({ db_x: { ...ok, tags: ['primary', 'standby'] } })).to.deep.equal(['db_x.tags: a collector cannot be both primary-only and replica-only [test.yml]']);
    expect(problemsOf({ db_x: { ...ok, tags: ['cluster', 'primary', 'extension:pg_stat_statements', 'dbname:app', 'not:small', 'big'] } })).to.deep.equal([]);
  });

  it("reads pg_exporter's collector files: max_version 0 (and min_version 0) is an open bound, priority is accepted and ignored", () => {
    const [open, both] = loadDefinitions([{ source: 'a.yml', doc: { db_open: { ...ok, min_version: 0, max_version: 0, priority: 10 }, db_both: { ...ok, name: 'db_both', min_version: 130000, max_version: 0 } } }]);
    expect(open!.minVersion).to.equal(undefined);
    expect(open!.maxVersion, 'no upper bound: it runs on every version').to.equal(undefined);
    expect(open).to.not.have.property('priority');
    expect(both).to.include({ minVersion: 130000 });
    expect(both!.maxVersion).to.equal(undefined);
    expect(problemsOf({ db_x: { ...ok, priority: 'high' } })[0]).to.match(/^db_x\.priority: expected integer/);
  });

  it('checks histogram buckets and value-only fields', () => {
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ h: { usage: 'HISTOGRAM' } }] } })[0]).to.match(/^db_x\.metrics\[0\]\.h\.bucket: a HISTOGRAM column needs bucket/);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ h: { usage: 'HISTOGRAM', bucket: [1, 1, 2] } }] } })[0]).to.match(/strictly ascending/);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ g: { usage: 'GAUGE', bucket: [1] } }] } })[0]).to.match(/only HISTOGRAM columns take bucket/);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ l: { usage: 'LABEL', scale: 2 } }, { g: { usage: 'GAUGE' } }] } })[0]).to.match(/only value columns .* take scale, this one is LABEL/);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ h: { usage: 'HISTOGRAM', bucket: [1] } }, { h_count: { usage: 'GAUGE' } }] } })[0]).to.match(/collides with the series of histogram db_x_h/);
    expect(problemsOf({ db_x: { query: 'SELECT 1', metrics: [{ le: { usage: 'LABEL' } }, { h: { usage: 'HISTOGRAM', bucket: [1] } }] } })[0]).to.match(/label name le is reserved/);
  });

  it('lists every problem of every collector, not just the first', () => {
    const p = problemsOf({ db_a: { ...ok, ttl: 'x', fatal: 'yes' }, db_b: { metrics: [] }, db_c: 'SELECT 1' });
    expect(p).to.have.length.greaterThanOrEqual(5);
    expect(p.some((x) => x.startsWith('db_a.ttl'))).to.equal(true);
    expect(p.some((x) => x.startsWith('db_a.fatal'))).to.equal(true);
    expect(p.some((x) => x.startsWith('db_b.query'))).to.equal(true);
    expect(p.some((x) => x.startsWith('db_b.metrics'))).to.equal(true);
    expect(p.some((x) => x.startsWith('db_c: expected a collector definition'))).to.equal(true);
  });

  it('a later document replaces an earlier collector of the same key, keeping its place', () => {
    const defs = loadDefinitions([
      { source: 'a.yml', doc: { db_a: ok, db_b: ok } },
      { source: 'b.yml', doc: { db_a: { ...ok, ttl: '1m' }, db_c: { ...ok, name: 'db_c' } } },
    ]);
    expect(defs.map((d) => d.key)).to.deep.equal(['db_a', 'db_b', 'db_c']);
    expect(defs[0]).to.include({ ttlMs: 60_000, source: 'b.yml' });
  });

  it('refuses two collectors producing the same metric on overlapping versions and roles', () => {
    const metrics = [{ v: { usage: 'GAUGE' } }];
    const clash = problemsOf({ db_a: { name: 'db_s', query: 'SELECT 1', metrics }, db_b: { name: 'db_s', query: 'SELECT 2', metrics, min_version: 160000 } });
    expect(clash).to.deep.equal(['db_b.metrics.v: metric db_s_v is also produced by collector db_a on overlapping versions and roles']);
    const disjoint = { db_a: { name: 'db_s', query: 'SELECT 1', metrics, max_version: 170000 }, db_b: { name: 'db_s', query: 'SELECT 2', metrics, min_version: 170000 } };
    expect(problemsOf(disjoint)).to.deep.equal([]);
    const roles = { db_a: { name: 'db_s', query: 'SELECT 1', metrics, tags: ['primary'] }, db_b: { name: 'db_s', query: 'SELECT 2', metrics, tags: ['replica'] } };
    expect(problemsOf(roles)).to.deep.equal([]);
  });

  it('loadDefinitions throws a ValidationError (invalid_collectors) with every problem, and refuses an empty config', () => {
    try {
      loadDefinitions([{ source: 'x.yml', doc: { db_a: { query: 'SELECT 1' }, db_b: { metrics: [] } } }]);
      expect.fail('should throw');
    } catch (e) {
      expect(e).to.be.instanceOf(ValidationError);
      expect((e as ValidationError).code).to.equal('invalid_collectors');
      expect((e as ValidationError).problems.length).to.be.greaterThanOrEqual(3);
    }
    expect(() => loadDefinitions([{ source: 'x.yml', doc: null }])).to.throw(ValidationError, /no collector defined/);
    expect(problemsOf(['a'])).to.deep.equal(['test.yml: expected a mapping of collector names to definitions, got ["a"]']);
  });
});
