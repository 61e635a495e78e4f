import { expect } from 'chai';
import YAML from 'yaml';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLocalConfig, LocalConfigError, parseLocalConfig } from '../../../../src/app/agent/local-config.js';
import { startOnlyChanges } from '../../../../src/app/agent/local-settings.js';
import { postBootstrapCall } from '../../../../src/app/agent/post-bootstrap-call.js';

const VALID = `
scope: demo
name: node1
restapi:
  listen: 127.0.0.1:8008
  authentication: {username: admin, password: secret}
  allowlist: [127.0.0.1/32, "::1"]
  http_extra_headers: {X-Frame-Options: DENY}
etcd3:
  hosts: [127.0.0.1:2379]
bootstrap:
  dcs: {ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 1048576,
        db: {use_pg_rewind: true, use_slots: true, parameters: {}}}
  initdb: [{encoding: UTF8}, data-checksums]
db:
  listen: 127.0.0.1:15432
  data_dir: /var/lib/warden/node1
  authentication:
    superuser: {username: postgres, password: pw}
    replication: {username: replicator, password: rpw}
  parameters: {max_connections: 100}
tags: {nofailover: false, dc: east}
watchdog: {mode: off}
`;

function problemsOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(LocalConfigError);
    return [...(e as LocalConfigError).problems];
  }
  throw new Error('expected a LocalConfigError');
}

