import { Command, Option } from 'commander';
import { CONFIG_YAML_LIMITS, readConfigText } from '../yaml-read.js';
import { reservedPaths } from '../../adapters/http/exporter-api.js';
import { pgSslProblems } from '../../adapters/sql/pg-connection.js';
import { ValidationError, type Problem } from '../../domain/errors.js';
import { parseDurationMs } from '../../domain/collectors/duration.js';
import { isValidMetricName, parseConstLabels } from '../../domain/collectors/metric-naming.js';
import type { NamingMode } from '../../domain/collectors/collector.js';
import type { LabelPairs } from '../../domain/collectors/self-metrics.js';

/** How much a file holding a URL or a password may hold. */
export const SECRET_FILE_LIMITS = { ...CONFIG_YAML_LIMITS, maxBytes: 64 * 1024 };

/** The longest --connect-timeout: it bounds every up/role probe. */
const MAX_CONNECT_TIMEOUT_MS = 60_000;

/** Everything the exporter is started with (flags over environment over defaults). */
export interface ExporterOptions {
  readonly url?: string;
  /** A YAML file or a folder of *.yml; absent: the bundled collector set. */
  readonly configPath?: string;
  /** Host to listen on; undefined: every interface. */
  readonly listenHost?: string;
  readonly listenPort: number;
  readonly telemetryPath: string;
  readonly namespace: string;
  readonly constLabels: LabelPairs;
  readonly tags: readonly string[];
  readonly disableCache: boolean;
  readonly autoDiscovery: boolean;
  readonly excludeDatabases: readonly string[];
  readonly includeDatabases: readonly string[];
  readonly connectTimeoutMs: number;
  readonly failFast: boolean;
  readonly dryRun: boolean;
  readonly explain: boolean;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Collector queries running at once (over every database). */
  readonly concurrency: number;
  /** Interval of the background up/role probe, ms (at most 1 s by contract). */
  readonly probeIntervalMs: number;
  /** Metric names by the Prometheus conventions, or the names of older releases (compatibility switch). */
  readonly naming: NamingMode;
  /** Web configuration file (TLS, basic auth), in the Prometheus exporter-toolkit format. */
  readonly webConfigFile?: string;
  /** Serve the health, role and probe checks without authentication. */
  readonly openHealthChecks: boolean;
  /** Targets file: the servers /probe?target=<name> collects from. */
  readonly targetsFile?: string;
}

/** Environment variable of each flag (every flag has one). */
export const ENV: Readonly<Record<string, string>> = {
  url: 'DB_EXPORTER_URL',
  config: 'DB_EXPORTER_CONFIG',
  'web.listen-address': 'DB_EXPORTER_WEB_LISTEN_ADDRESS',
  'web.telemetry-path': 'DB_EXPORTER_WEB_TELEMETRY_PATH',
  namespace: 'DB_EXPORTER_NAMESPACE',
  'const-labels': 'DB_EXPORTER_CONST_LABELS',
  tag: 'DB_EXPORTER_TAG',
  'disable-cache': 'DB_EXPORTER_DISABLE_CACHE',
  'auto-discovery': 'DB_EXPORTER_AUTO_DISCOVERY',
  'exclude-database': 'DB_EXPORTER_EXCLUDE_DATABASE',
  'include-database': 'DB_EXPORTER_INCLUDE_DATABASE',
  'connect-timeout': 'DB_EXPORTER_CONNECT_TIMEOUT',
  'fail-fast': 'DB_EXPORTER_FAIL_FAST',
  'dry-run': 'DB_EXPORTER_DRY_RUN',
  explain: 'DB_EXPORTER_EXPLAIN',
  'log.level': 'DB_EXPORTER_LOG_LEVEL',
  concurrency: 'DB_EXPORTER_CONCURRENCY',
  'compat.legacy-metric-names': 'DB_EXPORTER_COMPAT_LEGACY_METRIC_NAMES',
  'web.config.file': 'DB_EXPORTER_WEB_CONFIG_FILE',
  'web.open-health-checks': 'DB_EXPORTER_WEB_OPEN_HEALTH_CHECKS',
  targets: 'DB_EXPORTER_TARGETS',
};

