import { cacheKey, isFresh } from '../../domain/collectors/cache.js';
import type { CollectorDefinition } from '../../domain/collectors/collector.js';
import { mergeFamilies, OPENMETRICS_EOF, type ExpositionFormat } from '../../domain/collectors/exposition.js';
import { rowsToOutput, type RenderedFamily } from '../../domain/collectors/samples.js';
import type { Plan, PlannedCollector } from '../../domain/collectors/select.js';
import {
  renderBuildInfo,
  renderScrapeSelfStats,
  renderServerGauges,
  type BuildInfo,
  type LabelPairs,
} from '../../domain/collectors/self-metrics.js';
import { SqlError } from '../../domain/collectors/sql-error.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { SqlClient } from '../../ports/sql.js';
import { runBounded } from './bounded.js';
import { CollectorCounters } from './collector-stats.js';
import type { ExporterOptions } from './options.js';
import type { Planner } from './planner.js';
import type { StateProbe } from './probe.js';
import { isUp, type ServerState } from '../../domain/collectors/server-state.js';
import type { TargetSettings } from './target-settings.js';

/** Source of the process metrics text (cached; may lag by up to a second). */
export interface ProcessMetricsSource {
  text(format: ExpositionFormat): string;
}

/** The collector definitions a runner works from (replaced as a whole on reload). */
export interface CollectorSource {
  readonly collectors: readonly CollectorDefinition[];
}

/**
 * The answer of one scrape run: rendered on first use per format and kept, so the concurrent
 * scrapes that shared the run share the bytes too (and a compressed copy made once). The parts
 * stay separate (the collector section is shared by every run until a result changes): a scrape
 * writes them one after the other instead of copying them into one buffer.
 */
export class ScrapeBody {
  private readonly rendered = new Map<ExpositionFormat, readonly Buffer[]>();
  private readonly memos = new Map<string, Buffer>();

  constructor(private readonly render: (format: ExpositionFormat) => readonly Buffer[]) {}

  /** The exposition in `format`, as consecutive parts. */
  parts(format: ExpositionFormat): readonly Buffer[] {
    let p = this.rendered.get(format);
    if (!p) this.rendered.set(format, (p = this.render(format)));
    return p;
  }

  /** The exposition in `format` in one buffer. */
  bytes(format: ExpositionFormat): Buffer {
    return this.memo(`whole:${format}`, () => Buffer.concat(this.parts(format)));
  }

  /** A value made once per body under `key` (e.g. the gzip of a format). */
  memo(key: string, make: () => Buffer): Buffer {
    let b = this.memos.get(key);
    if (!b) this.memos.set(key, (b = make()));
    return b;
  }
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
/** A run that starts within this long after the previous one ended is part of a burst of scrapes. */
const BURST_MS = 50;
/**
 * In a burst whose previous run answered several scrapes, a run that has queries to send waits
 * at least this long first, so the scrapers answered together (who come back together) join it.
 */
const GATHER_MS = 2;
/** In a burst, runs with queries to send start at most this often: the statements sent stay flat however many scrapers come. */
const BURST_RUN_INTERVAL_MS = 15;

/**
 * A scrape arriving this soon after a run whose results all came from the cache gets that run's
 * answer: a new run would render the same samples (only the self metrics would differ). Under
 * many scrapers this keeps rendering, and the garbage it makes, to a few hundred a second.
 */
const REUSE_MS = 10;

/** What a scrape runner reads from the exporter's options. */
export type ScrapeOptions = Pick<ExporterOptions, 'namespace' | 'disableCache' | 'concurrency'>;

/**
 * One scrape: make sure the plan fits the server, run the collectors whose cache expired (with
 * bounded concurrency), and render built-ins + cached collector text + self metrics. Concurrent
 * scrapes share one run in flight (and its rendered bytes); in a burst of scrapes a run with
 * queries to send waits a few milliseconds for the scrapers answered together to join it, so the
 * statements sent stay flat however many scrapers there are. Rendered text is cached per
 * collector, and the whole collector section is reused while no cache entry changed.
 */
export class ScrapeRunner {
  private inflight: Promise<ScrapeBody> | null = null;
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
  private assembled: { generation: number; plan: Plan; fatalFailed: string | null; failed: number; bytes: Map<ExpositionFormat, Buffer[]> } | null = null;
  /** Bumped for a collector whenever one of its results is replaced. */
  private readonly versions = new Map<string, number>();
  /** Each collector's samples rendered per format, valid for one version and plan: a run re-renders only what changed. */
  private readonly renderedCollectors = new Map<string, { version: number; plan: Plan; bytes: Map<ExpositionFormat, Buffer> }>();
  private readonly buildInfo: Record<ExpositionFormat, Buffer>;
  private readonly constLabels: LabelPairs;
  private scrapesTotal = 0;
  private scrapeRequestsTotal = 0;
  private scrapeErrorsTotal = 0;
  private lastScrapeDurationSeconds = 0;
  private lastScrapeTimestampSeconds = 0;
  /** Requests that shared the run in flight, and when the last run ended (monotonic ms). */
  private joined = 0;
  private lastJoined = 0;
  private lastEndedAt = -Infinity;
  private lastQueriedAt = -Infinity;
  /** The answer of the last run, while it may serve more scrapes (see reusable()). */
  private last: { body: ScrapeBody; at: number; plan: Plan } | null = null;

