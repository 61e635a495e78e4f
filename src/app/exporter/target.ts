import type { BuildInfo } from '../../domain/collectors/self-metrics.js';
import { isUp } from '../../domain/collectors/server-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { SqlClient } from '../../ports/sql.js';
import type { CollectorSet } from './collector-set.js';
import type { ExporterOptions } from './options.js';
import { Planner } from './planner.js';
import { StateProbe } from './probe.js';
import { ScrapeRunner, type ProcessMetricsSource, type ScrapeBody } from './scrape.js';
import type { TargetSettings } from './target-settings.js';

/** What every target's runtime shares: the options, build info, clock and logger. */
export interface TargetShared {
  readonly options: ExporterOptions;
  readonly build: BuildInfo;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Everything that collects from one server: its own connections, state probe, plan and caches.
 * Targets share nothing else, so a slow or unreachable server never delays another one.
 */
export class TargetRuntime {
  readonly probe: StateProbe;
  readonly planner: Planner;
  readonly runner: ScrapeRunner;

  constructor(
    readonly settings: TargetSettings,
    readonly sql: SqlClient,
    readonly config: CollectorSet,
    shared: TargetShared,
    processMetrics: ProcessMetricsSource,
  ) {
    const logger = settings.name ? shared.logger.child({ target: settings.name }) : shared.logger;
    this.probe = new StateProbe(sql, shared.options, logger, settings);
    this.planner = new Planner(sql, shared.options, logger, settings);
    this.runner = new ScrapeRunner(sql, this.probe, this.planner, config, shared.options, shared.build, processMetrics, shared.clock, logger, settings);
    // A role or version change (failover) or a database created or dropped replans at once.
    this.probe.onChange((next) => {
      this.planner.invalidate();
      if (isUp(next)) void this.planner.ensure(this.config.collectors, next.status, next.version);
    });
    this.probe.onDatabasesChange(() => this.planner.invalidate());
  }

  /** Collects (or joins a collection in flight) and answers the body of this scrape. */
  scrape(): Promise<ScrapeBody> {
    return this.runner.scrape();
  }

  /** Makes a plan now for the current state (after a reload), when the server is up. */
  async replan(): Promise<void> {
    this.planner.invalidate();
    const s = this.probe.state;
    if (isUp(s)) await this.planner.ensure(this.config.collectors, s.status, s.version);
  }

  /** Stops the probe and closes the connections. */
  async close(): Promise<void> {
    this.probe.stop();
    await this.sql.close();
  }
}
