import { Ajv } from 'ajv';
import { NODE_FILE_LIMITS, parseYamlText, readConfigText, type YamlIssue } from '../yaml-read.js';
import { resolveConfig, validateConfig, type ParameterValue, type RawConfig } from '../../domain/cluster/config/config.js';
import { safetyMarginProblem } from '../../domain/cluster/ha/fence-window.js';
import { topologyTagProblems } from '../../domain/cluster/model/topology-tags.js';
import { parameterProblem } from '../../domain/cluster/config/server-parameters.js';
import type { TagValue, WatchdogMode } from '../../domain/cluster/model/node.js';
import type { Problem } from '../../domain/errors.js';
import { ajvProblems } from '../../adapters/http/ajv-problems.js';
import { isAllowlistHostName, parseAllowlistEntry, type VerifyClient } from '../../adapters/http/auth.js';
import { ENV_NESTED_KEYS, ENV_SECTIONS, LOCAL_CONFIG_SCHEMA, SCALAR_KEYS } from './local-config-schema.js';
import { methodProblems, splitMethodSections } from './local-config-methods.js';
import { withPatroniHints } from './patroni-keys.js';
import type { BasebackupOptions } from '../../adapters/database/pg-replica-methods.js';
import { splitHostPort } from '../../adapters/database/pg-options.js';
import { initdbOptionProblems } from '../../adapters/database/pg-initdb-args.js';
import { DEFAULT_CALLBACK_TIMEOUT, DEFAULT_DB_BIN_DIR, DEFAULT_EVENT_HISTORY, defaultLogDir, LocalConfigError, type CallbackActionName, type LocalConfig, type LogLevelName } from './local-config-types.js';

export * from './local-config-types.js';

const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });
const validateSchema = ajv.compile(LOCAL_CONFIG_SCHEMA);

type Json = Record<string, unknown>;
type SchemaNode = { type?: string | readonly string[]; properties?: Record<string, SchemaNode>; additionalProperties?: SchemaNode | boolean };

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Schema of the value at `path`, to type an environment string; undefined for unknown keys. */
function schemaAt(path: readonly string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = LOCAL_CONFIG_SCHEMA as unknown as SchemaNode;
  for (const key of path) {
    if (!node) return undefined;
    // Own keys only: `__proto__` or `constructor` must not find Object.prototype's.
    const named: SchemaNode | undefined = node.properties && Object.hasOwn(node.properties, key) ? node.properties[key] : undefined;
    node = named ?? (isObject(node.additionalProperties) ? (node.additionalProperties as SchemaNode) : undefined);
  }
  return node;
}

/** A YAML value of an environment variable (a list or a mapping), or why it is none. */
function yamlEnvValue(text: string): { value: unknown } | { problem: string } {
  const parsed = parseYamlText(text, NODE_FILE_LIMITS);
  const first = parsed.issues[0];
  if (first) return { problem: `expected YAML or JSON, got text it cannot read${first.path ? ` (at ${first.path})` : first.col !== undefined ? ` (column ${first.col}${first.line !== undefined && first.line > 1 ? ` of line ${first.line}` : ''})` : ''}: ${first.message}` };
  return { value: parsed.value };
}

/** Converts an environment string to the type the schema wants there; what cannot convert stays a string for the validator to report. */
function typedEnvValue(raw: string, schema: SchemaNode | undefined): { value: unknown } | { problem: string } {
  const types = schema?.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  const trimmed = raw.trim();
  if (types.includes('array')) {
    if (trimmed.startsWith('[')) return yamlEnvValue(trimmed);
    return { value: trimmed === '' ? [] : trimmed.split(',').map((s) => s.trim()) };
  }
  if (types.includes('object')) return yamlEnvValue(trimmed);
  if (types.includes('boolean') && /^(true|false)$/i.test(trimmed)) return { value: trimmed.toLowerCase() === 'true' };
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(trimmed)) return { value: Number(trimmed) };
  return { value: raw };
}

/** Sets an own property (a key named `__proto__` is a key like another, not the prototype). */
function setOwn(node: Json, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, writable: true, enumerable: true, configurable: true });
}

function setPath(doc: Json, path: readonly string[], value: unknown): void {
  let node = doc;
  for (const key of path.slice(0, -1)) {
    if (!Object.hasOwn(node, key) || !isObject(node[key])) setOwn(node, key, {});
    node = node[key] as Json;
  }
  setOwn(node, path[path.length - 1]!, value);
}

