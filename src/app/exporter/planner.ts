import type { CollectorDefinition } from '../../domain/collectors/collector.js';
import { PGBOUNCER_ADMIN_DATABASE, pgbouncerVersionNumber } from '../../domain/collectors/pgbouncer.js';
import { planCollectors, type DatabaseFacts, type Plan, type ServerRole } from '../../domain/collectors/select.js';
import type { Logger } from '../../ports/logger.js';
import type { SqlClient } from '../../ports/sql.js';
import { runBounded } from './bounded.js';
import type { ExporterOptions } from './options.js';
import type { TargetSettings } from './target-settings.js';

const FACTS_SQL =
  "SELECT current_database(), current_setting('server_version_num'), pg_is_in_recovery(), (SELECT coalesce(string_agg(extname, ','), '') FROM pg_extension)";
const EXTENSIONS_SQL = "SELECT coalesce(string_agg(extname, ','), '') FROM pg_extension";
const DATABASES_SQL = 'SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate ORDER BY datname';
/** Auto-discovery also looks again this often (a created or dropped database, a role or version change replan at once). */
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

/** What planning reads from the exporter's options. */
export type PlannerOptions = Pick<ExporterOptions, 'connectTimeoutMs' | 'concurrency' | 'tags' | 'naming'>;

/**
 * Makes the plan (which collectors run on which databases) from the server's version, role,
 * databases and extensions, and remakes it when any of them or the configuration changes.
 */
export class Planner {
  private planned: Planned | null = null;
  private inflight: Promise<Planned | null> | null = null;
  private stale = false;
  private lastError: string | null = null;

  constructor(
    private readonly sql: SqlClient,
    private readonly options: PlannerOptions,
    private readonly logger: Logger,
    private readonly target: Pick<TargetSettings, 'kind' | 'autoDiscovery' | 'includeDatabases' | 'excludeDatabases'> = {
      kind: 'postgres',
      autoDiscovery: false,
      includeDatabases: [],
      excludeDatabases: [],
    },
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

  /** Forces a replan at the next `ensure` (role change, reload, databases created or dropped). */
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

  private async facts(timeoutMs: number): Promise<{ mainDatabase: string; version: number; role: ServerRole; main: DatabaseFacts; others: DatabaseFacts[] }> {
    if (this.target.kind === 'pgbouncer') {
      const text = (await this.sql.query('SHOW VERSION', { timeoutMs })).rows[0]?.[0] ?? '';
      const version = pgbouncerVersionNumber(text);
      if (version === null) throw new Error(`SHOW VERSION answered ${JSON.stringify(text)}: not a pgBouncer version`);
      return { mainDatabase: PGBOUNCER_ADMIN_DATABASE, version, role: 'primary', main: { name: PGBOUNCER_ADMIN_DATABASE, extensions: new Set() }, others: [] };
    }
    const facts = (await this.sql.query(FACTS_SQL, { timeoutMs })).rows[0];
    if (!facts) throw new Error('no row from the server facts query');
    const mainDatabase = facts[0] ?? '';
    const others = this.target.autoDiscovery ? await this.discover(mainDatabase, timeoutMs) : [];
    await this.sql.retainDatabases(others.map((d) => d.name));
    return {
      mainDatabase,
      version: Number(facts[1]),
      role: facts[2] === 't' ? 'replica' : 'primary',
      main: { name: mainDatabase, extensions: extensions(facts[3]) },
      others,
    };
  }

  private async make(defs: readonly CollectorDefinition[]): Promise<Planned | null> {
    this.stale = false;
    const timeoutMs = Math.max(this.options.connectTimeoutMs, 1000);
    try {
      const f = await this.facts(timeoutMs);
      const plan = planCollectors(defs, {
        server: { version: f.version, role: f.role },
        main: f.main,
        others: f.others,
        exporterTags: new Set(this.options.tags),
        naming: this.options.naming,
      });
      const previous = this.planned?.plan;
      if (!previous || previous.server.role !== f.role || previous.server.version !== plan.server.version || previous.active.length !== plan.active.length || previous.databases.length !== plan.databases.length) {
        this.logger.info('collectors planned', { role: f.role, version: plan.server.version, active: plan.active.length, configured: defs.length, databases: plan.databases });
      }
      this.planned = { plan, defs, madeAt: performance.now(), mainDatabase: f.mainDatabase };
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
    const include = new Set(this.target.includeDatabases);
    const exclude = new Set(this.target.excludeDatabases);
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
