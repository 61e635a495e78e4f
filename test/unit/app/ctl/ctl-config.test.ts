import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCtlConfig, parseCtlConfig, requireScope } from '../../../../src/app/ctl/ctl-config.js';

const nodeYaml = `
scope: demo
namespace: /svc
name: node1
restapi:
  listen: 127.0.0.1:8008
  connect_address: 127.0.0.1:8008
  authentication: {username: admin, password: secret}
  cafile: /etc/ca.pem
etcd3:
  hosts: [127.0.0.1:2379, 127.0.0.2:2379]
  username: root
  password: etcdpw
db:
  authentication:
    superuser: {username: postgres, password: pgpw}
`;

describe('ctl config', () => {
  it('reads an agent node file: scope, namespace, etcd3, restapi auth, superuser for query', () => {
    const c = parseCtlConfig(nodeYaml, 'node1.yml', {});
    expect(c.scope).to.equal('demo');
    expect(c.namespace).to.equal('/svc');
    expect(c.etcd).to.deep.equal({ hosts: ['127.0.0.1:2379', '127.0.0.2:2379'], protocol: 'http', username: 'root', password: 'etcdpw' });
    expect(c.rest).to.deep.equal({ auth: { username: 'admin', password: 'secret' }, cacert: '/etc/ca.pem', insecure: false });
    expect(c.db).to.deep.equal({ username: 'postgres', password: 'pgpw' });
  });

  it("a node file whose API asks for client certificates gives wardenctl the node's own; a ctl certificate wins", () => {
    const tls = (verify: string) => nodeYaml.replace('restapi:\n', `restapi:\n  certfile: /etc/pg1.pem\n  keyfile: /etc/pg1.key\n  verify_client: ${verify}\n`);
    expect(parseCtlConfig(tls('required'), 'f', {}).rest).to.deep.include({ certfile: '/etc/pg1.pem', keyfile: '/etc/pg1.key' });
    expect(parseCtlConfig(tls('optional'), 'f', {}).rest).to.deep.include({ certfile: '/etc/pg1.pem', keyfile: '/etc/pg1.key' });
    expect(parseCtlConfig(tls('none'), 'f', {}).rest).not.to.have.property('certfile');
    const own = parseCtlConfig(`${tls('required')}ctl:\n  certfile: /home/alice.pem\n  keyfile: /home/alice.key\n`, 'f', {}).rest;
    expect(own).to.deep.include({ certfile: '/home/alice.pem', keyfile: '/home/alice.key' });
  });

  it('a ctl section wins over restapi; flags win over the file', () => {
    const c = parseCtlConfig(`${nodeYaml}ctl:\n  authentication: {username: ops, password: x}\n  insecure: true\n  db: {username: ro, password: y, dbname: app}\n`, 'f', {
      dcs: '10.0.0.1:2379, 10.0.0.2:2379',
      scope: 'other',
      namespace: '/ns',
    });
    expect(c.scope).to.equal('other');
    expect(c.namespace).to.equal('/ns');
    expect(c.etcd.hosts).to.deep.equal(['10.0.0.1:2379', '10.0.0.2:2379']);
    expect(c.rest.auth).to.deep.equal({ username: 'ops', password: 'x' });
    expect(c.rest.insecure).to.equal(true);
    expect(c.db).to.deep.equal({ username: 'ro', password: 'y', dbname: 'app' });
  });

  it('defaults without a file: etcd on 127.0.0.1:2379, namespace /service, no scope', () => {
    const c = parseCtlConfig(null, 'flags', {});
    expect(c).to.deep.include({ scope: null, namespace: '/service' });
    expect(c.etcd.hosts).to.deep.equal(['127.0.0.1:2379']);
    expect(() => requireScope(c)).to.throw(/no cluster name: give --scope NAME/);
  });

  it('accepts hosts as a comma-separated string', () => {
    expect(parseCtlConfig('etcd3: {hosts: "a:1,b:2"}', 'f', {}).etcd.hosts).to.deep.equal(['a:1', 'b:2']);
  });

  it('refuses bad YAML and wrong types, naming the file and every problem', () => {
    expect(() => parseCtlConfig('scope: [', 'bad.yml', {})).to.throw(/^bad\.yml: not valid YAML/);
    expect(() => parseCtlConfig('- a', 'list.yml', {})).to.throw('list.yml: expected a YAML mapping');
    expect(() => parseCtlConfig('etcd3: {hosts: 5, protocol: ftp}\nctl: {insecure: maybe}', 'x.yml', {})).to.throw(
      'x.yml: etcd3.protocol: expected http or https, got ftp; etcd3.hosts: expected a list of host:port strings; ctl.insecure: expected true or false, got string',
    );
  });

  it('loads -c, else $WARDENCTL_CONFIG, else ~/.config/wardenctl.yml if there is one; an unreadable file is a clear error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctlcfg-'));
    try {
      const file = join(dir, 'ctl.yml');
      writeFileSync(file, 'scope: fromfile\n');
      expect(loadCtlConfig({ config: file }, {}).scope).to.equal('fromfile');
      expect(loadCtlConfig({}, { WARDENCTL_CONFIG: file }).scope).to.equal('fromfile');
      expect(loadCtlConfig({}, {}).scope).to.equal(null);
      expect(() => loadCtlConfig({ config: join(dir, 'nope.yml') }, {})).to.throw(/^cannot read config file .*nope\.yml: ENOENT$/);
      // The user's own file, when there is one: ~/.config/wardenctl.yml (or under $XDG_CONFIG_HOME).
      expect(loadCtlConfig({}, { HOME: dir }).scope).to.equal(null);
      mkdirSync(join(dir, '.config'));
      writeFileSync(join(dir, '.config', 'wardenctl.yml'), 'scope: fromhome\n');
      expect(loadCtlConfig({}, { HOME: dir }).scope).to.equal('fromhome');
      expect(loadCtlConfig({}, { HOME: dir, WARDENCTL_CONFIG: file }).scope).to.equal('fromfile');
      expect(loadCtlConfig({}, { HOME: '/nonexistent', XDG_CONFIG_HOME: join(dir, '.config') }).scope).to.equal('fromhome');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