type Kind = 'string' | 'list' | 'bool';

/** Every flag: its commander spelling, value kind, default, and help. */
const FLAGS: readonly { flag: string; arg?: string; kind: Kind; def?: string; help: string }[] = [
  { flag: 'url', arg: '<url>', kind: 'string', help: `PostgreSQL URL (else ${ENV['url']}_FILE, a file holding it; else the PG* environment)` },
  { flag: 'config', arg: '<path>', kind: 'string', help: 'collector YAML file, or a folder of *.yml loaded in lexical order (default: the bundled set)' },
  { flag: 'web.listen-address', arg: '<addr>', kind: 'string', def: ':9630', help: 'address to listen on, [host]:port' },
  { flag: 'web.telemetry-path', arg: '<path>', kind: 'string', def: '/metrics', help: 'path of the metrics endpoint' },
  { flag: 'namespace', arg: '<prefix>', kind: 'string', def: 'db', help: 'prefix of the built-in and exporter metrics' },
  { flag: 'const-labels', arg: '<a=b,c=d>', kind: 'string', def: '', help: 'labels added to every sample' },
  { flag: 'tag', arg: '<tag>', kind: 'list', help: 'exporter tag (repeatable, or comma-separated)' },
  { flag: 'disable-cache', kind: 'bool', help: 'run every collector on every scrape' },
  { flag: 'auto-discovery', kind: 'bool', help: 'run per-database collectors on every database of the server' },
  { flag: 'exclude-database', arg: '<names>', kind: 'list', help: 'databases left out of auto-discovery (comma-separated)' },
  { flag: 'include-database', arg: '<names>', kind: 'list', help: 'only these databases in auto-discovery (comma-separated)' },
  { flag: 'connect-timeout', arg: '<duration>', kind: 'string', def: '1s', help: 'connection timeout, also the deadline of the up/role probe' },
  { flag: 'fail-fast', kind: 'bool', help: 'exit 2 when the database is down at start' },
  { flag: 'dry-run', kind: 'bool', help: 'parse the config, print the collectors and exit' },
  { flag: 'explain', kind: 'bool', help: 'print the /explain listing for this server and exit' },
  { flag: 'log.level', arg: '<level>', kind: 'string', def: 'info', help: 'debug, info, warn or error' },
  { flag: 'concurrency', arg: '<n>', kind: 'string', def: '4', help: 'collector queries running at once' },
  { flag: 'compat.legacy-metric-names', kind: 'bool', help: 'metric names of older releases (counters without _total, no unit suffixes); text format only' },
  { flag: 'web.config.file', arg: '<file>', kind: 'string', help: 'web configuration (TLS, basic auth) in the Prometheus exporter-toolkit format' },
  { flag: 'web.open-health-checks', kind: 'bool', help: 'serve the health and role checks without basic auth' },
  { flag: 'targets', arg: '<file>', kind: 'string', help: 'YAML file naming the servers /probe?target=<name> collects from' },
];

function list(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/** The commander program: flags, help, version. Parsing does not exit the process (errors throw). */
export function exporterCommand(version: string): Command {
  const cmd = new Command('warden-exporter')
    .description('Prometheus exporter for PostgreSQL: YAML-defined collectors, role checks for routing, reload, explain and stat')
    .version(version)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: (s) => process.stdout.write(s) })
    .allowExcessArguments(false);
  for (const f of FLAGS) {
    // Defaults and environment are applied by parseExporterOptions (from the env it is given), so help only describes them.
    const extra = [f.def !== undefined && f.def !== '' ? `default ${JSON.stringify(f.def)}` : '', `env ${ENV[f.flag]}`].filter(Boolean).join(', ');
    const opt = new Option(`--${f.flag}${f.arg ? ` ${f.arg}` : ''}`, `${f.help} (${extra})`);
    if (f.kind === 'list') opt.argParser(list);
    cmd.addOption(opt);
  }
  return cmd;
}

