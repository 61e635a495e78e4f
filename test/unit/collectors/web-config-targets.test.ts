import { expect } from 'chai';
import { parseTargets } from '../../../src/domain/collectors/targets.js';
import { parseWebConfig } from '../../../src/domain/collectors/web-config.js';
import { ValidationError } from '../../../src/domain/errors.js';

const HASH = '$2b$04$YCOWfsikja5zqy.uVmVv2eWtMPm6Ffxqlv693AXY1VQPso/KO7DsO';

function problems(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (e instanceof ValidationError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  return [];
}

describe('web configuration file (exporter-toolkit format)', () => {
  it('reads TLS, client certificates, versions, Go cipher and curve names, headers and bcrypt users', () => {
    const c = parseWebConfig(
      {
        tls_server_config: {
          cert_file: 'c.pem',
          key_file: 'k.pem',
          client_auth_type: 'RequireAndVerifyClientCert',
          client_ca_file: 'ca.pem',
          min_version: 'TLS13',
          cipher_suites: ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
          curve_preferences: ['X25519'],
        },
        http_server_config: { http2: false, headers: { 'X-Frame-Options': 'deny' } },
        basic_auth_users: { alice: HASH },
      },
      'web.yml',
    );
    expect(c.tls).to.deep.include({ certFile: 'c.pem', keyFile: 'k.pem', clientAuthType: 'RequireAndVerifyClientCert', clientCaFile: 'ca.pem', minVersion: 'TLSv1.3', ciphers: ['ECDHE-RSA-AES128-GCM-SHA256'], curves: ['X25519'] });
    expect(c.basicAuthUsers).to.deep.equal({ alice: HASH });
    expect(c.headers).to.deep.equal({ 'X-Frame-Options': 'deny' });
    expect(parseWebConfig(null, 'empty.yml')).to.deep.equal({ tls: null, basicAuthUsers: {}, headers: {} });
  });

  it('lists every problem: unknown keys, missing key file, CA without verification, plain passwords, reserved headers', () => {
    const p = problems(() =>
      parseWebConfig(
        { tls_server_config: { cert_file: 'c.pem', client_ca_file: 'ca.pem', min_version: 'TLS13', max_version: 'TLS12' }, basic_auth_users: { bob: 'secret' }, http_server_config: { headers: { 'Content-Type': 'x' } } },
        'web.yml',
      ),
    );
    expect(p.join('\n')).to.contain('web.yml.tls_server_config.key_file').and.contain('client_auth_type').and.contain('web.yml.basic_auth_users.bob: expected a bcrypt hash').and.contain('web.yml.http_server_config.headers.Content-Type').and.contain('max_version');
    expect(problems(() => parseWebConfig({ tls_server_config: { cert_file: 'c', key_file: 'k', bogus: 1 } }, 'w.yml')).join('\n')).to.contain('w.yml.tls_server_config.bogus: unknown field');
    expect(problems(() => parseWebConfig({ tls_server_config: { cert_file: 'c', key_file: 'k', client_auth_type: 'RequireAndVerifyClientCert' } }, 'w.yml')).join('\n')).to.contain('needs client_ca_file');
  });
});

describe('targets file', () => {
  it('reads named targets with their URL (or URL file), password file, kind, discovery and labels', () => {
    const t = parseTargets(
      {
        targets: {
          'orders-db': { url: 'postgres://monitor@db2:5432/postgres', password_file: '/run/pw', auto_discovery: true, exclude_databases: ['tmp'], const_labels: { cluster: 'orders' } },
          pooler: { url_file: '/run/url', kind: 'pgbouncer' },
        },
      },
      't.yml',
    );
    expect(t[0]).to.deep.include({ name: 'orders-db', url: 'postgres://monitor@db2:5432/postgres', passwordFile: '/run/pw', autoDiscovery: true, excludeDatabases: ['tmp'] });
    expect(t[0]!.constLabels).to.deep.equal([['cluster', 'orders']]);
    expect(t[1]).to.deep.include({ name: 'pooler', urlFile: '/run/url', kind: 'pgbouncer', autoDiscovery: false });
  });

  it('lists every problem: no URL, both URL and file, wrong scheme, bad names and labels, unknown keys', () => {
    const p = problems(() =>
      parseTargets({ targets: { a: {}, b: { url: 'http://x', url_file: 'f' }, c: { url: 'mysql://x/y', const_labels: { 'bad-label': 'v' } } } }, 't.yml'),
    ).join('\n');
    expect(p).to.contain('t.yml.targets.a.url: give the connection as url or as url_file').and.contain('t.yml.targets.b.url').and.contain('scheme mysql:').and.contain('bad-label');
    expect(problems(() => parseTargets({ targets: { 'bad name': { url: 'postgres://x/y' } } }, 't.yml'))).to.have.length.greaterThan(0);
    // A refused name never prints the targets (their URLs may hold passwords).
    const named = problems(() => parseTargets({ targets: { 'bad name': { url: 'postgres://mon:SuperSecret123@db/x' } } }, 't.yml'));
    expect(JSON.stringify(named)).not.to.include('SuperSecret123');
    expect(named).to.have.length(1);
    expect(problems(() => parseTargets({ targets: { a: { url: 'postgres://x/y', passwd: 'p' } } }, 't.yml')).join('\n')).to.contain('unknown field');
    expect(problems(() => parseTargets({}, 't.yml')).join('\n')).to.contain('t.yml.targets: is required');
  });
});
