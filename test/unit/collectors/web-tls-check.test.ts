import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadExporterFiles } from '../../../src/app/exporter/configure.js';
import { parseExporterOptions } from '../../../src/app/exporter/options.js';
import { ValidationError } from '../../../src/domain/errors.js';

describe('exporter: the web configuration TLS files are checked at start', function () {
  this.timeout(20_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-webtls-'));
    for (const name of ['a', 'b']) {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '1', '-subj', `/CN=${name}`], { cwd: dir, stdio: 'pipe' });
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function problems(lines: string[]): Promise<string[]> {
    const file = join(dir, 'web.yml');
    writeFileSync(file, ['tls_server_config:', ...lines.map((l) => `  ${l}`), ''].join('\n'));
    try {
      await loadExporterFiles(parseExporterOptions([`--web.config.file=${file}`], {}, '0.1.0'));
      return [];
    } catch (e) {
      if (e instanceof ValidationError) return e.problems.map((p) => `${p.path}: ${p.message}`);
      throw e;
    }
  }

  it('takes a certificate with its own key', async () => {
    expect(await problems([`cert_file: ${dir}/a.crt`, `key_file: ${dir}/a.key`])).to.deep.equal([]);
  });

  it('refuses a key of another certificate (it failed only when listening, with exit 1)', async () => {
    const found = await problems([`cert_file: ${dir}/a.crt`, `key_file: ${dir}/b.key`]);
    expect(found).to.have.length(1);
    expect(found[0]).to.match(/tls_server_config\.key_file: expected a certificate and a private key that go together, got an error: .*key/i);
  });

  it('names every file it cannot read', async () => {
    const found = await problems([`cert_file: ${dir}/none.crt`, `key_file: ${dir}/none.key`, 'client_auth_type: RequireAndVerifyClientCert', `client_ca_file: ${dir}/none-ca.crt`]);
    expect(found.map((p) => p.split(':')[0]!.replace(/.*tls_server_config\./, ''))).to.deep.equal(['cert_file', 'key_file', 'client_ca_file']);
    expect(found[0]).to.include('ENOENT');
  });
});