  constructor(
    private readonly sql: SqlClient,
    private readonly probe: StateProbe,
    private readonly planner: Planner,
    private readonly config: CollectorSource,
    private readonly options: ScrapeOptions,
    build: BuildInfo,
    private readonly processMetrics: ProcessMetricsSource,
    private readonly clock: Clock,
    private readonly logger: Logger,
    target: Pick<TargetSettings, 'constLabels'> = { constLabels: [] },
  ) {
    this.constLabels = target.constLabels;
    this.buildInfo = {
      text: Buffer.from(renderBuildInfo(options.namespace, this.constLabels, build, 'text')),
      openmetrics: Buffer.from(renderBuildInfo(options.namespace, this.constLabels, build, 'openmetrics')),
    };
  }

  /**
   * The metrics of a run, joining one already in flight. Never rejects. Bytes, not a string: the
   * cached sections stay encoded, so a cached scrape only encodes the few changing lines.
   */
  scrape(): Promise<ScrapeBody> {
    this.scrapeRequestsTotal++;
    if (!this.inflight && this.reusable()) return Promise.resolve(this.last!.body);
    this.joined++;
    this.inflight ??= this.run().finally(() => {
      this.inflight = null;
      this.lastEndedAt = performance.now();
      this.lastJoined = this.joined;
      this.joined = 0;
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

  private async run(): Promise<ScrapeBody> {
    const started = performance.now();
    const burst = started - this.lastEndedAt < BURST_MS && this.lastJoined > 1;
    let state = await this.currentState();
    let plan: Plan | null = null;
    const defs = this.config.collectors;
    if (isUp(state)) {
      plan = this.planner.isCurrent(defs, state.status, state.version) ? this.planner.plan : await this.planner.ensure(defs, state.status, state.version);
      if (plan) await this.collect(plan, defs, burst);
      state = this.probe.state;
    }
    let up = isUp(state) && plan !== null;
    let failed = plan === null ? 1 : 0;
    const section = up && plan ? this.assemble(plan) : null;
    if (section) {
      failed = section.failed;
      if (section.fatalFailed) up = false;
    }
    this.scrapesTotal++;
    if (!up || failed > 0) this.scrapeErrorsTotal++;
    this.lastScrapeDurationSeconds = (performance.now() - started) / 1000;
    this.lastScrapeTimestampSeconds = this.clock.now() / 1000;
    const gauges = { up, version: state.version, inRecovery: isUp(state) ? state.status === 'replica' : null };
    const body = up ? section : null;
    const answer = new ScrapeBody((format) => this.render(format, gauges, body));
    this.last = up && plan ? { body: answer, at: performance.now(), plan } : null;
    return answer;
  }

  /**
   * True when the last run's answer may serve this scrape too: it is younger than REUSE_MS, the
   * server was up, the plan and state are still current, and no collector's result expired since
   * (so a new run would only re-render the same cached results and the self metrics).
   */
  private reusable(): boolean {
    const last = this.last;
    if (!last || this.options.disableCache) return false;
    const now = performance.now();
    const state = this.probe.state;
    if (now - last.at >= REUSE_MS || !isUp(state) || now - state.checkedAt > STATE_MAX_AGE_MS) return false;
    if (last.plan !== this.entriesPlan || last.plan !== this.planner.plan || !this.planner.isCurrent(this.config.collectors, state.status, state.version)) return false;
    for (const slot of this.slots) if (!isFresh(this.entries.get(slot.key), slot.pc.def.ttlMs, now)) return false;
    return true;
  }

  /** The whole exposition of a run in one format. */
  private render(format: ExpositionFormat, gauges: { up: boolean; version: number | null; inRecovery: boolean | null }, section: { bytes: Map<ExpositionFormat, Buffer[]>; plan: Plan } | null): Buffer[] {
    const ns = this.options.namespace;
    const self = renderScrapeSelfStats(
      ns,
      this.constLabels,
      {
        lastScrapeDurationSeconds: this.lastScrapeDurationSeconds,
        scrapesTotal: this.scrapesTotal,
        scrapeRequestsTotal: this.scrapeRequestsTotal,
        scrapeErrorsTotal: this.scrapeErrorsTotal,
        lastScrapeTimestampSeconds: this.lastScrapeTimestampSeconds,
        collectors: this.activeCounters,
      },
      format,
    );
    const parts = [Buffer.from(renderServerGauges(ns, this.constLabels, gauges, format)), this.buildInfo[format]];
    if (section) parts.push(...this.sectionParts(section, format));
    parts.push(Buffer.from(self + this.processMetrics.text(format) + (format === 'openmetrics' ? OPENMETRICS_EOF : '')));
    return parts;
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
    // Ordered by timeout: a pooled connection then rarely needs its statement_timeout changed.
    this.slots = plan.active
      .flatMap((pc) => pc.targets.map((db) => ({ pc, db, database: db === mainDb ? undefined : db, key: cacheKey(pc.def.key, db), counter: this.counter(pc.def.key) })))
      .sort((a, b) => a.pc.def.timeoutMs - b.pc.def.timeoutMs);
    this.activeCounters = plan.active.map((pc) => this.counter(pc.def.key));
    this.prune();
    this.generation++;
  }

  /**
   * Forgets the results of collectors and databases the plan no longer holds (a database
   * dropped or left out, a collector no longer active): a rediscovery keeps the rest, and
   * without this every database ever seen would stay in memory.
   */
  private prune(): void {
    const keys = new Set(this.slots.map((s) => s.key));
    for (const key of this.entries.keys()) if (!keys.has(key)) this.entries.delete(key);
    // A predicate's key is its slot's key, a NUL and the predicate's name.
    for (const key of this.predicates.keys()) if (!keys.has(key.slice(0, key.lastIndexOf('\u0000')))) this.predicates.delete(key);
    const active = new Set(this.slots.map((s) => s.pc.def.key));
    for (const key of this.renderedCollectors.keys()) if (!active.has(key)) this.renderedCollectors.delete(key);
  }

  private async collect(plan: Plan, defs: readonly CollectorDefinition[], burst: boolean): Promise<void> {
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
    if (burst) await new Promise((r) => setTimeout(r, Math.max(GATHER_MS, this.lastQueriedAt + BURST_RUN_INTERVAL_MS - performance.now())));
    this.lastQueriedAt = performance.now();
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
        const extra = pc.clusterLevel ? this.constLabels : [['datname', db] as const, ...this.constLabels];
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
    this.versions.set(def.key, (this.versions.get(def.key) ?? 0) + 1);
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

  /** Which collectors failed (and whether a fatal one did), recomputed only when an entry changed since the last scrape. */
  private assemble(plan: Plan): { fatalFailed: string | null; failed: number; bytes: Map<ExpositionFormat, Buffer[]>; plan: Plan } {
    const a = this.assembled;
    if (a && a.generation === this.generation && a.plan === plan) return a;
    let fatalFailed: string | null = null;
    let failed = 0;
    for (const pc of plan.active) {
      let samples = 0;
      for (const db of pc.targets) {
        const e = this.entries.get(cacheKey(pc.def.key, db));
        if (!e) continue;
        if (e.error !== null) {
          failed++;
          if (pc.def.fatal) fatalFailed ??= pc.def.key;
          continue;
        }
        samples += e.samples;
      }
      this.counter(pc.def.key).lastMetrics = samples;
    }
    // Logged here, once per change of results, not on every (cached) scrape.
    if (fatalFailed) this.logger.warn('fatal collector failed: reporting the database down', { collector: fatalFailed });
    this.assembled = { generation: this.generation, plan, fatalFailed, failed, bytes: new Map() };
    return this.assembled;
  }

  /** The collector section in `format`: one part per collector, each rendered again only when its results changed. */
  private sectionParts(section: { bytes: Map<ExpositionFormat, Buffer[]>; plan: Plan }, format: ExpositionFormat): Buffer[] {
    let parts = section.bytes.get(format);
    if (parts) return parts;
    parts = [];
    const plan = section.plan;
    for (const pc of plan.active) {
      const version = this.versions.get(pc.def.key) ?? 0;
      let r = this.renderedCollectors.get(pc.def.key);
      if (!r || r.version !== version || r.plan !== plan) this.renderedCollectors.set(pc.def.key, (r = { version, plan, bytes: new Map() }));
      let b = r.bytes.get(format);
      if (!b) {
        const outputs: (readonly RenderedFamily[])[] = [];
        for (const db of pc.targets) {
          const e = this.entries.get(cacheKey(pc.def.key, db));
          if (e && e.error === null && e.families.length > 0) outputs.push(e.families);
        }
        r.bytes.set(format, (b = Buffer.from(outputs.length > 0 ? mergeFamilies(outputs, format) : '')));
      }
      if (b.length > 0) parts.push(b);
    }
    section.bytes.set(format, parts);
    return parts;
  }
}
