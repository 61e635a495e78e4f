import { expect } from 'chai';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLocalConfig, LocalConfigError } from '../../../../src/app/agent/local-config.js';
import { aliasBomb, CaseLog, describeBytes, fuzzCases, fuzzSeed, inPool, Random, runNode, STACK_TRACE, type ProcessRun } from '../../../support/config-fuzz.js';
import { nodeFileCase } from '../../../unit/app/agent/local-config-fuzz-cases.js';
import { WARDEN_BIN } from './agent-binary.js';

/**
 * The agent's configuration fuzz cases (test/unit/app/agent/local-config-fuzz.test.ts) through
 * the real command, on a sample: `warden --validate-config FILE` (and `warden -c FILE` for the
 * invalid ones, which must not start) with the case's environment. What the loader decides in
 * process is what the command says: an invalid file exits 1 (2 at start) with every problem
 * listed and no stack trace; a valid one exits 0 on this host (fake PostgreSQL programs), or 1
 * with only the host's own problems.
 *
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha --timeout 120000 test/integration/app/agent/validate-config-fuzz.test.ts
 */

const SEED = fuzzSeed();
const CASES = fuzzCases(40);
/** Keys the host checks of --validate-config name (files, directories, programs). */
const HOST_KEYS = /^(db\.(bin_dir|data_dir|log_dir)|log\.file|restapi\.(certfile|keyfile|keyfile_password|cafile)|etcd3\.(cacert|cert|key))$/;

describe(`warden --validate-config fuzz (seed ${SEED})`, function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-validate-fuzz-'));
    // Run as root, the check runs `postgres -V` as the postgres user: it must reach the programs.
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'data'));
    for (const p of ['postgres', 'pg_ctl', 'initdb', 'pg_basebackup', 'pg_controldata', 'pg_rewind']) writeFileSync(join(dir, 'bin', p), '#!/bin/sh\necho "postgres (PostgreSQL) 15.18"\n', { mode: 0o755 });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('an alias bomb and an alias without its anchor: exit 1 (2 at start) with the problem listed (a stack trace from the configuration process, then "cannot start")', async () => {
    const file = join(dir, 'bomb.yml');
    writeFileSync(file, `scope: demo\n${aliasBomb(10, 9)}`, { mode: 0o600 });
    const env = { PATH: process.env['PATH'] ?? '', HOME: dir };
    for (const [args, code] of [[['--validate-config', file], 1], [['-c', file], 2]] as const) {
      const run = await runNode([WARDEN_BIN, ...args], env, 30_000);
      expect(run.code, run.stderr).to.equal(code);
      expect(run.stderr).to.match(/^warden: invalid configuration .*bomb\.yml.*:\n {2}- its aliases expand to too much data/);
      expect(run.stderr).not.to.match(STACK_TRACE);
    }
    writeFileSync(file, 'scope: demo\nname: *nope\n', { mode: 0o600 });
    const run = await runNode([WARDEN_BIN, '--validate-config', file], env, 30_000);
    expect(run.code, run.stderr).to.equal(1);
    expect(run.stderr).to.contain('  - line 2, column 7: alias *nope has no anchor &nope before it');
    expect(run.stderr).not.to.match(STACK_TRACE);
  });

  it(`${CASES} generated node files: exit code and problems as the loader says, no stack trace`, async () => {
    const rng = new Random(SEED);
    const log = new CaseLog('warden --validate-config fuzz', SEED, 'npx mocha --timeout 120000 test/integration/app/agent/validate-config-fuzz.test.ts');
    const cases = Array.from({ length: CASES }, (_, i) => ({ i, c: nodeFileCase(rng, dir), start: rng.chance(0.3) }));
    let invalid = 0;
    await inPool(
      cases.map(({ i, c, start }) => async () => {
        // A process environment cannot carry NUL (the unit fuzz gives the loader those cases).
        if (Object.values(c.env).some((v) => v.includes('\u0000'))) return;
        const file = join(dir, `node-${i}.yml`);
        writeFileSync(file, c.bytes, { mode: 0o600 });
        let verdict: LocalConfigError | null = null;
        try {
          await loadLocalConfig(file, c.env);
        } catch (e) {
          if (!(e instanceof LocalConfigError)) {
            log.add('threw', `the loader threw ${String((e as Error)?.stack).slice(0, 300)}: case ${i}`);
            return;
          }
          verdict = e;
        }
        const env = { PATH: process.env['PATH'] ?? '', HOME: dir, ...c.env };
        // `warden -c` of a valid file would start the agent: only invalid ones are started.
        const asStart = start && verdict !== null;
        const run: ProcessRun = await runNode([WARDEN_BIN, ...(asStart ? ['-c', file] : ['--validate-config', file])], env, 30_000);
        const what = () => `case ${i} (${asStart ? 'warden -c' : 'warden --validate-config'}): ${c.notes.join('; ')}${Object.keys(c.env).length ? ` env ${JSON.stringify(c.env)}` : ''}\n    file: ${describeBytes(c.bytes)}\n    exit ${run.code}${run.signal ? ` (${run.signal})` : ''}, stdout ${JSON.stringify(run.stdout.slice(0, 200))}, stderr ${JSON.stringify(run.stderr.slice(0, 800))}`;
        if (run.timedOut) return log.add('hang', `did not exit within 30 s: ${what()}`);
        if (STACK_TRACE.test(run.stdout) || STACK_TRACE.test(run.stderr)) log.add('stack', `a stack trace or Node's words: ${what()}`);
        if (verdict !== null) {
          invalid++;
          const expected = asStart ? 2 : 1;
          if (run.code !== expected) log.add(`code:${run.code}`, `exit ${run.code}, expected ${expected}: ${what()}`);
          if (!run.stderr.startsWith('warden: invalid configuration')) log.add('said', `the problems are not introduced as such: ${what()}`);
          // Every problem the loader found is listed, each on its own line.
          const missing = verdict.problems.filter((p) => !run.stderr.includes(`  - ${p.path ? `${p.path}: ` : ''}${p.message.split('\n')[0]}`));
          if (missing.length) log.add('unlisted', `${missing.length} problem(s) not listed, the first: ${JSON.stringify(missing[0]).slice(0, 200)}: ${what()}`);
        } else if (run.code !== 0) {
          // Valid as a file: only what this host lacks may be said.
          const problems = [...run.stderr.matchAll(/^ {2}- ([^:]+):/gm)].map((m) => m[1]!);
          if (run.code !== 1 || problems.length === 0 || !problems.every((p) => HOST_KEYS.test(p))) log.add(`valid:${run.code}`, `a valid file gave exit ${run.code}: ${what()}`);
        } else if (!/ is valid\n$/.test(run.stderr)) log.add('valid-said', `a valid file is not said to be: ${what()}`);
      }),
      6,
    );
    expect(log.empty, log.report()).to.equal(true);
    expect(invalid, 'invalid files in the sample').to.be.greaterThan(CASES / 4);
  });
});
