import pg from 'pg';
import { SqlError } from '../../domain/collectors/sql-error.js';
import type { SqlRows } from '../../domain/collectors/samples.js';
import type { Logger } from '../../ports/logger.js';
import type { SqlClient, SqlQueryOptions } from '../../ports/sql.js';
import { toSqlError } from './pg-errors.js';

/** Settings of the pg pool adapter. */
export interface PgSqlClientOptions {
  /** PostgreSQL URL; absent: libpq-style PG* environment variables and pg's defaults. */
  readonly url?: string;
  readonly connectTimeoutMs: number;
  /** Connections per database pool. */
  readonly maxConnections: number;
  readonly applicationName: string;
  readonly logger: Logger;
  /**
   * Set statement_timeout on the server (default). Off for a pgBouncer admin console, which
   * knows no such setting: the client-side deadline alone bounds a query there.
   */
  readonly serverSideTimeouts?: boolean;
}

/** Client-side backstop beyond the server-side statement_timeout, for a server that stopped answering. */
const BACKSTOP_MS = 2_000;
const IDLE_MS = 60_000;
/**
 * A discovered database's pool: one connection, closed 5 s after its queries: with a hundred
 * databases, pools of the main one's size held most of max_connections, and an idle
 * connection kept each database from being dropped.
 */
const OTHER_DATABASE_IDLE_MS = 5_000;

/** Every column comes back as text: no Date/JSON/BigInt parsing on the hot path; the collector core parses numbers. */
const RAW_TEXT: pg.CustomTypesConfig = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig;

/** SqlClient over node-postgres: one small pool per database, statement_timeout set per connection only when it changes. */
export class PgSqlClient implements SqlClient {
  private readonly pools = new Map<string, pg.Pool>();
  /** statement_timeout currently set on each pooled connection, to skip redundant SETs. */
  private readonly timeouts = new WeakMap<pg.PoolClient, number>();
  private closed = false;
  /** Connections open or being opened over every pool: never more than maxConnections at once, whatever the number of databases. */
  private inUse = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly opts: PgSqlClientOptions) {}

  async query(sql: string, q: SqlQueryOptions): Promise<SqlRows> {
    if (this.closed) throw new SqlError('sql_unavailable', 'client closed');
    await this.slot();
    try {
      return await this.queryInSlot(sql, q);
    } finally {
      this.inUse--;
      this.waiting.shift()?.();
    }
  }

  /** Waits for one of the maxConnections places. */
  private async slot(): Promise<void> {
    while (this.inUse >= this.opts.maxConnections) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inUse++;
  }

  private async queryInSlot(sql: string, q: SqlQueryOptions): Promise<SqlRows> {
    const pool = this.pool(q.database ?? '');
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      throw toSqlError(e, true);
    }
    try {
      if (this.opts.serverSideTimeouts !== false && this.timeouts.get(client) !== q.timeoutMs) {
        // Bounded like the query: a connection whose server stopped answering must not hold the scrape.
        await client.query({ text: `SET statement_timeout = ${Math.max(1, Math.round(q.timeoutMs))}`, query_timeout: q.timeoutMs + BACKSTOP_MS } as pg.QueryConfig);
        this.timeouts.set(client, q.timeoutMs);
      }
      const backstop = this.opts.serverSideTimeouts === false ? 0 : BACKSTOP_MS;
      const res = (await client.query({ text: sql, rowMode: 'array', query_timeout: q.timeoutMs + backstop } as pg.QueryConfig)) as
        | pg.QueryArrayResult
        | pg.QueryArrayResult[];
      client.release();
      const last = Array.isArray(res) ? res[res.length - 1]! : res;
      return { columns: (last.fields ?? []).map((f) => f.name), rows: (last.rows ?? []) as (string | null)[][] };
    } catch (e) {
      const err = toSqlError(e, false);
      // A connection that timed out client-side or broke is in an unknown state: drop it from the pool.
      client.release(err.code === 'sql_failed' ? undefined : err);
      throw err;
    }
  }

  async retainDatabases(keep: readonly string[]): Promise<void> {
    const wanted = new Set(keep);
    const gone = [...this.pools.keys()].filter((db) => db !== '' && !wanted.has(db));
    await Promise.all(gone.map((db) => this.end(db)));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.pools.keys()].map((db) => this.end(db)));
  }

  private async end(db: string): Promise<void> {
    const pool = this.pools.get(db);
    this.pools.delete(db);
    try {
      await pool?.end();
    } catch {
      // A pool whose server is gone may fail to end cleanly; its sockets are closed either way.
    }
  }

  private pool(db: string): pg.Pool {
    let pool = this.pools.get(db);
    if (pool) return pool;
    pool = new pg.Pool({
      ...this.connection(db),
      max: db === '' ? this.opts.maxConnections : 1,
      connectionTimeoutMillis: this.opts.connectTimeoutMs,
      idleTimeoutMillis: db === '' ? IDLE_MS : OTHER_DATABASE_IDLE_MS,
      application_name: this.opts.applicationName,
      keepAlive: true,
      types: RAW_TEXT,
    });
    // Idle connections die when the server restarts; pg emits that here, and unhandled it would crash the process.
    pool.on('error', (err) => this.opts.logger.debug('idle connection closed', { database: db || '(main)', error: err.message }));
    // A checked-out client can hear its server end the connection between two queries (a restart, pg_terminate_backend):
    // the pool listens only to idle ones, and an 'error' nobody hears would crash the process. The next query fails and drops it.
    pool.on('connect', (client) => client.on('error', (err) => this.opts.logger.debug('connection closed by the server', { database: db || '(main)', error: err.message })));
    this.pools.set(db, pool);
    return pool;
  }

  private connection(db: string): pg.PoolConfig {
    const url = this.opts.url;
    if (!url) return db ? { database: db } : {};
    if (!db) return { connectionString: url };
    return { connectionString: urlWithDatabase(url, db) };
  }
}

/** The same PostgreSQL URL pointing at another database. */
export function urlWithDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}
