import { LOCAL_CONFIG_SCHEMA } from '../../../../src/app/agent/local-config-schema.js';
import { allPaths, getAt, isObj, mutateText, namesPath, NASTY_KEYS, oddScalar, otherKind, pathText, setAt, yamlText, type Path, type Random } from '../../../support/config-fuzz.js';

/**
 * Generated node files for the fuzz tests of the agent's local configuration (in process, and
 * through `warden --validate-config`): a valid file (docs/configuration.md's full example,
 * paths under `dir`, sometimes with method sections) changed in one to three ways at the level
 * of its values (wrong kinds at any path, required keys removed, unknown keys, odd scalars,
 * numbers and durations, nulls), of its environment (WARDEN_* overrides, valid or not) or of
 * its text and bytes (see mutateText).
 */

export interface NodeFileCase {
  readonly bytes: Buffer;
  readonly env: Readonly<Record<string, string>>;
  /** What was done, in order. */
  readonly notes: readonly string[];
  /** The file cannot be valid. */
  readonly invalid: boolean;
  /** Paths one of which a problem must name (itself, a parent or a child), for value-level mutations known to be refused. */
  readonly paths: readonly string[];
}

/** The full example of docs/configuration.md with its files under `dir` (so that the host checks can pass). */
export function baseNodeConfig(rng: Random, dir: string): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    scope: 'demo',
    namespace: '/service',
    name: 'node1',
    restapi: {
      listen: '127.0.0.1:8008',
      connect_address: '127.0.0.1:8008',
      authentication: { username: 'admin', password: 'secret' },
      allowlist: ['10.0.0.0/8', '127.0.0.1'],
      allowlist_include_members: false,
      http_extra_headers: { 'X-Frame-Options': 'DENY' },
      event_history: 1000,
    },
    etcd3: { hosts: ['127.0.0.1:2379'], use_proxies: false },
    bootstrap: {
      dcs: { ttl: 30, loop_wait: 10, retry_timeout: 10, maximum_lag_on_failover: 1048576, db: { use_pg_rewind: true, use_slots: true, parameters: {} } },
      initdb: [{ encoding: 'UTF8' }, 'data-checksums'],
      method: 'initdb',
      post_bootstrap: '/usr/local/bin/create-roles',
    },
    db: {
      listen: '127.0.0.1:15432',
      connect_address: '127.0.0.1:15432',
      data_dir: `${dir}/data/node1`,
      bin_dir: `${dir}/bin`,
      log_dir: `${dir}/data/node1-log`,
      authentication: {
        superuser: { username: 'postgres', password: 'pw' },
        replication: { username: 'replicator', password: 'rpw' },
        rewind: { username: 'rewinder', password: 'rwpw' },
      },
      parameters: { max_connections: 100, shared_buffers: '128MB' },
      pg_hba: ['host all all 10.0.0.0/8 scram-sha-256'],
      pg_ident: ['ops root postgres'],
      use_unix_socket: false,
      callbacks: { on_role_change: '/usr/local/bin/hook' },
      callback_timeout: 60,
      pre_promote: '/usr/local/bin/fence-old-primary',
      before_stop: '/usr/local/bin/drain-pool',
      create_replica_methods: ['basebackup'],
      basebackup: { 'max-rate': '100M' },
      recovery_conf: {},
    },
    tags: { nofailover: false, noloadbalance: false, dc: 'east' },
    watchdog: { mode: 'off', device: '/dev/watchdog', safety_margin: 5 },
    fencer: { enabled: true, socket: `${dir}/fencer.sock` },
    log: { level: 'info', format: 'json', levels: { dcs: 'warn' } },
  };
  if (rng.chance(0.3)) {
    const db = doc['db'] as Record<string, unknown>;
    db['create_replica_methods'] = ['pgbackrest', 'basebackup'];
    db['pgbackrest'] = { command: 'pgbackrest --stanza=main --delta restore', keep_data: true, no_params: true, no_leader: true };
    db['basebackup'] = ['verbose', { 'max-rate': '100M' }];
    db['recovery_conf'] = { restore_command: 'pgbackrest --stanza=main archive-get %f "%p"', recovery_min_apply_delay: 0 };
  }
  if (rng.chance(0.2)) {
    const b = doc['bootstrap'] as Record<string, unknown>;
    b['method'] = 'restore';
    b['restore'] = { command: '/usr/local/bin/restore.sh', no_params: false, keep_existing_recovery_conf: false, recovery_conf: { restore_command: 'cp /archive/%f %p', recovery_target_time: '2030-01-31 02:00:00+00' } };
  }
  return doc;
}

