import 'reflect-metadata';
import { inject, injectable } from 'inversify';
import type { CollectorDefinition } from '../../domain/collectors/collector.js';
import { planCollectors, type DatabaseFacts, type Plan, type ServerRole } from '../../domain/collectors/select.js';
import { Logger } from '../../ports/logger.js';
import { SqlClient } from '../../ports/sql.js';
import { runBounded } from './bounded.js';
import type { ExporterOptions } from './options.js';
import { ExporterOptionsToken } from './tokens.js';

const FACTS_SQL =
  "SELECT current_database(), current_setting('server_version_num'), pg_is_in_recovery(), (SELECT coalesce(string_agg(extname, ','), '') FROM pg_extension)";
const EXTENSIONS_SQL = "SELECT coalesce(string_agg(extname, ','), '') FROM pg_extension";
const DATABASES_SQL = 'SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate ORDER BY datname';
/** Auto-discovery looks for new or dropped databases this often (a role or version change replans at once). */
const REDISCOVER_MS = 60_000;

/** A plan with what it was made from. */
interface Planned {
  readonly plan: Plan;
  readonly defs: readonly CollectorDefinition[];
  readonly madeAt: number;
  /** The name of the database of the connection URL. */
  readonly mainDatabase: string;
}

function extensions(text: string | null | undefined): ReadonlySet<string> {
  return new Set((text ?? '').split(',').filter(Boolean));
}

/**
 * Makes the plan (which collectors run on which databases) from the server's version, role,
 * databases and extensions, and remakes it when any of them or the configuration changes.
 */
@injectable()
export class Planner {
  private planned: Planned | null = null;
  private inflight: Promise<Planned | null> | null = null;
  private stale = false;
  private lastError: string | null = null;

  constructor(
    @inject(SqlClient) private readonly sql: SqlClient,
    @inject(ExporterOptionsToken) private readonly options: ExporterOptions,
    @inject(Logger) private readonly logger: Logger,
  ) {}

  /** The current plan, or null before the first one (or after a failed replan for a new role). */
  get plan(): Plan | null {
    return this.planned?.plan ?? null;
  }

  /** The database of the connection URL, once known. */
  get mainDatabase(): string | null {
    return this.planned?.mainDatabase ?? null;
  }

  /** Why there is no plan. */
  get error(): string | null {
    return this.lastError;
  }

  /** Forces a replan at the next `ensure` (role change, reload). */
  invalidate(): void {
    this.stale = true;
  }

  /** True when the plan fits this configuration and server (no replan needed). */
  isCurrent(defs: readonly CollectorDefinition[], role: ServerRole, version: number | null): boolean {
    const p = this.planned;
    return !!p && !this.stale && p.defs === defs && p.plan.server.role === role && p.plan.server.version === version && performance.now() - p.madeAt < REDISCOVER_MS;
  }

  /** The plan for `defs` on the server as it is now, making one if needed (shared in flight). Null when planning failed. */
  async ensure(defs: readonly CollectorDefinition[], role: ServerRole, version: number | null): Promise<Plan | null> {
    if (this.isCurrent(defs, role, version)) return this.planned!.plan;
    this.inflight ??= this.make(defs).finally(() => {
      this.inflight = null;
    });
    return (await this.inflight)?.plan ?? null;
  }

  private async make(defs: readonly CollectorDefinition[]): Promise<Planned | null> {
    this.stale = false;
    const timeoutMs = Math.max(this.options.connectTimeoutMs, 1000);
    try {
      const facts = (await this.sql.query(FACTS_SQL, { timeoutMs })).rows[0];
      if (!facts) throw new Error('no row from the server facts query');
      const mainDatabase = facts[0] ?? '';
      const role: ServerRole = facts[2] === 't' ? 'replica' : 'primary';
      const main: DatabaseFacts = { name: mainDatabase, extensions: extensions(facts[3]) };
      const others = this.options.autoDiscovery ? await this.discover(mainDatabase, timeoutMs) : [];
      await this.sql.retainDatabases(others.map((d) => d.name));
      const plan = planCollectors(defs, {
        server: { version: Number(facts[1]), role },
        main,
        others,
        exporterTags: new Set(this.options.tags),
      });
      const previous = this.planned?.plan;
      if (!previous || previous.server.role !== role || previous.server.version !== plan.server.version || previous.active.length !== plan.active.length) {
        this.logger.info('collectors planned', { role, version: plan.server.version, active: plan.active.length, configured: defs.length, databases: plan.databases });
      }
      this.planned = { plan, defs, madeAt: performance.now(), mainDatabase };
      this.lastError = null;
      return this.planned;
    } catch (e) {
      this.lastError = (e as Error).message;
      this.logger.warn('planning collectors failed', { error: this.lastError });
      this.stale = true;
      return null;
    }
  }

  private async discover(mainDatabase: string, timeoutMs: number): Promise<DatabaseFacts[]> {
    const include = new Set(this.options.includeDatabases);
    const exclude = new Set(this.options.excludeDatabases);
    const names = (await this.sql.query(DATABASES_SQL, { timeoutMs })).rows
      .map((r) => r[0] ?? '')
      .filter((n) => n && n !== mainDatabase && !exclude.has(n) && (include.size === 0 || include.has(n)));
    const found: DatabaseFacts[] = [];
    await runBounded(
      names.map((name) => async () => {
        try {
          const r = await this.sql.query(EXTENSIONS_SQL, { timeoutMs, database: name });
          found.push({ name, extensions: extensions(r.rows[0]?.[0]) });
        } catch (e) {
          this.logger.warn('database left out of auto-discovery', { database: name, error: (e as Error).message });
        }
      }),
      this.options.concurrency,
    );
    return found.sort((a, b) => a.name.localeCompare(b.name));
  }
}
