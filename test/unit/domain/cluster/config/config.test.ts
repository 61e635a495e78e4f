import { expect } from 'chai';
import { ValidationError } from '../../../../../src/domain/errors.js';
import {
  DEFAULT_CONFIG,
  mergePatch,
  resolveConfig,
  validateConfig,
  validateConfigOrThrow,
  type RawConfig,
} from '../../../../../src/domain/cluster/config/config.js';
import { DYNAMIC_CONFIG_KEYS, DYNAMIC_CONFIG_SCHEMA, pointerToPath } from '../../../../../src/domain/cluster/config/config-schema.js';

/** The one problem at `path`, failing when there is none. */
function problemAt(raw: unknown, path: string): string {
  const found = validateConfig(raw).filter((p) => p.path === path);
  expect(found, `expected a problem at ${path}, got ${JSON.stringify(validateConfig(raw))}`).to.have.length.greaterThan(0);
  return found.map((p) => p.message).join(' | ');
}

describe('domain/cluster/config: resolveConfig (defaults, tolerant)', () => {
  it('fills every documented default for null, undefined and {}', () => {
    for (const raw of [null, undefined, {}]) expect(resolveConfig(raw)).to.deep.equal(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG).to.include({ ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 1048576 });
    expect(DEFAULT_CONFIG).to.include({ max_timelines_history: 0, primary_start_timeout: 300, primary_stop_timeout: 0 });
    expect(DEFAULT_CONFIG).to.include({ synchronous_mode: false, synchronous_mode_strict: false, synchronous_node_count: 1 });
    expect(DEFAULT_CONFIG).to.include({ failsafe_mode: false, check_timeline: false, pause: false });
    expect(DEFAULT_CONFIG.db).to.deep.equal({
      use_pg_rewind: true,
      use_slots: true,
      // Nothing deletes a data directory unless the operator opted in.
      remove_data_directory_on_rewind_failure: false,
      remove_data_directory_on_diverged_timelines: false,
      parameters: {},
    });
  });

  it('keeps valid values', () => {
    const c = resolveConfig({ ttl: 60, loop_wait: 5, retry_timeout: 20, synchronous_mode: 'quorum', pause: true, check_timeline: true });
    expect(c).to.include({ ttl: 60, loop_wait: 5, retry_timeout: 20, synchronous_mode: 'quorum', pause: true, check_timeline: true });
  });

  it('converts a maximum_lag_on_failover size string to bytes', () => {
    expect(resolveConfig({ maximum_lag_on_failover: '1MB' }).maximum_lag_on_failover).to.equal(1048576);
    expect(resolveConfig({ maximum_lag_on_failover: '1.5kB' }).maximum_lag_on_failover).to.equal(1536);
    expect(resolveConfig({ maximum_lag_on_failover: 42 }).maximum_lag_on_failover).to.equal(42);
  });

  it('maximum_lag_on_syncnode: bytes or a size string; -1 and absent mean no limit; anything else is refused', () => {
    expect(resolveConfig({}).maximum_lag_on_syncnode).to.equal(null);
    expect(resolveConfig({ maximum_lag_on_syncnode: '16MB' }).maximum_lag_on_syncnode).to.equal(16 * 1048576);
    expect(resolveConfig({ maximum_lag_on_syncnode: 4096 }).maximum_lag_on_syncnode).to.equal(4096);
    expect(resolveConfig({ maximum_lag_on_syncnode: -1 }).maximum_lag_on_syncnode).to.equal(null);
    expect(resolveConfig({ maximum_lag_on_syncnode: 'lots' }).maximum_lag_on_syncnode).to.equal(null);
    expect(validateConfig({ maximum_lag_on_syncnode: -1 })).to.deep.equal([]);
    expect(validateConfig({ maximum_lag_on_syncnode: -2 })).to.deep.equal([
      { path: 'maximum_lag_on_syncnode', message: 'expected -1 (off), a non-negative integer (bytes) or a size such as "1MB" (units B, kB, MB, GB, TB), got -2' },
    ]);
  });

  it('falls back to the default for each invalid value alone, never throwing', () => {
    const c = resolveConfig({ ttl: 5, loop_wait: 'x', retry_timeout: 1, maximum_lag_on_failover: '1XB', synchronous_mode: 'yes', pause: 'true', check_timeline: true });
    expect(c).to.include({ ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 1048576, synchronous_mode: false, pause: false, check_timeline: true });
  });

  it('drops only the invalid or forbidden server parameters', () => {
    const c = resolveConfig({ db: { use_slots: false, parameters: { work_mem: '4MB', max_connections: 100, port: 5433, listen_addresses: '*', cluster_name: 'x', bad: {} } } });
    expect(c.db).to.deep.equal({
      use_pg_rewind: true,
      use_slots: false,
      remove_data_directory_on_rewind_failure: false,
      remove_data_directory_on_diverged_timelines: false,
      parameters: { work_mem: '4MB', max_connections: 100 },
    });
  });

  it('keeps valid permanent slots and ignore_slots entries, drops invalid ones', () => {
    const c = resolveConfig({
      slots: { keep_me: { type: 'physical' }, 'Bad-Name': { type: 'physical' }, logical_no_db: { type: 'logical' } },
      ignore_slots: [{ name: 'ext_slot' }, { name: 1 }],
    });
    expect(c.slots).to.deep.equal({ keep_me: { type: 'physical' } });
    expect(c.ignore_slots).to.deep.equal([{ name: 'ext_slot' }]);
  });

  it('a stored standby_cluster it cannot read keeps the cluster a standby cluster (never promoted), with the fields that are valid', () => {
    expect(resolveConfig({ standby_cluster: { host: '10.0.0.1', port: 5432 } }).standby_cluster).to.deep.equal({ host: '10.0.0.1', port: 5432 });
    expect(resolveConfig({ standby_cluster: null }).standby_cluster).to.equal(null);
    expect(resolveConfig({}).standby_cluster).to.equal(null);
    expect(resolveConfig({ standby_cluster: {} }).standby_cluster).to.deep.equal({});
    expect(resolveConfig({ standby_cluster: { host: 'h', port: 'x' } }).standby_cluster).to.deep.equal({ host: 'h' });
    expect(resolveConfig({ standby_cluster: { host: 'h\nx', restore_command: 'cp a b', colour: 1 } }).standby_cluster).to.deep.equal({ restore_command: 'cp a b' });
    expect(resolveConfig({ standby_cluster: 'remote' }).standby_cluster).to.deep.equal({});
  });

  it('ignores a document that is not an object', () => {
    expect(resolveConfig([] as unknown as RawConfig)).to.deep.equal(DEFAULT_CONFIG);
  });

  it('returns a frozen value', () => {
    const c = resolveConfig({ db: { parameters: { a: 1 } } });
    expect(Object.isFrozen(c) && Object.isFrozen(c.db) && Object.isFrozen(c.db.parameters)).to.equal(true);
  });
});

