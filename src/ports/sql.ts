import type { SqlRows } from '../domain/collectors/samples.js';

/** Options of one query. */
export interface SqlQueryOptions {
  /** Server-side statement_timeout for this query, in ms (a client-side backstop fires a little later). */
  readonly timeoutMs: number;
  /** Database to run on; absent: the database of the connection URL. */
  readonly database?: string;
}

/**
 * A small pool of connections to one PostgreSQL server (one pool per database). Every value
 * comes back as PostgreSQL's text output. Failures reject with a `SqlError`: `sql_unavailable`
 * (cannot connect within the connect timeout, or the connection broke), `sql_timeout` (the
 * statement deadline passed), `sql_failed` (the server rejected the statement).
 */
export interface SqlClient {
  /** Runs one statement. Resolves within about timeoutMs plus the connect timeout. */
  query(sql: string, opts: SqlQueryOptions): Promise<SqlRows>;
  /** Closes the pools of databases other than the main one that are not in `keep`. Never throws. */
  retainDatabases(keep: readonly string[]): Promise<void>;
  /** Closes every connection. Never throws. */
  close(): Promise<void>;
}
/** Inversify token of the SqlClient port. */
export const SqlClient = Symbol.for('warden.SqlClient');
