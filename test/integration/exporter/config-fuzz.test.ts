import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCollectorFiles } from '../../../src/app/exporter/config-files.js';
import { parseExporterOptions } from '../../../src/app/exporter/options.js';
import { ValidationError, type Problem } from '../../../src/domain/errors.js';
import { aliasBomb, CaseLog, describeBytes, fuzzCases, fuzzSeed, inPool, Random, runNode, STACK_TRACE, type ProcessRun } from '../../support/config-fuzz.js';
import { collectorCase, optionsCase } from '../../unit/collectors/collector-fuzz-cases.js';

/**
 * The exporter's configuration fuzz cases (test/unit/collectors/collector-config-fuzz.test.ts)
 * through the real `warden-exporter --dry-run`, on a sample: generated collector files
 * (`--config`) and command lines with their environment. What the loader decides in process is
 * what the command does: refused, it exits 2 with every problem listed (one per line) and no
 * stack trace; accepted, it lists the collectors and exits 0.
 *
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha --timeout 120000 test/integration/exporter/config-fuzz.test.ts
 */

const BIN = fileURLToPath(new URL('../../../bin/warden-exporter.js', import.meta.url));
const SEED = fuzzSeed();
const CASES = fuzzCases(24);

/** How the command lists a problem. */
const listed = (p: Problem) => `  - ${p.path ? `${p.path}: ` : ''}${p.message}`;

describe(`warden-exporter --dry-run fuzz (seed ${SEED})`, function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-exporter-config-fuzz-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('an alias bomb, a circular alias, /dev/zero as the URL file, a header node:http refuses: exit 2 with the problems listed (two stack traces and exit 1, memory filled, a crash at the first request)', async () => {
    const env = { PATH: process.env['PATH'] ?? '', HOME: dir };
    const bomb = join(dir, 'bomb.yml');
    writeFileSync(bomb, `db_a:\n  query: SELECT 1 AS v\n  metrics:\n    - v: {usage: GAUGE}\n${aliasBomb(10, 9)}`);
    const loop = join(dir, 'loop.yml');
    writeFileSync(loop, 'db_a: &a\n  query: SELECT 1 AS v\n  metrics: [*a]\n');
    const web = join(dir, 'web.yml');
    writeFileSync(web, 'http_server_config:\n  headers: {"Bad Header": x}\n');
    for (const [args, extra, said] of [
      [['--config', bomb], {}, `  - ${bomb}: its aliases expand to too much data`],
      [['--config', loop], {}, `  - ${loop}:3:13: alias *a is inside the node its anchor names`],
      [[], { DB_EXPORTER_URL_FILE: '/dev/zero' }, '  - DB_EXPORTER_URL_FILE: cannot read /dev/zero: the file holds more than 64 KiB'],
      [['--web.config.file', web], {}, `  - ${web}.http_server_config.headers.Bad Header: invalid header name "Bad Header"`],
    ] as const) {
      const run = await runNode([BIN, '--dry-run', ...args], { ...env, ...extra }, 30_000);
      expect(run.code, run.stderr).to.equal(2);
      expect(run.stderr).to.contain(said);
      expect(run.stderr).not.to.match(STACK_TRACE);
    }
  });

  it(`${CASES} collector configurations and ${CASES} command lines: exit code and problems as the loader says, no stack trace`, async () => {
    const rng = new Random(SEED);
    const log = new CaseLog('warden-exporter --dry-run fuzz', SEED, 'npx mocha --timeout 120000 test/integration/exporter/config-fuzz.test.ts');
    const env = { PATH: process.env['PATH'] ?? '', HOME: dir };
    let refused = 0;
    const check = (what: () => string, run: ProcessRun, problems: readonly Problem[] | null) => {
      if (run.timedOut) return log.add('hang', `did not exit within 30 s: ${what()}`);
      if (STACK_TRACE.test(run.stdout) || STACK_TRACE.test(run.stderr)) log.add('stack', `a stack trace or Node's words: ${what()}`);
      if (problems !== null) {
        refused++;
        if (run.code !== 2) log.add(`code:${run.code}`, `exit ${run.code}, expected 2: ${what()}`);
        const missing = problems.filter((p) => !run.stderr.includes(listed(p)));
        if (missing.length) log.add('unlisted', `${missing.length} problem(s) not listed, the first: ${JSON.stringify(missing[0]).slice(0, 200)}: ${what()}`);
      } else if (run.code !== 0 || !/configuration OK\n$/.test(run.stdout)) log.add(`accepted:${run.code}`, `a configuration the loader accepts gave exit ${run.code}: ${what()}`);
    };
    const collectorJobs = Array.from({ length: CASES }, (_, i) => {
      const c = collectorCase(rng);
      return async () => {
        const folder = join(dir, `c${i}`);
        mkdirSync(folder);
        for (const f of c.files) writeFileSync(join(folder, f.name), f.bytes);
        const path = c.folder ? folder : join(folder, c.files[c.files.length - 1]!.name);
        let problems: readonly Problem[] | null = null;
        try {
          await loadCollectorFiles(path);
        } catch (e) {
          if (!(e instanceof ValidationError)) return log.add('threw', `the loader threw ${String((e as Error)?.stack).slice(0, 300)}: case ${i}`);
          problems = e.problems;
        }
        const run = await runNode([BIN, '--dry-run', '--config', path], env, 30_000);
        check(() => `collector case ${i}: ${c.notes.join('; ')}\n    file: ${describeBytes(c.files[c.files.length - 1]!.bytes)}\n    exit ${run.code}, stdout ${JSON.stringify(run.stdout.slice(-200))}, stderr ${JSON.stringify(run.stderr.slice(0, 800))}`, run, problems);
      };
    });
    const files = { missing: join(dir, 'missing-url-file'), dir, zero: '/dev/zero' };
    const optionJobs = Array.from({ length: CASES }, (_, i) => {
      const c = optionsCase(rng, files);
      return async () => {
        // A NUL cannot be passed to a process.
        if ([...c.argv, ...Object.values(c.env)].some((a) => a.includes('\u0000'))) return;
        let problems: readonly Problem[] | null = null;
        try {
          parseExporterOptions(c.argv, c.env, '0.0.0-test');
        } catch (e) {
          if (!(e instanceof ValidationError)) return log.add('threw', `the parser threw ${String((e as Error)?.stack).slice(0, 300)}: case ${i}`);
          problems = e.problems;
        }
        const run = await runNode([BIN, ...c.argv], { ...env, ...c.env }, 30_000);
        check(() => `options case ${i}: ${JSON.stringify(c.argv).slice(0, 400)} env ${JSON.stringify(c.env).slice(0, 200)}\n    exit ${run.code}, stdout ${JSON.stringify(run.stdout.slice(-200))}, stderr ${JSON.stringify(run.stderr.slice(0, 800))}`, run, problems);
      };
    });
    await inPool([...collectorJobs, ...optionJobs], 8);
    expect(log.empty, log.report()).to.equal(true);
    expect(refused, 'refused in the sample').to.be.greaterThan(CASES / 4);
  });
});