describe('domain/cluster/config: mergePatch', () => {
  it('merges objects recursively', () => {
    expect(mergePatch({ ttl: 30, db: { use_slots: true, parameters: { a: 1 } } }, { db: { parameters: { b: 2 } } })).to.deep.equal({
      ttl: 30,
      db: { use_slots: true, parameters: { a: 1, b: 2 } },
    });
  });

  it('removes a key set to null (reset to its default), at any depth', () => {
    expect(mergePatch({ ttl: 40, db: { parameters: { a: 1, b: 2 } } }, { ttl: null, db: { parameters: { a: null } } })).to.deep.equal({
      db: { parameters: { b: 2 } },
    });
  });

  it('replaces lists whole', () => {
    expect(mergePatch({ ignore_slots: [{ name: 'a' }, { name: 'b' }] }, { ignore_slots: [{ name: 'c' }] })).to.deep.equal({ ignore_slots: [{ name: 'c' }] });
  });

  it('replaces a scalar with an object and an object with a scalar', () => {
    expect(mergePatch({ standby_cluster: 'x', pause: { a: 1 } }, { standby_cluster: { host: 'h' }, pause: true })).to.deep.equal({
      standby_cluster: { host: 'h' },
      pause: true,
    });
  });

  it('drops nulls inside a new object (they mean "absent")', () => {
    expect(mergePatch({}, { db: { parameters: { a: null, b: 1 } } })).to.deep.equal({ db: { parameters: { b: 1 } } });
  });

  it('never mutates its inputs', () => {
    const base = Object.freeze({ ttl: 30, db: Object.freeze({ parameters: Object.freeze({ a: 1 }) }) });
    const patch = Object.freeze({ ttl: null, db: Object.freeze({ parameters: Object.freeze({ a: 2 }) }) });
    const before = JSON.stringify([base, patch]);
    const out = mergePatch(base, patch);
    expect(JSON.stringify([base, patch])).to.equal(before);
    expect(out).to.deep.equal({ db: { parameters: { a: 2 } } });
  });
});

