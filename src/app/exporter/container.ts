import { ProcessMetrics } from '../../adapters/metrics/process-metrics.js';
import { PgSqlClient } from '../../adapters/sql/pg-sql-client.js';
import { SystemClock } from '../../adapters/clock/system-clock.js';
import type { BuildInfo } from '../../domain/collectors/self-metrics.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { SqlClient } from '../../ports/sql.js';
import type { CollectorSet } from './collector-set.js';
import { ExporterService, type ProbeTargets } from './exporter.js';
import type { ExporterOptions } from './options.js';
import type { ProcessMetricsSource } from './scrape.js';
import { TargetRuntime, type TargetShared } from './target.js';
import type { TargetSettings } from './target-settings.js';

/** Makes the SqlClient of one target. */
export type SqlFactory = (target: TargetSettings) => SqlClient;

/** What the composition root is given; adapters left out get their production implementation. */
export interface ExporterWiring {
  readonly options: ExporterOptions;
  /** The server of --url. */
  readonly main: TargetSettings;
  /** Its collector set. */
  readonly mainSet: CollectorSet;
  /** The named targets of /probe, each with its collector set. */
  readonly targets: readonly { readonly settings: TargetSettings; readonly set: CollectorSet }[];
  /** Every collector set in use (reloaded together). */
  readonly sets: readonly CollectorSet[];
  readonly logger: Logger;
  readonly buildInfo: BuildInfo;
  /** The main target's SqlClient (tests); absent: made by `sqlFactory`. */
  readonly sql?: SqlClient;
  readonly sqlFactory?: SqlFactory;
  readonly clock?: Clock;
  readonly processMetrics?: ProcessMetricsSource;
}

/** What wiring made. */
export interface ExporterParts {
  readonly service: ExporterService;
  readonly main: TargetRuntime;
  readonly targets: ProbeTargets;
  readonly processMetrics: ProcessMetricsSource;
  /** Stops every probe and closes every connection. */
  close(): Promise<void>;
}

/** node-postgres pools for a target: one connection more than the collectors may use, so the probe never queues behind them. */
export function pgSqlFactory(options: ExporterOptions, logger: Logger): SqlFactory {
  return (target) =>
    new PgSqlClient({
      ...(target.url ? { url: target.url } : {}),
      connectTimeoutMs: options.connectTimeoutMs,
      maxConnections: options.concurrency + 1,
      applicationName: 'warden-exporter',
      logger: target.name ? logger.child({ target: target.name }) : logger,
      serverSideTimeouts: target.kind === 'postgres',
    });
}

const NO_PROCESS_METRICS: ProcessMetricsSource = { text: () => '' };

/**
 * The exporter's composition root: plain constructors, no container. The exporter runs near
 * Node's own memory floor, and a DI container with its metadata library would be a quarter of
 * its private memory; the parts still meet only through their interfaces (ports), so tests and
 * embedders swap any adapter here.
 */
export function wireExporterParts(w: ExporterWiring): ExporterParts {
  const clock = w.clock ?? new SystemClock();
  const sqlFactory = w.sqlFactory ?? pgSqlFactory(w.options, w.logger);
  const processMetrics = w.processMetrics ?? new ProcessMetrics(w.options.constLabels);
  const shared: TargetShared = { options: w.options, build: w.buildInfo, clock, logger: w.logger };
  const main = new TargetRuntime(w.main, w.sql ?? sqlFactory(w.main), w.mainSet, shared, processMetrics);
  const byName = new Map(w.targets.map((t) => [t.settings.name, t]));
  const started = new Map<string, TargetRuntime>();
  const targets: ProbeTargets = {
    names: w.targets.map((t) => t.settings.name),
    runtime(name: string) {
      const known = started.get(name);
      if (known) return known;
      const t = byName.get(name);
      if (!t) return null;
      // A probe target has no background probe: each /probe refreshes its state when it is older than a second.
      const r = new TargetRuntime(t.settings, sqlFactory(t.settings), t.set, shared, NO_PROCESS_METRICS);
      started.set(name, r);
      return r;
    },
    get started() {
      return [...started.values()];
    },
  };
  const service = new ExporterService(main, targets, w.sets, clock, w.logger);
  return {
    service,
    main,
    targets,
    processMetrics,
    close: async () => {
      await Promise.all([main, ...started.values()].map((r) => r.close()));
      if (processMetrics instanceof ProcessMetrics) processMetrics.close();
    },
  };
}