/**
 * Applies `WARDEN_<SECTION>_<KEY>` variables over the parsed file: `WARDEN_NAME`,
 * `WARDEN_RESTAPI_LISTEN`, `WARDEN_ETCD3_HOSTS=a:2379,b:2379`, `WARDEN_TAGS_NOFAILOVER=true`,
 * `WARDEN_RESTAPI_USERNAME`... Keys (tag names too) are lowercased. Returns where each override landed (config path -> variable)
 * so problems can name the variable. Variables of unknown sections are ignored.
 */
export function applyEnvOverrides(doc: Json, env: Readonly<Record<string, string | undefined>>, problems: Problem[] = []): Map<string, string> {
  const origin = new Map<string, string>();
  for (const [variable, value] of Object.entries(env)) {
    if (!variable.startsWith('WARDEN_') || value === undefined) continue;
    const rest = variable.slice('WARDEN_'.length);
    let path: readonly string[] | undefined = ENV_NESTED_KEYS[rest];
    if (!path) {
      const lower = rest.toLowerCase();
      if ((SCALAR_KEYS as readonly string[]).includes(lower)) path = [lower];
      else {
        const section = ENV_SECTIONS.find((s) => lower.startsWith(`${s}_`) && lower.length > s.length + 1);
        if (!section) continue;
        path = [section, lower.slice(section.length + 1)];
      }
    }
    const typed = typedEnvValue(value, schemaAt(path));
    origin.set(path.join('.'), variable);
    // An override that is no YAML is said as such, not as whatever the parser made of it.
    if ('problem' in typed) problems.push({ path: path.join('.'), message: typed.problem });
    else setPath(doc, path, typed.value);
  }
  return origin;
}

/**
 * A database password left empty in YAML (`password:`, as Patroni's and Debian's templates
 * have it) reads as null: it means no password, as if the key were absent.
 */
function emptyDatabasePasswords(doc: Json): void {
  const auth = isObject(doc['db']) ? doc['db']['authentication'] : undefined;
  if (!isObject(auth)) return;
  for (const role of ['superuser', 'replication', 'rewind']) {
    const user = auth[role];
    if (isObject(user) && user['password'] === null) delete user['password'];
  }
}

/** `db.listen` with a list of addresses written with spaces (`10.0.0.5, 127.0.0.1:5432`, as PostgreSQL's listen_addresses allows) reads as without them. */
function listenListSpaces(doc: Json): void {
  const db = doc['db'];
  if (isObject(db) && typeof db['listen'] === 'string' && db['listen'].includes(',')) db['listen'] = db['listen'].replace(/\s*,\s*/g, ',').trim();
}

/** `etcd3.hosts` written as one comma-separated string (as wardenctl and the environment take it) becomes the list. */
function hostListFromString(doc: Json): void {
  const etcd3 = doc['etcd3'];
  if (!isObject(etcd3) || typeof etcd3['hosts'] !== 'string') return;
  etcd3['hosts'] = etcd3['hosts'].split(',').map((h) => h.trim()).filter((h) => h !== '');
}

function portProblem(path: string, value: unknown): Problem | null {
  if (typeof value !== 'string') return null;
  const port = Number(/:(\d+)$/.exec(value)?.[1]);
  return port >= 1 && port <= 65535 ? null : { path, message: `expected host:port with a port from 1 to 65535, got ${JSON.stringify(value)}` };
}

/** A host other nodes cannot reach this one at: a wildcard, or several addresses (PostgreSQL's listen list). */
function unreachableHost(host: string): string | null {
  if (host.includes(',')) return 'a list of addresses';
  if (['', '*', '0.0.0.0', '::'].includes(host)) return 'a wildcard address';
  return null;
}

/**
 * `connect_address` is what the other nodes and wardenctl call (the API) and what replicas
 * stream from (the database); it defaults to `listen` only when that names one address:
 * `0.0.0.0` in a member record sends every peer to itself.
 */
function connectAddressProblems(section: 'restapi' | 'db', values: Json): Problem[] {
  // A value that is no host:port is reported by the port check.
  const parse = (value: string) => {
    try {
      return splitHostPort(value, `${section}.listen`);
    } catch {
      return null;
    }
  };
  const explicit = values['connect_address'];
  const listen = values['listen'];
  if (typeof explicit === 'string') {
    const at = parse(explicit);
    const why = at && unreachableHost(at.host);
    return why ? [{ path: `${section}.connect_address`, message: `expected the address other nodes reach this one at, got ${why} (${JSON.stringify(explicit)})` }] : [];
  }
  if (explicit !== undefined || typeof listen !== 'string') return [];
  const at = parse(listen);
  const why = at && unreachableHost(at.host);
  if (!at || !why) return [];
  return [{ path: `${section}.connect_address`, message: `expected the address other nodes reach this one at (for example 10.0.0.11:${at.port}): ${section}.listen is ${why} (${JSON.stringify(listen)}), which cannot stand for it` }];
}

