import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { BUNDLED_COLLECTORS_DIR } from '../../../src/app/exporter/config-files.js';
import { ENV } from '../../../src/app/exporter/options.js';
import { COLLECTOR_SCHEMA } from '../../../src/domain/collectors/definition-schema.js';
import { allPaths, clone, getAt, isObj, mutateText, NASTY_KEYS, oddScalar, otherKind, pathText, schemaAt, schemaTypes, setAt, surelyWrongKind, yamlText, type JsonSchema, type Path, type Random } from '../../support/config-fuzz.js';

/**
 * Generated input for the exporter's fuzz tests (in process, and through `warden-exporter
 * --dry-run`): collector files made from the bundled ones (wrong kinds of values, unknown
 * fields, bad metric and label names, duplicate columns and metrics, bad usages, durations and
 * versions, missing SQL, the YAML-level mutations of mutateText), web configuration and
 * targets files, and command lines with their environment.
 */

type Obj = Record<string, unknown>;

/** The bundled collector definitions, by key. */
export const BUNDLED: Readonly<Record<string, Obj>> = Object.assign(
  {},
  ...readdirSync(BUNDLED_COLLECTORS_DIR)
    .filter((f) => f.endsWith('.yml'))
    .sort()
    .map((f) => YAML.parse(readFileSync(join(BUNDLED_COLLECTORS_DIR, f), 'utf8')) as Obj),
) as Record<string, Obj>;

/** A file of the generated configuration. */
export interface GeneratedFile {
  readonly name: string;
  readonly bytes: Buffer;
}

/** A generated collector configuration: one file, or a folder of them. */
export interface CollectorCase {
  readonly files: readonly GeneratedFile[];
  /** Whether the configuration is a folder (else the one file is given). */
  readonly folder: boolean;
  readonly notes: readonly string[];
  readonly invalid: boolean;
  readonly paths: readonly string[];
}

const METRIC_NAMES = ['a-b', 'a b', '9lives', 'é', 'x.y', '', '__x', 'le', 'datname', 'a:b', '_', 'up', 'Ünïcode', 'x'.repeat(300), '__proto__', 'constructor'];
const DURATIONS = ['-1s', '10 MB', '1e99', '1e99s', 'soon', '', ' ', '1h30m', '5min', '0', '0s', '0.4ms', -1, 1e99, 0, '100ms', '10s', 'Infinity', '.inf', 1.5];

