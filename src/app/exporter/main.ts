import { formatDuration } from '../../domain/collectors/duration.js';
import { versionRangeText } from '../../domain/collectors/select.js';
import { isUp } from '../../domain/collectors/server-state.js';
import { ValidationError } from '../../domain/errors.js';
import { readBuildInfo } from './build-info.js';
import { JsonLinesLogger } from '../../adapters/logger/json-lines-logger.js';
import { parseExporterOptions, type ExporterOptions } from './options.js';
import { checkTelemetryPath, loadConfigured, loadExporterFiles, startExporter, wireExporter, type ExporterFiles } from './run.js';
import type { LoadedCollectors } from './config-files.js';

/** Exit code of a bad start (invalid flags or configuration, --fail-fast with the database down). */
export const EXIT_INVALID = 2;

function printProblems(title: string, e: ValidationError): void {
  process.stderr.write(`${title}:\n${e.problems.map((p) => `  - ${p.path ? `${p.path}: ` : ''}${p.message}`).join('\n')}\n`);
}

/** The --dry-run listing: one line per collector. */
export function dryRunText(loaded: LoadedCollectors): string {
  const rows = loaded.collectors.map((d) => [d.key, versionRangeText(d), `[${d.tags.join(', ')}]`, `ttl=${formatDuration(d.ttlMs)}`, `timeout=${formatDuration(d.timeoutMs)}`, `metrics=${d.metrics.length}`]);
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]!.length))) ?? [];
  const lines = rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
  return `${lines.join('\n')}\n${loaded.collectors.length} collectors from ${loaded.files.length} file(s) in ${loaded.path}: configuration OK\n`;
}

async function explainOnce(options: ExporterOptions, loaded: LoadedCollectors): Promise<number> {
  // Silent: stdout carries the listing.
  const logger = new JsonLinesLogger('silent');
  const w = wireExporter(options, loaded, logger);
  try {
    const state = await w.probe.refresh();
    if (isUp(state)) await w.planner.ensure(loaded.collectors, state.status, state.version);
    process.stdout.write(w.service.explain());
    return 0;
  } finally {
    await w.sql.close();
  }
}

/** Runs the exporter CLI; resolves with an exit code for the short-lived modes, or never for the server (it exits on SIGTERM/SIGINT). */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const build = readBuildInfo();
  let options: ExporterOptions;
  try {
    options = parseExporterOptions(argv, env, build.version);
    checkTelemetryPath(options);
  } catch (e) {
    if (e instanceof ValidationError) {
      printProblems('warden-exporter: invalid flags', e);
      return EXIT_INVALID;
    }
    const code = (e as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return 0;
    throw e;
  }
  let loaded: LoadedCollectors;
  try {
    loaded = await loadConfigured(options);
  } catch (e) {
    if (e instanceof ValidationError) {
      printProblems(`warden-exporter: invalid collector configuration (${e.problems.length} problem${e.problems.length === 1 ? '' : 's'})`, e);
      return EXIT_INVALID;
    }
    throw e;
  }
  let files: ExporterFiles;
  try {
    files = await loadExporterFiles(options);
  } catch (e) {
    if (e instanceof ValidationError) {
      printProblems(`warden-exporter: invalid web configuration or targets file (${e.problems.length} problem${e.problems.length === 1 ? '' : 's'})`, e);
      return EXIT_INVALID;
    }
    throw e;
  }
  if (options.dryRun) {
    process.stdout.write(dryRunText(loaded));
    return 0;
  }
  if (options.explain) return explainOnce(options, loaded);

  const logger = new JsonLinesLogger(options.logLevel, { component: 'warden-exporter' });
  if (options.failFast) {
    const w = wireExporter(options, loaded, logger);
    const state = await w.probe.refresh();
    await w.close();
    if (!isUp(state)) {
      process.stderr.write(`warden-exporter: database ${state.status} at start (--fail-fast): ${state.error ?? ''}\n`);
      return EXIT_INVALID;
    }
  }
  let running;
  try {
    running = await startExporter(options, loaded, logger, { buildInfo: build, files });
  } catch (e) {
    process.stderr.write(`warden-exporter: cannot listen on ${options.listenHost ?? ''}:${options.listenPort}: ${(e as Error).message}\n`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info('shutting down', { signal });
      void running
        .stop()
        .then(() => logger.flush())
        .then(() => resolve(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