describe('local configuration', () => {
  it('parses the spec example and applies defaults', () => {
    const c = parseLocalConfig(VALID);
    expect(c.scope).to.equal('demo');
    expect(c.namespace).to.equal('/service');
    expect(c.restapi.connect_address).to.equal('127.0.0.1:8008');
    expect(c.restapi.verify_client).to.equal('none');
    expect(c.db.connect_address).to.equal('127.0.0.1:15432');
    expect(c.db.bin_dir).to.equal('/usr/lib/postgresql/15/bin');
    expect(c.bootstrap.initdb).to.deep.equal([{ encoding: 'UTF8' }, 'data-checksums']);
    expect(c.tags).to.deep.equal({ nofailover: false, dc: 'east' });
    expect(c.watchdog).to.deep.equal({ mode: 'off', device: '/dev/watchdog', safety_margin: 5 });
    expect(c.log.level).to.equal('info');
  });

  it('bootstrap.initdb: a list, or one mapping as Patroni also takes it; options the agent sets are refused at start', () => {
    const mapping = parseLocalConfig(VALID.replace('initdb: [{encoding: UTF8}, data-checksums]', 'initdb: {encoding: UTF8, data-checksums: true, locale: 0, no-sync: false}'));
    expect(mapping.bootstrap.initdb).to.deep.equal([{ encoding: 'UTF8' }, 'data-checksums', { locale: '0' }]);
    const problems = problemsOf(() => parseLocalConfig(VALID.replace('initdb: [{encoding: UTF8}, data-checksums]', 'initdb: [{pgdata: /x}, waldir, "x y"]')));
    expect(problems.filter((p) => p.path === 'bootstrap.initdb').map((p) => p.message)).to.deep.equal([
      'initdb option pgdata is set by the agent',
      'initdb option waldir is set by the agent',
      'invalid initdb option "x y"',
    ]);
  });

  it('lists every problem at once with path, expected and got', () => {
    const text = VALID.replace('listen: 127.0.0.1:8008', 'listen: 8008')
      .replace('hosts: [127.0.0.1:2379]', 'hosts: []')
      .replace('mode: off', 'mode: sometimes')
      .replace('name: node1', 'name: node1\ncolour: blue')
      .replace('ttl: 30', 'ttl: 5');
    const problems = problemsOf(() => parseLocalConfig(text));
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p.message]));
    expect(byPath['restapi.listen']).to.equal('expected host:port, got number 8008');
    expect(byPath['etcd3.hosts']).to.equal('expected at least 1 item, got an empty list');
    expect(byPath['watchdog.mode']).to.include('"sometimes"');
    expect(byPath['colour']).to.equal('unknown field');
    expect(Object.keys(byPath)).to.include('bootstrap.dcs.ttl');
    expect(problems.length).to.be.at.least(5);
  });

  it('Patroni keys left in a converted file are refused with what to do instead', () => {
    const text = VALID.replace('name: node1', 'name: node1\netcd: {host: 127.0.0.1:2379}');
    const doc = YAML.parse(text) as Record<string, any>;
    doc['db'] = { ...doc['db'], pgpass: '/tmp/pgpass', config_dir: '/etc/postgresql/15/main', use_unix_socket: true, create_replica_method: ['basebackup'] };
    doc['db']['authentication'] = { ...doc['db']['authentication'], rewind: { username: 'rewind', password: 'x' } };
    doc['bootstrap'] = { ...doc['bootstrap'], pg_hba: ['host all all 0.0.0.0/0 md5'], users: { admin: { password: 'x' } }, post_init: '/usr/local/bin/roles.sh' };
    doc['restapi'] = { ...doc['restapi'], allowlist_include_members: true };
    doc['etcd3'] = { ...doc['etcd3'], host: '127.0.0.1:2379' };
    const byPath = Object.fromEntries(problemsOf(() => parseLocalConfig(YAML.stringify(doc))).map((p) => [p.path, p.message]));
    expect(byPath['etcd']).to.match(/^unknown field: Warden speaks to etcd v3 only/);
    expect(byPath['db.pgpass']).to.match(/^unknown field: Patroni's pgpass has no equivalent/);
    expect(byPath['db.config_dir']).to.match(/^unknown field: Patroni's config_dir has no equivalent: .*postgresql\.base\.conf/);
    expect(byPath['db.use_unix_socket'], 'the agent can reach its server over the socket too').to.equal(undefined);
    expect(byPath['db.create_replica_method']).to.match(/rename it create_replica_methods/);
    expect(byPath['db.authentication.rewind'], "Patroni's rewind role is Warden's too").to.equal(undefined);
    expect(byPath['bootstrap.pg_hba']).to.match(/db\.pg_hba/);
    expect(byPath['bootstrap.users']).to.match(/^unknown field: no equivalent .*bootstrap\.post_bootstrap script/);
    expect(byPath['bootstrap.post_init']).to.match(/^unknown field: Patroni's other name for bootstrap\.post_bootstrap: rename it/);
    expect(byPath['restapi.allowlist_include_members'], "Patroni's allowlist_include_members is Warden's too").to.equal(undefined);
    expect(byPath['etcd3.host']).to.match(/^unknown field: Warden takes a list: write etcd3\.hosts/);
    // Names of the object prototype are unknown fields like any other, with no hint.
    const odd = Object.fromEntries(problemsOf(() => parseLocalConfig(`${VALID}\nconstructor: 1\ntoString: 2\n`)).map((p) => [p.path, p.message]));
    expect(odd['constructor']).to.equal('unknown field');
    expect(odd['toString']).to.equal('unknown field');
  });

  it('db.authentication.rewind: the role pg_rewind logs in as, from the file or the environment; an empty password is none', () => {
    const c = parseLocalConfig(VALID, { WARDEN_DB_REWIND_USERNAME: 'rewinder', WARDEN_DB_REWIND_PASSWORD: 'rw' });
    expect(c.db.authentication.rewind).to.deep.equal({ username: 'rewinder', password: 'rw' });
    expect(parseLocalConfig(VALID).db.authentication.rewind).to.equal(undefined);
    const doc = YAML.parse(VALID) as Record<string, any>;
    doc['db']['authentication']['rewind'] = { username: 'rewinder', password: null };
    expect(parseLocalConfig(YAML.stringify(doc)).db.authentication.rewind).to.deep.equal({ username: 'rewinder' });
    doc['db']['authentication']['rewind'] = { username: 'bad name' };
    expect(problemsOf(() => parseLocalConfig(YAML.stringify(doc))).map((p) => p.path)).to.deep.equal(['db.authentication.rewind.username']);
  });

  it('db.pg_ident: user name maps of three fields (quotes, regular expressions, comments and includes allowed); another line is refused by index', () => {
    const withIdent = (lines: string) => VALID.replace('db:\n', `db:\n  pg_ident: ${lines}\n`);
    const ok = parseLocalConfig(withIdent(`['# maps', 'ops root postgres', 'ops "/^(.*)@corp$" "\\\\1"  # people', '', 'include_if_exists ident.d/extra.conf']`));
    expect(ok.db.pg_ident).to.have.length(5);
    expect(parseLocalConfig(VALID).db.pg_ident).to.equal(undefined);
    const problems = problemsOf(() => parseLocalConfig(withIdent(`['ops root', 'ops root postgres extra', 'include a b']`)));
    expect(problems.map((p) => p.path)).to.deep.equal(['db.pg_ident[0]', 'db.pg_ident[1]', 'db.pg_ident[2]']);
    expect(problems[0]!.message).to.equal('expected MAPNAME SYSTEM-USERNAME DATABASE-USERNAME, got 2 fields in "ops root"');
  });

  it('bootstrap.post_bootstrap is a command; an empty one or a method section under its name is refused', () => {
    const withScript = (value: string) => VALID.replace('bootstrap:\n', `bootstrap:\n  post_bootstrap: ${value}\n`);
    expect(parseLocalConfig(withScript('/usr/local/bin/roles.sh --app shop')).bootstrap.post_bootstrap).to.equal('/usr/local/bin/roles.sh --app shop');
    expect(parseLocalConfig(VALID).bootstrap.post_bootstrap).to.equal(undefined);
    expect(problemsOf(() => parseLocalConfig(withScript('""'))).map((p) => p.path)).to.deep.equal(['bootstrap.post_bootstrap']);
    expect(problemsOf(() => parseLocalConfig(withScript('{command: /usr/local/bin/roles.sh}'))).map((p) => p.path)).to.deep.equal(['bootstrap.post_bootstrap']);
  });

  it('db.use_unix_socket: the post_bootstrap script gets the socket directory of the files (local first), or none for libpq\'s default', () => {
    const withSocket = (params: string, dcs = '{}') =>
      postBootstrapCall(parseLocalConfig(VALID.replace('db:\n', `db:\n  use_unix_socket: true\n${params}`).replace('parameters: {}}}', `parameters: ${dcs}}}`)));
    expect(parseLocalConfig(VALID).db.use_unix_socket).to.equal(false);
    expect(withSocket('').args?.[0]).to.match(/^postgresql:\/\/postgres@\/postgres\?port=\d+$/);
    expect(withSocket('', '{unix_socket_directories: "/run/dcs"}').args?.[0]).to.match(/\?host=%2Frun%2Fdcs&port=/);
    const local = VALID.replace('db:\n', 'db:\n  use_unix_socket: true\n').replace('parameters: {max_connections: 100}', 'parameters: {max_connections: 100, unix_socket_directories: "@x, /run/local"}');
    expect(postBootstrapCall(parseLocalConfig(local.replace('parameters: {}}}', 'parameters: {unix_socket_directories: "/run/dcs"}}}'))).args?.[0]).to.match(/\?host=%2Frun%2Flocal&port=/);
    expect(postBootstrapCall(parseLocalConfig(VALID)).args?.[0]).to.match(/@127\.0\.0\.1:/);
  });

  it('missing required sections and fields are named', () => {
    const problems = problemsOf(() => parseLocalConfig('scope: demo\n'));
    expect(problems.map((p) => p.path)).to.include.members(['name', 'restapi', 'etcd3', 'db']);
  });

  it('etcd3.hosts as one comma-separated string is the list, as in the environment', () => {
    const c = parseLocalConfig(VALID.replace('hosts: [127.0.0.1:2379]', 'hosts: "127.0.0.1:2379, 127.0.0.2:2379"'));
    expect(c.etcd3.hosts).to.deep.equal(['127.0.0.1:2379', '127.0.0.2:2379']);
    expect(problemsOf(() => parseLocalConfig(VALID.replace('hosts: [127.0.0.1:2379]', 'hosts: " , "'))).map((p) => p.path)).to.deep.equal(['etcd3.hosts']);
  });

  it('a database password left empty (password: with no value, as Patroni\'s templates have it) means no password', () => {
    const c = parseLocalConfig(VALID.replace('superuser: {username: postgres, password: pw}', 'superuser: {username: postgres, password: }'));
    expect(c.db.authentication.superuser).to.not.have.property('password');
    expect(c.db.authentication.superuser.username).to.equal('postgres');
  });

  it('db.listen takes a list of addresses, as Patroni\'s postgresql.listen, with or without spaces', () => {
    expect(parseLocalConfig(VALID.replace('listen: 127.0.0.1:15432', 'listen: "10.0.0.5, 127.0.0.1:15432"\n  connect_address: 10.0.0.5:15432')).db.listen).to.equal('10.0.0.5,127.0.0.1:15432');
  });

  it('a value refused by the schema is one problem, from the file or from the environment', () => {
    const fromEnv = problemsOf(() => parseLocalConfig(VALID, { WARDEN_RESTAPI_LISTEN: 'abc' }));
    expect(fromEnv.map((p) => p.path)).to.deep.equal(['restapi.listen']);
    expect(fromEnv[0]!.message).to.match(/^expected host:port.*\(from WARDEN_RESTAPI_LISTEN\)$/);
    const fromFile = problemsOf(() => parseLocalConfig(VALID.replace('listen: 127.0.0.1:8008', 'listen: abc')));
    expect(fromFile.map((p) => p.path)).to.deep.equal(['restapi.listen']);
  });

  it('YAML syntax errors give the line and column', () => {
    const problems = problemsOf(() => parseLocalConfig('scope: demo\nname: [unclosed\n'));
    expect(problems[0]!.path).to.match(/^line \d+, column \d+$/);
    for (const p of problems) expect(p.message, 'the position is said once, in the path').not.to.match(/line \d+, column \d+/);
  });

  it('semantic rules: ports, TLS files, allowlist entries', () => {
    const text = VALID.replace('listen: 127.0.0.1:15432', 'listen: 127.0.0.1:99999')
      .replace('allowlist: [127.0.0.1/32, "::1"]', 'allowlist: [127.0.0.1/33, example.org, 10.0.0.300, "bad_name!"]\n  keyfile: /k.pem\n  verify_client: required');
    const byPath = Object.fromEntries(problemsOf(() => parseLocalConfig(text)).map((p) => [p.path, p.message]));
    expect(byPath['db.listen']).to.include('65535');
    expect(byPath['restapi.allowlist[0]']).to.include('CIDR');
    // A host name is an entry, as in Patroni (resolved by the agent); a mistyped address or a non-name is not.
    expect(byPath).to.not.have.property('restapi.allowlist[1]');
    expect(byPath['restapi.allowlist[2]']).to.equal('expected an IP address, a CIDR range (10.0.0.0/8) or a host name, got "10.0.0.300"');
    expect(byPath['restapi.allowlist[3]']).to.include('"bad_name!"');
    expect(byPath['restapi.keyfile']).to.include('certfile');
    expect(byPath['restapi.verify_client']).to.include('HTTPS');
  });

  it('db.parameters: no value that would break postgresql.conf, nothing Warden sets itself (here and in bootstrap.dcs)', () => {
    const text = VALID.replace('parameters: {max_connections: 100}', 'parameters: {max_connections: 100, log_line_prefix: "a\\nb", port: 5433}').replace(
      'parameters: {}}}',
      'parameters: {hot_standby: "off"}}}',
    );
    expect(problemsOf(() => parseLocalConfig(text)).map((p) => p.path)).to.deep.equal(['db.parameters.log_line_prefix', 'db.parameters.port', 'bootstrap.dcs.db.parameters.hot_standby']);
  });

  it('a reload names the changes that wait for the next start (no values), not those it applies', () => {
    const before = parseLocalConfig(VALID);
    const after = parseLocalConfig(
      VALID.replace('replication: {username: replicator, password: rpw}', 'replication: {username: replicator, password: other}')
        .replace('hosts: [127.0.0.1:2379]', 'hosts: [127.0.0.1:2380]')
        .replace('parameters: {max_connections: 100}', 'parameters: {max_connections: 200}')
        .replace('tags: {nofailover: false, dc: east}', 'tags: {nofailover: true, dc: east}')
        .replace('db:\n', 'db:\n  pg_hba: [host all app 10.0.0.0/8 scram-sha-256]\n  pg_ident: [corp alice@EXAMPLE alice]\n'),
    );
    expect(after.db.pg_hba).to.have.length(1);
    expect(startOnlyChanges(before, after)).to.deep.equal(['db.authentication.replication', 'etcd3.hosts']);
    expect(startOnlyChanges(before, before)).to.deep.equal([]);
    // Certificate files are read again on a reload while the API serves HTTPS before and after; HTTP to HTTPS waits for a start.
    const https = (certfile: string) => ({ ...before, restapi: { ...before.restapi, certfile, keyfile: `${certfile}.key` } });
    expect(startOnlyChanges(https('/etc/warden/a.pem'), https('/etc/warden/b.pem'))).to.deep.equal([]);
    expect(startOnlyChanges(before, https('/etc/warden/b.pem'))).to.deep.equal(['restapi.certfile', 'restapi.keyfile']);
    // etcd's client certificate files and user apply at once while the agent reaches the same members the same way.
    const etcd = (e: Partial<(typeof before)['etcd3']>) => ({ ...before, etcd3: { ...before.etcd3, ...e } });
    const tls = etcd({ protocol: 'https', cacert: '/etc/warden/ca.pem', cert: '/etc/warden/etcd.pem', key: '/etc/warden/etcd.key' });
    expect(startOnlyChanges(tls, { ...tls, etcd3: { ...tls.etcd3, cert: '/etc/warden/etcd-2027.pem', username: 'warden', password: 'new' } })).to.deep.equal([]);
    // Without a protocol the TLS files decide the scheme: the first one switches etcd to HTTPS, at the next start.
    expect(startOnlyChanges(before, etcd({ cacert: '/etc/warden/ca.pem' }))).to.deep.equal(['etcd3.cacert']);
    expect(startOnlyChanges(before, etcd({ username: 'warden', password: 'pw' }))).to.deep.equal([]);
    // The scripts are read each time one runs: a reload applies them.
    const scripts = { ...before, db: { ...before.db, callbacks: { on_role_change: '/usr/local/bin/vip' }, callback_timeout: 9, pre_promote: '/bin/true', before_stop: '/bin/true' } };
    expect(startOnlyChanges(before, scripts)).to.deep.equal([]);
  });

  it('a wildcard or a list of addresses in listen needs a connect_address; a wildcard connect_address is refused', () => {
    const problems = (text: string) => {
      try {
        parseLocalConfig(text);
        return [];
      } catch {
        return problemsOf(() => parseLocalConfig(text)).map((p) => `${p.path}: ${p.message}`);
      }
    };
    const listens = (api: string, db: string) => VALID.replace('restapi:\n  listen: 127.0.0.1:8008', `restapi:\n  listen: ${api}`).replace('db:\n  listen: 127.0.0.1:15432', `db:\n  listen: ${db}`);
    const wild = problems(listens('0.0.0.0:8008', "'*:5432'"));
    expect(wild).to.have.length(2);
    expect(wild[0]).to.equal('restapi.connect_address: expected the address other nodes reach this one at (for example 10.0.0.11:8008): restapi.listen is a wildcard address ("0.0.0.0:8008"), which cannot stand for it');
    expect(wild[1]).to.match(/^db\.connect_address: .*db\.listen is a wildcard address \("\*:5432"\)/);
    expect(problems(listens("'[::]:8008'", "'10.0.0.5,127.0.0.1:5432'"))).to.deep.equal([
      'restapi.connect_address: expected the address other nodes reach this one at (for example 10.0.0.11:8008): restapi.listen is a wildcard address ("[::]:8008"), which cannot stand for it',
      'db.connect_address: expected the address other nodes reach this one at (for example 10.0.0.11:5432): db.listen is a list of addresses ("10.0.0.5,127.0.0.1:5432"), which cannot stand for it',
    ]);
    const given = listens('0.0.0.0:8008\n  connect_address: 10.0.0.11:8008', "'*:5432'\n  connect_address: 10.0.0.11:5432");
    expect(problems(given)).to.deep.equal([]);
    expect(parseLocalConfig(given).restapi.connect_address).to.equal('10.0.0.11:8008');
    expect(problems(listens('127.0.0.1:8008\n  connect_address: 0.0.0.0:8008', '127.0.0.1:5432'))).to.deep.equal(['restapi.connect_address: expected the address other nodes reach this one at, got a wildcard address ("0.0.0.0:8008")']);
  });

  it('environment overrides WARDEN_<SECTION>_<KEY>, typed by the schema', () => {
    const c = parseLocalConfig(VALID, {
      WARDEN_NAME: 'node7',
      WARDEN_RESTAPI_LISTEN: '0.0.0.0:9008',
      WARDEN_RESTAPI_CONNECT_ADDRESS: '10.0.0.7:9008',
      WARDEN_ETCD3_HOSTS: 'a:2379, b:2379',
      WARDEN_TAGS_NOFAILOVER: 'true',
      WARDEN_TAGS_RACK: 'r1',
      WARDEN_WATCHDOG_SAFETY_MARGIN: '7',
      WARDEN_RESTAPI_PASSWORD: 'fromenv',
      WARDEN_DB_SUPERUSER_PASSWORD: 'pgpw',
      WARDEN_DB_DATA_DIR: '/data/n7',
      WARDEN_UNRELATED: 'x',
      OTHER: 'y',
    });
    expect(c.name).to.equal('node7');
    expect(c.restapi.listen).to.equal('0.0.0.0:9008');
    expect(c.restapi.connect_address).to.equal('10.0.0.7:9008');
    expect(c.etcd3.hosts).to.deep.equal(['a:2379', 'b:2379']);
    expect(c.tags).to.deep.include({ nofailover: true, rack: 'r1' });
    expect(c.watchdog.safety_margin).to.equal(7);
    expect(c.restapi.authentication).to.deep.equal({ username: 'admin', password: 'fromenv' });
    expect(c.db.authentication.superuser.password).to.equal('pgpw');
    expect(c.db.data_dir).to.equal('/data/n7');
  });

  it('topology tags: typed (environment overrides too) and checked against each other', () => {
    const c = parseLocalConfig(VALID, { WARDEN_TAGS_FAILOVER_PRIORITY: '3', WARDEN_TAGS_SYNC_PRIORITY: '0', WARDEN_TAGS_REPLICATEFROM: 'node2', WARDEN_TAGS_NOFAILOVER: 'false' });
    expect(c.tags).to.deep.include({ failover_priority: 3, sync_priority: 0, replicatefrom: 'node2' });
    const problems = problemsOf(() => parseLocalConfig(VALID, { WARDEN_TAGS_FAILOVER_PRIORITY: '-2', WARDEN_TAGS_NOSTREAM: 'true', WARDEN_TAGS_REPLICATEFROM: 'node2' }));
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p.message]));
    expect(byPath['tags.failover_priority']).to.match(/>= 0.*WARDEN_TAGS_FAILOVER_PRIORITY/);
    expect(byPath['tags.replicatefrom']).to.match(/nostream is set/);
    expect(problems.filter((p) => p.path === 'tags.failover_priority'), 'reported once').to.have.length(1);
    const contradiction = problemsOf(() => parseLocalConfig(VALID, { WARDEN_TAGS_NOFAILOVER: 'true', WARDEN_TAGS_FAILOVER_PRIORITY: '2' }));
    expect(contradiction.map((p) => p.message).join()).to.match(/contradicts nofailover: true/);
  });

  it("Patroni's blocking scripts and clonefrom: db.pre_promote and db.before_stop are commands; clonefrom is true or false", () => {
    const c = parseLocalConfig(VALID, { WARDEN_DB_PRE_PROMOTE: '/usr/local/bin/fence --ipmi 10.0.0.11', WARDEN_DB_BEFORE_STOP: '/usr/local/bin/drain', WARDEN_TAGS_CLONEFROM: 'true' });
    expect(c.db).to.deep.include({ pre_promote: '/usr/local/bin/fence --ipmi 10.0.0.11', before_stop: '/usr/local/bin/drain' });
    expect(parseLocalConfig(VALID).db.pre_promote).to.equal(undefined);
    const problems = problemsOf(() => parseLocalConfig(VALID, { WARDEN_DB_PRE_PROMOTE: '', WARDEN_TAGS_CLONEFROM: 'sometimes' }));
    expect(problems.map((p) => p.path).sort()).to.deep.equal(['db.pre_promote', 'tags.clonefrom']);
  });

  it('watchdog.safety_margin must leave the fencer a window longer than loop_wait (the bootstrap timings)', () => {
    const problems = problemsOf(() => parseLocalConfig(VALID, { WARDEN_WATCHDOG_SAFETY_MARGIN: '20' }));
    expect(problems.map((p) => p.path)).to.deep.equal(['watchdog.safety_margin']);
    expect(problems[0]!.message).to.match(/^expected less than ttl - loop_wait \(30 - 10 = 20 s\), got 20: .* \(ttl and loop_wait of bootstrap.dcs, defaults counted\) \(from WARDEN_WATCHDOG_SAFETY_MARGIN\)$/);
    expect(parseLocalConfig(VALID, { WARDEN_WATCHDOG_SAFETY_MARGIN: '19' }).watchdog.safety_margin).to.equal(19);
    // No bootstrap.dcs: the default timings (ttl 30, loop_wait 10).
    const noDcs = VALID.replace(/  dcs: \{[^}]*\{[^}]*\{\}\}\}\n/, '');
    expect(noDcs).to.not.include('dcs:');
    expect(problemsOf(() => parseLocalConfig(noDcs, { WARDEN_WATCHDOG_SAFETY_MARGIN: '25' })).map((p) => p.path)).to.deep.equal(['watchdog.safety_margin']);
    // No fencer and no watchdog device (VALID has mode off): nothing acts on the margin.
    expect(parseLocalConfig(`${VALID}fencer: {enabled: false}\n`, { WARDEN_WATCHDOG_SAFETY_MARGIN: '25' }).watchdog.safety_margin).to.equal(25);
    // A bootstrap.dcs that is wrong itself is reported alone.
    expect(problemsOf(() => parseLocalConfig(VALID.replace('ttl: 30', 'ttl: 5'), { WARDEN_WATCHDOG_SAFETY_MARGIN: '20' })).map((p) => p.path)).to.not.include('watchdog.safety_margin');
  });

  it('a bad override names the variable', () => {
    const problems = problemsOf(() => parseLocalConfig(VALID, { WARDEN_WATCHDOG_SAFETY_MARGIN: 'lots', WARDEN_RESTAPI_COLOUR: 'blue' }));
    expect(problems.find((p) => p.path === 'watchdog.safety_margin')!.message).to.include('WARDEN_WATCHDOG_SAFETY_MARGIN');
    expect(problems.find((p) => p.path === 'restapi.colour')!.message).to.include('WARDEN_RESTAPI_COLOUR');
  });

  it('loadLocalConfig reads the file; an unreadable file is a LocalConfigError too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-cfg-'));
    try {
      writeFileSync(join(dir, 'node.yml'), VALID);
      expect((await loadLocalConfig(join(dir, 'node.yml'), {})).name).to.equal('node1');
      let err: unknown;
      try {
        await loadLocalConfig(join(dir, 'missing.yml'), {});
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(LocalConfigError);
      expect((err as Error).message).to.include('missing.yml').and.include('cannot read');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
