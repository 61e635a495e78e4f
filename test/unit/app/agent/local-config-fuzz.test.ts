import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeAnswer, encodeAnswer } from '../../../../src/app/agent/config-protocol.js';
import { effectiveConfigYaml } from '../../../../src/app/agent/local-config-checks.js';
import { loadLocalConfig, LocalConfigError, type LocalConfig } from '../../../../src/app/agent/local-config.js';
import { CaseLog, describeBytes, fuzzCases, fuzzSeed, LEAKED_OBJECT, measured, Random } from '../../../support/config-fuzz.js';
import { namesPath, nodeFileCase } from './local-config-fuzz-cases.js';

/**
 * Generative fuzzing of the agent's local configuration loader (the file as `warden` and
 * `warden --validate-config` read it, environment overrides included): node files made from
 * docs/configuration.md's full example by wrong kinds of values at every path, required keys
 * removed, unknown keys, odd scalars, numbers, sizes and durations, nulls, WARDEN_* overrides,
 * and at the YAML level duplicate keys, anchors, aliases and alias bombs, tags, deep nesting,
 * other top levels, empty files, garbage, invalid UTF-8, files of several MiB and of many keys.
 *
 * Checked on every case: the loader returns a configuration or throws a LocalConfigError with
 * at least one problem (never another error); every problem is a path and a message that says
 * something (no leaked object, not a page long); a file that cannot be valid is refused, and
 * when the change was at a path, a problem names it; each case takes less than a second; a
 * valid configuration prints (--print) and crosses to the agent (the configuration process's
 * answer) unchanged.
 *
 * The seed is fresh each run; a failure prints it and each failing case.
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha test/unit/app/agent/local-config-fuzz.test.ts
 * (WARDEN_FUZZ_CASES=<n> for a longer run).
 */

const SEED = fuzzSeed();
const CASES = fuzzCases(1500);
/** Each case's bound, in CPU time of this process (the unit tests run in parallel), and in time passed (a hang). */
const CASE_MS = 1000;
const CASE_WALL_MS = 5000;
/** The whole run's bound: the test stays within ~10 s (unless WARDEN_FUZZ_CASES asks for a longer run). */
const RUN_MS = process.env['WARDEN_FUZZ_CASES'] ? Infinity : 7000;

describe(`local configuration fuzz (seed ${SEED})`, function () {
  this.timeout(RUN_MS === Infinity ? 0 : 60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-config-fuzz-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${CASES} generated node files: a configuration or every problem, named, in less than ${CASE_MS} ms each`, async () => {
    const rng = new Random(SEED);
    const log = new CaseLog('local configuration fuzz', SEED, 'npx mocha test/unit/app/agent/local-config-fuzz.test.ts');
    const file = join(dir, 'node.yml');
    const started = Date.now();
    let refused = 0;
    let ran = 0;
    for (let i = 0; i < CASES && Date.now() - started < RUN_MS; i++, ran++) {
      const c = nodeFileCase(rng, dir);
      writeFileSync(file, c.bytes);
      const what = () => `case ${i}: ${c.notes.join('; ')}${Object.keys(c.env).length ? ` env ${JSON.stringify(c.env)}` : ''}\n    file: ${describeBytes(c.bytes)}`;
      const run = await measured(() => loadLocalConfig(file, c.env));
      const config: LocalConfig | null = run.threw ? null : run.value!;
      const error: unknown = run.threw ? run.error : null;
      if (run.cpuMs > CASE_MS || run.wallMs > CASE_WALL_MS) log.add(`slow:${c.notes[0]?.split(' ')[0]}`, `took ${Math.round(run.cpuMs)} ms of CPU, ${Math.round(run.wallMs)} ms in all: ${what()}`);
      if (error !== null) {
        if (!(error instanceof LocalConfigError)) {
          log.add(`threw:${(error as Error)?.constructor?.name}:${String((error as Error)?.message).slice(0, 40)}`, `threw ${String((error as Error)?.stack ?? error).slice(0, 600)}\n    ${what()}`);
          continue;
        }
        refused++;
        const problems = error.problems;
        if (problems.length === 0) log.add('no-problems', `a LocalConfigError without problems: ${what()}`);
        for (const p of problems) {
          if (typeof p.path !== 'string' || typeof p.message !== 'string' || p.message.trim() === '') log.add('empty-problem', `problem ${JSON.stringify(p)}: ${what()}`);
          else if (LEAKED_OBJECT.test(p.message)) log.add(`leak:${p.path.split('.')[0]}`, `problem ${JSON.stringify(p)}: ${what()}`);
          // A path is as long as the keys it names (a key of 2,000 characters is named in full); a message says its own words and describes values in short.
          else if (p.message.length > 1000 || p.path.length > 5000) log.add('long-problem', `problem of ${p.message.length} characters at a path of ${p.path.length}: ${JSON.stringify(p).slice(0, 300)}: ${what()}`);
        }
        if (error.message.length > 20_000) log.add('long-message', `the error says ${error.message.length} characters: ${what()}`);
        const missing = c.paths.filter((path) => !problems.some((p) => namesPath(p.path, path)));
        // Refused by the YAML reader (a key over 1,024 characters in flow style, say), the file's paths were not looked at: its lines are named instead.
        const atLines = problems.every((p) => /^line \d+, column \d+$/.test(p.path));
        if (c.paths.length > 0 && missing.length === c.paths.length && !atLines) log.add(`unnamed:${c.paths[0]}`, `no problem names ${c.paths.join(' or ')}; got ${JSON.stringify(problems.map((p) => p.path))}: ${what()}`);
        continue;
      }
      if (c.invalid) {
        log.add(`accepted:${c.notes[0]?.split(' ')[0]}`, `an invalid file was accepted: ${what()}`);
        continue;
      }
      try {
        effectiveConfigYaml(config!);
        // What the agent gets is what the configuration process read (compared as sent: -0 and 0 are one JSON number).
        const sent = encodeAnswer({ kind: 'start', configPath: file, config: config! });
        expect(encodeAnswer(decodeAnswer(sent))).to.equal(sent);
      } catch (e) {
        log.add(`valid-config:${String((e as Error).message).slice(0, 40)}`, `a valid configuration does not print or cross to the agent unchanged: ${String((e as Error).message).slice(0, 300)}: ${what()}`);
      }
    }
    expect(log.empty, log.report()).to.equal(true);
    // The generator must exercise both outcomes.
    expect(ran, 'cases run').to.be.greaterThan(50);
    expect(refused, 'refused files').to.be.greaterThan(ran / 4);
    expect(ran - refused, 'accepted files').to.be.greaterThan(0);
  });
});
