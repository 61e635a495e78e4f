import { readFileSync } from 'node:fs';
import { pgSslProblems } from '../../adapters/sql/pg-connection.js';
import { mergeConstLabels } from '../../domain/collectors/metric-naming.js';
import { parseTargets } from '../../domain/collectors/targets.js';
import { parseWebConfig } from '../../domain/collectors/web-config.js';
import { ValidationError, type Problem } from '../../domain/errors.js';
import { BUNDLED_COLLECTORS_DIR, BUNDLED_PGBOUNCER_COLLECTORS_DIR, loadCollectorFiles, readYamlFile, type LoadedCollectors } from './config-files.js';
import type { ExporterOptions } from './options.js';
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
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new ValidationError([{ path: what, message: `cannot read ${path}: ${(e as Error).message}` }], 'invalid_config');
  }
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
  const webConfig = options.webConfigFile ? await readYamlFile(options.webConfigFile).then((raw) => parseWebConfig(raw, options.webConfigFile!)).catch(collect) : null;
  if (webConfig?.tls) problems.push(...webTlsProblems(webConfig.tls, options.webConfigFile!));
  const targets = options.targetsFile ? await loadTargets(options, options.targetsFile).catch(collect) : [];
  if (problems.length) throw new ValidationError(problems, 'invalid_config');
  return { webConfig, targets: targets ?? [] };
}

/** The targets file's targets with their connections and collector sets. Throws ValidationError. */
async function loadTargets(options: ExporterOptions, targetsFile: string): Promise<ResolvedTarget[]> {
  const targets: ResolvedTarget[] = [];
  const problems: Problem[] = [];
  const loaded = new Map<string, Promise<LoadedCollectors>>();
  for (const t of parseTargets(await readYamlFile(targetsFile), targetsFile)) {
    const where = `${targetsFile}.targets.${t.name}`;
    let url = t.url ?? readSecret(t.urlFile!, `${where}.url_file`);
    if (t.passwordFile) {
      const u = new URL(url);
      u.password = encodeURIComponent(readSecret(t.passwordFile, `${where}.password_file`));
      url = u.toString();
    }
    // A problem of the environment (PGSSLMODE...) is said once, not once per target.
    for (const p of pgSslProblems(url, process.env, `${where}.url`)) if (!problems.some((q) => q.path === p.path && q.message === p.message)) problems.push(p);
    const kind = t.kind ?? targetKindOfUrl(url);
    const configPath = t.config ?? configPathFor(options, kind);
    if (!loaded.has(configPath)) loaded.set(configPath, loadCollectorFiles(configPath, options.namespace));
    targets.push({
      settings: { name: t.name, url, kind, autoDiscovery: t.autoDiscovery, includeDatabases: t.includeDatabases, excludeDatabases: t.excludeDatabases, constLabels: mergeConstLabels(options.constLabels, t.constLabels) },
      configPath,
      collectors: await loaded.get(configPath)!,
    });
  }
  if (problems.length) throw new ValidationError(problems, 'invalid_config');
  return targets;
}
