import { divergencePoint } from '../../../../src/adapters/database/pg-rewind.js';
/** Pure helpers of the PostgreSQL adapter (no server needed). */
import { expect } from 'chai';
import { join } from 'node:path';
import { buildConninfo, endpointFromUrl, parseConninfo, upstreamUrlFromConninfo } from '../../../../src/adapters/database/conninfo.js';
import { effectiveParameters, passfilePath, readConfValues, renderPassfile, renderPgHba, renderPgIdent, renderPostgresqlConf } from '../../../../src/adapters/database/pg-config-files.js';
import { initdbArguments } from '../../../../src/adapters/database/pg-initdb-args.js';
import { firstSocketDir, localUrl, resolveOptions } from '../../../../src/adapters/database/pg-options.js';
import { pgTimestampToIso } from '../../../../src/adapters/database/pg-probe.js';
import { slotNameFor } from '../../../../src/domain/cluster/ha/tick-context.js';
import { basebackupArgs, connectFailed, methodParams, ReplicaMethodsFailed } from '../../../../src/adapters/database/pg-replica-methods.js';
import { CommandFailure } from '../../../../src/adapters/database/run-command.js';
import { bootstrapParams, bootstrapRecoverySettings } from '../../../../src/adapters/database/pg-custom-bootstrap.js';
import { PgStateTracker } from '../../../../src/adapters/database/pg-state.js';
import { parseHistoryFile } from '../../../../src/adapters/database/pg-timeline-history.js';

const optionsInput = {
  name: 'node1',
  scope: 'demo',
  dataDir: '/data',
  listen: '0.0.0.0:15432',
  connectAddress: '10.0.0.1:15432',
  superuser: { username: 'postgres', password: 'su' },
  replication: { username: 'replicator', password: "it's \\ secret" },
  runAsUser: 'postgres',
  localParameters: { work_mem: '4MB' },
  pgHba: ['hostssl all all 10.0.0.0/8 scram-sha-256'],
};
const opts = resolveOptions(optionsInput);

