import { explainText } from '../../domain/collectors/explain.js';
import type { CollectorStat } from '../../domain/collectors/stat.js';
import { WardenError, ValidationError } from '../../domain/errors.js';
import type { ReloadResult } from '../../adapters/http/exporter-api.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { CollectorSet } from './collector-set.js';
import type { LoadedCollectors } from './config-files.js';
import type { ScrapeBody } from './scrape.js';
import type { TargetRuntime } from './target.js';
import { isUp, type ServerState } from '../../domain/collectors/server-state.js';

/** A /probe target name that the targets file does not define. */
export class UnknownTargetError extends WardenError<'unknown_target'> {
  constructor(name: string, known: readonly string[]) {
    super('unknown_target', `no target named ${JSON.stringify(name)} in the targets file${known.length ? ` (known: ${known.join(', ')})` : ' (none defined)'}`);
  }
}

/** The named targets of /probe: each runtime is made on the first probe of its target. */
export interface ProbeTargets {
  readonly names: readonly string[];
  /** The runtime of a target, or null for an unknown name. */
  runtime(name: string): TargetRuntime | null;
  /** The runtimes made so far. */
  readonly started: readonly TargetRuntime[];
}

/**
 * The exporter as the HTTP layer sees it: state for the role checks, scrape, probe, reload,
 * explain and stat. The server of --url is the main target; the named ones answer /probe.
 */
export class ExporterService {
  private reloading: Promise<ReloadResult> | null = null;

  constructor(
    private readonly main: TargetRuntime,
    private readonly targets: ProbeTargets,
    /** Every collector set (one per kind of target, and the ones of targets with their own file). */
    private readonly sets: readonly CollectorSet[],
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Starts the background probe of the main target. */
  start(): void {
    this.main.probe.start();
  }

  stop(): void {
    this.main.probe.stop();
  }

  /** The latest up/role state (never waits on the database). */
  get state(): ServerState {
    return this.main.probe.state;
  }

  /** Ready: the database is up and the collectors are planned for its current role. */
  get ready(): boolean {
    const s = this.main.probe.state;
    const plan = this.main.planner.plan;
    return isUp(s) && plan !== null && plan.server.role === s.status;
  }

  /** The metrics of the main target. */
  scrape(): Promise<ScrapeBody> {
    return this.main.scrape();
  }

  /** The metrics of a named target; rejects with UnknownTargetError for a name not configured. */
  probe(name: string): Promise<ScrapeBody> {
    const runtime = this.targets.runtime(name);
    if (!runtime) return Promise.reject(new UnknownTargetError(name, this.targets.names));
    return runtime.scrape();
  }

  /** Re-reads every collector configuration; a broken one is refused and the current ones keep running. */
  reload(): Promise<ReloadResult> {
    this.reloading ??= this.doReload().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  /** The /explain text for the current plan of the main target. */
  explain(): string {
    const s = this.main.probe.state;
    return explainText({
      collectors: this.main.config.collectors,
      plan: this.main.planner.plan,
      unplannedReason: isUp(s) ? (this.main.planner.error ?? 'not planned yet') : `database ${s.status}${s.error ? `: ${s.error}` : ''}`,
      failedPredicate: (key) => this.main.runner.failedPredicate(key),
    });
  }

  /** Per-collector statistics of the main target, in run order. */
  stats(): CollectorStat[] {
    return this.main.runner.stats().map((c) => c.snapshot());
  }

  private async doReload(): Promise<ReloadResult> {
    const timestamp = () => new Date(this.clock.now()).toISOString();
    try {
      // All or nothing: every set is read and validated before any is applied.
      const next: LoadedCollectors[] = [];
      for (const set of this.sets) next.push(await set.load());
      this.sets.forEach((set, i) => set.apply(next[i]!));
      await Promise.all([this.main, ...this.targets.started].map((t) => t.replan()));
      const loaded = this.main.config.source;
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
