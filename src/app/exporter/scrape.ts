import 'reflect-metadata';
import { inject, injectable } from 'inversify';
import { cacheKey, isFresh } from '../../domain/collectors/cache.js';
import type { CollectorDefinition } from '../../domain/collectors/collector.js';
import { mergeFamilies } from '../../domain/collectors/exposition.js';
import { rowsToOutput, type RenderedFamily } from '../../domain/collectors/samples.js';
import type { Plan, PlannedCollector } from '../../domain/collectors/select.js';
import {
  renderBuildInfo,
  renderScrapeSelfStats,
  renderServerGauges,
  type BuildInfo,
} from '../../domain/collectors/self-metrics.js';
import { SqlError } from '../../domain/collectors/sql-error.js';
import { Clock } from '../../ports/clock.js';
import { Logger } from '../../ports/logger.js';
import { SqlClient } from '../../ports/sql.js';
import { runBounded } from './bounded.js';
import { CollectorCounters } from './collector-stats.js';
import { CollectorSet } from './collector-set.js';
import type { ExporterOptions } from './options.js';
import { Planner } from './planner.js';
import { StateProbe } from './probe.js';
import { isUp, type ServerState } from '../../domain/collectors/server-state.js';
import { BuildInfoToken, ExporterOptionsToken, ProcessMetricsToken } from './tokens.js';

/** Source of the prom-client process metrics text (cached; may lag by up to a second). */
export interface ProcessMetricsSource {
  text(): string;
}

/** The cached result of one collector on one database. */
interface Entry {
  /** Monotonic ms. */
  readonly at: number;
  readonly families: readonly RenderedFamily[];
  readonly samples: number;
  readonly error: string | null;
  /** Name of the predicate that returned false (then no query ran). */
  readonly predicateFailed: string | null;
}

/** One collector on one database in the current plan, with everything a cached scrape needs precomputed. */
interface Slot {
  readonly pc: PlannedCollector;
  readonly db: string;
  /** undefined for the database of the URL. */
  readonly database: string | undefined;
  readonly key: string;
  readonly counter: CollectorCounters;
}

/** How long a probe result is trusted by a scrape before it asks again (the probe runs every second anyway). */
const STATE_MAX_AGE_MS = 1_000;
const DOWN_STATE_MAX_AGE_MS = 200;

/**
 * One scrape: make sure the plan fits the server, run the collectors whose cache expired (with
 * bounded concurrency), and render built-ins + cached collector text + self metrics. Concurrent
 * scrapes share one in-flight run. Rendered text is cached per collector, and the whole
 * collector section is reused while no cache entry changed.
 */
@injectable()
export class ScrapeRunner {
  private inflight: Promise<Buffer> | null = null;
  private readonly entries = new Map<string, Entry>();
  private readonly predicates = new Map<string, { at: number; value: boolean }>();
  private readonly counters = new Map<string, CollectorCounters>();
  private entriesPlan: Plan | null = null;
  private entriesDefs: readonly CollectorDefinition[] | null = null;
  private slots: readonly Slot[] = [];
  /** Counters of the active collectors of the current plan, in run order (the self metrics). */
  private activeCounters: readonly CollectorCounters[] = [];
  /** Bumped whenever an entry changes; the assembled section is valid for one generation. */
  private generation = 0;
  private assembled: { generation: number; plan: Plan; bytes: Buffer; fatalFailed: string | null; failed: number } | null = null;
  private readonly buildInfoBytes: Buffer;
  /** The process metrics text last seen and its encoding (re-encoded only when the text changes, about once a second). */
  private processText = '';
  private processBytes = Buffer.alloc(0);
  private scrapesTotal = 0;
  private scrapeErrorsTotal = 0;
  private lastScrapeDurationSeconds = 0;
  private lastScrapeTimestampSeconds = 0;

  constructor(
    @inject(SqlClient) private readonly sql: SqlClient,
    @inject(StateProbe) private readonly probe: StateProbe,
    @inject(Planner) private readonly planner: Planner,
    @inject(CollectorSet) private readonly config: CollectorSet,
    @inject(ExporterOptionsToken) private readonly options: ExporterOptions,
    @inject(BuildInfoToken) build: BuildInfo,
    @inject(ProcessMetricsToken) private readonly processMetrics: ProcessMetricsSource,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
  ) {
    this.buildInfoBytes = Buffer.from(renderBuildInfo(options.namespace, options.constLabels, build));
  }

