import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCollectorFiles } from '../../../src/app/exporter/config-files.js';
import { decodeConfig, encodeConfig } from '../../../src/app/exporter/config-protocol.js';
import { loadExporterFiles } from '../../../src/app/exporter/configure.js';
import { parseExporterOptions } from '../../../src/app/exporter/options.js';
import { webTlsProblems } from '../../../src/app/exporter/web-tls-check.js';
import { parseWebConfig } from '../../../src/domain/collectors/web-config.js';
import { ValidationError } from '../../../src/domain/errors.js';
import { aliasBomb } from '../../support/config-fuzz.js';

// Regression tests of what the fuzz test of the exporter's configuration found
// (collector-config-fuzz.test.ts): inputs that threw untyped errors (printed as two stack
// traces by the command), filled the memory, were accepted and broke the exporter later, or
// were refused with problems that hid others or said nothing useful.

const A = 'db_a:\n  query: SELECT 1 AS v\n  metrics:\n    - v: {usage: GAUGE}\n';

/** `path: message` of every problem of a refusal; fails when it is accepted or throws anything else. */
async function refused(run: () => unknown): Promise<string[]> {
  try {
    await run();
  } catch (e) {
    expect(e, String((e as Error)?.stack)).to.be.instanceOf(ValidationError);
    return (e as ValidationError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected a ValidationError');
}

const options = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseExporterOptions(argv, env, '0.0.0-test');

describe('exporter configuration: hardening found by fuzzing', () => {
  let dir: string;
  let n = 0;
  const file = (text: string | Buffer) => {
    const path = join(dir, `f${n++}.yml`);
    writeFileSync(path, text);
    return path;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-exporter-hardening-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('an alias bomb, an alias without an anchor or one inside its anchor: problems with the file and line (a ReferenceError or a TypeError before)', async () => {
    const bomb = file(`${A}${aliasBomb(10, 9)}`);
    expect(await refused(() => loadCollectorFiles(bomb))).to.deep.equal([`${bomb}: its aliases expand to too much data (more than 100 uses of an anchor that holds aliases itself)`]);
    const missing = file(`${A}db_b: *nowhere\n`);
    expect(await refused(() => loadCollectorFiles(missing))).to.deep.equal([`${missing}:5:7: alias *nowhere has no anchor &nowhere before it`]);
    const loop = file(`${A}db_b: &loop [1, *loop]\n`);
    expect(await refused(() => loadCollectorFiles(loop))).to.deep.equal([`${loop}:5:17: alias *loop is inside the node its anchor names: it would contain itself`]);
    const web = file(`http_server_config: {headers: *h}\n`);
    expect(await refused(() => loadExporterFiles(options(['--web.config.file', web])))).to.deep.equal([`${web}:1:31: alias *h has no anchor &h before it`]);
  });

  it('files that never end or hold nothing: the collector file, DB_EXPORTER_URL_FILE, a target\'s url_file, a TLS certificate (each filled the memory; an empty URL file fell back to PG*)', async () => {
    expect(await refused(() => loadCollectorFiles('/dev/zero'))).to.deep.equal(['/dev/zero: the file holds more than 1 MiB, more than a configuration file may: is it the right file?']);
    expect(await refused(() => options([], { DB_EXPORTER_URL_FILE: '/dev/zero' }))).to.deep.equal(['DB_EXPORTER_URL_FILE: cannot read /dev/zero: the file holds more than 64 KiB, more than a configuration file may: is it the right file?']);
    expect(await refused(() => options([], { DB_EXPORTER_URL_FILE: '/dev/null' }))).to.deep.equal(['DB_EXPORTER_URL_FILE: /dev/null is empty: expected a postgresql:// URL in it']);
    const targets = file('targets:\n  a: {url_file: /dev/zero}\n  b: {url: "postgres://x/y", password_file: /dev/zero}\n');
    expect(await refused(() => loadExporterFiles(options(['--targets', targets])))).to.deep.equal([
      `${targets}.targets.a.url_file: cannot read /dev/zero: the file holds more than 64 KiB, more than a configuration file may: is it the right file?`,
      `${targets}.targets.b.password_file: cannot read /dev/zero: the file holds more than 64 KiB, more than a configuration file may: is it the right file?`,
    ]);
    expect(webTlsProblems({ certFile: '/dev/zero', keyFile: '/dev/null', clientAuthType: 'NoClientCert', minVersion: 'TLSv1.2', preferServerCipherSuites: false }, 'w.yml').map((p) => `${p.path}: ${p.message}`)).to.deep.equal([
      'w.yml.tls_server_config.cert_file: expected a PEM file, got "/dev/zero", which holds more than 1 MiB',
      'w.yml.tls_server_config.key_file: expected PEM (-----BEGIN ...-----), got nothing',
    ]);
    expect(webTlsProblems({ certFile: '/dev/null', keyFile: '/dev/null', clientAuthType: 'NoClientCert', minVersion: 'TLSv1.2', preferServerCipherSuites: false }, 'w.yml').map((p) => `${p.path}: ${p.message}`)).to.deep.equal([
      'w.yml.tls_server_config.cert_file: expected PEM (-----BEGIN ...-----), got nothing',
      'w.yml.tls_server_config.key_file: expected PEM (-----BEGIN ...-----), got nothing',
    ]);
  });

  it('header names and values node:http refuses are refused at start (the first request threw out of the handler and ended the exporter)', () => {
    const problems = (headers: Record<string, string>) => {
      try {
        parseWebConfig({ http_server_config: { headers } }, 'w.yml');
        return [];
      } catch (e) {
        return (e as ValidationError).problems.map((p) => p.path);
      }
    };
    expect(problems({ 'Bad Header': 'x', 'X:Colon': 'x', 'X-Ünï': 'x', 'X-A': 'line\nbreak', 'X-B': 'nul\u0000', 'X-C': 'cr\rx', 'X-D': 'ĀĀ' })).to.deep.equal([
      'w.yml.http_server_config.headers.Bad Header',
      'w.yml.http_server_config.headers.X:Colon',
      'w.yml.http_server_config.headers.X-Ünï',
      'w.yml.http_server_config.headers.X-A',
      'w.yml.http_server_config.headers.X-B',
      'w.yml.http_server_config.headers.X-C',
      'w.yml.http_server_config.headers.X-D',
    ]);
    expect(problems({ 'X-Ok': 'fine', 'X-Tab': 'a\tb', 'X-Latin1': 'é', 'Set-Cookie': 'a=b' })).to.deep.equal([]);
  });

  it('every problem of a web configuration or targets file is listed, not only the schema\'s (the others showed one start later)', async () => {
    const web = file(`http_server_config: {http2: 5, headers: {Content-Type: x}}\nbasic_auth_users: {bob: secret}\n`);
    expect(await refused(() => loadExporterFiles(options(['--web.config.file', web])))).to.deep.equal([
      `${web}.http_server_config.http2: expected boolean, got 5`,
      `${web}.basic_auth_users.bob: expected a bcrypt hash ($2y$10$...), got "secret"...`,
      `${web}.http_server_config.headers.Content-Type: this header is set by the exporter and cannot be configured`,
    ]);
    writeFileSync(join(dir, 'url'), 'not a url\n');
    writeFileSync(join(dir, 'password'), 'pw\n');
    const targets = file(`targets:\n  a: {url: mysql://x, auto_discovery: 5}\n  b: {url_file: ${join(dir, 'url')}, password_file: ${join(dir, 'password')}}\n  c: {url: "postgres://x/y", config: ${join(dir, 'no-such-set')}}\n  d: {url: "postgres://x/y", const_labels: {le: x}}\n`);
    const problems = await refused(() => loadExporterFiles(options(['--targets', targets])));
    expect(problems).to.have.length(5);
    expect(problems[0]).to.equal(`${targets}.targets.a.auto_discovery: expected boolean, got 5`);
    expect(problems[1]).to.equal(`${targets}.targets.a.url: expected a postgres:// or postgresql:// URL, got scheme mysql:`);
    expect(problems[2]).to.match(new RegExp(`^${targets}\\.targets\\.d\\.const_labels\\.le: label le is one the exporter sets itself`));
    // A URL file with no URL in it, and a password file: a TypeError before.
    expect(problems[3]).to.equal(`${targets}.targets.b.url_file: ${join(dir, 'url')} holds no usable URL: not a valid URL (expected postgresql://user@host:port/database)`);
    // The missing collector set of a target is named by the target's setting.
    expect(problems[4]).to.match(new RegExp(`^${targets}\\.targets\\.c\\.config: ${join(dir, 'no-such-set')}: cannot read collector config: ENOENT`));
  });

  it('a flag commander refuses no longer hides the other problems of the flags and the environment', async () => {
    expect(await refused(() => options(['--nope', '--namespace', '9x', 'extra'], { DB_EXPORTER_CONCURRENCY: '0' }))).to.deep.equal([
      "flags: unknown option '--nope'",
      '--namespace: invalid metric prefix "9x"',
      '--concurrency: expected an integer 1-64, got "0"',
    ]);
    expect(await refused(() => options(['--web.telemetry-path', '/probe', '--log.level', 'loud']))).to.deep.equal(['--web.telemetry-path: /probe is already an endpoint of the exporter', '--log.level: expected debug, info, warn or error, got "loud"']);
  });

  it('a collector timeout the server and the timers cannot take is refused (1e99 s set statement_timeout = 1e+102 and a deadline that fired at once)', async () => {
    const f = file('db_a:\n  query: SELECT 1 AS v\n  timeout: 1e99\n  metrics:\n    - v: {usage: GAUGE}\n');
    expect(await refused(() => loadCollectorFiles(f))).to.deep.equal([`db_a.timeout: timeout must be at most 24h, got 1e+99 [${f}]`]);
    const day = file('db_a:\n  query: SELECT 1 AS v\n  timeout: 24h\n  metrics:\n    - v: {usage: GAUGE}\n');
    expect((await loadCollectorFiles(day)).collectors[0]!.timeoutMs).to.equal(86_400_000);
  });

  it('keys starting with $ cross to the serving process as they are (a basic auth user named $number came back as NaN: no authentication)', () => {
    const web = parseWebConfig({ basic_auth_users: { $number: '$2b$04$YCOWfsikja5zqy.uVmVv2eWtMPm6Ffxqlv693AXY1VQPso/KO7DsO' }, http_server_config: { headers: { $$x: 'y', 'X-A': 'b' } } }, 'w.yml');
    const files = { webConfig: web, targets: [] };
    const back = decodeConfig(encodeConfig({ kind: 'start', options: options([]), collectors: { collectors: [], path: '', files: [] }, files, build: { version: '', branch: '', revision: '' } }));
    expect(back.kind === 'start' ? back.files : null).to.deep.equal(files);
    expect(decodeConfig(encodeConfig({ kind: 'invalid', code: 'invalid_config', problems: [{ path: 'x', message: String(Infinity) }] }))).to.deep.equal({ kind: 'invalid', code: 'invalid_config', problems: [{ path: 'x', message: 'Infinity' }] });
  });

  it('problems say something: no "[object Object]" for a usage that is not a string, no name of 100,000 characters in full, no "no collector defined" beside a file that could not be read', async () => {
    const usage = file('db_a:\n  query: SELECT 1 AS v\n  metrics:\n    - v: {usage: {x: GAUGE}, unit: seconds}\n');
    const p = await refused(() => loadCollectorFiles(usage));
    expect(p.join('\n')).not.to.include('[object');
    const long = file(`db_a:\n  name: ${'x'.repeat(100_000)}\n  query: SELECT 1 AS v\n  metrics:\n    - v: {usage: GAUGE}\ndb_b:\n  name: ${'x'.repeat(100_000)}\n  query: SELECT 1 AS v\n  metrics:\n    - v: {usage: GAUGE}\n`);
    const l = await refused(() => loadCollectorFiles(long));
    expect(l).to.have.length(1);
    expect(l[0]!.length).to.be.below(400);
    expect(l[0]).to.match(/^db_b\.metrics\.v: metric x{80}\.\.\. \(100002 characters\) is also produced by collector db_a/);
    const broken = join(dir, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'a.yml'), 'db_a: [\n');
    expect(await refused(() => loadCollectorFiles(broken))).to.have.length(1);
  });
});