/** A collector configuration: 1 to 4 bundled collectors, changed in one to three ways. */
export function collectorCase(rng: Random): CollectorCase {
  const keys = Object.keys(BUNDLED);
  const doc: Obj = {};
  for (let i = rng.int(1, 4); i > 0; i--) {
    const k = rng.pick(keys);
    doc[k] = clone(BUNDLED[k]!);
  }
  const notes: string[] = [`collectors ${Object.keys(doc).join(', ')}`];
  let claims: string[] = [];
  let textInvalid = false;
  let bytes: Buffer | null = null;
  // A claim `a|b` is refused at a or at b; a change at or around either voids it.
  const touch = (path: string) => {
    claims = claims.filter((claim) => !claim.split('|').some((c) => path === '' || c === path || c.startsWith(`${path}.`) || c.startsWith(`${path}[`) || path.startsWith(`${c}.`) || path.startsWith(`${c}[`)));
  };
  const n = rng.chance(0.6) ? 1 : rng.int(2, 3);
  for (let m = 0; m < n; m++) {
    const kind = rng.weighted({ wrongKind: 8, unknownField: 4, metricName: 5, duplicateColumn: 2, duplicateMetric: 3, usage: 4, duration: 5, version: 3, sql: 4, tags: 3, metricsShape: 3, oddScalar: 5, remove: 3, bucket: 2, text: 8 });
    const ckeys = Object.keys(doc).filter((k) => isObj(doc[k]));
    if (kind === 'text') {
      const r = mutateText(rng, bytes ?? yamlText(rng, doc), ckeys.length ? ckeys : ['db_x'], rng.pick(['db_extra', 'colour']));
      bytes = r.bytes;
      notes.push(r.note);
      textInvalid = r.invalid || (textInvalid && !!r.keepsValues);
      if (r.invalid || !r.keepsValues) claims = [];
      continue;
    }
    if (bytes || ckeys.length === 0) continue;
    const key = rng.pick(ckeys);
    const def = doc[key] as Obj;
    const cols = Array.isArray(def['metrics']) ? (def['metrics'] as unknown[]) : [];
    const colAt = (i: number) => (isObj(cols[i]) ? Object.keys(cols[i] as Obj)[0] : undefined);
    switch (kind) {
      case 'wrongKind': {
        const paths = allPaths(def).map((p) => [key, ...p] as Path);
        if (!paths.length) break;
        const path = rng.pick(paths);
        const value = otherKind(rng, getAt(doc, path));
        setAt(doc, path, value);
        touch(pathText(path));
        notes.push(`${pathText(path)} -> ${JSON.stringify(value)}`);
        // The column name's level of a metrics entry is free (any name), and what the schema says of the rest decides.
        if (surelyWrongKind(schemaTypes(schemaAt({ additionalProperties: COLLECTOR_SCHEMA } as JsonSchema, path)), value)) claims.push(pathText(path));
        break;
      }
      case 'unknownField': {
        const onColumn = cols.length > 0 && rng.chance(0.4);
        const i = rng.int(0, Math.max(0, cols.length - 1));
        const col = colAt(i);
        const field = rng.pick([...NASTY_KEYS.filter((k) => k.trim() !== ''), 'help', 'labels', 'type', 'const_labels', 'interval']);
        const at: Path = onColumn && col !== undefined ? [key, 'metrics', i, col] : [key];
        const target = getAt(doc, at);
        if (!isObj(target) || Object.hasOwn(target, field)) break;
        setAt(doc, [...at, field], oddScalar(rng));
        notes.push(`unknown field ${JSON.stringify(field)} at ${pathText(at)}`);
        claims.push(pathText([...at, field]));
        break;
      }
      case 'metricName': {
        const name = rng.pick(METRIC_NAMES);
        const where = rng.weighted({ column: 3, rename: 3, name: 2, key: 2, unit: 1, legacy: 1 });
        const i = rng.int(0, Math.max(0, cols.length - 1));
        const col = colAt(i);
        if (where === 'key') {
          if (Object.hasOwn(doc, name) || name === '') break;
          doc[name] = def;
          delete doc[key];
          touch(key);
          notes.push(`collector ${key} renamed ${JSON.stringify(name)}`);
          if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) claims.push(name);
          break;
        }
        if (where === 'name') {
          def['name'] = name;
          touch(`${key}.name`);
          notes.push(`${key}.name = ${JSON.stringify(name)}`);
          if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) claims.push(key);
          break;
        }
        if (col === undefined) break;
        const spec = (cols[i] as Obj)[col];
        if (!isObj(spec)) break;
        if (where === 'column') {
          cols[i] = { [name]: spec };
          touch(`${key}.metrics[${i}]`);
          notes.push(`${key}.metrics[${i}] column ${JSON.stringify(col)} -> ${JSON.stringify(name)}`);
          const usage = spec['usage'];
          const bad = usage === 'LABEL' ? !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(String(spec['rename'] ?? name)) || String(spec['rename'] ?? name).startsWith('__') : (usage === 'GAUGE' || usage === 'COUNTER') && spec['rename'] === undefined && !/^[a-zA-Z0-9_:]+$/.test(name);
          if (bad && name !== '') claims.push(`${key}.metrics`);
        } else {
          const field = where === 'rename' ? 'rename' : where === 'legacy' ? 'legacy_rename' : 'unit';
          if (spec['usage'] !== 'GAUGE' && spec['usage'] !== 'COUNTER') break;
          spec[field] = name;
          touch(`${key}.metrics[${i}].${col}.${field}`);
          notes.push(`${key}.metrics[${i}].${col}.${field} = ${JSON.stringify(name)}`);
          if (name === '' || (field !== 'unit' && !/^[a-zA-Z0-9_:]+$/.test(name)) || (field === 'unit' && !/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/.test(name))) claims.push(`${key}.metrics`);
        }
        break;
      }
      case 'duplicateColumn': {
        if (!cols.length) break;
        cols.push(clone(cols[rng.int(0, cols.length - 1)]));
        touch(`${key}.metrics`);
        notes.push(`${key}: a column declared twice`);
        claims.push(`${key}.metrics`);
        break;
      }
      case 'duplicateMetric': {
        // The same collector under another key: every metric produced twice on the same servers.
        // Under its own key a copy without `name` names its metrics after that key: only a named one repeats them.
        if (typeof def['name'] !== 'string' || def['skip'] === true || !cols.some((c) => isObj(c) && isObj(Object.values(c)[0]) && ['GAUGE', 'COUNTER', 'HISTOGRAM'].includes(String((Object.values(c)[0] as Obj)['usage'])))) break;
        const copy = `${key}_copy`;
        if (Object.hasOwn(doc, copy)) break;
        doc[copy] = clone(def);
        notes.push(`${key} copied as ${copy}`);
        // The copy is refused while the original loads; a problem of the original is named instead when it does not.
        claims.push(`${copy}|${key}`);
        break;
      }
      case 'usage': {
        const i = rng.int(0, Math.max(0, cols.length - 1));
        const col = colAt(i);
        if (col === undefined || !isObj((cols[i] as Obj)[col])) break;
        const usage = rng.pick<unknown>(['METER', 'gauge', 'Counter', '', 'SUMMARY', 'LABELS', 1, null, true, 'DISCARD', 'LABEL', 'HISTOGRAM']);
        ((cols[i] as Obj)[col] as Obj)['usage'] = usage;
        touch(`${key}.metrics[${i}].${col}.usage`);
        notes.push(`${key}.metrics[${i}].${col}.usage = ${JSON.stringify(usage)}`);
        if (!['DISCARD', 'LABEL', 'HISTOGRAM'].includes(usage as string)) claims.push(`${key}.metrics[${i}].${col}.usage`);
        break;
      }
      case 'duration': {
        const field = rng.pick(['ttl', 'timeout']);
        const value = rng.pick(DURATIONS);
        def[field] = value;
        touch(`${key}.${field}`);
        notes.push(`${key}.${field} = ${JSON.stringify(value)}`);
        if (['-1s', '10 MB', '1e99', '1e99s', 'soon', '', ' ', '1h30m', '5min', -1, 'Infinity', '.inf'].includes(value as string) || (field === 'timeout' && [0, '0', '0s', '0.4ms', 1e99].includes(value as string))) claims.push(`${key}.${field}`);
        break;
      }
      case 'version': {
        const lo = rng.pick<unknown>([130000, 0, -1, 1.5, '130000', 1e99, null, 999999999]);
        const hi = rng.pick<unknown>([120000, 0, 130000, 180000, -5, 'x', 1e99]);
        def['min_version'] = lo;
        def['max_version'] = hi;
        touch(`${key}.min_version`);
        touch(`${key}.max_version`);
        notes.push(`${key} versions ${JSON.stringify(lo)}-${JSON.stringify(hi)}`);
        if ([-1, 1.5, '130000', null].includes(lo as number) || [-5, 'x'].includes(hi as string)) claims.push(key);
        break;
      }
      case 'sql': {
        const value = rng.pick<unknown>([undefined, '', '   ', 5, ['SELECT 1'], { q: 1 }, null, 'SELECT 1; DROP TABLE x', 'x'.repeat(200_000), 'SELECT \u0000', 'SELECT $1']);
        setAt(doc, [key, 'query'], value);
        touch(`${key}.query`);
        notes.push(`${key}.query = ${JSON.stringify(value)?.slice(0, 40) ?? 'removed'}`);
        if (value === undefined || value === '' || value === null || typeof value !== 'string') claims.push(`${key}.query`);
        break;
      }
      case 'tags': {
        const tag = rng.pick<unknown>(['cluster', 'primary', 'replica', 'username:x', 'schema:y', 'extension:', 'not:', 'a b', '', 'dbname:x:y', 5, null, ['x'], 'extension:pg_stat_statements', 'not:big', 'ünï']);
        const tags = Array.isArray(def['tags']) ? (def['tags'] as unknown[]) : [];
        tags.push(tag);
        def['tags'] = tags;
        touch(`${key}.tags`);
        notes.push(`${key}.tags + ${JSON.stringify(tag)}`);
        if (!['cluster', 'primary', 'replica', 'extension:pg_stat_statements', 'not:big'].includes(tag as string)) claims.push(`${key}.tags`);
        break;
      }
      case 'metricsShape': {
        const value = rng.pick<unknown>([[], {}, 'v', [{}], [{ a: { usage: 'GAUGE' }, b: { usage: 'GAUGE' } }], [{ a: 'GAUGE' }], [[{ a: { usage: 'GAUGE' } }]], [{ l: { usage: 'LABEL' } }], [{ d: { usage: 'DISCARD' } }]]);
        setAt(doc, [key, 'metrics'], value);
        touch(`${key}.metrics`);
        notes.push(`${key}.metrics = ${JSON.stringify(value)}`);
        claims.push(`${key}.metrics`);
        break;
      }
      case 'oddScalar': {
        const paths = allPaths(def).map((p) => [key, ...p] as Path);
        if (!paths.length) break;
        const path = rng.pick(paths);
        const value = oddScalar(rng);
        setAt(doc, path, value);
        touch(pathText(path));
        notes.push(`${pathText(path)} = ${JSON.stringify(value)?.slice(0, 60)}`);
        break;
      }
      case 'remove': {
        const field = rng.pick(['query', 'metrics', 'name', 'desc', 'ttl', 'tags']);
        setAt(doc, [key, field], undefined);
        touch(`${key}.${field}`);
        notes.push(`removed ${key}.${field}`);
        if (field === 'query' || field === 'metrics') claims.push(`${key}.${field}`);
        break;
      }
      case 'bucket': {
        const i = rng.int(0, Math.max(0, cols.length - 1));
        const col = colAt(i);
        if (col === undefined || !isObj((cols[i] as Obj)[col])) break;
        const spec = (cols[i] as Obj)[col] as Obj;
        const bucket = rng.pick<unknown>([[3, 2, 1], [1, 1], [], ['a'], [1, 2, 3], [Infinity], [NaN], 5]);
        spec['usage'] = 'HISTOGRAM';
        spec['bucket'] = bucket;
        delete spec['rename'];
        touch(`${key}.metrics[${i}]`);
        notes.push(`${key}.metrics[${i}].${col} HISTOGRAM bucket ${JSON.stringify(bucket)}`);
        if (JSON.stringify(bucket) !== '[1,2,3]' && JSON.stringify(bucket) !== '[null]') claims.push(`${key}.metrics`);
        break;
      }
    }
  }
  if (!bytes) bytes = Buffer.from(yamlText(rng, doc), 'utf8');
  const folder = rng.chance(0.25);
  const empty = ['', '~', 'null', '---', '...'].includes(bytes.toString('latin1').replace(/#.*$/gm, '').trim());
  const files: GeneratedFile[] = [{ name: 'config.yml', bytes }];
  if (folder && rng.chance(0.5)) files.unshift({ name: '00-bundled.yml', bytes: readFileSync(join(BUNDLED_COLLECTORS_DIR, rng.pick(readdirSync(BUNDLED_COLLECTORS_DIR).filter((f) => f.endsWith('.yml'))))) });
  // With another file before it, a collector of the same key is replaced, not repeated: only the YAML-level claims hold for sure.
  const stillClaims = files.length > 1 ? [] : claims;
  // An empty file beside another defines nothing, which is no problem.
  const invalid = (textInvalid && !(empty && files.length > 1)) || stillClaims.length > 0;
  return { files, folder, notes, invalid, paths: textInvalid ? [] : stillClaims.flatMap((c) => c.split('|')) };
}

/** A command line and environment of the exporter. */
export interface OptionsCase {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly notes: readonly string[];
  /** Surely refused, with a problem naming one of `paths` (a flag, an environment variable or `flags`). */
  readonly invalid: boolean;
  readonly paths: readonly string[];
}

/** Values each flag takes, and values it refuses. */
const FLAG_VALUES: Readonly<Record<string, { readonly good: readonly string[]; readonly bad: readonly string[] }>> = {
  url: { good: ['postgres://u:p@127.0.0.1:1/db', 'postgresql://127.0.0.1/x?sslmode=disable', 'postgres://127.0.0.1:1/pgbouncer'], bad: ['mysql://x', 'not a url', 'postgres://[::1', 'postgres://x/?sslmode=no-verify', 'postgres://x/?sslmode=verify-ca', 'http://x'] },
  config: { good: [], bad: [] },
  'web.listen-address': { good: [':9630', '127.0.0.1:0', '[::1]:9630', 'localhost:1'], bad: ['nowhere', '127.0.0.1:70000', ':', '[::1:1', ':-1', '1.2.3.4:port', ''] },
  'web.telemetry-path': { good: ['/metrics', '/x/y', '/m.t'], bad: ['metrics', '/a b', '/a?b', '/probe', '/reload', '', '/é'] },
  namespace: { good: ['db', 'pg', 'a_b'], bad: ['9x', 'a-b', '', 'é'] },
  'const-labels': { good: ['a=b', 'env=prod,dc=x', ''], bad: ['a', '=b', 'le=x', 'collector=x', 'a=b,a=c', '9x=y', '__x=y'] },
  tag: { good: ['big', 'a,b'], bad: [] },
  'exclude-database': { good: ['a,b', ''], bad: [] },
  'include-database': { good: ['a'], bad: [] },
  'connect-timeout': { good: ['1s', '500ms', '2', '60s'], bad: ['0', '0s', 'x', '-1s', '61s', '100', '1e99', '', '1h'] },
  'log.level': { good: ['debug', 'info', 'warn', 'error'], bad: ['trace', 'INFO', '', 'verbose'] },
  concurrency: { good: ['1', '4', '64', '1e1'], bad: ['0', '65', '-1', '1.5', 'x', ''] },
  'web.config.file': { good: [], bad: [] },
  targets: { good: [], bad: [] },
};

const BOOL_FLAGS = ['disable-cache', 'auto-discovery', 'fail-fast', 'compat.legacy-metric-names', 'web.open-health-checks', 'explain'];

/** A command line (never --help or --version, which print) with its environment. */
export function optionsCase(rng: Random, files: { readonly missing: string; readonly dir: string; readonly zero: string }): OptionsCase {
  const argv: string[] = ['--dry-run'];
  const env: Record<string, string> = {};
  const notes: string[] = [];
  const paths: string[] = [];
  /** The value each flag was last given on the command line, and whether it is refused. */
  const cli = new Map<string, boolean>();
  /** The same for the environment. */
  const fromEnv = new Map<string, boolean>();
  const switches = new Set<string>();
  let commanderRefuses = false;
  let last = false;
  for (let i = rng.int(0, 5); i > 0 && !last; i--) {
    const kind = rng.weighted({ flag: 8, env: 4, bool: 2, unknown: 2, missingValue: 1, repeated: 1, positional: 1, unicode: 1, long: 1, envBool: 1, urlFile: 1 });
    const flag = rng.pick(Object.keys(FLAG_VALUES).filter((f) => FLAG_VALUES[f]!.good.length + FLAG_VALUES[f]!.bad.length > 0));
    const values = FLAG_VALUES[flag]!;
    switch (kind) {
      case 'flag':
      case 'env': {
        const bad = values.bad.length > 0 && rng.chance(0.5);
        const value = rng.pick(bad ? values.bad : values.good);
        if (kind === 'env') {
          env[ENV[flag]!] = value;
          // An empty variable is read as unset by some flags: it is not surely refused.
          fromEnv.set(flag, bad && value !== '');
        } else {
          if (rng.chance(0.3)) argv.push(`--${flag}=${value}`);
          else argv.push(`--${flag}`, value);
          cli.set(flag, bad);
        }
        notes.push(`${kind === 'env' ? ENV[flag] : `--${flag}`} ${JSON.stringify(value)}${bad ? ' (bad)' : ''}`);
        break;
      }
      case 'bool': {
        const name = rng.pick(BOOL_FLAGS.filter((f) => f !== 'explain'));
        argv.push(`--${name}`);
        switches.add(name);
        notes.push(`--${name}`);
        break;
      }
      case 'unknown': {
        const u = rng.pick(['--nope', '-x', '--web.listen', '--URL', '--url2', '--dry_run', '--config-file', '--no-dry-run']);
        argv.push(u);
        notes.push(`unknown ${u}`);
        commanderRefuses = true;
        break;
      }
      case 'missingValue': {
        argv.push(`--${rng.pick(['url', 'config', 'web.listen-address', 'namespace', 'connect-timeout', 'concurrency'])}`);
        notes.push('a flag without its value, last');
        commanderRefuses = true;
        last = true;
        break;
      }
      case 'repeated': {
        const v = rng.pick(['b', '9x']);
        argv.push('--namespace', 'a', '--namespace', v);
        cli.set('namespace', v === '9x');
        notes.push(`--namespace twice, last ${v}`);
        break;
      }
      case 'positional': {
        const p = rng.pick(['extra', 'list', '-', '--']);
        argv.push(p);
        notes.push(`a positional argument ${p}`);
        if (p === '--') last = true;
        else commanderRefuses = true;
        break;
      }
      case 'unicode':
        argv.push('--namespace', rng.pick(['ünï', '名前', '\u202e', 'a\u0000b']));
        cli.set('namespace', true);
        notes.push('unicode namespace');
        break;
      case 'long':
        argv.push('--const-labels', `${'a'.repeat(rng.int(1, 100_000))}=b`);
        cli.set('const-labels', false);
        notes.push('a long label');
        break;
      case 'envBool': {
        const name = rng.pick(BOOL_FLAGS);
        const value = rng.pick(['true', 'on', '0', 'maybe', 'TRUE', 'nope', '']);
        env[ENV[name]!] = value;
        notes.push(`${ENV[name]}=${value}`);
        if (['maybe', 'nope'].includes(value)) fromEnv.set(`bool:${name}`, true);
        else fromEnv.delete(`bool:${name}`);
        break;
      }
      case 'urlFile': {
        const file = rng.pick([files.missing, files.dir, files.zero, '/dev/null']);
        env[`${ENV['url']}_FILE`] = file;
        fromEnv.set('url_file', true);
        notes.push(`${ENV['url']}_FILE=${file}`);
        break;
      }
    }
  }
  if (commanderRefuses) paths.push('flags');
  for (const flag of Object.keys(FLAG_VALUES)) {
    // The command line wins over the environment.
    const bad = cli.has(flag) ? cli.get(flag) : fromEnv.get(flag);
    if (bad) paths.push(`--${flag}`);
  }
  for (const name of BOOL_FLAGS) if (!switches.has(name) && fromEnv.get(`bool:${name}`)) paths.push(ENV[name]!);
  // The URL file is read only when no URL is given (flag or environment).
  if (fromEnv.get('url_file') && !cli.has('url') && !env[ENV['url']!]) paths.push(`${ENV['url']}_FILE`);
  return { argv, env, notes, invalid: paths.length > 0, paths };
}

/** A web configuration or targets file. */
export interface ExporterFileCase {
  readonly kind: 'web' | 'targets';
  readonly bytes: Buffer;
  readonly notes: readonly string[];
  readonly invalid: boolean;
  /** Paths inside the file (without the file name) one of which a problem must name. */
  readonly paths: readonly string[];
}

// bcrypt of "s3cret" (cost 4)
const HASH = '$2b$04$YCOWfsikja5zqy.uVmVv2eWtMPm6Ffxqlv693AXY1VQPso/KO7DsO';

/** A web configuration or a targets file, changed in one or two ways. */
export function webOrTargetsCase(rng: Random, dir: string): ExporterFileCase {
  const kind = rng.chance(0.5) ? 'web' : 'targets';
  const doc: Obj =
    kind === 'web'
      ? { http_server_config: { http2: false, headers: { 'X-Frame-Options': 'DENY', 'Strict-Transport-Security': 'max-age=31536000' } }, basic_auth_users: { prometheus: HASH } }
      : {
          targets: {
            orders: { url: 'postgres://monitor@127.0.0.1:1/postgres', auto_discovery: true, include_databases: ['app'], const_labels: { env: 'prod' } },
            bouncer: { url: 'postgres://monitor@127.0.0.1:1/pgbouncer', kind: 'pgbouncer' },
          },
        };
  const notes: string[] = [];
  let claims: string[] = [];
  let textInvalid = false;
  let bytes: Buffer | null = null;
  for (let m = rng.chance(0.7) ? 1 : 2; m > 0; m--) {
    const op = rng.weighted({ header: kind === 'web' ? 5 : 0, user: kind === 'web' ? 3 : 0, tls: kind === 'web' ? 2 : 0, target: kind === 'targets' ? 5 : 0, unknown: 3, wrongKind: 3, odd: 3, text: 5 });
    if (op === 'text') {
      const r = mutateText(rng, bytes ?? yamlText(rng, doc), Object.keys(doc), 'colour');
      bytes = r.bytes;
      notes.push(r.note);
      // An empty web configuration is none (no TLS, no authentication); an empty targets file names no targets.
      const emptyWeb = kind === 'web' && ['', '~', 'null', '---', '...'].includes(r.bytes.toString('latin1').replace(/#.*$/gm, '').trim());
      textInvalid = (r.invalid && !emptyWeb) || (textInvalid && !!r.keepsValues);
      if (r.invalid || !r.keepsValues) claims = [];
      continue;
    }
    if (bytes) continue;
    switch (op) {
      case 'header': {
        const [name, value, bad] = rng.pick<[string, unknown, boolean]>([
          ['X-Ok', 'fine', false],
          ['Bad Header', 'x', true],
          ['X-Ünï', 'x', true],
          ['X-A', 'line\nbreak', true],
          ['X-A', 'nul\u0000', true],
          ['X-A', 'cr\rx', true],
          ['', 'x', false],
          ['X:Colon', 'x', true],
          ['Content-Type', 'x', true],
          ['Set-Cookie', 'a=b', false],
          ['X-Long', 'x'.repeat(20_000), false],
          ['X-Num', 5, true],
          ['X-Tab', 'a\tb', false],
          ['X-Unicode-Value', 'é', false],
          ['$number', 'Infinity', false],
          ['$$x', 'y', false],
        ]);
        setAt(doc, ['http_server_config', 'headers', name], value);
        notes.push(`header ${JSON.stringify(name)}: ${JSON.stringify(value).slice(0, 40)}`);
        if (bad) claims.push(`http_server_config.headers.${name}`);
        break;
      }
      case 'user': {
        const [name, hash, bad] = rng.pick<[string, unknown, boolean]>([
          ['alice', HASH, false],
          ['a:b', HASH, true],
          ['bob', 'secret', true],
          ['carol', '', true],
          ['dave', 5, true],
          ['ünï', HASH, false],
          ['', HASH, false],
          ['$number', HASH, false],
        ]);
        setAt(doc, ['basic_auth_users', name], hash);
        notes.push(`user ${JSON.stringify(name)}`);
        if (bad) claims.push(`basic_auth_users.${name}`);
        break;
      }
      case 'tls': {
        const tls = rng.pick<Obj>([
          { cert_file: join(dir, 'nope.pem'), key_file: join(dir, 'nope.key') },
          { cert: 'not a pem', key: 'not a key' },
          { cert_file: '/dev/zero', key_file: '/dev/null' },
          { cert_file: '/dev/null', key_file: '/dev/null' },
          { cert: ' ', key: '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n' },
          { cert_file: dir, key_file: dir },
          { cert_file: 'c.pem' },
          { min_version: 'TLS13', max_version: 'TLS10', cert: 'x', key: 'y' },
          { client_auth_type: 'RequireAndVerifyClientCert', cert: 'x', key: 'y' },
          { cipher_suites: ['NOPE'], cert: 'x', key: 'y' },
        ]);
        doc['tls_server_config'] = tls;
        notes.push(`tls ${JSON.stringify(tls)}`);
        claims.push('tls_server_config');
        break;
      }
      case 'target': {
        const [name, t, bad] = rng.pick<[string, unknown, boolean]>([
          ['ok', { url: 'postgresql://127.0.0.1/x' }, false],
          ['bad name', { url: 'postgres://x/y' }, true],
          ['-dash', { url: 'postgres://x/y' }, true],
          ['u', { url: 'mysql://x' }, true],
          ['v', { url: 'not a url' }, true],
          ['w', {}, true],
          ['x', { url: 'postgres://x/y', url_file: '/tmp/u' }, true],
          ['y', { url_file: join(dir, 'missing-url') }, true],
          ['y2', { url_file: '/dev/zero' }, true],
          ['y3', { url_file: '/dev/null' }, true],
          ['z', { url: 'postgres://x/y', const_labels: { le: 'x' } }, true],
          ['z2', { url: 'postgres://x/y', const_labels: { '9a': 'x' } }, true],
          ['k', { url: 'postgres://x/y', kind: 'mysql' }, true],
          ['c', { url: 'postgres://x/y', config: join(dir, 'no-such-collectors') }, true],
          ['p', { url: 'postgres://x/y', password_file: join(dir, 'no-password') }, true],
          ['s', { url: 'postgres://x/y?sslmode=no-verify' }, true],
          ['proto', { url: 'postgres://x/y', __proto__: { a: 1 } }, false],
        ]);
        setAt(doc, ['targets', name], t);
        notes.push(`target ${JSON.stringify(name)}: ${JSON.stringify(t)}`);
        if (bad) claims.push(`targets.${name}`);
        break;
      }
      case 'unknown': {
        const key = rng.pick(NASTY_KEYS.filter((k) => k.trim() !== ''));
        const at: Path = kind === 'web' ? rng.pick<Path>([[], ['http_server_config']]) : rng.pick<Path>([[], ['targets', 'orders']]);
        const target = at.length ? getAt(doc, at) : doc;
        if (!isObj(target) || Object.hasOwn(target, key)) break;
        setAt(doc, [...at, key], oddScalar(rng));
        notes.push(`unknown key ${JSON.stringify(key)} at ${pathText(at) || 'the top'}`);
        claims.push(pathText([...at, key]));
        break;
      }
      case 'wrongKind': {
        const path = rng.pick(allPaths(doc));
        setAt(doc, path, otherKind(rng, getAt(doc, path)));
        notes.push(`${pathText(path)} of another kind`);
        claims = claims.filter((c) => !c.startsWith(pathText(path)) && !pathText(path).startsWith(c));
        break;
      }
      case 'odd': {
        const path = rng.pick(allPaths(doc));
        const v = oddScalar(rng);
        setAt(doc, path, v);
        notes.push(`${pathText(path)} = ${JSON.stringify(v)?.slice(0, 40)}`);
        claims = claims.filter((c) => !c.startsWith(pathText(path)) && !pathText(path).startsWith(c));
        break;
      }
    }
  }
  if (!bytes) bytes = Buffer.from(yamlText(rng, doc), 'utf8');
  return { kind, bytes, notes, invalid: textInvalid || claims.length > 0, paths: textInvalid ? [] : claims };
}
