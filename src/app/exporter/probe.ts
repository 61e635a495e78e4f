import { pgbouncerVersionNumber } from '../../domain/collectors/pgbouncer.js';
import type { SqlError } from '../../domain/collectors/sql-error.js';
import type { Logger } from '../../ports/logger.js';
import type { SqlClient } from '../../ports/sql.js';
import type { ExporterOptions } from './options.js';
import type { TargetSettings } from './target-settings.js';
import { isUp, type ServerState } from '../../domain/collectors/server-state.js';

const PROBE_SQL = "SELECT current_setting('server_version_num'), pg_is_in_recovery(), (SELECT count(*) || ':' || sum(oid::int8) FROM pg_database WHERE datallowconn AND NOT datistemplate)";
const PGBOUNCER_PROBE_SQL = 'SHOW VERSION';

/** Called when the server's role or version changes (not on every probe). */
export type StateListener = (next: ServerState, previous: ServerState) => void;

/**
 * Keeps the up/role state fresh: a background probe at least once a second, plus refreshes
 * asked for by scrapes. Readers (the role endpoints) take `state` synchronously and never wait
 * on the database. Each probe also reads a signature of the server's databases, so a database
 * created or dropped is noticed within a probe interval.
 */
export class StateProbe {
  private current: ServerState = { status: 'starting', version: null, checkedAt: 0, error: null };
  private inflight: Promise<ServerState> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: StateListener[] = [];
  private readonly databaseListeners: (() => void)[] = [];
  private databases: string | null = null;

  constructor(
    private readonly sql: SqlClient,
    private readonly options: Pick<ExporterOptions, 'connectTimeoutMs' | 'probeIntervalMs'>,
    private readonly logger: Logger,
    private readonly target: Pick<TargetSettings, 'kind'> = { kind: 'postgres' },
  ) {}

  /** The latest state; never blocks. */
  get state(): ServerState {
    return this.current;
  }

  /** Registers a listener for role/version changes. */
  onChange(listener: StateListener): void {
    this.listeners.push(listener);
  }

  /** Registers a listener for a change in the set of databases (created or dropped). */
  onDatabasesChange(listener: () => void): void {
    this.databaseListeners.push(listener);
  }

  /** Starts the background loop (first probe at once). */
  start(): void {
    if (this.timer) return;
    const tick = () => {
      const started = performance.now();
      void this.refresh().finally(() => {
        // Start-to-start at most one interval: a slow probe does not stretch the period.
        const wait = Math.max(0, this.options.probeIntervalMs - (performance.now() - started));
        if (this.timer) this.timer = setTimeout(tick, wait).unref();
      });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Probes now, sharing a probe already in flight. Never rejects. */
  refresh(): Promise<ServerState> {
    this.inflight ??= this.probe().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /** A probe no older than `maxAgeMs` (refreshing if needed). Never rejects. */
  async fresh(maxAgeMs: number): Promise<ServerState> {
    if (performance.now() - this.current.checkedAt <= maxAgeMs) return this.current;
    return this.refresh();
  }

  /** A scrape lost the connection: report down at once rather than at the next probe. */
  markDown(error: SqlError): void {
    if (this.current.status === 'down') return;
    this.set({ status: 'down', version: this.current.version, checkedAt: performance.now(), error: error.message });
  }

  private async probe(): Promise<ServerState> {
    try {
      if (this.target.kind === 'pgbouncer') {
        const r = await this.sql.query(PGBOUNCER_PROBE_SQL, { timeoutMs: this.options.connectTimeoutMs });
        this.set({ status: 'primary', version: pgbouncerVersionNumber(r.rows[0]?.[0] ?? ''), checkedAt: performance.now(), error: null });
        return this.current;
      }
      const r = await this.sql.query(PROBE_SQL, { timeoutMs: this.options.connectTimeoutMs });
      const row = r.rows[0];
      const version = Number(row?.[0]);
      this.set({ status: row?.[1] === 't' ? 'replica' : 'primary', version: Number.isFinite(version) ? version : null, checkedAt: performance.now(), error: null });
      const databases = row?.[2] ?? null;
      if (this.databases !== null && databases !== this.databases) {
        this.logger.info('databases created or dropped', {});
        for (const l of this.databaseListeners) l();
      }
      this.databases = databases;
    } catch (e) {
      const err = e as SqlError;
      // 57P03 also covers shutdown; only a server on its way up is reported as starting.
      const status = err.sqlState === '57P03' && /starting up|not yet accepting/i.test(err.message ?? '') ? 'starting' : 'down';
      this.set({ status, version: this.current.version, checkedAt: performance.now(), error: err.message ?? String(e) });
    }
    return this.current;
  }

  private set(next: ServerState): void {
    const previous = this.current;
    this.current = next;
    if (previous.status !== next.status || (isUp(next) && previous.version !== next.version)) {
      const level = isUp(next) ? 'info' : 'warn';
      this.logger[level]('database state changed', { from: previous.status, to: next.status, version: next.version, error: next.error });
      for (const l of this.listeners) l(next, previous);
    }
  }
}
