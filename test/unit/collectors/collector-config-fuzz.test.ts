import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCollectorFiles, type LoadedCollectors } from '../../../src/app/exporter/config-files.js';
import { decodeConfig, encodeConfig } from '../../../src/app/exporter/config-protocol.js';
import { loadExporterFiles } from '../../../src/app/exporter/configure.js';
import { parseExporterOptions, type ExporterOptions } from '../../../src/app/exporter/options.js';
import { checkTelemetryPath } from '../../../src/app/exporter/run.js';
import { ValidationError, type Problem } from '../../../src/domain/errors.js';
import { CaseLog, describeBytes, fuzzCases, fuzzSeed, LEAKED_OBJECT, measured, namesPath, Random } from '../../support/config-fuzz.js';
import { collectorCase, optionsCase, webOrTargetsCase } from './collector-fuzz-cases.js';

/**
 * Generative fuzzing of what the exporter reads at start and on /reload: collector files (made
 * from the bundled ones: wrong kinds of values, unknown fields, bad metric and label names,
 * duplicate columns and metrics, bad usages, durations, versions and tags, SQL missing, and
 * the YAML-level mutations: duplicate keys, aliases and bombs, tags, nesting, garbage, invalid
 * UTF-8, sizes), web configuration and targets files, and command lines with their
 * environment (flags and values good and bad, unknown, repeated, missing values, unicode,
 * very long, files that cannot be read or never end).
 *
 * Checked on every case: the loader returns its result or throws a ValidationError with
 * problems (never another error); each problem has a path and a message that says something
 * short; what cannot be valid is refused, with a problem naming the place of the change;
 * less than a second each; a loaded configuration crosses to the serving process (the
 * configuration process's answer) unchanged.
 *
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha test/unit/collectors/collector-config-fuzz.test.ts
 */

const SEED = fuzzSeed();
const CASES = fuzzCases(800);
/** Each case's bound, in CPU time of this process (the unit tests run in parallel), and in time passed (a hang). */
const CASE_MS = 1000;
const CASE_WALL_MS = 5000;
const RUN_MS = process.env['WARDEN_FUZZ_CASES'] ? Infinity : 2500;
const REPLAY = 'npx mocha test/unit/collectors/collector-config-fuzz.test.ts';

/** Checks the problems of a refusal; returns false (and logs) when one says nothing useful. */
function checkProblems(log: CaseLog, problems: readonly Problem[], paths: readonly string[], what: () => string): void {
  if (problems.length === 0) log.add('no-problems', `a ValidationError without problems: ${what()}`);
  for (const p of problems) {
    if (typeof p.path !== 'string' || typeof p.message !== 'string' || p.message.trim() === '') log.add('empty-problem', `problem ${JSON.stringify(p)}: ${what()}`);
    else if (LEAKED_OBJECT.test(p.message)) log.add(`leak:${p.message.slice(0, 30)}`, `problem ${JSON.stringify(p).slice(0, 400)}: ${what()}`);
    else if (p.message.length > 1000) log.add('long-problem', `problem of ${p.message.length} characters: ${JSON.stringify(p).slice(0, 300)}: ${what()}`);
  }
  // Refused by the YAML reader, the file's paths were not looked at: its lines are named instead.
  const atLines = problems.every((p) => /(^|:)\d+:\d+$/.test(p.path));
  if (paths.length && !atLines && !paths.some((path) => problems.some((p) => namesPath(p.path, path) || p.path.startsWith(`${path}:`)))) {
    log.add(`unnamed:${paths[0]}`, `no problem names ${paths.join(' or ')}; got ${JSON.stringify(problems.map((p) => p.path)).slice(0, 400)}: ${what()}`);
  }
}

/** Paths of problems without the file names the loader puts around them. */
function relative(problems: readonly Problem[], dir: string): Problem[] {
  return problems.map((p) => ({ path: p.path.split(`${dir}/`).join(''), message: p.message.replace(/ \[[^\]]*\]$/, '') }));
}

