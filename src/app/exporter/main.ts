import { isUp } from '../../domain/collectors/server-state.js';
import { JsonLinesLogger } from '../../adapters/logger/json-lines-logger.js';
import { loadCollectorsApart, runConfigProcess } from './config-client.js';
import type { LoadedCollectors } from './config-files.js';
import type { ExporterOptions } from './options.js';
import { startExporter, wireExporter, type ExporterFiles } from './run.js';

/** Exit code of a bad start (invalid flags or configuration, --fail-fast with the database down). */
export const EXIT_INVALID = 2;

async function explainOnce(options: ExporterOptions, loaded: LoadedCollectors, files: ExporterFiles): Promise<number> {
  // Silent: stdout carries the listing.
  const w = wireExporter(options, loaded, new JsonLinesLogger('silent'), {}, files);
  try {
    const state = await w.probe.refresh();
    if (isUp(state)) await w.planner.ensure(loaded.collectors, state.status, state.version);
    process.stdout.write(w.service.explain());
    return 0;
  } finally {
    await w.close();
  }
}

/**
 * Runs the exporter CLI; resolves with an exit code for the short-lived modes, or never for the
 * server (it exits on SIGTERM/SIGINT). Flags and files are read by a short-lived configuration
 * process, so this one keeps only what serving needs.
 */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let answer;
  try {
    answer = await runConfigProcess(['start', ...argv], env);
  } catch (e) {
    // The configuration process died (killed, out of memory): one line, as the agent says it.
    process.stderr.write(`warden-exporter: cannot start: the configuration could not be read: ${(e as Error).message}\n`);
    return 1;
  }
  if (answer.kind === 'exit') return answer.code;
  if (answer.kind !== 'start') {
    process.stderr.write(`warden-exporter: cannot start: unexpected answer ${answer.kind} from the configuration process\n`);
    return 1;
  }
  const { options, collectors, files, build } = answer;
  if (options.explain) return explainOnce(options, collectors, files);

  const logger = new JsonLinesLogger(options.logLevel, { component: 'warden-exporter' });
  if (options.failFast) {
    const w = wireExporter(options, collectors, logger, {}, files);
    const state = await w.probe.refresh();
    await w.close();
    if (!isUp(state)) {
      process.stderr.write(`warden-exporter: database ${state.status} at start (--fail-fast): ${state.error ?? ''}\n`);
      return EXIT_INVALID;
    }
  }
  let running;
  try {
    running = await startExporter(options, collectors, logger, { buildInfo: build, files, loadCollectors: loadCollectorsApart });
  } catch (e) {
    process.stderr.write(`warden-exporter: cannot listen on ${options.listenHost ?? ''}:${options.listenPort}: ${(e as Error).message}\n`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info('shutting down', { signal });
      void running.stop().then(() => resolve(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    // SIGHUP reloads the collector configuration, as POST /reload does (systemctl reload; it used to end the process).
    process.on('SIGHUP', () => {
      void running.service.reload().then((r) => (r.status === 'success' ? logger.info('reloaded on SIGHUP', { message: r.message }) : logger.error('reload on SIGHUP failed: the configuration in force stays', { message: r.message })));
    });
  });
}
