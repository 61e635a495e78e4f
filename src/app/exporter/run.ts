import { createExporterApp, listenExporter, reservedPaths, type ExporterHttpServer } from '../../adapters/http/exporter-api.js';
import { ExporterProcessMetrics } from '../../adapters/metrics/exporter-process-metrics.js';
import type { BuildInfo } from '../../domain/collectors/self-metrics.js';
import { ValidationError } from '../../domain/errors.js';
import type { Logger } from '../../ports/logger.js';
import { SqlClient } from '../../ports/sql.js';
import { readBuildInfo } from './build-info.js';
import { loadCollectorFiles, type LoadedCollectors } from './config-files.js';
import { createExporterContainer, type ExporterWiring } from './container.js';
import { ExporterService } from './exporter.js';
import type { ExporterOptions } from './options.js';
import { Planner } from './planner.js';
import { StateProbe } from './probe.js';
import { ProcessMetricsToken } from './tokens.js';
import type { ProcessMetricsSource } from './scrape.js';

/** A running exporter: its service, HTTP listener and base URL. */
export interface RunningExporter {
  readonly service: ExporterService;
  readonly http: ExporterHttpServer;
  /** `http://host:port`. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Loads the collector configuration named by the options (bundled set when none). Throws ValidationError. */
export function loadConfigured(options: ExporterOptions): Promise<LoadedCollectors> {
  return loadCollectorFiles(options.configPath);
}

/** Refuses a telemetry path that would hide another endpoint. */
export function checkTelemetryPath(options: ExporterOptions): void {
  if (reservedPaths().includes(options.telemetryPath)) {
    throw new ValidationError([{ path: '--web.telemetry-path', message: `${options.telemetryPath} is already an endpoint of the exporter` }], 'invalid_flags');
  }
}

/** Parts of the wiring a caller (test, embedding) may replace. */
export type ExporterOverrides = Partial<Pick<ExporterWiring, 'sql' | 'clock' | 'processMetrics' | 'buildInfo' | 'loader'>>;

/** Wires everything for `options` with an already loaded configuration; nothing runs yet. */
export function wireExporter(options: ExporterOptions, collectors: LoadedCollectors, logger: Logger, overrides: ExporterOverrides = {}) {
  const buildInfo: BuildInfo = overrides.buildInfo ?? readBuildInfo();
  const container = createExporterContainer({
    options,
    collectors,
    loader: overrides.loader ?? (() => loadConfigured(options)),
    logger,
    buildInfo,
    ...(overrides.sql ? { sql: overrides.sql } : {}),
    ...(overrides.clock ? { clock: overrides.clock } : {}),
    ...(overrides.processMetrics ? { processMetrics: overrides.processMetrics } : {}),
  });
  return {
    service: container.get(ExporterService),
    probe: container.get(StateProbe),
    planner: container.get(Planner),
    sql: container.get<SqlClient>(SqlClient),
    processMetrics: container.get<ProcessMetricsSource>(ProcessMetricsToken),
    collectors,
  };
}

/** Starts the probe and the HTTP API; the database being down is not an error (db_up 0, retried). */
export async function startExporter(options: ExporterOptions, collectors: LoadedCollectors, logger: Logger, overrides: ExporterOverrides = {}): Promise<RunningExporter> {
  checkTelemetryPath(options);
  const w = wireExporter(options, collectors, logger, overrides);
  if (w.processMetrics instanceof ExporterProcessMetrics) await w.processMetrics.refresh();
  w.service.start();
  const app = createExporterApp(w.service, { telemetryPath: options.telemetryPath }, logger);
  let http: ExporterHttpServer;
  try {
    http = await listenExporter(app, options.listenHost, options.listenPort);
  } catch (e) {
    w.service.stop();
    await w.sql.close();
    throw e;
  }
  const host = http.address.family === 'IPv6' ? `[${http.address.address}]` : http.address.address;
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${http.address.port}`;
  logger.info('exporter listening', { address: `${host}:${http.address.port}`, telemetryPath: options.telemetryPath, collectors: collectors.collectors.length, config: collectors.path });
  let stopped: Promise<void> | null = null;
  return {
    service: w.service,
    http,
    url,
    stop: () =>
      (stopped ??= (async () => {
        w.service.stop();
        await http.close();
        await w.sql.close();
        if (w.processMetrics instanceof ExporterProcessMetrics) w.processMetrics.close();
      })()),
  };
}
