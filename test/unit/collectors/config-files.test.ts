import { expect } from 'chai';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLED_COLLECTORS_DIR, loadCollectorFiles } from '../../../src/app/exporter/config-files.js';
import { ValidationError } from '../../../src/domain/errors.js';

const A = 'db_a:\n  query: SELECT 1 AS v\n  metrics:\n    - v: {usage: GAUGE}\n';

async function problems(path: string): Promise<string[]> {
  try {
    await loadCollectorFiles(path);
  } catch (e) {
    if (e instanceof ValidationError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  return [];
}

describe('exporter: collector config files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-collectors-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('loads one file', async () => {
    writeFileSync(join(dir, 'one.yml'), A);
    const l = await loadCollectorFiles(join(dir, 'one.yml'));
    expect(l.collectors.map((c) => c.key)).to.deep.equal(['db_a']);
    expect(l.files).to.deep.equal([join(dir, 'one.yml')]);
  });

  it('loads a folder of *.yml in lexical order, later files overriding earlier collectors', async () => {
    const d = join(dir, 'folder');
    mkdirSync(d);
    writeFileSync(join(d, '20-b.yml'), 'db_a:\n  query: SELECT 2 AS v\n  ttl: 1m\n  metrics:\n    - v: {usage: GAUGE}\ndb_b:\n  query: SELECT 3 AS w\n  metrics:\n    - w: {usage: COUNTER}\n');
    writeFileSync(join(d, '10-a.yml'), A);
    writeFileSync(join(d, 'notes.txt'), 'ignored');
    const l = await loadCollectorFiles(d);
    expect(l.files.map((f) => f.slice(d.length + 1))).to.deep.equal(['10-a.yml', '20-b.yml']);
    expect(l.collectors.map((c) => [c.key, c.query, c.ttlMs])).to.deep.equal([
      ['db_a', 'SELECT 2 AS v', 60_000],
      ['db_b', 'SELECT 3 AS w', 10_000],
    ]);
  });

  it('names the file and line of a YAML syntax error, and duplicate keys', async () => {
    writeFileSync(join(dir, 'broken.yml'), 'db_a:\n  query: [unclosed\n');
    const p = await problems(join(dir, 'broken.yml'));
    expect(p[0]).to.match(new RegExp(`^${join(dir, 'broken.yml')}:\\d+:\\d+: `));
    writeFileSync(join(dir, 'dup.yml'), `${A}${A}`);
    expect((await problems(join(dir, 'dup.yml')))[0]).to.match(/Map keys must be unique/);
  });

  it('collects problems from every file before failing', async () => {
    const d = join(dir, 'bad');
    mkdirSync(d);
    writeFileSync(join(d, 'a.yml'), 'db_a:\n  metrics:\n    - v: {usage: GAUGE}\n');
    writeFileSync(join(d, 'b.yml'), 'db_b:\n  query: SELECT 1\n  ttl: soon\n  metrics:\n    - v: {usage: GAUGE}\n');
    expect(await problems(d)).to.deep.equal([
      `db_a.query: is required [${join(d, 'a.yml')}]`,
      `db_b.ttl: invalid duration "soon" (expected e.g. 10s, 100ms, 1m or a number of seconds) [${join(d, 'b.yml')}]`,
    ]);
  });

  it('refuses a missing path and a folder without YAML files', async () => {
    expect((await problems(join(dir, 'nope')))[0]).to.match(/cannot read collector config/);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    expect(await problems(empty)).to.deep.equal([`${empty}: no *.yml file in this folder`]);
  });

  it('the bundled set is the collectors/ folder at the package root', () => {
    expect(BUNDLED_COLLECTORS_DIR).to.match(/\/collectors$/);
  });
});
