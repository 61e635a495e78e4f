import 'reflect-metadata';
import { inject, injectable } from 'inversify';
import { explainText } from '../../domain/collectors/explain.js';
import type { CollectorStat } from '../../domain/collectors/stat.js';
import { ValidationError } from '../../domain/errors.js';
import type { ReloadResult } from '../../adapters/http/exporter-api.js';
import { Clock } from '../../ports/clock.js';
import { Logger } from '../../ports/logger.js';
import { CollectorSet } from './collector-set.js';
import { Planner } from './planner.js';
import { StateProbe } from './probe.js';
import { ScrapeRunner } from './scrape.js';
import { isUp, type ServerState } from '../../domain/collectors/server-state.js';


/**
 * The exporter as the HTTP layer sees it: state for the role checks, scrape, reload, explain
 * and stat. Keeps the plan in step with the server: a role or version change seen by the probe
 * replans at once, so a failover under the exporter needs nothing from the operator.
 */
@injectable()
export class ExporterService {
  private reloading: Promise<ReloadResult> | null = null;

  constructor(
    @inject(StateProbe) private readonly probe: StateProbe,
    @inject(Planner) private readonly planner: Planner,
    @inject(ScrapeRunner) private readonly runner: ScrapeRunner,
    @inject(CollectorSet) private readonly config: CollectorSet,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
  ) {
    this.probe.onChange((next) => {
      this.planner.invalidate();
      if (isUp(next)) void this.replan(next);
    });
  }

  /** Starts the background probe. */
  start(): void {
    this.probe.start();
  }

  stop(): void {
    this.probe.stop();
  }

  /** The latest up/role state (never waits on the database). */
  get state(): ServerState {
    return this.probe.state;
  }

  /** Ready: the database is up and the collectors are planned for its current role. */
  get ready(): boolean {
    const s = this.probe.state;
    const plan = this.planner.plan;
    return isUp(s) && plan !== null && plan.server.role === s.status;
  }

  /** The metrics text, UTF-8 encoded. */
  scrape(): Promise<Buffer> {
    return this.runner.scrape();
  }

  /** Re-reads the collector configuration; a broken one is refused and the current one keeps running. */
  reload(): Promise<ReloadResult> {
    this.reloading ??= this.doReload().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  /** The /explain text for the current plan. */
  explain(): string {
    const s = this.probe.state;
    return explainText({
      collectors: this.config.collectors,
      plan: this.planner.plan,
      unplannedReason: isUp(s) ? (this.planner.error ?? 'not planned yet') : `database ${s.status}${s.error ? `: ${s.error}` : ''}`,
      failedPredicate: (key) => this.runner.failedPredicate(key),
    });
  }

  /** Per-collector statistics, in run order. */
  stats(): CollectorStat[] {
    return this.runner.stats().map((c) => c.snapshot());
  }

  /** Makes a plan now (after a role change) so readiness does not wait for a scrape. */
  private async replan(s: ServerState & { status: 'primary' | 'replica' }): Promise<void> {
    await this.planner.ensure(this.config.collectors, s.status, s.version);
  }

  private async doReload(): Promise<ReloadResult> {
    const timestamp = () => new Date(this.clock.now()).toISOString();
    try {
      const loaded = await this.config.reload();
      this.planner.invalidate();
      const s = this.probe.state;
      if (isUp(s)) await this.replan(s);
      const message = `reloaded ${loaded.collectors.length} collectors from ${loaded.path}`;
      this.logger.info('collector configuration reloaded', { collectors: loaded.collectors.length, path: loaded.path });
      return { status: 'success', message, timestamp: timestamp() };
    } catch (e) {
      const message = e instanceof ValidationError ? `configuration refused, previous one still active: ${e.message}` : `reload failed, previous configuration still active: ${(e as Error).message}`;
      this.logger.error('collector configuration reload refused', { error: (e as Error).message });
      return { status: 'error', message, timestamp: timestamp() };
    }
  }
}
