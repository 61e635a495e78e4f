import { expect } from 'chai';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostProblems } from '../../../../src/app/agent/local-config-checks.js';
import { loadLocalConfig, LocalConfigError, parseLocalConfig } from '../../../../src/app/agent/local-config.js';
import { aliasBomb } from '../../../support/config-fuzz.js';
import { MINIMAL_NODE_YAML } from '../../../support/node-config-yaml.js';

// Regression tests of what the fuzz test of the local configuration found
// (local-config-fuzz.test.ts): each input threw an untyped error, hung, filled the memory, was
// read as something else than written, or was refused with a message that said nothing useful.

const VALID = MINIMAL_NODE_YAML;

/** The problems of a refused text (or file), as `path: message` lines; fails when it is accepted or throws anything else. */
function refused(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    expect(e, String((e as Error)?.stack)).to.be.instanceOf(LocalConfigError);
    return (e as LocalConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected a LocalConfigError');
}

async function refusedFile(path: string, env: Record<string, string> = {}): Promise<string[]> {
  try {
    await loadLocalConfig(path, env);
  } catch (e) {
    expect(e, String((e as Error)?.stack)).to.be.instanceOf(LocalConfigError);
    return (e as LocalConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected a LocalConfigError');
}

describe('local configuration: YAML the parser takes and a configuration cannot hold', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-config-yaml-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('billion laughs is refused at once (it threw a ReferenceError, printed as a stack trace by the command)', () => {
    const t0 = Date.now();
    expect(refused(() => parseLocalConfig(`${VALID}tags:\n${aliasBomb(10, 9).replace(/^/gm, '  ')}`))).to.deep.equal([': its aliases expand to too much data (more than 100 uses of an anchor that holds aliases itself)']);
    expect(refused(() => parseLocalConfig(`${aliasBomb(10, 9, 'top')}${VALID}`))[0]).to.match(/aliases expand to too much data/);
    expect(Date.now() - t0).to.be.below(1000);
  });

  it('one list used many times through aliases is bounded too (yaml counts only aliases inside aliases)', () => {
    const big = Array.from({ length: 5000 }, (_, i) => i % 10).join(',');
    const problems = refused(() => parseLocalConfig(`${VALID}colour:\n  big: &big [${big}]\n  uses: [${Array.from({ length: 99 }, () => '*big').join(', ')}]\n`));
    expect(problems).to.deep.equal(['colour.uses: expands to more than 250000 values through its aliases']);
  });

  it('an alias without its anchor, and one inside its own anchor, are refused with their line (a ReferenceError; a value that contains itself)', () => {
    expect(refused(() => parseLocalConfig(`${VALID}tags: {a: *nope}\n`))).to.deep.equal(['line 10, column 11: alias *nope has no anchor &nope before it']);
    expect(refused(() => parseLocalConfig(`${VALID}bootstrap: {dcs: &loop {x: [*loop]}}\n`))).to.deep.equal(['line 10, column 29: alias *loop is inside the node its anchor names: it would contain itself']);
  });

  it('duplicate keys are found in one pass: a file of 15,000 keys (near the 256 KiB cap) takes about half a second, under 2 s on a busy machine (the parser\'s own check took 3 s, 200,000 keys minutes)', () => {
    const keys = Array.from({ length: 15_000 }, (_, i) => `  k${i}: ${i}`).join('\n');
    const t0 = performance.now();
    const config = parseLocalConfig(`${VALID}tags:\n${keys}\n`);
    expect(performance.now() - t0).to.be.below(2000);
    expect(Object.keys(config.tags)).to.have.length(15_000);
    expect(refused(() => parseLocalConfig(`${VALID}scope: again\n`))).to.deep.equal(['line 10, column 1: Map keys must be unique: "scope" is also at line 1']);
  });

  it('a file larger than 256 KiB, or one that never ends (/dev/zero), is refused without being read whole', async () => {
    writeFileSync(join(dir, 'huge.yml'), `${VALID}colour: "${'a'.repeat(10 * 1024 * 1024)}"\n`);
    expect(await refusedFile(join(dir, 'huge.yml'))).to.deep.equal([': the file holds more than 256 KiB, more than a configuration file may: is it the right file?']);
    const t0 = Date.now();
    expect(await refusedFile('/dev/zero')).to.deep.equal([': the file holds more than 256 KiB, more than a configuration file may: is it the right file?']);
    expect(Date.now() - t0).to.be.below(1000);
    expect(await refusedFile(dir)).to.have.length(1).and.to.match(/^: cannot read the file: EISDIR/);
  });

  it('bytes that are not UTF-8 are refused at their place (they were read as U+FFFD, in a password as well)', async () => {
    writeFileSync(join(dir, 'latin1.yml'), Buffer.concat([Buffer.from(`${VALID}tags: {dc: "caf`), Buffer.from([0xe9]), Buffer.from('"}\n')]));
    expect(await refusedFile(join(dir, 'latin1.yml'))).to.deep.equal(['line 10, column 16: not UTF-8 text (byte 0xe9 at offset 310): save the file as UTF-8']);
  });

  it('tags outside the core schema are refused (!!binary was a Buffer, !!omap a Map that vanished, !!js/function a string)', () => {
    expect(refused(() => parseLocalConfig(`${VALID}tags: !!omap [dc: east]\n`))).to.deep.equal(['line 10, column 14: unsupported tag !!omap: a configuration holds strings, numbers, booleans, null, mappings and lists']);
    expect(refused(() => parseLocalConfig(VALID.replace('password: pw', 'password: !!binary cHc='))))
      .to.have.length(1)
      .and.to.match(/unsupported tag !!binary/);
    expect(refused(() => parseLocalConfig(`${VALID}tags: {x: !!js/function "f"}\n`))[0]).to.match(/^line 10, column 11: unsupported tag !!js\/function/);
    expect(refused(() => parseLocalConfig(`${VALID}tags: {x: !!int 1.5}\n`))).to.deep.equal(['line 10, column 11: the value is not what its tag !!int says']);
    // Core tags are fine.
    expect(parseLocalConfig(`${VALID}tags: {x: !!str 1}\n`).tags).to.deep.equal({ x: '1' });
  });

  it('a list or mapping as a key is refused (it was stringified, with a Node warning on stderr)', () => {
    expect(refused(() => parseLocalConfig(`${VALID}? [a, b]\n: 1\n`))).to.deep.equal(['line 10, column 3: a key must be a plain value, got a list']);
  });

  it('nesting deeper than 64 levels is refused as such, fast (it said "Maximum call stack size exceeded")', () => {
    const t0 = Date.now();
    expect(refused(() => parseLocalConfig(`${VALID}tags: {x: ${'['.repeat(20_000)}${']'.repeat(20_000)}}\n`))).to.deep.equal(['line 10, column 73: nested more than 64 levels deep']);
    expect(Date.now() - t0).to.be.below(1000);
  });

  it('a WARDEN_* override that is no YAML is refused naming the variable (its text was used as far as it parsed: "[a, " gave [a]); a bomb in one is refused too', () => {
    expect(refused(() => parseLocalConfig(VALID, { WARDEN_ETCD3_HOSTS: '[a, ' }))).to.deep.equal([
      'etcd3.hosts: expected YAML or JSON, got text it cannot read (column 4): Flow sequence must end with a ] (from WARDEN_ETCD3_HOSTS)',
    ]);
    expect(refused(() => parseLocalConfig(VALID, { WARDEN_LOG_LEVELS: aliasBomb(10, 9) }))[0]).to.match(/^log\.levels: expected YAML or JSON, got text it cannot read: its aliases expand to too much data .* \(from WARDEN_LOG_LEVELS\)$/);
  });

  it('__proto__ and constructor are keys like others: refused as unknown fields, in the file and from the environment (an override was dropped, the message said "[object Object]")', () => {
    expect(refused(() => parseLocalConfig(`${VALID}__proto__: {x: 1}\nconstructor: 1\n`))).to.deep.equal(['__proto__: unknown field', 'constructor: unknown field']);
    expect(refused(() => parseLocalConfig(VALID, { WARDEN_DB___PROTO__: '1' }))).to.deep.equal(['db.__proto__: unknown field (from WARDEN_DB___PROTO__)']);
  });

  it('a problem quotes a long value in short (an allowlist entry of 100,000 characters was a message of as many)', () => {
    const problems = refused(() => parseLocalConfig(VALID.replace('restapi: {listen: 127.0.0.1:8008}', `restapi: {listen: 127.0.0.1:8008, allowlist: ["${'x'.repeat(100_000)}"]}`)));
    expect(problems).to.have.length(1);
    expect(problems[0]).to.match(/^restapi\.allowlist\[0\]: expected an IP address, a CIDR range \(10\.0\.0\.0\/8\) or a host name, got "x{59}\.\.\." \(100000 characters\)$/);
    const method = refused(() => parseLocalConfig(`${VALID}bootstrap: {method: ${'m'.repeat(100_000)}}\n`));
    expect(method.join('\n').length).to.be.below(500);
  });

  it('--validate-config reads the TLS files bounded and as PEM: /dev/zero filled the memory, /dev/null passed (and the API served HTTPS no client completes)', async () => {
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'bin'), { recursive: true });
    const config = parseLocalConfig(VALID);
    for (const [file, expected] of [
      ['/dev/zero', 'restapi.certfile: expected a PEM file, got "/dev/zero", which holds more than 1 MiB'],
      ['/dev/null', 'restapi.certfile: expected PEM (-----BEGIN ...-----) in "/dev/null", got nothing'],
    ] as const) {
      const t0 = Date.now();
      const problems = await hostProblems({ ...config, restapi: { ...config.restapi, certfile: file } });
      expect(problems.filter((p) => p.path.startsWith('restapi')).map((p) => `${p.path}: ${p.message}`)).to.deep.equal([expected]);
      expect(Date.now() - t0).to.be.below(2000);
    }
  });
});