  /**
   * The metrics text, UTF-8 encoded; joins a run already in flight. Never rejects. Bytes, not a
   * string: the cached sections stay encoded, so a cached scrape only encodes the few changing lines.
   */
  scrape(): Promise<Buffer> {
    this.inflight ??= this.run().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /** Counters of every configured collector, in run order, for /stat. */
  stats(): CollectorCounters[] {
    return this.config.collectors.map((d) => this.counter(d.key));
  }

  /** The name of the predicate that last returned false for `key` on every database it ran on, else null (for /explain). */
  failedPredicate(key: string): string | null {
    const plan = this.entriesPlan;
    const pc = plan?.active.find((c) => c.def.key === key);
    if (!pc) return null;
    const failed = pc.targets.map((db) => this.entries.get(cacheKey(key, db))?.predicateFailed ?? null);
    return failed.length > 0 && failed.every((f) => f !== null) ? failed[0]! : null;
  }

  private counter(key: string): CollectorCounters {
    let c = this.counters.get(key);
    if (!c) this.counters.set(key, (c = new CollectorCounters(key)));
    return c;
  }

  private async currentState(): Promise<ServerState> {
    const s = this.probe.state;
    const age = performance.now() - s.checkedAt;
    if (age <= (isUp(s) ? STATE_MAX_AGE_MS : DOWN_STATE_MAX_AGE_MS)) return s;
    return this.probe.refresh();
  }

  private async run(): Promise<Buffer> {
    const started = performance.now();
    const ns = this.options.namespace;
    let state = await this.currentState();
    let plan: Plan | null = null;
    const defs = this.config.collectors;
    if (isUp(state)) {
      plan = this.planner.isCurrent(defs, state.status, state.version) ? this.planner.plan : await this.planner.ensure(defs, state.status, state.version);
      if (plan) await this.collect(plan, defs);
      state = this.probe.state;
    }
    let body: Buffer | null = null;
    let up = isUp(state) && plan !== null;
    let failed = plan === null ? 1 : 0;
    if (up && plan) {
      const section = this.assemble(plan);
      failed = section.failed;
      if (section.fatalFailed) up = false;
      else body = section.bytes;
    }
    this.scrapesTotal++;
    if (!up || failed > 0) this.scrapeErrorsTotal++;
    this.lastScrapeDurationSeconds = (performance.now() - started) / 1000;
    this.lastScrapeTimestampSeconds = this.clock.now() / 1000;
    const gauges = renderServerGauges(ns, this.options.constLabels, {
      up,
      version: state.version,
      inRecovery: isUp(state) ? state.status === 'replica' : null,
    });
    const self = renderScrapeSelfStats(ns, this.options.constLabels, {
      lastScrapeDurationSeconds: this.lastScrapeDurationSeconds,
      scrapesTotal: this.scrapesTotal,
      scrapeErrorsTotal: this.scrapeErrorsTotal,
      lastScrapeTimestampSeconds: this.lastScrapeTimestampSeconds,
      collectors: this.activeCounters,
    });
    const processText = this.processMetrics.text();
    if (processText !== this.processText) {
      this.processText = processText;
      this.processBytes = Buffer.from(processText);
    }
    const parts = [Buffer.from(gauges), this.buildInfoBytes, ...(body ? [body] : []), Buffer.from(self), this.processBytes];
    return Buffer.concat(parts);
  }

  /** Drops cached results made for another configuration or server role/version (a rediscovery keeps them). */
  private adoptPlan(plan: Plan, defs: readonly CollectorDefinition[]): void {
    if (plan === this.entriesPlan) return;
    const prev = this.entriesPlan;
    if (!prev || this.entriesDefs !== defs || prev.server.role !== plan.server.role || prev.server.version !== plan.server.version) {
      this.entries.clear();
      this.predicates.clear();
    }
    this.entriesPlan = plan;
    this.entriesDefs = defs;
    const mainDb = plan.databases[0]!;
    this.slots = plan.active.flatMap((pc) =>
      pc.targets.map((db) => ({ pc, db, database: db === mainDb ? undefined : db, key: cacheKey(pc.def.key, db), counter: this.counter(pc.def.key) })),
    );
    this.activeCounters = plan.active.map((pc) => this.counter(pc.def.key));
    this.generation++;
  }

  private async collect(plan: Plan, defs: readonly CollectorDefinition[]): Promise<void> {
    this.adoptPlan(plan, defs);
    const now = performance.now();
    const disabled = this.options.disableCache;
    const tasks: (() => Promise<void>)[] = [];
    const ranNow = new Map<string, number>();
    for (const slot of this.slots) {
      if (isFresh(this.entries.get(slot.key), slot.pc.def.ttlMs, now, disabled)) {
        slot.counter.cacheHits++;
        continue;
      }
      tasks.push(() => this.runTarget(slot, ranNow));
    }
    if (tasks.length === 0) return;
    await runBounded(tasks, this.options.concurrency);
    for (const [key, seconds] of ranNow) this.counter(key).lastDurationSeconds = seconds;
    this.generation++;
  }

  private async runTarget(slot: Slot, ranNow: Map<string, number>): Promise<void> {
    const { pc, db, database, counter } = slot;
    const def = pc.def;
    const t0 = performance.now();
    let entry: Entry;
    try {
      const failedPredicate = await this.failedPredicateOn(def, db, database);
      if (failedPredicate) {
        entry = { at: t0, families: [], samples: 0, error: null, predicateFailed: failedPredicate };
      } else {
        const rows = await this.sql.query(def.query, { timeoutMs: def.timeoutMs, ...(database !== undefined ? { database } : {}) });
        const extra = pc.clusterLevel ? this.options.constLabels : [['datname', db] as const, ...this.options.constLabels];
        const out = rowsToOutput(pc.compiled, rows, extra);
        if (out.duplicates > 0) this.logger.warn('collector returned rows with identical labels; kept the first', { collector: def.key, database: db, dropped: out.duplicates });
        entry = { at: t0, families: out.families, samples: out.samples, error: null, predicateFailed: null };
      }
      counter.lastError = null;
    } catch (e) {
      const message = (e as Error).message ?? String(e);
      entry = { at: t0, families: [], samples: 0, error: message, predicateFailed: null };
      counter.errors++;
      counter.lastError = message;
      this.logger.warn('collector failed', { collector: def.key, database: db, error: message });
      if (e instanceof SqlError && e.code === 'sql_unavailable' && database === undefined) this.probe.markDown(e);
    }
    counter.runs++;
    ranNow.set(def.key, (ranNow.get(def.key) ?? 0) + (performance.now() - t0) / 1000);
    this.entries.set(slot.key, entry);
  }

  /** Evaluates the predicates (each cached for its own ttl); the first one that is not true, else null. */
  private async failedPredicateOn(def: CollectorDefinition, db: string, database: string | undefined): Promise<string | null> {
    for (const p of def.predicateQueries) {
      const key = `${cacheKey(def.key, db)}\u0000${p.name}`;
      const now = performance.now();
      let cached = this.predicates.get(key);
      if (!isFresh(cached, p.ttlMs, now, this.options.disableCache)) {
        const r = await this.sql.query(p.query, { timeoutMs: def.timeoutMs, ...(database !== undefined ? { database } : {}) });
        cached = { at: now, value: r.rows[0]?.[0] === 't' || r.rows[0]?.[0] === 'true' };
        this.predicates.set(key, cached);
      }
      if (!cached!.value) return p.name;
    }
    return null;
  }

  /** The collector section of the output, rebuilt only when an entry changed since the last scrape. */
  private assemble(plan: Plan): { bytes: Buffer; fatalFailed: string | null; failed: number } {
    const a = this.assembled;
    if (a && a.generation === this.generation && a.plan === plan) return a;
    let text = '';
    let fatalFailed: string | null = null;
    let failed = 0;
    for (const pc of plan.active) {
      const outputs: (readonly RenderedFamily[])[] = [];
      let samples = 0;
      for (const db of pc.targets) {
        const e = this.entries.get(cacheKey(pc.def.key, db));
        if (!e) continue;
        if (e.error !== null) {
          failed++;
          if (pc.def.fatal) fatalFailed ??= pc.def.key;
          continue;
        }
        if (e.families.length > 0) outputs.push(e.families);
        samples += e.samples;
      }
      this.counter(pc.def.key).lastMetrics = samples;
      if (outputs.length > 0) text += mergeFamilies(outputs);
    }
    // Logged here, once per change of results, not on every (cached) scrape.
    if (fatalFailed) this.logger.warn('fatal collector failed: reporting the database down', { collector: fatalFailed });
    this.assembled = { generation: this.generation, plan, bytes: Buffer.from(text), fatalFailed, failed };
    return this.assembled;
  }
}