/** `watchdog.safety_margin` when the file does not say (seconds). */
const DEFAULT_SAFETY_MARGIN = 5;
/** `watchdog.mode` when the file does not say. */
const DEFAULT_WATCHDOG_MODE = 'automatic';

/**
 * A pg_ident.conf line PostgreSQL would refuse (and with it the whole file): one that is not
 * blank or a comment must hold a map name, a system user name (or /regex) and a database user
 * name, double quotes allowed; PostgreSQL 16's include directives take one file name.
 */
function identLineProblem(line: string): string | null {
  const tokens = line.match(/"(?:[^"]|"")*"|[^\s#"]+|#.*/g)?.filter((t) => !t.startsWith('#')) ?? [];
  if (tokens.length === 0) return null;
  if (/^include(_if_exists|_dir)?$/.test(tokens[0]!)) return tokens.length === 2 ? null : `expected ${tokens[0]} and one file name, got ${JSON.stringify(line)}`;
  return tokens.length === 3 ? null : `expected MAPNAME SYSTEM-USERNAME DATABASE-USERNAME, got ${tokens.length} field${tokens.length === 1 ? '' : 's'} in ${JSON.stringify(line)}`;
}

/** Rules the schema cannot say: ports in range, TLS files that need each other, allowlist syntax, the bootstrap dynamic config. */
function semanticProblems(doc: Json): Problem[] {
  const out: Problem[] = [];
  const restapi = isObject(doc['restapi']) ? doc['restapi'] : {};
  const db = isObject(doc['db']) ? doc['db'] : {};
  for (const [path, value] of [
    ['restapi.listen', restapi['listen']],
    ['restapi.connect_address', restapi['connect_address']],
    ['db.listen', db['listen']],
    ['db.connect_address', db['connect_address']],
  ] as const) {
    const p = portProblem(path, value);
    if (p) out.push(p);
  }
  out.push(...connectAddressProblems('restapi', restapi), ...connectAddressProblems('db', db));
  const tlsOnly = ['keyfile', 'cafile', 'keyfile_password'].filter((k) => restapi[k] !== undefined);
  if (restapi['certfile'] === undefined) {
    for (const k of tlsOnly) out.push({ path: `restapi.${k}`, message: 'expected restapi.certfile to be set too (HTTPS), got no certfile' });
    if (restapi['verify_client'] !== undefined && restapi['verify_client'] !== 'none') {
      out.push({ path: 'restapi.verify_client', message: `expected "none" without restapi.certfile (client certificates need HTTPS), got ${JSON.stringify(restapi['verify_client'])}` });
    }
  } else if (restapi['verify_client'] !== undefined && restapi['verify_client'] !== 'none' && restapi['cafile'] === undefined) {
    out.push({ path: 'restapi.cafile', message: 'expected a CA file to verify client certificates with (verify_client is set), got nothing' });
  }
  if (Array.isArray(restapi['allowlist'])) {
    restapi['allowlist'].forEach((entry, i) => {
      if (typeof entry === 'string' && !parseAllowlistEntry(entry) && !isAllowlistHostName(entry)) {
        out.push({ path: `restapi.allowlist[${i}]`, message: `expected an IP address, a CIDR range (10.0.0.0/8) or a host name, got ${JSON.stringify(entry)}` });
      }
    });
  }
  const etcd = isObject(doc['etcd3']) ? doc['etcd3'] : {};
  if ((etcd['cert'] === undefined) !== (etcd['key'] === undefined)) {
    out.push({ path: etcd['cert'] === undefined ? 'etcd3.cert' : 'etcd3.key', message: 'expected etcd3.cert and etcd3.key together, got only one of them' });
  }
  if (isObject(doc['tags'])) out.push(...topologyTagProblems(doc['tags'] as Record<string, TagValue>, typeof doc['name'] === 'string' ? doc['name'] : ''));
  if (Array.isArray(db['pg_ident'])) {
    db['pg_ident'].forEach((line, i) => {
      const problem = typeof line === 'string' ? identLineProblem(line) : null;
      if (problem !== null) out.push({ path: `db.pg_ident[${i}]`, message: problem });
    });
  }
  if (isObject(db['parameters'])) {
    for (const [name, value] of Object.entries(db['parameters'])) {
      const problem = parameterProblem(name, value);
      if (problem !== null) out.push({ path: `db.parameters.${name}`, message: problem });
    }
  }
  const bootstrap = isObject(doc['bootstrap']) ? doc['bootstrap'] : {};
  const dcsProblems = isObject(bootstrap['dcs']) ? validateConfig(bootstrap['dcs']) : [];
  // Found at start, not at the bootstrap (which would fail on them, and retry, much later).
  for (const message of initdbOptionProblems(initdbOptionList(bootstrap['initdb']))) out.push({ path: 'bootstrap.initdb', message });
  for (const p of dcsProblems) out.push({ path: p.path ? `bootstrap.dcs.${p.path}` : 'bootstrap.dcs', message: p.message });
  const watchdog = isObject(doc['watchdog']) ? doc['watchdog'] : {};
  const margin = watchdog['safety_margin'] ?? DEFAULT_SAFETY_MARGIN;
  const fencer = isObject(doc['fencer']) ? doc['fencer'] : {};
  // Without a fencer and a watchdog device nothing acts on the margin.
  const fenced = fencer['enabled'] !== false || (watchdog['mode'] ?? DEFAULT_WATCHDOG_MODE) !== 'off';
  if (fenced && dcsProblems.length === 0 && typeof margin === 'number') {
    // The bootstrap timings are those a new cluster starts with; a running cluster's are checked by the agent as they change.
    const timings = resolveConfig((isObject(bootstrap['dcs']) ? bootstrap['dcs'] : {}) as RawConfig);
    const problem = safetyMarginProblem(timings.ttl, timings.loop_wait, margin);
    if (problem !== null) out.push({ path: 'watchdog.safety_margin', message: `${problem} (ttl and loop_wait of bootstrap.dcs, defaults counted)` });
  }
  return out;
}

