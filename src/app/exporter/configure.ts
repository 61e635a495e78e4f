import { readConfigText } from '../yaml-read.js';
import { pgSslProblems } from '../../adapters/sql/pg-connection.js';
import { mergeConstLabels } from '../../domain/collectors/metric-naming.js';
import { targetsProblems, targetUrlProblem } from '../../domain/collectors/targets.js';
import { webConfigProblems, type WebConfig } from '../../domain/collectors/web-config.js';
import { ValidationError, type Problem } from '../../domain/errors.js';
import { BUNDLED_COLLECTORS_DIR, BUNDLED_PGBOUNCER_COLLECTORS_DIR, loadCollectorFiles, readYamlFile, shortenWords, type LoadedCollectors } from './config-files.js';
import { SECRET_FILE_LIMITS, type ExporterOptions } from './options.js';
import type { ExporterFiles, ResolvedTarget } from './run.js';
import { targetKindOfUrl } from './target-settings.js';
import { webTlsProblems } from './web-tls-check.js';
import type { TargetKind } from '../../domain/collectors/pgbouncer.js';

// Reading the configuration: YAML files validated with ajv. The exporter runs this in a
// short-lived process of its own at start and on /reload (see config-process.ts), so the
// long-running one never loads those libraries.

/** The collector configuration path of a kind: --config for the kind of the --url server, else the bundled set. */
export function configPathFor(options: ExporterOptions, kind: TargetKind): string {
  if (options.configPath && kind === targetKindOfUrl(options.url)) return options.configPath;
  return kind === 'pgbouncer' ? BUNDLED_PGBOUNCER_COLLECTORS_DIR : BUNDLED_COLLECTORS_DIR;
}

/** Loads the collector configuration of the --url server (the bundled set of its kind when none). Throws ValidationError. */
export function loadConfigured(options: ExporterOptions): Promise<LoadedCollectors> {
  return loadCollectorFiles(configPathFor(options, targetKindOfUrl(options.url)), options.namespace);
}

function readSecret(path: string, what: string): string {
  const read = readConfigText(path, SECRET_FILE_LIMITS);
  if ('text' in read) return read.text.trim();
  throw new ValidationError([{ path: what, message: `cannot read ${path}: ${read.issue.message}` }], 'invalid_config');
}

/** Reads the web configuration and the targets file named by the options (and the URL and password files the targets name). Throws ValidationError. */
export async function loadExporterFiles(options: ExporterOptions): Promise<ExporterFiles> {
  // Both files are read whatever the other holds: their problems are listed together.
  const problems: Problem[] = [];
  const collect = (e: unknown): null => {
    if (!(e instanceof ValidationError)) throw e;
    problems.push(...e.problems);
    return null;
  };
  let webConfig: WebConfig | null = null;
  if (options.webConfigFile) {
    let raw: unknown;
    let read = true;
    try {
      raw = await readYamlFile(options.webConfigFile);
    } catch (e) {
      collect(e);
      read = false;
    }
    if (read) {
      const checked = webConfigProblems(raw, options.webConfigFile);
      problems.push(...checked.problems);
      // The TLS files are checked whatever else the file has wrong.
      if (checked.tls) problems.push(...webTlsProblems(checked.tls, options.webConfigFile));
      webConfig = checked.config;
    }
  }
  const targets = options.targetsFile ? await loadTargets(options, options.targetsFile).catch(collect) : [];
  if (problems.length) throw new ValidationError(problems.map((p) => ({ path: p.path, message: shortenWords(p.message) })), 'invalid_config');
  return { webConfig, targets: targets ?? [] };
}

/** The targets file's targets with their connections and collector sets. Throws ValidationError listing every problem of every target. */
async function loadTargets(options: ExporterOptions, targetsFile: string): Promise<ResolvedTarget[]> {
  const targets: ResolvedTarget[] = [];
  const checked = targetsProblems(await readYamlFile(targetsFile), targetsFile);
  const problems: Problem[] = [...checked.problems];
  const add = (p: Problem) => {
    // A problem of the environment (PGSSLMODE...) or of a shared collector set is said once, not once per target.
    if (!problems.some((q) => q.path === p.path && q.message === p.message)) problems.push(p);
  };
  const loaded = new Map<string, Promise<LoadedCollectors>>();
  for (const t of checked.targets) {
    const where = `${targetsFile}.targets.${t.name}`;
    let url: string;
    try {
      url = t.url ?? readSecret(t.urlFile!, `${where}.url_file`);
      // A URL of the file that is no URL is said here; one of the targets file, already.
      const wrong = targetUrlProblem(url);
      if (wrong !== null) {
        if (t.url === undefined) add({ path: `${where}.url_file`, message: `${t.urlFile} holds no usable URL: ${wrong}` });
        continue;
      }
      if (t.passwordFile) {
        const u = new URL(url);
        u.password = encodeURIComponent(readSecret(t.passwordFile, `${where}.password_file`));
        url = u.toString();
      }
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      e.problems.forEach(add);
      continue;
    }
    for (const p of pgSslProblems(url, process.env, `${where}.url`)) add(p);
    const kind = t.kind ?? targetKindOfUrl(url);
    const configPath = t.config ?? configPathFor(options, kind);
    if (!loaded.has(configPath)) loaded.set(configPath, loadCollectorFiles(configPath, options.namespace));
    let collectors: LoadedCollectors;
    try {
      collectors = await loaded.get(configPath)!;
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      // Named by the target's setting that points there, so that the file is found.
      for (const p of e.problems) add(t.config !== undefined ? { path: `${targetsFile}.targets.${t.name}.config`, message: `${p.path ? `${p.path}: ` : ''}${p.message}` } : p);
      continue;
    }
    targets.push({
      settings: { name: t.name, url, kind, autoDiscovery: t.autoDiscovery, includeDatabases: t.includeDatabases, excludeDatabases: t.excludeDatabases, constLabels: mergeConstLabels(options.constLabels, t.constLabels) },
      configPath,
      collectors,
    });
  }
  if (problems.length) throw new ValidationError(problems, 'invalid_config');
  return targets;
}
