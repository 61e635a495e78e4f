import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { loadCtlConfig } from '../../../../src/app/ctl/ctl-config.js';
import { CtlError } from '../../../../src/app/ctl/errors.js';
import { parseScalar } from '../../../../src/app/ctl/edit-config.js';
import { runCli, type CtlIo } from '../../../../src/app/ctl/main.js';
import { readInput } from '../../../../src/app/ctl/terminal.js';
import { aliasBomb } from '../../../support/config-fuzz.js';

// Regression tests of what the fuzz test of wardenctl's command line found (ctl-fuzz.test.ts).

/** wardenctl against a DCS that does not answer: what it says and its exit code. */
async function run(...args: string[]): Promise<{ code: number; err: string[]; reads: number }> {
  const space = new InMemoryKeyValueSpace(new FakeClock());
  space.setReachable(false);
  const err: string[] = [];
  let reads = 0;
  const io: CtlIo = {
    stdout: () => undefined,
    stderr: (s) => err.push(s),
    env: { HOME: '/nonexistent' },
    makeStore: (config, scope) => {
      const store = new InMemoryClusterStore(space, { clientId: 'ctl', prefix: `${config.namespace}/${scope}/` });
      const read = store.read.bind(store);
      store.read = () => (reads++, read());
      return store;
    },
    makeRest: () => ({ request: async () => Promise.reject(new Error('no REST in this test')) }),
    prompter: { ask: async () => '', confirm: async () => false, close: () => undefined },
    signal: new AbortController().signal,
  };
  const code = await runCli(['node', 'wardenctl', '-d', '127.0.0.1:1', '--scope', 'demo', ...args], io);
  return { code, err, reads };
}

describe('wardenctl: usage errors found by fuzzing', () => {
  it('option values are checked before the DCS is asked: exit 2 at once, not "cannot reach the DCS" (exit 1) after its deadline', async () => {
    for (const args of [
      ['switchover', '--scheduled', 'tomorrow', '--force'],
      ['restart', '--scheduled', '2099-13-01T00:00'],
      ['restart', '--db-version', '16'],
      ['restart', '--timeout', '1d'],
      ['edit-config', '-s', 'foo', '--force'],
      ['edit-config', '-p', '=1', '--force'],
      ['dsn', 'node1', '-r', 'replica'],
      ['query', '-m', 'node1', '-r', 'replica', '-c', 'SELECT 1'],
    ]) {
      const r = await run(...args);
      expect({ args, code: r.code, dcs: r.reads }, r.err.join('\n')).to.deep.equal({ args, code: 2, dcs: 0 });
      expect(r.err).to.have.length(1);
      expect(r.err[0]).to.match(/^wardenctl: /);
    }
  });

  it('a required option left out or options that do not go together are usage errors: flush <junk>, demote-cluster without --host or --restore-command, query without -c or with -c and --file (exit 1 before)', async () => {
    for (const [args, said] of [
      [['flush', 'junk'], /^wardenctl: flush: expected restart or switchover; got junk$/],
      [['demote-cluster', '--force'], /^wardenctl: demote-cluster needs --host/],
      [['query'], /^wardenctl: query needs -c SQL \(or --file FILE\)$/],
      [['query', '-c', 'SELECT 1', '--file', 'x.sql'], /^wardenctl: give -c SQL or --file FILE, not both$/],
    ] as const) {
      const r = await run(...args);
      expect({ args, code: r.code, dcs: r.reads }).to.deep.equal({ args, code: 2, dcs: 0 });
      expect(r.err[0]).to.match(said);
    }
  });

  describe('files', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'wardenctl-files-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('a config file is read bounded and as the agent reads its own: /dev/zero, an alias bomb, a file of many keys (memory, a throw, seconds)', () => {
      const refused = (path: string) => {
        try {
          loadCtlConfig({ config: path }, {});
        } catch (e) {
          expect(e, String((e as Error)?.stack)).to.be.instanceOf(CtlError);
          return (e as CtlError).message;
        }
        throw new Error('expected a CtlError');
      };
      expect(refused('/dev/zero')).to.equal('/dev/zero: the file holds more than 256 KiB, more than a configuration file may: is it the right file?');
      const bomb = join(dir, 'bomb.yml');
      writeFileSync(bomb, `scope: demo\n${aliasBomb(10, 9)}`);
      expect(refused(bomb)).to.match(/^.*bomb\.yml: not valid YAML \(its aliases expand to too much data/);
      const many = join(dir, 'many.yml');
      writeFileSync(many, `scope: demo\ntags:\n${Array.from({ length: 15_000 }, (_, i) => `  k${i}: ${i}`).join('\n')}\n`);
      const t0 = performance.now();
      expect(loadCtlConfig({ config: many }, {}).scope).to.equal('demo');
      expect(performance.now() - t0).to.be.below(1000);
    });

    it('--apply, --replace and --file read at most 16 MiB (/dev/zero filled the memory); -s values are read as bounded YAML', async () => {
      let error: unknown = null;
      try {
        await readInput('/dev/zero');
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(CtlError);
      expect((error as CtlError).message).to.equal('cannot read /dev/zero: it holds more than 16 MiB');
      expect(parseScalar('30')).to.equal(30);
      expect(parseScalar('&a [1, *a]')).to.equal('&a [1, *a]');
      expect(parseScalar(aliasBomb(10, 9).replace(/\n/g, ' '))).to.be.a('string');
    });
  });
});