/** Reads a boolean environment variable: 1/true/yes/on or 0/false/no/off (case-insensitive); undefined when unset. */
export function envBoolean(value: string | undefined, name: string, problems: Problem[]): boolean | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  problems.push({ path: name, message: `expected true or false, got ${JSON.stringify(value)}` });
  return undefined;
}

/** Splits `host:port`, `:port`, `[v6]:port`; a string result names the problem. */
export function parseListenAddress(addr: string): { host?: string; port: number } | string {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(addr.trim());
  if (!m) return `expected [host]:port, got ${JSON.stringify(addr)}`;
  const port = Number(m[3]);
  if (port > 65535) return `port out of range in ${JSON.stringify(addr)}`;
  const host = m[1] ?? m[2];
  return host ? { host, port } : { port };
}

/**
 * Parses argv (without node and script) and the environment into options. Throws a
 * ValidationError listing every problem; commander's own help/version requests throw its
 * CommanderError (code commander.helpDisplayed / commander.version).
 */
export function parseExporterOptions(argv: readonly string[], env: NodeJS.ProcessEnv, version: string): ExporterOptions {
  const problems: Problem[] = [];
  let cli: Record<string, unknown>;
  const cmd = exporterCommand(version);
  try {
    cmd.parse([...argv], { from: 'user' });
    cli = cmd.opts<Record<string, unknown>>();
  } catch (e) {
    const err = e as { code?: string; message?: string };
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') throw e;
    problems.push({ path: 'flags', message: (err.message ?? String(e)).replace(/^error: /, '') });
    // The rest of the command line is read past what commander refused, so that one start lists
    // the problems of the other flags and of the environment too.
    const lenient = exporterCommand(version).allowUnknownOption().allowExcessArguments(true);
    try {
      lenient.parse([...argv], { from: 'user' });
      cli = lenient.opts<Record<string, unknown>>();
    } catch {
      cli = {};
    }
  }
  const attr = (flag: string) => new Option(`--${flag}`).attributeName();
  /** The flag's value from the command line, else its environment variable, else its default. */
  const str = (flag: string): string | undefined => {
    const v = cli[attr(flag)];
    if (typeof v === 'string') return v;
    return env[ENV[flag]!] ?? FLAGS.find((f) => f.flag === flag)?.def;
  };
  const lst = (flag: string): string[] => {
    const v = cli[attr(flag)];
    if (Array.isArray(v)) return v as string[];
    const e = env[ENV[flag]!];
    return e ? list(e) : [];
  };
  const flag = (name: string): boolean => {
    if (cli[attr(name)] === true) return true;
    return envBoolean(env[ENV[name]!], ENV[name]!, problems) ?? false;
  };
  const o: Record<string, unknown> = {
    url: str('url'),
    config: str('config'),
    webListenAddress: str('web.listen-address'),
    webTelemetryPath: str('web.telemetry-path'),
    namespace: str('namespace'),
    constLabels: str('const-labels'),
    connectTimeout: str('connect-timeout'),
    concurrency: str('concurrency'),
    logLevel: str('log.level'),
    webConfigFile: str('web.config.file'),
    targets: str('targets'),
  };

  let url = o['url'] as string | undefined;
  const urlFile = env[`${ENV['url']}_FILE`];
  if (!url && urlFile) {
    // Bounded: a URL is short, and a file that never ends (/dev/zero) must not fill the memory.
    const read = readConfigText(urlFile, SECRET_FILE_LIMITS);
    if (!('text' in read)) problems.push({ path: `${ENV['url']}_FILE`, message: `cannot read ${urlFile}: ${read.issue.message}` });
    // An empty file is no URL: the exporter would go on with the PG* environment, not the server meant.
    else if (read.text.trim() === '') problems.push({ path: `${ENV['url']}_FILE`, message: `${urlFile} is empty: expected a postgresql:// URL in it` });
    else url = read.text.trim();
  }
  if (url) {
    try {
      const u = new URL(url);
      if (!/^postgres(ql)?:$/.test(u.protocol)) problems.push({ path: '--url', message: `expected a postgres:// or postgresql:// URL, got scheme ${u.protocol}` });
    } catch {
      problems.push({ path: '--url', message: 'not a valid URL (expected postgresql://user:password@host:port/database)' });
    }
  }
  problems.push(...pgSslProblems(url, env, '--url'));

  const listen = parseListenAddress(String(o['webListenAddress']));
  if (typeof listen === 'string') problems.push({ path: '--web.listen-address', message: listen });
  const telemetryPath = String(o['webTelemetryPath']);
  // A path a request can name: no query, fragment, space or escape (it would start, then answer 404 forever).
  if (!/^\/[A-Za-z0-9._~\/-]*$/.test(telemetryPath)) {
    problems.push({ path: '--web.telemetry-path', message: `expected a path such as /metrics (starting with /; letters, digits and . _ ~ - /), got ${JSON.stringify(telemetryPath)}` });
  } else if (reservedPaths().includes(telemetryPath)) {
    // Said with the other problems (checkTelemetryPath says it again to an embedder that skips this).
    problems.push({ path: '--web.telemetry-path', message: `${telemetryPath} is already an endpoint of the exporter` });
  }
  const namespace = String(o['namespace']);
  if (!isValidMetricName(namespace)) problems.push({ path: '--namespace', message: `invalid metric prefix ${JSON.stringify(namespace)}` });
  const constLabels = parseConstLabels(String(o['constLabels'] ?? ''));
  for (const message of constLabels.problems) problems.push({ path: '--const-labels', message });
  const connectTimeoutMs = parseDurationMs(o['connectTimeout']);
  if (connectTimeoutMs === null || connectTimeoutMs === 0) problems.push({ path: '--connect-timeout', message: `expected a positive duration such as 1s or 500ms, got ${JSON.stringify(o['connectTimeout'])}` });
  // It also bounds the up/role probe: a minute without an answer already means down. pg_exporter
  // reads a bare number as milliseconds, so its `--connect-timeout 100` would be 100 s here.
  else if (connectTimeoutMs > MAX_CONNECT_TIMEOUT_MS) {
    const bare = /^\s*\d+(\.\d+)?\s*$/.test(String(o['connectTimeout']));
    problems.push({ path: '--connect-timeout', message: `at most 60s, got ${JSON.stringify(o['connectTimeout'])}${bare ? ` (a bare number is seconds here: for milliseconds write ${String(o['connectTimeout']).trim()}ms)` : ''}` });
  }
  const concurrency = Number(o['concurrency']);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) problems.push({ path: '--concurrency', message: `expected an integer 1-64, got ${JSON.stringify(o['concurrency'])}` });
  const logLevel = String(o['logLevel']);
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) problems.push({ path: '--log.level', message: `expected debug, info, warn or error, got ${JSON.stringify(logLevel)}` });

  const options: ExporterOptions = {
    ...(url ? { url } : {}),
    ...(o['config'] ? { configPath: String(o['config']) } : {}),
    ...(typeof listen !== 'string' && listen.host ? { listenHost: listen.host } : {}),
    listenPort: typeof listen === 'string' ? 9630 : listen.port,
    telemetryPath,
    namespace,
    constLabels: constLabels.labels,
    tags: lst('tag'),
    disableCache: flag('disable-cache'),
    autoDiscovery: flag('auto-discovery'),
    excludeDatabases: lst('exclude-database'),
    includeDatabases: lst('include-database'),
    connectTimeoutMs: connectTimeoutMs ?? 1000,
    failFast: flag('fail-fast'),
    dryRun: flag('dry-run'),
    explain: flag('explain'),
    logLevel: logLevel as ExporterOptions['logLevel'],
    concurrency: Number.isInteger(concurrency) ? concurrency : 4,
    probeIntervalMs: 1000,
    naming: flag('compat.legacy-metric-names') ? 'legacy' : 'conventions',
    ...(o['webConfigFile'] ? { webConfigFile: String(o['webConfigFile']) } : {}),
    openHealthChecks: flag('web.open-health-checks'),
    ...(o['targets'] ? { targetsFile: String(o['targets']) } : {}),
  };
  if (problems.length > 0) throw new ValidationError(problems, 'invalid_flags');
  return options;
}
