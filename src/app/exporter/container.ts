import 'reflect-metadata';
import { Container } from 'inversify';
import { ExporterProcessMetrics } from '../../adapters/metrics/exporter-process-metrics.js';
import { PgSqlClient } from '../../adapters/sql/pg-sql-client.js';
import { SystemClock } from '../../adapters/clock/system-clock.js';
import type { BuildInfo } from '../../domain/collectors/self-metrics.js';
import { Clock } from '../../ports/clock.js';
import { Logger } from '../../ports/logger.js';
import { SqlClient } from '../../ports/sql.js';
import { CollectorSet, type CollectorLoader } from './collector-set.js';
import type { LoadedCollectors } from './config-files.js';
import { ExporterService } from './exporter.js';
import type { ExporterOptions } from './options.js';
import { Planner } from './planner.js';
import { StateProbe } from './probe.js';
import { ScrapeRunner, type ProcessMetricsSource } from './scrape.js';
import { BuildInfoToken, CollectorLoaderToken, ExporterOptionsToken, InitialCollectorsToken, ProcessMetricsToken } from './tokens.js';

/** What the composition root is given; adapters left out get their production implementation. */
export interface ExporterWiring {
  readonly options: ExporterOptions;
  readonly collectors: LoadedCollectors;
  readonly loader: CollectorLoader;
  readonly logger: Logger;
  readonly buildInfo: BuildInfo;
  readonly sql?: SqlClient;
  readonly clock?: Clock;
  readonly processMetrics?: ProcessMetricsSource;
}

/** Binds ports to adapters and the exporter's services (all singletons). */
export function createExporterContainer(w: ExporterWiring): Container {
  const c = new Container({ defaultScope: 'Singleton' });
  c.bind<ExporterOptions>(ExporterOptionsToken).toConstantValue(w.options);
  c.bind<LoadedCollectors>(InitialCollectorsToken).toConstantValue(w.collectors);
  c.bind<CollectorLoader>(CollectorLoaderToken).toConstantValue(w.loader);
  c.bind<Logger>(Logger).toConstantValue(w.logger);
  c.bind<BuildInfo>(BuildInfoToken).toConstantValue(w.buildInfo);
  c.bind<Clock>(Clock).toConstantValue(w.clock ?? new SystemClock());
  c.bind<SqlClient>(SqlClient).toConstantValue(
    w.sql ??
      new PgSqlClient({
        ...(w.options.url ? { url: w.options.url } : {}),
        connectTimeoutMs: w.options.connectTimeoutMs,
        // one connection more than the collectors may use, so the probe never queues behind them
        maxConnections: w.options.concurrency + 1,
        applicationName: 'warden-exporter',
        logger: w.logger,
      }),
  );
  c.bind<ProcessMetricsSource>(ProcessMetricsToken).toConstantValue(w.processMetrics ?? new ExporterProcessMetrics(w.options.constLabels));
  c.bind(CollectorSet).toSelf();
  c.bind(StateProbe).toSelf();
  c.bind(Planner).toSelf();
  c.bind(ScrapeRunner).toSelf();
  c.bind(ExporterService).toSelf();
  return c;
}
