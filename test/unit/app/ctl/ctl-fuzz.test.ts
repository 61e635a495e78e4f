import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { loadCtlConfig } from '../../../../src/app/ctl/ctl-config.js';
import { ctlClusterStore } from '../../../../src/app/ctl/ctl-store.js';
import { RestUnreachableError } from '../../../../src/app/ctl/errors.js';
import { runCli, type CtlIo } from '../../../../src/app/ctl/main.js';
import type { RestClient } from '../../../../src/app/ctl/rest-client.js';
import { CtlError } from '../../../../src/app/ctl/errors.js';
import { ProcessEvents } from '../../adapters/http/fuzz-kit.js';
import { CaseLog, describeBytes, fuzzCases, fuzzSeed, Random, STACK_TRACE } from '../../../support/config-fuzz.js';
import { CONFIG, ctlCase, expectedCodes } from './ctl-fuzz-cases.js';

/**
 * Generative fuzzing of wardenctl's command line, run in process (runCli) against a cluster
 * that cannot be reached: most cases on an in-memory store that answers nothing, some through
 * the real etcd client at a closed port with a short deadline. Every command, with good
 * values, then unknown and misspelt commands and options, values missing, choices not
 * offered, bad --scheduled, --watch, --db-version, --timeout and -s, required options left
 * out, options that do not go together, unicode, empty, very long and repeated arguments,
 * config files that are no config.
 *
 * Checked on every case: the exit code is the documented one (2 for usage errors, 1 for the
 * others, 0 for help and a bare `version`) in the order wardenctl checks things; what is said
 * on failure is one `wardenctl: ...` line or commander's own `error: ...` with the hint, never
 * a stack trace; no unhandled rejection or exception; quickly.
 *
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha test/unit/app/ctl/ctl-fuzz.test.ts
 */

const SEED = fuzzSeed();
const CASES = fuzzCases(1200);
const RUN_MS = process.env['WARDEN_FUZZ_CASES'] ? Infinity : 5000;
/** Each case's bound: the real etcd client gives up after REAL_DCS_MS. */
const CASE_MS = 1500;
const REAL_DCS_MS = 300;

/** A port where nothing listens (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const unreachableRest: RestClient = {
  request: async (apiUrl, method, path) => {
    throw new RestUnreachableError(`${method} ${apiUrl}/${path}`, 'connect ECONNREFUSED');
  },
};

describe(`wardenctl command line fuzz (seed ${SEED})`, function () {
  this.timeout(RUN_MS === Infinity ? 0 : 30_000);
  let dir: string;
  let port: number;
  const events = new ProcessEvents();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wardenctl-fuzz-'));
    port = await closedPort();
    events.hook();
  });
  after(() => {
    events.unhook();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`${CASES} generated command lines: the documented exit code, one clean line, no stack trace`, async () => {
    const rng = new Random(SEED);
    const log = new CaseLog('wardenctl fuzz', SEED, 'npx mocha test/unit/app/ctl/ctl-fuzz.test.ts');
    const space = new InMemoryKeyValueSpace(new FakeClock());
    space.setReachable(false);
    const file = join(dir, 'ctl.yml');
    const started = Date.now();
    const seen = new Set<number>();
    let ran = 0;
    for (let i = 0; i < CASES && Date.now() - started < RUN_MS; i++, ran++) {
      const c = ctlCase(rng, port);
      const real = rng.chance(0.1);
      if (c.config) writeFileSync(file, c.config);
      const argv = c.argv.map((a) => (a === CONFIG ? file : a));
      // What the config file says decides where a command stops: read it as wardenctl does.
      let config = { valid: true, scope: false };
      if (c.config) {
        try {
          config = { valid: true, scope: loadCtlConfig({ ...c.flags, config: file }, { HOME: dir }).scope !== null };
        } catch (e) {
          if (!(e instanceof CtlError)) log.add(`config-threw:${(e as Error)?.constructor?.name}`, `loading the config threw ${String((e as Error)?.stack).slice(0, 300)}: config ${describeBytes(c.config)}`);
          config = { valid: false, scope: false };
        }
      }
      const expected = expectedCodes(c, config);
      const out: string[] = [];
      const err: string[] = [];
      const io: CtlIo = {
        stdout: (s) => out.push(s),
        stderr: (s) => err.push(s),
        env: { HOME: dir },
        makeStore: (cfg, scope) => (real ? ctlClusterStore(cfg, scope, (l) => err.push(l), REAL_DCS_MS) : new InMemoryClusterStore(space, { clientId: 'ctl', prefix: `${cfg.namespace}/${scope}/` })),
        makeRest: () => unreachableRest,
        prompter: { ask: async () => '', askHidden: async () => '', confirm: async () => false, close: () => undefined },
        signal: new AbortController().signal,
      };
      const what = () => `case ${i}${real ? ' (real etcd client)' : ''}: wardenctl ${JSON.stringify(argv).slice(0, 600)} (${c.notes.join('; ')})${c.config ? `\n    config: ${describeBytes(c.config)}` : ''}\n    stdout: ${JSON.stringify(out.join('\n').slice(0, 300))}\n    stderr: ${JSON.stringify(err.join('\n').slice(0, 600))}`;
      events.current = what();
      const t0 = performance.now();
      let code: number;
      try {
        code = await runCli(['node', 'wardenctl', ...argv], io);
      } catch (e) {
        log.add(`threw:${(e as Error)?.constructor?.name}`, `runCli threw ${String((e as Error)?.stack ?? e).slice(0, 500)}: ${what()}`);
        continue;
      }
      const ms = performance.now() - t0;
      seen.add(code);
      if (ms > CASE_MS) log.add('slow', `took ${Math.round(ms)} ms: ${what()}`);
      if (!expected.includes(code)) log.add(`code:${code}!=${expected.join('|')}:${c.notes.slice(1).join(',').slice(0, 40)}`, `exit ${code}, expected ${expected.join(' or ')}: ${what()}`);
      const said = [...out, ...err].join('\n');
      if (STACK_TRACE.test(said)) log.add('stack', `a stack trace or Node's words: ${what()}`);
      if (code !== 0) {
        const text = err.join('\n');
        if (text.trim() === '') log.add('silent', `exit ${code} with nothing said: ${what()}`);
        else if (!/^(wardenctl: \S|error: \S)/.test(text)) log.add(`said:${text.slice(0, 20)}`, `the failure is not one wardenctl line: ${what()}`);
        else if (code === 1 && err.length > 1 && !err.slice(0, -1).every((l) => /^(WARNING|warning)/i.test(l))) log.add('lines', `more than one line for an error: ${what()}`);
      }
    }
    if (events.seen.length) log.add('process-events', events.seen.slice(0, 3).join('\n'));
    expect(log.empty, log.report()).to.equal(true);
    expect(ran, 'cases run').to.be.greaterThan(50);
    expect([...seen].sort(), 'exit codes seen').to.include.members([1, 2]);
  });
});
