import { expect } from 'chai';
import { LocalConfigError, parseLocalConfig } from '../../../../src/app/agent/local-config.js';
import { customBootstrapOf, replicaMethodsOf } from '../../../../src/app/agent/local-config-sections.js';
import { agentSettingsOf } from '../../../../src/app/agent/local-settings.js';

const BASE = `
scope: demo
name: node1
restapi: {listen: 127.0.0.1:8008}
etcd3: {hosts: [127.0.0.1:2379]}
db:
  listen: 127.0.0.1:15432
  data_dir: /var/lib/warden/node1
  authentication:
    superuser: {username: postgres}
    replication: {username: replicator}
`;

/** BASE with extra lines under `db:` and a `bootstrap:` section. */
function file(db: string, bootstrap = ''): string {
  const indented = db.trim() ? db.trim().split('\n').map((l) => `  ${l}`).join('\n') : '';
  return `${BASE}${indented}\n${bootstrap ? `bootstrap:\n${bootstrap.trim().split('\n').map((l) => `  ${l}`).join('\n')}\n` : ''}`;
}

function problemsOf(text: string): { path: string; message: string }[] {
  try {
    parseLocalConfig(text);
  } catch (e) {
    expect(e).to.be.instanceOf(LocalConfigError);
    return [...(e as LocalConfigError).problems];
  }
  throw new Error('expected a LocalConfigError');
}

describe('local configuration: replica creation methods, recovery settings, custom bootstrap', () => {
  it('defaults: basebackup, no options, no recovery settings, initdb', () => {
    const c = parseLocalConfig(file(''));
    expect(c.db.create_replica_methods).to.deep.equal(['basebackup']);
    expect(c.db.basebackup).to.deep.equal({});
    expect(c.db.recovery_conf).to.deep.equal({});
    expect(c.bootstrap.method).to.equal('initdb');
    expect(replicaMethodsOf(c.db)).to.deep.equal({});
    expect(customBootstrapOf(c.bootstrap)).to.equal(null);
  });

  it('reads methods defined as db.<name> (Patroni\'s layout), basebackup options, and the recovery settings (handed to the HA core)', () => {
    const c = parseLocalConfig(
      file(`
create_replica_methods: [pgbackrest, basebackup]
pgbackrest: {command: /usr/bin/pgbackrest --stanza=main --delta restore, keep_data: true, no_params: true, no_leader: true}
basebackup: [verbose, {max-rate: 100M}]
recovery_conf: {restore_command: 'pgbackrest --stanza=main archive-get %f "%p"', recovery_min_apply_delay: 1000}`),
    );
    expect(c.db.create_replica_methods).to.deep.equal(['pgbackrest', 'basebackup']);
    expect(replicaMethodsOf(c.db)).to.deep.equal({ pgbackrest: { command: '/usr/bin/pgbackrest --stanza=main --delta restore', keep_data: true, no_params: true, no_leader: true } });
    expect(c.db.basebackup).to.deep.equal(['verbose', { 'max-rate': '100M' }]);
    expect(agentSettingsOf(c, '0.1.0').local.recoveryConf).to.deep.equal({ restore_command: 'pgbackrest --stanza=main archive-get %f "%p"', recovery_min_apply_delay: 1000 });
    // pgbackrest is marked no_leader: an empty node of a leaderless cluster may restore from it.
    expect(agentSettingsOf(c, '0.1.0').local.replicaWithoutLeader).to.equal(true);
    expect(agentSettingsOf(parseLocalConfig(file('create_replica_methods: [basebackup]')), '0.1.0').local.replicaWithoutLeader).to.equal(false);
  });

  it('reads a custom bootstrap method', () => {
    const c = parseLocalConfig(
      file('', `
method: restore
restore: {command: /usr/local/bin/restore.sh, no_params: false, recovery_conf: {restore_command: 'cp /a/%f %p', recovery_target_time: '2024-01-01 00:00:00+00'}}
`),
    );
    expect(customBootstrapOf(c.bootstrap)).to.deep.equal({ name: 'restore', command: '/usr/local/bin/restore.sh', recovery_conf: { restore_command: 'cp /a/%f %p', recovery_target_time: '2024-01-01 00:00:00+00' } });
    expect(customBootstrapOf(parseLocalConfig(file('', 'method: initdb')).bootstrap)).to.equal(null);
  });

  it('refuses what cannot work, each problem with its path', () => {
    const problems = problemsOf(
      file(
        `
create_replica_methods: [wal_g, basebackup]
pgbackrest: {command: '', keep_data: maybe}
basebackup: {pgdata: /x, max-rate: 1M}
recovery_conf: {primary_conninfo: 'host=x', recovery_target_time: now, restore_command: ok}
paramters: {max_connections: 100}`,
        `
method: restore
dcs: {standby_cluster: {host: h, create_replica_methods: [wal_e]}}
clone: {command: /bin/clone, recovery_conf: {recovery_target_action: pause}}`,
      ),
    );
    const at = (path: string) => problems.find((p) => p.path === path)?.message;
    expect(at('db.create_replica_methods[0]')).to.match(/^expected basebackup or a method defined as db\.wal_g/);
    expect(at('db.pgbackrest.command')).to.match(/non-empty|at least 1|NOT have fewer/i);
    expect(at('db.pgbackrest.keep_data')).to.match(/^expected boolean, got string "maybe"/);
    expect(at('db.basebackup.pgdata')).to.match(/Warden sets this pg_basebackup option itself/);
    expect(at('db.recovery_conf.primary_conninfo')).to.match(/Warden sets it from the member it follows/);
    expect(at('db.recovery_conf.recovery_target_time')).to.match(/recovery target would stop a replica/);
    expect(at('db.paramters')).to.equal('unknown field');
    expect(at('bootstrap.method')).to.match(/^expected initdb or a method defined as bootstrap\.restore/);
    expect(at('bootstrap.dcs.standby_cluster.create_replica_methods[0]')).to.match(/db\.wal_e/);
    expect(at('bootstrap.clone.recovery_conf.recovery_target_action')).to.match(/^expected "promote"/);
    expect(problems.some((p) => p.path === 'db.recovery_conf.restore_command')).to.equal(false);
  });
});
