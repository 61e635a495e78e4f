import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCtlConfig } from '../../../../src/app/ctl/ctl-config.js';
import { CtlError } from '../../../../src/app/ctl/errors.js';
import { CaseLog, describeBytes, fuzzCases, fuzzSeed, inPool, Random, runNode, STACK_TRACE } from '../../../support/config-fuzz.js';
import { freePort } from '../../../support/free-port.js';
import { CONFIG, ctlCase, expectedCodes } from '../../../unit/app/ctl/ctl-fuzz-cases.js';

/**
 * wardenctl's command line fuzz cases (test/unit/app/ctl/ctl-fuzz.test.ts) through the real
 * binary, with the cluster at a closed port, on a sample: the documented exit code (2 for
 * usage errors, 1 for the others, 0 for help), one clean line, no stack trace and no word of
 * an unhandled rejection; a command that reaches for the DCS gives up within its bound (10 s).
 * The sample holds few of those (each takes the whole bound) and they run side by side.
 *
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha --timeout 120000 test/integration/app/ctl/wardenctl-fuzz.test.ts
 */

const BIN = fileURLToPath(new URL('../../../../bin/wardenctl.js', import.meta.url));
const SEED = fuzzSeed();
const CASES = fuzzCases(30);
/** Cases that reach for the DCS in the sample (each waits for the DCS deadline). */
const DCS_CASES = 4;
/** The DCS deadline (ctl-store.ts), and what starting a process may add. */
const BOUND_MS = 10_000 + 5_000;

describe(`wardenctl fuzz through the binary (seed ${SEED})`, function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'wardenctl-bin-fuzz-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a bad --scheduled with the DCS down is a usage error at once (exit 1 after the 10 s deadline before)', async () => {
    const port = await freePort();
    const run = await runNode([BIN, '-d', `127.0.0.1:${port}`, '--scope', 'demo', 'switchover', '--scheduled', 'tomorrow', '--force'], { PATH: process.env['PATH'] ?? '', HOME: dir }, 30_000);
    expect(run.code, run.stderr).to.equal(2);
    expect(run.stderr).to.equal('wardenctl: --scheduled: cannot parse "tomorrow" (use ISO 8601, e.g. 2030-01-31T02:00+01:00, or "now")\n');
    expect(run.ms).to.be.below(5000);
  });

  it(`${CASES} generated command lines: the documented exit code, one clean line, no stack trace, within the DCS bound`, async () => {
    const rng = new Random(SEED);
    const log = new CaseLog('wardenctl binary fuzz', SEED, 'npx mocha --timeout 120000 test/integration/app/ctl/wardenctl-fuzz.test.ts');
    // Free now and nothing listens on it: every DCS call is refused.
    const port = await freePort();
    const env = { PATH: process.env['PATH'] ?? '', HOME: dir };
    const chosen: { i: number; c: ReturnType<typeof ctlCase>; file: string; expected: readonly number[] }[] = [];
    let dcs = 0;
    for (let i = 0; chosen.length < CASES && i < CASES * 50; i++) {
      const c = ctlCase(rng, port);
      // A NUL cannot be passed to a process.
      if (c.argv.some((a) => a.includes('\u0000'))) continue;
      const file = join(dir, `ctl-${i}.yml`);
      let config = { valid: true, scope: false };
      if (c.config) {
        writeFileSync(file, c.config);
        try {
          config = { valid: true, scope: loadCtlConfig({ ...c.flags, config: file }, env).scope !== null };
        } catch (e) {
          if (!(e instanceof CtlError)) log.add('config-threw', `loading the config threw ${String((e as Error)?.stack).slice(0, 300)}`);
          config = { valid: false, scope: false };
        }
      }
      const expected = expectedCodes(c, config);
      // A case that gets past every check waits for the DCS deadline: only a few of them.
      const reachesDcs = expected.length === 1 && expected[0] === 1 && config.valid && (c.scopeGiven || config.scope);
      if (reachesDcs && dcs >= DCS_CASES) continue;
      if (reachesDcs) dcs++;
      chosen.push({ i, c, file, expected });
    }
    await inPool(
      chosen.map(({ i, c, file, expected }) => async () => {
        const argv = c.argv.map((a) => (a === CONFIG ? file : a));
        const run = await runNode([BIN, ...argv], env, BOUND_MS + 5_000);
        const what = () => `case ${i}: wardenctl ${JSON.stringify(argv).slice(0, 500)} (${c.notes.join('; ')})${c.config ? `\n    config: ${describeBytes(c.config)}` : ''}\n    exit ${run.code}${run.signal ? ` (${run.signal})` : ''} after ${Math.round(run.ms)} ms, stdout ${JSON.stringify(run.stdout.slice(0, 200))}, stderr ${JSON.stringify(run.stderr.slice(0, 600))}`;
        if (run.timedOut || run.ms > BOUND_MS) return log.add('slow', `took ${Math.round(run.ms)} ms: ${what()}`);
        if (!expected.includes(run.code ?? -1)) log.add(`code:${run.code}!=${expected.join('|')}`, `exit ${run.code}, expected ${expected.join(' or ')}: ${what()}`);
        if (STACK_TRACE.test(run.stdout) || STACK_TRACE.test(run.stderr)) log.add('stack', `a stack trace or Node's words: ${what()}`);
        if (run.code !== 0) {
          if (!/^(wardenctl: \S|error: \S)/.test(run.stderr)) log.add('said', `the failure is not one wardenctl line: ${what()}`);
          if (run.code === 1 && run.stderr.trimEnd().split('\n').length > 1) log.add('lines', `more than one line for an error: ${what()}`);
        }
      }),
      10,
    );
    expect(log.empty, log.report()).to.equal(true);
    expect(chosen.length, 'cases run').to.equal(CASES);
  });
});
