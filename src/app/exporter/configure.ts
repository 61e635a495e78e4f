import { readFileSync } from 'node:fs';
import { parseTargets } from '../../domain/collectors/targets.js';
import { parseWebConfig } from '../../domain/collectors/web-config.js';
import { ValidationError } from '../../domain/errors.js';
import { BUNDLED_COLLECTORS_DIR, BUNDLED_PGBOUNCER_COLLECTORS_DIR, loadCollectorFiles, readYamlFile, type LoadedCollectors } from './config-files.js';
import type { ExporterOptions } from './options.js';
import type { ExporterFiles, ResolvedTarget } from './run.js';
import { targetKindOfUrl } from './target-settings.js';
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
  const webConfig = options.webConfigFile ? parseWebConfig(await readYamlFile(options.webConfigFile), options.webConfigFile) : null;
  const targets: ResolvedTarget[] = [];
  const loaded = new Map<string, Promise<LoadedCollectors>>();
  if (options.targetsFile) {
    for (const t of parseTargets(await readYamlFile(options.targetsFile), options.targetsFile)) {
      const where = `${options.targetsFile}.targets.${t.name}`;
      let url = t.url ?? readSecret(t.urlFile!, `${where}.url_file`);
      if (t.passwordFile) {
        const u = new URL(url);
        u.password = encodeURIComponent(readSecret(t.passwordFile, `${where}.password_file`));
        url = u.toString();
      }
      const kind = t.kind ?? targetKindOfUrl(url);
      const configPath = t.config ?? configPathFor(options, kind);
      if (!loaded.has(configPath)) loaded.set(configPath, loadCollectorFiles(configPath, options.namespace));
      targets.push({
        settings: { name: t.name, url, kind, autoDiscovery: t.autoDiscovery, includeDatabases: t.includeDatabases, excludeDatabases: t.excludeDatabases, constLabels: [...options.constLabels, ...t.constLabels] },
        configPath,
        collectors: await loaded.get(configPath)!,
      });
    }
  }
  return { webConfig, targets };
}