interface SchemaNode {
  type?: string | readonly string[];
  enum?: readonly unknown[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  oneOf?: readonly SchemaNode[];
}

/** The schema of the value at `path` (own keys only; method sections have none). */
function schemaAt(path: Path): SchemaNode | undefined {
  let node: SchemaNode | undefined = LOCAL_CONFIG_SCHEMA as unknown as SchemaNode;
  for (const k of path) {
    if (!node) return undefined;
    if (typeof k === 'number') {
      node = (node as { items?: SchemaNode }).items;
      continue;
    }
    node = node.properties && Object.hasOwn(node.properties, k) ? node.properties[k] : isObj(node.additionalProperties) ? (node.additionalProperties as SchemaNode) : undefined;
  }
  return node;
}

const typesOf = (s: SchemaNode | undefined): string[] => (s?.type === undefined ? (s?.enum ? ['enum'] : s?.oneOf ? s.oneOf.flatMap(typesOf) : []) : Array.isArray(s.type) ? [...s.type] : [s.type as string]);

/** Sections (mappings) whose unknown keys are refused by the schema. */
const STRICT_SECTIONS: readonly Path[] = [[], ['restapi'], ['restapi', 'authentication'], ['etcd3'], ['bootstrap'], ['db'], ['db', 'authentication'], ['db', 'authentication', 'superuser'], ['db', 'authentication', 'replication'], ['db', 'callbacks'], ['watchdog'], ['fencer'], ['log']];

const REQUIRED: readonly Path[] = [['scope'], ['name'], ['restapi'], ['etcd3'], ['db'], ['restapi', 'listen'], ['etcd3', 'hosts'], ['db', 'listen'], ['db', 'data_dir'], ['db', 'authentication'], ['db', 'authentication', 'superuser'], ['db', 'authentication', 'replication'], ['db', 'authentication', 'superuser', 'username']];

/** Numbers every one of which these settings refuse. */
const NUMERIC: readonly Path[] = [['restapi', 'event_history'], ['db', 'callback_timeout'], ['watchdog', 'safety_margin'], ['tags', 'failover_priority'], ['tags', 'sync_priority'], ['bootstrap', 'dcs', 'ttl'], ['bootstrap', 'dcs', 'loop_wait'], ['bootstrap', 'dcs', 'retry_timeout']];

/** Where sizes and durations are read (string or number). */
const SIZE_OR_DURATION: readonly Path[] = [['bootstrap', 'dcs', 'ttl'], ['bootstrap', 'dcs', 'maximum_lag_on_failover'], ['bootstrap', 'dcs', 'member_slots_ttl'], ['bootstrap', 'dcs', 'preferred_leader_delay'], ['db', 'basebackup', 'max-rate'], ['db', 'callback_timeout'], ['db', 'parameters', 'statement_timeout'], ['db', 'recovery_conf', 'recovery_min_apply_delay']];

/** Overrides, each with values that read right and values that do not. */
const ENV_VARIABLES: Readonly<Record<string, readonly string[]>> = {
  WARDEN_SCOPE: ['demo', '', 'bad scope', 'x'.repeat(500)],
  WARDEN_NAME: ['node2', '../x', '\u00e9'],
  WARDEN_RESTAPI_LISTEN: ['127.0.0.1:8009', '8008', '127.0.0.1:70000', ''],
  WARDEN_RESTAPI_HTTP_EXTRA_HEADERS: ['{X-A: b}', '{{{', '[a', '- a', 'a: &a [*a]', '!!binary aGk=', 'x: *nope'],
  WARDEN_RESTAPI_ALLOWLIST: ['10.0.0.0/8, 127.0.0.1', '[a, ', '[1, [2]]', '', '999.1.1.1'],
  WARDEN_RESTAPI_EVENT_HISTORY: ['10', '-1', '1e99', 'NaN', 'ten'],
  WARDEN_ETCD3_HOSTS: ['a:2379,b:2379', '[a:1, b:2]', '[a, ', '', ',,,'],
  WARDEN_DB_PARAMETERS: ['{work_mem: 4MB}', 'x: [1', '{a: {b: 1}}', '[]'],
  WARDEN_DB_CALLBACK_TIMEOUT: ['5', '0', '-5', '1.5', 'soon'],
  WARDEN_DB_SUPERUSER_PASSWORD: ['', 'p@ss', '\u0000'],
  WARDEN_DB_REWIND_USERNAME: ['rewinder', 'a,b', ''],
  WARDEN_TAGS_NOFAILOVER: ['true', 'TRUE', 'yes', '1'],
  WARDEN_TAGS_FAILOVER_PRIORITY: ['2', '-1', '1.5', 'high'],
  WARDEN_TAGS___PROTO__: ['x'],
  WARDEN_DB___PROTO__: ['1'],
  WARDEN_LOG_LEVELS: ['{dcs: debug}', '- a', '{dcs: loud}', 'a: &a [*a, *a]'],
  WARDEN_LOG_LEVEL: ['debug', 'verbose', ''],
  WARDEN_WATCHDOG_SAFETY_MARGIN: ['3', '25', '-1', 'x'],
  WARDEN_FENCER_ENABLED: ['false', 'no', 'maybe'],
  WARDEN_UNKNOWN_THING: ['1'],
};

/** Keys that may stand anywhere as unknown ones (what the agent's protocol reserves, `$number`, is left out: see the report of the fuzz run). */
const UNKNOWN_KEYS = NASTY_KEYS.filter((k) => k !== '' && k.trim() !== '');

/** The section (first path segment) a WARDEN_* variable lands in. */
function envSection(variable: string): string {
  const rest = variable.slice('WARDEN_'.length).toLowerCase();
  return ['scope', 'namespace', 'name'].includes(rest) ? rest : rest.split('_')[0]!;
}

/** One generated node file with its environment. */
export function nodeFileCase(rng: Random, dir: string): NodeFileCase {
  let doc: Record<string, unknown> = baseNodeConfig(rng, dir);
  const notes: string[] = [];
  /** Paths of changes surely refused: the file is invalid while one holds, and a problem must name one. */
  let claims: string[] = [];
  let textInvalid = false;
  const env: Record<string, string> = {};
  const n = rng.weighted({ one: 6, two: 3, three: 1 }) === 'one' ? 1 : rng.chance(0.75) ? 2 : 3;
  let bytes: Buffer | null = null;
  /** A change at `path` voids the claims it may have undone: at it, inside it, or above it (a scalar replaced by a mapping to hold it). */
  const touch = (path: string) => {
    claims = claims.filter((c) => !(path === '' || c === path || c.startsWith(`${path}.`) || c.startsWith(`${path}[`) || path.startsWith(`${c}.`) || path.startsWith(`${c}[`)));
  };
  for (let m = 0; m < n; m++) {
    const kind = rng.weighted({ wrongKind: 10, remove: 4, unknownKey: 6, oddScalar: 6, number: 4, sizeDuration: 4, nullValue: 3, env: 5, hostFile: 2, text: 9 });
    if (kind === 'text') {
      // Text mutations apply last, on the file as written.
      const r = mutateText(rng, bytes ?? yamlText(rng, doc), Object.keys(doc).length ? Object.keys(doc) : ['scope'], rng.pick(['colour', 'tags', 'extra']));
      bytes = r.bytes;
      notes.push(r.note);
      // A later change of the text may undo what made it invalid (a cut drops the duplicate key added before).
      textInvalid = r.invalid || (textInvalid && !!r.keepsValues);
      // Refused at the YAML level, the file's values are not looked at; changed, they may no longer be refused.
      if (r.invalid || !r.keepsValues) claims = [];
      continue;
    }
    if (bytes) continue;
    const every = allPaths(doc);
    if (!every.length && kind !== 'env') continue;
    switch (kind) {
      case 'wrongKind': {
        const path = rng.pick(every);
        const was = getAt(doc, path);
        const types = typesOf(schemaAt(path));
        const value = otherKind(rng, was);
        setAt(doc, path, value);
        touch(pathText(path));
        notes.push(`${pathText(path)}: ${JSON.stringify(was)?.slice(0, 40)} -> ${JSON.stringify(value)}`);
        // Surely refused: a collection where only scalars go, or a scalar (not a string: etcd3.hosts takes one) where only collections go.
        const scalarOnly = types.length > 0 && !types.some((t) => t === 'object' || t === 'array');
        const collectionOnly = types.length > 0 && types.every((t) => t === 'object' || t === 'array');
        const collection = Array.isArray(value) || isObj(value);
        if ((scalarOnly && collection) || (collectionOnly && !collection && typeof value !== 'string')) claims.push(pathText(path));
        break;
      }
      case 'remove': {
        const path = rng.pick(REQUIRED);
        if (getAt(doc, path) === undefined) break;
        setAt(doc, path, undefined);
        touch(pathText(path));
        notes.push(`removed ${pathText(path)}`);
        claims.push(pathText(path));
        break;
      }
      case 'unknownKey': {
        const section = rng.pick(STRICT_SECTIONS);
        const at = section.length ? getAt(doc, section) : doc;
        if (!isObj(at)) break;
        const key = rng.pick(UNKNOWN_KEYS);
        const value = rng.chance(0.7) ? oddScalar(rng) : otherKind(rng, 1);
        if (Object.hasOwn(at, key)) break;
        setAt(doc, [...section, key], value);
        notes.push(`unknown key ${JSON.stringify(key)} in ${pathText(section) || 'the top level'}`);
        claims.push(pathText([...section, key]));
        break;
      }
      case 'oddScalar': {
        const path = rng.pick(every);
        const value = oddScalar(rng);
        setAt(doc, path, value);
        touch(pathText(path));
        notes.push(`${pathText(path)} = ${JSON.stringify(value)?.slice(0, 60)}`);
        break;
      }
      case 'number': {
        const path = rng.pick(NUMERIC);
        const value = rng.pick([-1, NaN, Infinity, -Infinity, -1e99]);
        setAt(doc, path, value);
        touch(pathText(path));
        notes.push(`${pathText(path)} = ${String(value)}`);
        claims.push(pathText(path));
        break;
      }
      case 'sizeDuration': {
        const path = rng.pick(SIZE_OR_DURATION);
        const value = rng.pick<unknown>(['10 MB', '-1s', '1e99', '1e99s', '30s', '1h', '1MB', '-1', '100M', '', ' 5 ', '5m', 0, -0.5, 1e99]);
        setAt(doc, path, value);
        touch(pathText(path));
        notes.push(`${pathText(path)} = ${JSON.stringify(value)}`);
        break;
      }
      case 'nullValue': {
        const path = rng.pick(every);
        setAt(doc, path, null);
        touch(pathText(path));
        notes.push(`${pathText(path)} = null`);
        break;
      }
      case 'hostFile': {
        // Files the host checks read: a device that never ends, an empty one, a directory, none.
        const path = rng.pick<Path>([['restapi', 'certfile'], ['restapi', 'keyfile'], ['restapi', 'cafile'], ['etcd3', 'cacert'], ['log', 'file'], ['db', 'bin_dir']]);
        const value = rng.pick(['/dev/zero', '/dev/null', '/dev/urandom', dir, `${dir}/missing.pem`, '/proc/self/mem']);
        setAt(doc, path, value);
        touch(pathText(path));
        if (path[1] === 'certfile' && rng.chance(0.5)) setAt(doc, ['restapi', 'keyfile'], value);
        notes.push(`${pathText(path)} = ${value}`);
        break;
      }
      case 'env': {
        const variable = rng.pick(Object.keys(ENV_VARIABLES));
        env[variable] = rng.pick(ENV_VARIABLES[variable]!);
        // An override may put right what the file has wrong in its section.
        touch(envSection(variable));
        notes.push(`${variable}=${JSON.stringify(env[variable])}`);
        break;
      }
    }
    if (!isObj(doc)) doc = {};
  }
  if (!bytes) bytes = Buffer.from(yamlText(rng, doc), 'utf8');
  // Overrides apply over the file, whatever came first.
  for (const variable of Object.keys(env)) touch(envSection(variable));
  return { bytes, env, notes, invalid: textInvalid || claims.length > 0, paths: textInvalid ? [] : claims };
}

export { namesPath };