/**
 * bootstrap.initdb as a list: a list of flags and `{name: value}` options as written, or
 * (Patroni's other form) one mapping whose `true` values are flags.
 */
function initdbOptionList(value: unknown): (string | Record<string, string>)[] {
  if (Array.isArray(value)) return value.filter((o) => typeof o === 'string' || isObject(o)) as (string | Record<string, string>)[];
  if (!isObject(value)) return [];
  return Object.entries(value).flatMap(([name, v]): (string | Record<string, string>)[] => (v === true ? [name] : v === false || v === null ? [] : [{ [name]: String(v) }]));
}

function withDefaults(doc: Json): LocalConfig {
  const restapi = doc['restapi'] as Json;
  const db = doc['db'] as Json;
  const bootstrap = (doc['bootstrap'] ?? {}) as Json;
  const watchdog = (doc['watchdog'] ?? {}) as Json;
  const log = (doc['log'] ?? {}) as Json;
  const fencer = (doc['fencer'] ?? {}) as Json;
  return {
    ...(doc as unknown as LocalConfig),
    namespace: (doc['namespace'] as string | undefined) ?? '/service',
    restapi: {
      ...(restapi as unknown as LocalConfig['restapi']),
      connect_address: (restapi['connect_address'] ?? restapi['listen']) as string,
      verify_client: (restapi['verify_client'] ?? 'none') as VerifyClient,
      allowlist: (restapi['allowlist'] ?? []) as string[],
      allowlist_include_members: (restapi['allowlist_include_members'] ?? false) as boolean,
      http_extra_headers: (restapi['http_extra_headers'] ?? {}) as Record<string, string>,
      event_history: (restapi['event_history'] ?? DEFAULT_EVENT_HISTORY) as number,
    },
    bootstrap: {
      ...(bootstrap as unknown as LocalConfig['bootstrap']),
      dcs: (bootstrap['dcs'] ?? {}) as RawConfig,
      initdb: initdbOptionList(bootstrap['initdb']),
      method: (bootstrap['method'] ?? 'initdb') as string,
    },
    db: {
      ...(db as unknown as LocalConfig['db']),
      connect_address: (db['connect_address'] ?? db['listen']) as string,
      bin_dir: (db['bin_dir'] ?? DEFAULT_DB_BIN_DIR) as string,
      log_dir: (db['log_dir'] ?? defaultLogDir(db['data_dir'] as string)) as string,
      parameters: (db['parameters'] ?? {}) as Record<string, ParameterValue>,
      pg_hba: (db['pg_hba'] ?? []) as string[],
      use_unix_socket: (db['use_unix_socket'] ?? false) as boolean,
      callbacks: (db['callbacks'] ?? {}) as Partial<Record<CallbackActionName, string>>,
      callback_timeout: (db['callback_timeout'] ?? DEFAULT_CALLBACK_TIMEOUT) as number,
      create_replica_methods: (db['create_replica_methods'] ?? ['basebackup']) as string[],
      basebackup: (db['basebackup'] ?? {}) as BasebackupOptions,
      recovery_conf: (db['recovery_conf'] ?? {}) as Record<string, ParameterValue>,
    },
    tags: (doc['tags'] ?? {}) as Record<string, TagValue>,
    watchdog: {
      mode: (watchdog['mode'] ?? DEFAULT_WATCHDOG_MODE) as WatchdogMode,
      device: (watchdog['device'] ?? '/dev/watchdog') as string,
      safety_margin: (watchdog['safety_margin'] ?? DEFAULT_SAFETY_MARGIN) as number,
    },
    fencer: { enabled: (fencer['enabled'] ?? true) as boolean, socket: (fencer['socket'] ?? null) as string | null },
    log: {
      level: (log['level'] ?? 'info') as LogLevelName,
      levels: (log['levels'] ?? {}) as Record<string, LogLevelName>,
      format: (log['format'] ?? 'json') as 'json' | 'text',
      file: (log['file'] ?? null) as string | null,
    },
  };
}

