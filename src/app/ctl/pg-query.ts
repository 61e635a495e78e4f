import type pg from 'pg';
import { connectPreferringTls } from '../../adapters/database/pg-tls-prefer.js';
import type { SqlResult, SqlTarget } from './context.js';
import { CtlError } from './errors.js';

/** The member's conn_url with the login and database put in (pg lets the URL override separate fields). */
export function connectionString(target: SqlTarget): string {
  let url: URL;
  try {
    url = new URL(target.connUrl);
  } catch {
    throw new CtlError('no_conn_url', `not a connection URL: ${target.connUrl}`);
  }
  if (target.user) url.username = encodeURIComponent(target.user);
  if (target.password) url.password = encodeURIComponent(target.password);
  if (target.dbname) url.pathname = `/${encodeURIComponent(target.dbname)}`;
  return url.toString();
}

/** Runs one SQL text with pg on a member's database and returns its last result set. */
export async function runSqlWithPg(target: SqlTarget, sql: string): Promise<SqlResult> {
  let client: pg.Client | null = null;
  try {
    // As psql would (libpq's sslmode=prefer): TLS where the server offers it, unless the URL says otherwise.
    client = await connectPreferringTls({ connectionString: connectionString(target), connectionTimeoutMillis: 10_000, application_name: 'wardenctl' }, (c) => c.on('error', () => undefined));
    const raw = await client.query({ text: sql, rowMode: 'array' });
    // A multi-statement text yields one result per statement: show the last, as psql does.
    const res = (Array.isArray(raw) ? raw[raw.length - 1] : raw) as pg.QueryArrayResult;
    return { columns: (res.fields ?? []).map((f) => f.name), rows: res.rows ?? [], command: res.command, rowCount: res.rowCount };
  } catch (e) {
    const err = e as Error & { code?: string };
    throw new CtlError('query_failed', `query failed: ${err.message}${err.code && /^[0-9A-Z]{5}$/.test(err.code) ? ` (SQLSTATE ${err.code})` : ''}`);
  } finally {
    await client?.end().catch(() => undefined);
  }
}