describe('domain/cluster/config: validateConfig', () => {
  it('accepts the defaults and an empty document', () => {
    expect(validateConfig({})).to.deep.equal([]);
    expect(validateConfig(JSON.parse(JSON.stringify(DEFAULT_CONFIG, (k, v) => (k === 'standby_cluster' ? undefined : v))))).to.deep.equal([]);
  });

  it('accepts every documented key', () => {
    const full = {
      ttl: 60, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: '16MB', maximum_lag_on_syncnode: '32MB', max_timelines_history: 5,
      primary_start_timeout: 300, primary_stop_timeout: 0, synchronous_mode: 'quorum', synchronous_mode_strict: true,
      synchronous_node_count: 2, failsafe_mode: true, check_timeline: true, pause: true, preferred_leader_delay: 30, member_slots_ttl: '10min',
      db: { use_pg_rewind: true, use_slots: true, parameters: { max_connections: 100, wal_level: 'replica', hot_standby: true } },
      slots: { archiver: { type: 'physical' }, cdc: { type: 'logical', database: 'app', plugin: 'pgoutput' } },
      ignore_slots: [{ name: 'ext', type: 'logical', database: 'app', plugin: 'wal2json' }],
      standby_cluster: { host: '10.0.0.1', port: 5432, primary_slot_name: 'standby', restore_command: 'cp /a/%f %p' },
    };
    expect(validateConfig(full)).to.deep.equal([]);
    expect(Object.keys(full).sort()).to.deep.equal([...DYNAMIC_CONFIG_KEYS].sort());
  });

  it('standby_cluster.host: a host name or an IP address, nothing else (a line break or a space would land in primary_conninfo)', () => {
    for (const host of ['10.0.0.1', 'db1.example.com', 'db-1', '::1', 'fe80::1%eth0']) expect(validateConfig({ standby_cluster: { host, port: 5432 } }), host).to.deep.equal([]);
    for (const host of ['10.0.0.1 ', "127.0.0.1\nlisten_addresses = '*'", 'two words', '-x', 'a..b']) {
      expect(validateConfig({ standby_cluster: { host, port: 5432 } }), host).to.deep.equal([
        { path: 'standby_cluster.host', message: `expected a host name or an IP address, got ${JSON.stringify(host)}` },
      ]);
    }
  });

  it('member_slots_ttl: seconds or a duration (s, min, h, d), default 30 minutes; anything else refused', () => {
    expect(resolveConfig({}).member_slots_ttl).to.equal(1800);
    expect(resolveConfig({ member_slots_ttl: 0 }).member_slots_ttl).to.equal(0);
    expect(resolveConfig({ member_slots_ttl: '45s' }).member_slots_ttl).to.equal(45);
    expect(resolveConfig({ member_slots_ttl: '10min' }).member_slots_ttl).to.equal(600);
    expect(resolveConfig({ member_slots_ttl: '2h' }).member_slots_ttl).to.equal(7200);
    expect(resolveConfig({ member_slots_ttl: '1d' }).member_slots_ttl).to.equal(86400);
    expect(resolveConfig({ member_slots_ttl: 'soon' }).member_slots_ttl, 'an invalid value falls back alone').to.equal(1800);
    expect(validateConfig({ member_slots_ttl: -1 })).to.deep.equal([{ path: 'member_slots_ttl', message: 'expected a non-negative integer (seconds) or a duration such as "30min" (units s, min, h, d), at most 24 days, got -1' }]);
    expect(validateConfig({ member_slots_ttl: '5 weeks' })[0]!.path).to.equal('member_slots_ttl');
  });

  it('refuses a document that is not an object', () => {
    expect(validateConfig(null)).to.deep.equal([{ path: '', message: 'expected an object, got null' }]);
    expect(validateConfig([1])[0]!.message).to.equal('expected an object, got [1]');
  });

  it('ttl below 20 names ttl, the minimum and the value', () => {
    expect(problemAt({ ttl: 10, loop_wait: 1, retry_timeout: 3 }, 'ttl')).to.equal('expected an integer >= 20, got 10');
  });

  it('loop_wait below 1', () => {
    expect(problemAt({ loop_wait: 0 }, 'loop_wait')).to.equal('expected an integer >= 1, got 0');
  });

  it('retry_timeout below 3', () => {
    expect(problemAt({ retry_timeout: 2 }, 'retry_timeout')).to.equal('expected an integer >= 3, got 2');
  });

  it('synchronous_node_count below 1', () => {
    expect(problemAt({ synchronous_node_count: 0 }, 'synchronous_node_count')).to.equal('expected an integer >= 1, got 0');
  });

  it('a wrong type says what was expected and what was found', () => {
    expect(problemAt({ ttl: '30' }, 'ttl')).to.equal('expected an integer, got "30"');
    expect(problemAt({ loop_wait: 1.5 }, 'loop_wait')).to.equal('expected an integer, got 1.5');
    expect(problemAt({ pause: 'yes' }, 'pause')).to.equal('expected a boolean, got "yes"');
    expect(problemAt({ db: [] }, 'db')).to.equal('expected an object, got []');
    expect(problemAt({ primary_start_timeout: -1 }, 'primary_start_timeout')).to.equal('expected a number >= 0, got -1');
  });

  it('synchronous_mode must be true, false or "quorum"', () => {
    expect(problemAt({ synchronous_mode: 'on' }, 'synchronous_mode')).to.equal('expected one of true, false, "quorum", got "on"');
    for (const ok of [true, false, 'quorum']) expect(validateConfig({ synchronous_mode: ok })).to.deep.equal([]);
  });

  it('maximum_lag_on_failover accepts bytes or a size string and refuses anything else', () => {
    expect(validateConfig({ maximum_lag_on_failover: 0 })).to.deep.equal([]);
    expect(validateConfig({ maximum_lag_on_failover: '64MB' })).to.deep.equal([]);
    for (const bad of ['1XB', -1, 1.5, '10 mb', true]) {
      expect(problemAt({ maximum_lag_on_failover: bad }, 'maximum_lag_on_failover')).to.equal(
        `expected a non-negative integer (bytes) or a size such as "1MB" (units B, kB, MB, GB, TB), got ${JSON.stringify(bad)}`,
      );
    }
  });

  it('loop_wait + 2*retry_timeout must not exceed ttl', () => {
    expect(problemAt({ ttl: 30, loop_wait: 11, retry_timeout: 10 }, 'ttl')).to.equal(
      'expected loop_wait + 2*retry_timeout <= ttl, got 11 + 2*10 = 31 > ttl 30 (defaults count for absent keys)',
    );
    expect(validateConfig({ ttl: 30, loop_wait: 10, retry_timeout: 10 })).to.deep.equal([]);
  });

  it('the ttl rule counts defaults for absent keys', () => {
    expect(problemAt({ ttl: 25 }, 'ttl')).to.include('10 + 2*10 = 30 > ttl 25');
    expect(validateConfig({ ttl: 20, loop_wait: 4, retry_timeout: 8 })).to.deep.equal([]);
  });

  it('db.parameters may not set listen_addresses, port or cluster_name', () => {
    const problems = validateConfig({ db: { parameters: { listen_addresses: '*', port: 5433, cluster_name: 'x', work_mem: '4MB' } } });
    expect(problems.map((p) => p.path)).to.deep.equal(['db.parameters.listen_addresses', 'db.parameters.port', 'db.parameters.cluster_name']);
    expect(problems[1]!.message).to.equal("port cannot be set in parameters (Warden sets it from the node's local configuration), got 5433");
    // Names of the object prototype are unknown parameters like any other.
    for (const name of ['constructor', '__proto__', 'toString']) {
      const [p] = validateConfig({ db: { parameters: JSON.parse(`{${JSON.stringify(name)}: "x"}`) } });
      expect(p?.message, name).to.match(/^unknown parameter: PostgreSQL 13-18 has no setting/);
    }
  });

  it('db.parameters refuses what would leave postgresql.conf unreadable, and what Warden manages, saying why', () => {
    const at = (parameters: Record<string, unknown>) => validateConfig({ db: { parameters } }).map((p) => `${p.path}: ${p.message}`);
    expect(at({ log_line_prefix: 'a\nb = c' })).to.deep.equal([
      'db.parameters.log_line_prefix: expected a value on one line (postgresql.conf cannot hold line breaks or NUL characters), got "a\\nb = c"',
    ]);
    expect(at({ work_mem: '1\u0000', 'bad name': 1, 'a.b.c': 1, data_directory: '/x', hot_standby: 'off' }).map((l) => l.split(':')[0])).to.deep.equal([
      'db.parameters.work_mem',
      'db.parameters.bad name',
      'db.parameters.a.b.c',
      'db.parameters.data_directory',
      'db.parameters.hot_standby',
    ]);
    expect(at({ hot_standby: 'on', wal_log_hints: true, 'auto_explain.log_min_duration': '1s', Work_Mem: '4MB', log_line_prefix: "%m [%p] 'x' " })).to.deep.equal([]);
  });

  it('durations stop at the longest a timer can wait (about 24 days); counts at 1000', () => {
    expect(problemAt({ loop_wait: 2_200_000, ttl: 2_200_010 }, 'loop_wait')).to.equal('expected an integer <= 2147483, got 2200000');
    expect(problemAt({ primary_start_timeout: 1e308 }, 'primary_start_timeout')).to.match(/^expected a number <= 2147483, got /);
    expect(problemAt({ synchronous_node_count: 1e300 }, 'synchronous_node_count')).to.match(/<= 1000/);
    expect(problemAt({ member_slots_ttl: '30d' }, 'member_slots_ttl')).to.match(/at most 24 days, got "30d"$/);
    expect(validateConfig({ ttl: 2_147_483, loop_wait: 3600, member_slots_ttl: '24d' })).to.deep.equal([]);
  });

  it('a number JSON cannot hold (1e400 parses to Infinity) is named as such, not as null', () => {
    expect(problemAt({ ttl: Number.POSITIVE_INFINITY }, 'ttl')).to.equal('expected an integer, got Infinity (a number out of range)');
  });

  it('resolveConfig drops a stored parameter that validateConfig refuses, keeping the others', () => {
    const resolved = resolveConfig({ db: { parameters: { log_line_prefix: 'a\nb', work_mem: '4MB', primary_conninfo: 'host=x' } } });
    expect(resolved.db.parameters).to.deep.equal({ work_mem: '4MB' });
  });

  it('db.parameters values are strings, numbers or booleans', () => {
    expect(problemAt({ db: { parameters: { work_mem: ['4MB'] } } }, 'db.parameters.work_mem')).to.equal('expected a string or a number or a boolean, got ["4MB"]');
  });

  it('refuses an unknown top-level key (typo protection), listing the known ones', () => {
    const msg = problemAt({ tll: 30 }, 'tll');
    expect(msg).to.match(/^unknown key \(a typo\?\): expected one of ttl, loop_wait, /);
    expect(msg).to.match(/, got 30$/);
  });

  it('refuses an unknown key inside db', () => {
    expect(problemAt({ db: { use_slot: true } }, 'db.use_slot')).to.match(/^unknown key .*use_pg_rewind, use_slots, remove_data_directory_on_rewind_failure, remove_data_directory_on_diverged_timelines, parameters, got true$/);
  });

  it('checks permanent slots: name, type, and database+plugin for logical slots', () => {
    expect(problemAt({ slots: { 'Bad-Name': { type: 'physical' } } }, 'slots.Bad-Name')).to.match(/^invalid name: expected lowercase/);
    expect(problemAt({ slots: { s: { type: 'other' } } }, 'slots.s.type')).to.equal('expected one of "physical", "logical", got "other"');
    expect(problemAt({ slots: { s: { type: 'logical', database: 'app' } } }, 'slots.s.plugin')).to.equal('expected a value (required here), got nothing');
    expect(problemAt({ slots: { s: {} } }, 'slots.s.type')).to.equal('expected a value (required here), got nothing');
  });

  it('checks ignore_slots entries with their index in the path', () => {
    expect(problemAt({ ignore_slots: [{ name: 'ok' }, { name: 7 }] }, 'ignore_slots[1].name')).to.equal('expected a string, got 7');
  });

  it('checks standby_cluster fields and needs host or restore_command', () => {
    expect(problemAt({ standby_cluster: { host: 'h', port: 70000 } }, 'standby_cluster.port')).to.equal('expected an integer <= 65535, got 70000');
    expect(problemAt({ standby_cluster: { port: 5432 } }, 'standby_cluster')).to.match(/^expected host or restore_command/);
    expect(validateConfig({ standby_cluster: null })).to.deep.equal([]);
  });

  it('checks the rest of standby_cluster: recovery settings, replica creation methods, and port or slot without a host', () => {
    const full = {
      host: 'dc1', port: 5432, primary_slot_name: 'dc2', restore_command: 'cp /a/%f %p', archive_cleanup_command: 'pg_archivecleanup /a %r',
      recovery_min_apply_delay: '5min', create_replica_methods: ['pgbackrest', 'basebackup'],
    };
    expect(validateConfig({ standby_cluster: full })).to.deep.equal([]);
    expect(validateConfig({ standby_cluster: { host: 'h', recovery_min_apply_delay: 300000 } })).to.deep.equal([]);
    expect(resolveConfig({ standby_cluster: full }).standby_cluster).to.deep.equal(full);
    expect(problemAt({ standby_cluster: { host: 'h', recovery_min_apply_delay: 'soon' } }, 'standby_cluster.recovery_min_apply_delay')).to.match(/^expected a string matching/);
    expect(problemAt({ standby_cluster: { host: 'h', create_replica_methods: [] } }, 'standby_cluster.create_replica_methods')).to.equal('expected at least 1 item(s), got []');
    expect(problemAt({ standby_cluster: { host: 'h', create_replica_methods: ['a', 'a'] } }, 'standby_cluster.create_replica_methods')).to.match(/^expected each item once, got/);
    expect(problemAt({ standby_cluster: { restore_command: 'x', port: 5432 } }, 'standby_cluster.port')).to.match(/^expected standby_cluster.host to be set too/);
    expect(problemAt({ standby_cluster: { restore_command: 'x', primary_slot_name: 's' } }, 'standby_cluster.primary_slot_name')).to.match(/^expected standby_cluster.host to be set too/);
    expect(problemAt({ standby_cluster: { host: 'h', colour: 'x' } }, 'standby_cluster.colour')).to.match(/^unknown key/);
  });

  it('lists every problem, not only the first', () => {
    const problems = validateConfig({ ttl: 'x', loop_wait: 0, retry_timeout: 1, synchronous_mode: 2, synchronous_node_count: 0, nope: 1, db: { parameters: { port: 1 } } });
    expect(problems.map((p) => p.path).sort()).to.deep.equal(
      ['db.parameters.port', 'loop_wait', 'nope', 'retry_timeout', 'synchronous_mode', 'synchronous_node_count', 'ttl'].sort(),
    );
  });

  it('validateConfigOrThrow returns a valid document and throws invalid_config listing every problem', () => {
    expect(validateConfigOrThrow({ ttl: 40 })).to.deep.equal({ ttl: 40 });
    try {
      validateConfigOrThrow({ ttl: 10, loop_wait: 0 });
      expect.fail('did not throw');
    } catch (e) {
      expect(e).to.be.instanceOf(ValidationError);
      const err = e as ValidationError;
      expect(err.code).to.equal('invalid_config');
      expect(err.problems.map((p) => p.path)).to.include.members(['ttl', 'loop_wait']);
      expect(err.message).to.include('ttl: expected an integer >= 20, got 10');
      expect(err.message).to.include('loop_wait: expected an integer >= 1, got 0');
    }
  });

  it('a merged patch is validated as a whole (PATCH /config flow)', () => {
    const merged = mergePatch({ ttl: 30, loop_wait: 10 }, { retry_timeout: 15 });
    expect(validateConfig(merged).map((p) => p.path)).to.deep.equal(['ttl']);
  });

  it('exports the JSON schema, refusing unknown keys at the top level', () => {
    expect(DYNAMIC_CONFIG_SCHEMA.type).to.equal('object');
    expect(DYNAMIC_CONFIG_SCHEMA.additionalProperties).to.equal(false);
    expect(pointerToPath('/ignore_slots/0/name')).to.equal('ignore_slots[0].name');
    expect(pointerToPath('/db/parameters/a~1b')).to.equal('db.parameters.a/b');
  });
});