/** A YAML issue as a problem: its path, else its line and column. */
function yamlProblem(issue: YamlIssue): Problem {
  const path = issue.path !== undefined ? issue.path : issue.line !== undefined ? `line ${issue.line}, column ${issue.col ?? 1}` : '';
  return { path, message: issue.message };
}

/** Keys of Object.prototype: no Patroni key, whatever the hints table inherits. */
const PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * Parses the YAML text of a local configuration, applies the environment overrides and
 * validates the result. Throws LocalConfigError listing every problem (YAML syntax, unknown
 * keys, types, values), each naming its path and, for overrides, the variable.
 */
export function parseLocalConfig(text: string, env: Readonly<Record<string, string | undefined>> = {}, source = 'local configuration'): LocalConfig {
  const yaml = parseYamlText(text, NODE_FILE_LIMITS);
  if (yaml.issues.length) throw new LocalConfigError(source, yaml.issues.map(yamlProblem));
  const parsed: unknown = yaml.value;
  const doc: Json = parsed === null || parsed === undefined ? {} : (parsed as Json);
  if (!isObject(doc)) throw new LocalConfigError(source, [{ path: '', message: `expected a mapping of sections, got ${Array.isArray(doc) ? 'a list' : typeof doc}` }]);
  const envProblems: Problem[] = [];
  const origin = applyEnvOverrides(doc, env, envProblems);
  hostListFromString(doc);
  emptyDatabasePasswords(doc);
  listenListSpaces(doc);
  const { rest, replica, bootstrap } = splitMethodSections(doc);
  const schemaProblems = validateSchema(rest) ? [] : ajvProblems(validateSchema.errors);
  const hinted = withPatroniHints(schemaProblems.filter((p) => !PROTOTYPE_KEYS.has(p.path)));
  const problems = [...envProblems, ...hinted, ...schemaProblems.filter((p) => PROTOTYPE_KEYS.has(p.path))];
  // A value the schema already refused is not reported twice (the rules look at it again).
  const refused = new Set(problems.map((p) => p.path));
  problems.push(...semanticProblems(doc).filter((p) => !refused.has(p.path)));
  problems.push(...methodProblems(doc, replica, bootstrap));
  if (problems.length) {
    const named = problems.map((p) => {
      const variable = [...origin].find(([path]) => p.path === path || p.path.startsWith(`${path}.`) || p.path.startsWith(`${path}[`))?.[1];
      return variable ? { path: p.path, message: `${p.message} (from ${variable})` } : p;
    });
    throw new LocalConfigError(source, named, doc);
  }
  return withDefaults(doc);
}

/** Reads, parses and validates the local configuration file. Throws LocalConfigError (also when the file cannot be read). */
export async function loadLocalConfig(path: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<LocalConfig> {
  const file = readConfigText(path, NODE_FILE_LIMITS);
  if ('issue' in file) {
    throw new LocalConfigError(path, [file.unreadable ? { path: '', message: `cannot read the file: ${file.issue.message}` } : yamlProblem(file.issue)]);
  }
  return parseLocalConfig(file.text, env, path);
}