describe(`exporter configuration fuzz (seed ${SEED})`, function () {
  this.timeout(RUN_MS === Infinity ? 0 : 30_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-exporter-fuzz-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${CASES} generated collector configurations: loaded, or every problem named, in less than ${CASE_MS} ms each`, async () => {
    const rng = new Random(SEED);
    const log = new CaseLog('collector configuration fuzz', SEED, REPLAY);
    const started = Date.now();
    let refused = 0;
    let ran = 0;
    for (let i = 0; i < CASES && Date.now() - started < RUN_MS; i++, ran++) {
      const c = collectorCase(rng);
      const folder = join(dir, `c${i}`);
      mkdirSync(folder);
      for (const f of c.files) writeFileSync(join(folder, f.name), f.bytes);
      const path = c.folder ? folder : join(folder, c.files[c.files.length - 1]!.name);
      const what = () => `case ${i}: ${c.notes.join('; ')}\n    file: ${describeBytes(c.files[c.files.length - 1]!.bytes)}`;
      const run = await measured(() => loadCollectorFiles(path));
      const loaded: LoadedCollectors | null = run.threw ? null : run.value!;
      const error: unknown = run.threw ? run.error : null;
      rmSync(folder, { recursive: true, force: true });
      if (run.cpuMs > CASE_MS || run.wallMs > CASE_WALL_MS) log.add(`slow:${c.notes[1]?.split(' ')[0]}`, `took ${Math.round(run.cpuMs)} ms of CPU, ${Math.round(run.wallMs)} ms in all: ${what()}`);
      if (error !== null) {
        if (!(error instanceof ValidationError)) {
          log.add(`threw:${(error as Error)?.constructor?.name}:${String((error as Error)?.message).slice(0, 40)}`, `threw ${String((error as Error)?.stack ?? error).slice(0, 600)}\n    ${what()}`);
          continue;
        }
        refused++;
        checkProblems(log, relative(error.problems, folder), c.paths, what);
        continue;
      }
      if (c.invalid) {
        log.add(`accepted:${c.notes[1]?.split(' ')[0]}`, `an invalid configuration was loaded: ${what()}`);
        continue;
      }
      try {
        const sent = encodeConfig({ kind: 'collectors', collectors: loaded! });
        expect(encodeConfig(decodeConfig(sent))).to.equal(sent);
      } catch (e) {
        log.add(`loaded:${String((e as Error).message).slice(0, 40)}`, `a loaded configuration does not cross to the exporter unchanged: ${String((e as Error).message).slice(0, 300)}: ${what()}`);
      }
    }
    expect(log.empty, log.report()).to.equal(true);
    expect(ran, 'cases run').to.be.greaterThan(30);
    expect(refused, 'refused').to.be.greaterThan(ran / 4);
    expect(ran - refused, 'loaded').to.be.greaterThan(0);
  });

  it(`${CASES} generated command lines and environments: options, or every problem named`, async () => {
    const rng = new Random(SEED ^ 0x5bd1e995);
    const log = new CaseLog('exporter options fuzz', SEED, REPLAY);
    const files = { missing: join(dir, 'missing-url-file'), dir, zero: '/dev/zero' };
    const started = Date.now();
    let ran = 0;
    let refused = 0;
    for (let i = 0; i < CASES && Date.now() - started < RUN_MS; i++, ran++) {
      const c = optionsCase(rng, files);
      const what = () => `case ${i}: ${JSON.stringify(c.argv).slice(0, 500)} env ${JSON.stringify(c.env).slice(0, 300)} (${c.notes.join('; ').slice(0, 300)})`;
      const run = await measured(() => {
        const o = parseExporterOptions(c.argv, c.env, '0.0.0-test');
        checkTelemetryPath(o);
        return o;
      });
      const options: ExporterOptions | null = run.threw ? null : run.value!;
      const error: unknown = run.threw ? run.error : null;
      if (run.cpuMs > CASE_MS || run.wallMs > CASE_WALL_MS) log.add('slow', `took ${Math.round(run.cpuMs)} ms of CPU, ${Math.round(run.wallMs)} ms in all: ${what()}`);
      if (error !== null) {
        if (!(error instanceof ValidationError)) {
          log.add(`threw:${(error as Error)?.constructor?.name}:${String((error as Error)?.message).slice(0, 40)}`, `threw ${String((error as Error)?.stack ?? error).slice(0, 600)}\n    ${what()}`);
          continue;
        }
        refused++;
        checkProblems(log, error.problems, c.paths, what);
        continue;
      }
      if (c.invalid) log.add(`accepted:${c.paths[0]}`, `invalid options were accepted: ${what()}`);
      void options;
    }
    expect(log.empty, log.report()).to.equal(true);
    expect(refused, 'refused').to.be.greaterThan(0);
    expect(ran - refused, 'accepted').to.be.greaterThan(0);
  });

  it(`${CASES} generated web configuration and targets files: read, or every problem named`, async () => {
    const rng = new Random(SEED ^ 0x27d4eb2f);
    const log = new CaseLog('web configuration and targets fuzz', SEED, REPLAY);
    const started = Date.now();
    let ran = 0;
    let refused = 0;
    for (let i = 0; i < CASES && Date.now() - started < RUN_MS; i++, ran++) {
      const c = webOrTargetsCase(rng, dir);
      const file = join(dir, `${c.kind}-${i}.yml`);
      writeFileSync(file, c.bytes);
      const options = parseExporterOptions(c.kind === 'web' ? ['--web.config.file', file] : ['--targets', file], {}, '0.0.0-test');
      const what = () => `case ${i} (${c.kind}): ${c.notes.join('; ')}\n    file: ${describeBytes(c.bytes)}`;
      const run = await measured(() => loadExporterFiles(options));
      const error: unknown = run.threw ? run.error : null;
      if (!run.threw) {
        // What the serving process gets is what was read (a user named $number came back as NaN: no basic auth).
        const sent = encodeConfig({ kind: 'start', options, collectors: { collectors: [], path: '', files: [] }, files: run.value!, build: { version: '', branch: '', revision: '' } });
        const back = decodeConfig(sent);
        if (JSON.stringify(back.kind === 'start' ? back.files : null) !== JSON.stringify(run.value)) log.add('crossed', `the files do not cross to the exporter unchanged: ${JSON.stringify(back.kind === 'start' ? back.files : null).slice(0, 300)}`);
      }
      rmSync(file, { force: true });
      if (run.cpuMs > CASE_MS || run.wallMs > CASE_WALL_MS) log.add(`slow:${c.kind}`, `took ${Math.round(run.cpuMs)} ms of CPU, ${Math.round(run.wallMs)} ms in all: ${what()}`);
      if (error !== null) {
        if (!(error instanceof ValidationError)) {
          log.add(`threw:${(error as Error)?.constructor?.name}:${String((error as Error)?.message).slice(0, 40)}`, `threw ${String((error as Error)?.stack ?? error).slice(0, 600)}\n    ${what()}`);
          continue;
        }
        refused++;
        checkProblems(log, relative(error.problems, dir).map((p) => ({ ...p, path: p.path.replace(/^[\w-]+\.yml[.:]?/, '') })), c.paths, what);
        continue;
      }
      if (c.invalid) log.add(`accepted:${c.kind}:${c.notes[0]?.split(' ')[0]}`, `an invalid file was read: ${what()}`);
    }
    expect(log.empty, log.report()).to.equal(true);
    expect(refused, 'refused').to.be.greaterThan(0);
    expect(ran - refused, 'read').to.be.greaterThan(0);
  });
});