describe('PostgreSQL adapter helpers', () => {
  it('builds and parses libpq conninfo strings, quotes included', () => {
    const text = buildConninfo({ host: 'h', port: 5, password: "it's \\ secret", application_name: 'a b', user: undefined });
    expect(text).to.equal("host=h port=5 password='it\\'s \\\\ secret' application_name='a b'");
    expect(parseConninfo(text)).to.deep.equal({ host: 'h', port: '5', password: "it's \\ secret", application_name: 'a b' });
    expect(parseConninfo("host='unterminated")).to.deep.equal({});
    expect(parseConninfo(" \thost =\n'a'\r\nuser=x\\ y\\\\z\fport= 7 "), 'separators as libpq reads them, escapes outside quotes').to.deep.equal({ host: 'a', user: 'x y\\z', port: '7' });
    expect(parseConninfo('host=a =b')).to.deep.equal({});
    expect(upstreamUrlFromConninfo('host=10.0.0.2 port=6543 user=r')).to.equal('postgres://10.0.0.2:6543/postgres');
    expect(upstreamUrlFromConninfo('')).to.equal(null);
    expect(endpointFromUrl('postgres://[::1]:7/postgres')).to.deep.equal({ host: '::1', port: 7 });
    expect(() => endpointFromUrl('http://x:1')).to.throw(/postgres/);
  });

  it('the URL a local script reaches the server at: the loopback address of db.listen, the user encoded, no password', () => {
    expect(localUrl('0.0.0.0:5433', 'postgres')).to.equal('postgresql://postgres@127.0.0.1:5433/postgres');
    expect(localUrl('10.0.0.5,127.0.0.1:5433', 'admin@corp')).to.equal('postgresql://admin%40corp@10.0.0.5:5433/postgres');
    expect(localUrl('[::]:5433', 'postgres')).to.equal('postgresql://postgres@[::1]:5433/postgres');
    // db.use_unix_socket: the socket directory as libpq's host parameter, or none (libpq's default directory).
    expect(localUrl('0.0.0.0:5433', 'postgres', { dir: '/run/pg sockets' })).to.equal('postgresql://postgres@/postgres?host=%2Frun%2Fpg%20sockets&port=5433');
    expect(localUrl('0.0.0.0:5433', 'postgres', { dir: null })).to.equal('postgresql://postgres@/postgres?port=5433');
  });

  it('the socket directory of unix_socket_directories: its first absolute path', () => {
    expect(firstSocketDir('/var/run/postgresql, /tmp')).to.equal('/var/run/postgresql');
    expect(firstSocketDir('@abstract, "/run/pg"')).to.equal('/run/pg');
    expect(firstSocketDir('')).to.equal(null);
    expect(firstSocketDir(undefined)).to.equal(null);
  });

  it('with db.use_unix_socket a superuser without a password gets no loopback trust line (peer authentication over the socket)', () => {
    const noPassword = { ...optionsInput, superuser: { username: 'postgres' } };
    const tcp = renderPgHba(resolveOptions(noPassword));
    expect(tcp).to.match(/^host\s+all\s+"postgres"\s+127\.0\.0\.1\/32\s+trust$/m);
    const socket = renderPgHba(resolveOptions({ ...noPassword, useUnixSocket: true }));
    expect(socket).to.not.match(/"postgres".*trust/);
    expect(socket).to.match(/^local\s+all\s+all\s+peer$/m);
    // With a password nothing changes: other tools may still log in over TCP with it.
    expect(renderPgHba(resolveOptions({ ...optionsInput, useUnixSocket: true }))).to.equal(renderPgHba(opts));
  });

  it('a reloaded local file wins over the one the options were built with: its parameters, pg_hba lines and pg_ident maps', () => {
    const local = { parameters: { work_mem: '8MB' }, hba: ['host all app 10.0.0.0/8 scram-sha-256'], ident: ['corp alice@EXAMPLE alice'] };
    expect(effectiveParameters(opts, { dynamic: { work_mem: '2MB' }, recovery: null })['work_mem'], 'the options\' local value').to.equal('4MB');
    expect(effectiveParameters(opts, { dynamic: { work_mem: '2MB' }, recovery: null, local })['work_mem']).to.equal('8MB');
    expect(effectiveParameters(opts, { dynamic: { work_mem: '2MB' }, recovery: null, local: { ...local, parameters: {} } })['work_mem'], 'a local value taken out').to.equal('2MB');
    const hba = renderPgHba(opts, false, local.hba).split('\n');
    expect(hba[1]).to.equal('host all app 10.0.0.0/8 scram-sha-256');
    expect(renderPgIdent(opts, local.ident)).to.match(/^# Generated by Warden.*\ncorp alice@EXAMPLE alice\n$/);
    expect(renderPgIdent(opts, null)).to.equal(null);
  });

  it('merges parameters: HA values win over dynamic and local ones', () => {
    const p = effectiveParameters(opts, {
      dynamic: { port: 1, listen_addresses: 'x', wal_level: 'minimal', max_wal_senders: 20, work_mem: '1MB', 'bad name': 1, hba_file: '/x' },
      recovery: { upstream: { host: '10.0.0.2', port: 5432 }, slotName: 'node1' },
    });
    expect(p).to.include({
      port: 15432,
      listen_addresses: '0.0.0.0',
      cluster_name: 'demo',
      wal_level: 'replica',
      hot_standby: true,
      wal_log_hints: true,
      max_wal_senders: 20,
      work_mem: '4MB',
      primary_slot_name: 'node1',
      recovery_target_timeline: 'latest',
    });
    expect(p['hba_file'], 'the dynamic value is ignored').to.equal('/data/pg_hba.conf');
    expect(p).to.not.have.property('bad name');
    expect(parseConninfo(String(p['primary_conninfo']))).to.include({
      host: '10.0.0.2',
      port: '5432',
      user: 'replicator',
      passfile: '/data/warden.pgpass',
      application_name: 'node1',
    });
  });

  it('recovery_target_timeline stays in the file of a primary: taking a server-start parameter out makes the reload after a promotion report errors', () => {
    expect(effectiveParameters(opts, { dynamic: {}, recovery: null })).to.include({ recovery_target_timeline: 'latest' });
  });

  it('a targeted recovery\'s settings win over the parameters, never over the managed ones', () => {
    const p = effectiveParameters(opts, { dynamic: { restore_command: 'dynamic' }, recovery: null, recoveryParameters: { restore_command: 'cp /a/%f %p', recovery_target_time: '2024-01-01', port: 1 } });
    expect(p).to.include({ restore_command: 'cp /a/%f %p', recovery_target_time: '2024-01-01', port: 15432 });
  });

  it('pg_basebackup options: a map or a list of flags and one-key maps; those Warden sets are refused', () => {
    expect(basebackupArgs({ 'max-rate': '100M', checkpoint: 'spread', progress: true, verbose: false })).to.deep.equal(['--max-rate=100M', '--checkpoint=spread', '--progress']);
    expect(basebackupArgs(['verbose', { 'max-rate': '1M' }, { c: 'fast' }])).to.deep.equal(['--verbose', '--max-rate=1M', '-cfast']);
    expect(() => basebackupArgs({ pgdata: '/x' })).to.throw(/pgdata is set by Warden/);
    expect(() => basebackupArgs(['X'])).to.throw(/X is set by Warden/);
  });

  it('a replica creation command gets --scope, --datadir, --role, --connstring and its options, unless no_params', () => {
    const method = { command: 'restore', keep_data: true, no_leader: true, stanza: 'main', 'process-max': 4 };
    expect(methodParams(opts, method, 'host=h port=5432')).to.deep.equal(['--scope=demo', '--datadir=/data', '--role=replica', '--connstring=host=h port=5432', '--stanza=main', '--process-max=4']);
    expect(methodParams(opts, method, null)).to.not.include.members(['--connstring=']);
    expect(methodParams(opts, { ...method, no_params: true }, 'x')).to.deep.equal([]);
  });

  it('a custom bootstrap gets --scope and --datadir, and recovers until it promotes', () => {
    expect(bootstrapParams({ name: 'r', command: 'c' }, 'demo', '/data')).to.deep.equal(['--scope=demo', '--datadir=/data']);
    expect(bootstrapParams({ name: 'r', command: 'c', no_params: true }, 'demo', '/data')).to.deep.equal([]);
    expect(bootstrapRecoverySettings({ name: 'r', command: 'c' })).to.equal(null);
    expect(bootstrapRecoverySettings({ name: 'r', command: 'c', recovery_conf: { restore_command: 'x' } })).to.deep.equal({ restore_command: 'x', recovery_target_action: 'promote' });
  });

  it('renders postgresql.conf that reads back to the same values', () => {
    const text = renderPostgresqlConf(opts, { dynamic: {}, recovery: { upstream: { host: 'h', port: 1 } } });
    expect(text).to.match(/^# Generated by Warden/);
    expect(text).to.include("include_if_exists 'postgresql.base.conf'");
    const back = readConfValues(text);
    expect(back['hot_standby']).to.equal('on');
    const conninfo = parseConninfo(back['primary_conninfo']!);
    expect(conninfo['password'], 'never in postgresql.conf: SHOW primary_conninfo is open to pg_monitor').to.equal(undefined);
    expect(conninfo['passfile']).to.equal(passfilePath(opts));
    expect(renderPassfile(opts)).to.equal(`*:*:*:${opts.replication.username}:it's \\\\ secret\n`);
  });

  it('postgresql.conf names the data directory\'s pg_hba.conf and pg_ident.conf after the include, so a base file naming others does not win', () => {
    const text = renderPostgresqlConf(opts, { dynamic: {}, recovery: null });
    const lines = text.split('\n');
    const include = lines.indexOf("include_if_exists 'postgresql.base.conf'");
    expect(lines.indexOf("hba_file = '/data/pg_hba.conf'")).to.be.greaterThan(include);
    expect(lines.indexOf("ident_file = '/data/pg_ident.conf'")).to.be.greaterThan(include);
    const relative = effectiveParameters(resolveOptions({ ...optionsInput, dataDir: 'data/node1' }), { dynamic: {}, recovery: null });
    expect(relative['hba_file'], 'absolute: the server reads a relative path from its working directory').to.equal(join(process.cwd(), 'data/node1/pg_hba.conf'));
  });

  it('renders pg_hba.conf: user lines first, passwords give scram from anywhere, role names quoted', () => {
    const lines = renderPgHba(opts).split('\n');
    expect(lines[1]).to.equal('hostssl all all 10.0.0.0/8 scram-sha-256');
    expect(lines.some((l) => /^host\s+replication\s+"replicator"\s+0\.0\.0\.0\/0\s+scram-sha-256$/.test(l))).to.equal(true);
    expect(lines.some((l) => /trust/.test(l))).to.equal(false);
  });

  it('a rewind role of its own (db.authentication.rewind) may reach the postgres database, from loopback and, with a password, from anywhere', () => {
    const plain = renderPgHba(opts);
    expect(plain).to.not.match(/"rewinder"/);
    const withRewind = renderPgHba(resolveOptions({ ...optionsInput, rewind: { username: 'rewinder', password: 'rw' } })).split('\n');
    expect(withRewind.filter((l) => l.includes('"rewinder"'))).to.deep.equal([
      'host    postgres     "rewinder"   127.0.0.1/32   scram-sha-256',
      'host    postgres     "rewinder"   ::1/128   scram-sha-256',
      'host    postgres     "rewinder"   0.0.0.0/0   scram-sha-256',
      'host    postgres     "rewinder"   ::/0   scram-sha-256',
    ]);
    // The superuser named as the rewind role adds nothing.
    expect(renderPgHba(resolveOptions({ ...optionsInput, rewind: optionsInput.superuser }))).to.equal(plain);
  });

  it('with ssl on, the lines for other members ask for TLS (hostssl), so they never open what the operator\'s hostssl rules close', () => {
    const remote = renderPgHba(opts, true)
      .split('\n')
      .filter((l) => /0\.0\.0\.0\/0|::\/0/.test(l));
    expect(remote).to.have.length(4);
    for (const l of remote) expect(l).to.match(/^hostssl /);
  });

  it('turns bootstrap.initdb into arguments, with data checksums by default', () => {
    expect(initdbArguments([{ encoding: 'UTF8' }, 'no-sync', { E: 'UTF8' }])).to.deep.equal([
      '--encoding=UTF8',
      '--no-sync',
      '-E',
      'UTF8',
      '--data-checksums',
    ]);
    expect(initdbArguments(['data-checksums'])).to.deep.equal(['--data-checksums']);
    expect(initdbArguments(['no-data-checksums'])).to.deep.equal(['--no-data-checksums']);
    expect(() => initdbArguments([{ pgdata: '/x' }])).to.throw(/set by the agent/);
    expect(() => initdbArguments(['x; rm -rf /'])).to.throw(/invalid/);
  });

  it('parses timeline history files and timestamps', () => {
    const text = '1\t0/3000060\tno recovery target specified\n\n2\t1/A0000000\tbefore 2024-01-01\n';
    expect(parseHistoryFile(text)).to.deep.equal([
      [1, 0x3000060, 'no recovery target specified', null, null],
      [2, 0x1a0000000, 'before 2024-01-01', null, null],
    ]);
    expect(pgTimestampToIso('2024-05-01 12:00:00.123456+02')).to.equal('2024-05-01T12:00:00.123456+02:00');
    expect(pgTimestampToIso('2024-05-01 12:00:00-05:30')).to.equal('2024-05-01T12:00:00-05:30');
    expect(slotNameFor('Node-1.eu')).to.equal('node_1_eu');
  });

  it('tracks states: crash detection and first look', () => {
    const t = new PgStateTracker();
    expect(t.observed({ alive: false, pidFile: true, answered: false, refusing: false })).to.equal('crashed');
    t.set('running');
    expect(t.observed({ alive: true, pidFile: true, answered: false, refusing: false })).to.equal('running');
    expect(t.observed({ alive: true, pidFile: true, answered: false, refusing: true })).to.equal('crashed');
    expect(t.observed({ alive: true, pidFile: true, answered: true, refusing: false })).to.equal('running');
    expect(t.observed({ alive: false, pidFile: false, answered: false, refusing: false })).to.equal('stopped');
    t.set('running');
    t.beginOperation();
    t.set('stopping');
    expect(t.observed({ alive: false, pidFile: true, answered: false, refusing: false })).to.equal('stopping');
    t.endOperation();
    t.set('start_failed');
    expect(t.observed({ alive: false, pidFile: false, answered: false, refusing: false })).to.equal('start_failed');
  });
});

describe('pg_rewind output', () => {
  it('says where the servers diverged (what this node loses after it)', () => {
    expect(divergencePoint('pg_rewind: servers diverged at WAL location 0/3000060 on timeline 1\npg_rewind: rewinding from last common checkpoint at 0/2000060 on timeline 1\npg_rewind: Done!')).to.deep.equal({ lsn: '0/3000060', timeline: 1 });
    expect(divergencePoint('pg_rewind: source and target cluster are on the same timeline\npg_rewind: no rewind required')).to.equal(null);
  });
});

describe('replica creation failures', () => {
  const refused = 'pg_basebackup: error: connection to server at "10.0.0.12", port 5432 failed: Connection refused';
  it('a connection refused by the source is told apart from other failures', () => {
    expect(connectFailed(new CommandFailure('pg_basebackup', 1, null, false, refused, ''))).to.equal(true);
    expect(connectFailed(new CommandFailure('pg_basebackup', 1, null, false, 'pg_basebackup: error: could not create directory "/data": No space left on device', ''))).to.equal(false);
    expect(connectFailed(new Error(refused))).to.equal(false);
  });

  it('the chain failed only on an unreachable source when every method that ran was refused at connect', () => {
    const unreachable = { method: 'basebackup', ok: false, error: refused, sourceUnreachable: true as const };
    const skipped = { method: 'pgbackrest', ok: false, error: 'not defined in this node\'s configuration (db.pgbackrest)', skipped: true as const };
    const ran = { method: 'pgbackrest', ok: false, error: 'restore failed' };
    expect(new ReplicaMethodsFailed([unreachable]).sourceUnreachable).to.equal(true);
    expect(new ReplicaMethodsFailed([skipped, unreachable]).sourceUnreachable).to.equal(true);
    expect(new ReplicaMethodsFailed([ran, unreachable]).sourceUnreachable).to.equal(false);
    expect(new ReplicaMethodsFailed([skipped]).sourceUnreachable).to.equal(false);
    expect(new ReplicaMethodsFailed([]).message).to.equal('no replica creation method to try');
    expect(new ReplicaMethodsFailed([ran, unreachable]).message).to.equal(`every replica creation method failed (pgbackrest: restore failed; basebackup: ${refused})`);
  });
});
