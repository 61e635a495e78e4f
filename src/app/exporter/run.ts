import { BcryptBasicAuth } from '../../adapters/http/basic-auth.js';
import { createExporterHandler, listenExporter, reservedPaths, type ExporterHttpServer } from '../../adapters/http/exporter-api.js';
import { exporterTls } from '../../adapters/http/tls-options.js';
import type { BuildInfo } from '../../domain/collectors/self-metrics.js';
import type { WebConfig } from '../../domain/collectors/web-config.js';
import { ValidationError } from '../../domain/errors.js';
import type { Logger } from '../../ports/logger.js';
import type { SqlClient } from '../../ports/sql.js';
import { readBuildInfo } from './build-info.js';
import { CollectorSet, type CollectorLoader } from './collector-set.js';
import type { LoadedCollectors } from './config-files.js';
import { wireExporterParts, type ExporterParts, type SqlFactory } from './container.js';
import type { ExporterService } from './exporter.js';
import type { ExporterOptions } from './options.js';
import type { Planner } from './planner.js';
import type { StateProbe } from './probe.js';
import type { ProcessMetricsSource } from './scrape.js';
import { targetKindOfUrl, type TargetSettings } from './target-settings.js';
import type { Clock } from '../../ports/clock.js';

/** A running exporter: its service, HTTP listener and base URL. */
export interface RunningExporter {
  readonly service: ExporterService;
  readonly http: ExporterHttpServer;
  /** `http://host:port` (or https). */
  readonly url: string;
  stop(): Promise<void>;
}

/** Refuses a telemetry path that would hide another endpoint. */
export function checkTelemetryPath(options: ExporterOptions): void {
  if (reservedPaths().includes(options.telemetryPath)) {
    throw new ValidationError([{ path: '--web.telemetry-path', message: `${options.telemetryPath} is already an endpoint of the exporter` }], 'invalid_flags');
  }
}

/** A named target with its connection resolved and where its collectors come from. */
export interface ResolvedTarget {
  readonly settings: TargetSettings;
  readonly configPath: string;
  /** Its collectors as loaded at start. */
  readonly collectors: LoadedCollectors;
}

/** The web configuration and the targets of the options' files (null / none when not given). */
export interface ExporterFiles {
  readonly webConfig: WebConfig | null;
  readonly targets: readonly ResolvedTarget[];
}

/** Reads a collector configuration (through yaml and ajv, loaded only when first needed). */
function loadPath(path: string, namespace: string): Promise<LoadedCollectors> {
  return import('./config-files.js').then((m) => m.loadCollectorFiles(path, namespace));
}

/** The settings of the --url server. */
export function mainTarget(options: ExporterOptions): TargetSettings {
  return {
    name: '',
    ...(options.url ? { url: options.url } : {}),
    kind: targetKindOfUrl(options.url),
    autoDiscovery: options.autoDiscovery,
    includeDatabases: options.includeDatabases,
    excludeDatabases: options.excludeDatabases,
    constLabels: options.constLabels,
  };
}

/** Parts of the wiring a caller (test, embedding) may replace. */
export interface ExporterOverrides {
  readonly sql?: SqlClient;
  readonly sqlFactory?: SqlFactory;
  readonly clock?: Clock;
  readonly processMetrics?: ProcessMetricsSource;
  readonly buildInfo?: BuildInfo;
  /** Reloads the main collector set (default: its files again). */
  readonly loader?: CollectorLoader;
  /**
   * Reads the collector configuration at a path under the metric namespace (whose reserved
   * names it must not take), for the targets' sets and their reloads (default: in this process).
   */
  readonly loadCollectors?: (path: string, namespace: string) => Promise<LoadedCollectors>;
  /** The web configuration and targets (default: read from the options' files). */
  readonly files?: ExporterFiles;
}

/** Everything wired for `options`; nothing runs yet. */
export interface WiredExporter extends ExporterParts {
  readonly probe: StateProbe;
  readonly planner: Planner;
  readonly sql: SqlClient;
  readonly collectors: LoadedCollectors;
}

/** Wires everything for `options` with the configuration already loaded; nothing runs yet. */
export function wireExporter(options: ExporterOptions, collectors: LoadedCollectors, logger: Logger, overrides: ExporterOverrides = {}, files: ExporterFiles = { webConfig: null, targets: [] }): WiredExporter {
  const main = mainTarget(options);
  const loadAt = overrides.loadCollectors ?? loadPath;
  // A reload checks the names against the namespace the exporter started with, as the start did.
  const load = (path: string) => loadAt(path, options.namespace);
  const mainSet = new CollectorSet(collectors, overrides.loader ?? (() => load(collectors.path)));
  const sets = new Map<string, CollectorSet>([[collectors.path, mainSet]]);
  const targets: { settings: TargetSettings; set: CollectorSet }[] = [];
  for (const t of files.targets) {
    let set = sets.get(t.configPath);
    if (!set) {
      const path = t.configPath;
      set = new CollectorSet(t.collectors, () => load(path));
      sets.set(path, set);
    }
    targets.push({ settings: t.settings, set });
  }
  const parts = wireExporterParts({
    options,
    main,
    mainSet,
    targets,
    sets: [...sets.values()],
    logger,
    buildInfo: overrides.buildInfo ?? readBuildInfo(),
    ...(overrides.sql ? { sql: overrides.sql } : {}),
    ...(overrides.sqlFactory ? { sqlFactory: overrides.sqlFactory } : {}),
    ...(overrides.clock ? { clock: overrides.clock } : {}),
    ...(overrides.processMetrics ? { processMetrics: overrides.processMetrics } : {}),
  });
  return { ...parts, probe: parts.main.probe, planner: parts.main.planner, sql: parts.main.sql, collectors };
}

/** Starts the probe and the HTTP API (HTTPS and basic auth per the web configuration); the database being down is not an error (db_up 0, retried). */
export async function startExporter(options: ExporterOptions, collectors: LoadedCollectors, logger: Logger, overrides: ExporterOverrides = {}): Promise<RunningExporter> {
  checkTelemetryPath(options);
  const files = overrides.files ?? (await (await import('./configure.js')).loadExporterFiles(options));
  const w = wireExporter(options, collectors, logger, overrides, files);
  w.service.start();
  const web = files.webConfig;
  const users = web?.basicAuthUsers ?? {};
  const handler = createExporterHandler(
    w.service,
    {
      telemetryPath: options.telemetryPath,
      openMetrics: options.naming === 'conventions',
      auth: Object.keys(users).length > 0 ? new BcryptBasicAuth(users) : null,
      openHealthChecks: options.openHealthChecks,
      headers: web?.headers ?? {},
    },
    logger,
  );
  let http: ExporterHttpServer;
  try {
    http = await listenExporter(handler, options.listenHost, options.listenPort, web?.tls ? await exporterTls(web.tls) : undefined);
  } catch (e) {
    await w.close();
    throw e;
  }
  const host = http.address.family === 'IPv6' ? `[${http.address.address}]` : http.address.address;
  const url = `${http.tls ? 'https' : 'http'}://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${http.address.port}`;
  logger.info('exporter listening', {
    address: `${host}:${http.address.port}`,
    tls: http.tls,
    basicAuth: Object.keys(users).length > 0,
    telemetryPath: options.telemetryPath,
    collectors: collectors.collectors.length,
    config: collectors.path,
    targets: files.targets.map((t) => t.settings.name),
  });
  let stopped: Promise<void> | null = null;
  return {
    service: w.service,
    http,
    url,
    stop: () =>
      (stopped ??= (async () => {
        w.service.stop();
        await http.close();
        await w.close();
      })()),
  };
}
