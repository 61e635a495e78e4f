import pg from 'pg';
import { SqlError } from '../../domain/collectors/sql-error.js';
import type { SqlRows } from '../../domain/collectors/samples.js';
import type { Logger } from '../../ports/logger.js';
import type { SqlClient, SqlQueryOptions } from '../../ports/sql.js';
import { isNoTlsOnServer, pgConnectionConfig, sslModeOf } from './pg-connection.js';
import { toSqlError } from './pg-errors.js';

/** Settings of the pg pool adapter. */
export interface PgSqlClientOptions {
  /** PostgreSQL URL; absent: libpq-style PG* environment variables and pg's defaults. */
  readonly url?: string;
  /** Where TLS settings the URL leaves out are read (PGSSLMODE, PGSSLROOTCERT...); default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
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
  /**
   * The last query in line on each discovered database. Their pools hold one connection, and
   * pg-pool bounds a wait in its queue by the connect timeout: a second query would fail as
   * "timeout exceeded when trying to connect" behind a first one that merely took longer. So
   * queries on such a database line up here, each bounded by its own deadline, and ask the
   * pool only when the connection is free.
   */
  private readonly lines = new Map<string, Promise<void>>();
  private readonly env: Readonly<Record<string, string | undefined>>;
  private readonly sslmode: string | null;
  /** sslmode=prefer met a server without TLS: pools made from now on connect without it, as libpq would. */
  private plain = false;
  /** Pools made to try TLS under sslmode=prefer (the ones a server without TLS makes fall back). */
  private readonly preferring = new WeakSet<pg.Pool>();

  constructor(private readonly opts: PgSqlClientOptions) {
    this.env = opts.env ?? process.env;
    this.sslmode = sslModeOf(opts.url, this.env);
  }

  async query(sql: string, q: SqlQueryOptions): Promise<SqlRows> {
    if (this.closed) throw new SqlError('sql_unavailable', 'client closed');
    const db = q.database ?? '';
    // The main database's pool has as many connections as there are slots: nothing queues in it.
    if (db === '') return this.inSlot(sql, q);
    const ahead = this.lines.get(db) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const line = ahead.then(() => mine);
    this.lines.set(db, line);
    try {
      await ahead;
      return await this.inSlot(sql, q);
    } finally {
      done();
      if (this.lines.get(db) === line) this.lines.delete(db);
    }
  }

  private async inSlot(sql: string, q: SqlQueryOptions): Promise<SqlRows> {
    // Checked again: a query that waited in a database's line may find the client closed.
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
    const db = q.database ?? '';
    const pool = this.pool(db);
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      if (this.preferring.has(pool) && isNoTlsOnServer(e)) {
        if (!this.plain) this.opts.logger.info('the server offers no TLS: connecting without it (sslmode=prefer)', { database: db || '(main)' });
        this.plain = true;
        if (this.pools.get(db) === pool) void this.end(db);
        return this.queryInSlot(sql, q);
      }
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
      ...pgConnectionConfig(this.opts.url, this.env, db || undefined, this.plain),
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
    if (this.sslmode === 'prefer' && !this.plain) this.preferring.add(pool);
    this.pools.set(db, pool);
    return pool;
  }
}
