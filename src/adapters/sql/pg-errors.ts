import { SqlError } from '../../domain/collectors/sql-error.js';

const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '3D000', '28000', '28P01']);
const NETWORK = /ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|EPIPE|ENOENT|timeout exceeded when trying to connect|Connection terminated|connection ended|Client has encountered a connection error|not queryable/i;

/**
 * Maps a node-postgres error to a SqlError. `connecting` marks errors raised while getting a
 * connection, which always mean the server is unavailable.
 */
export function toSqlError(e: unknown, connecting: boolean): SqlError {
  if (e instanceof SqlError) return e;
  const err = e as { code?: unknown; message?: unknown; detail?: unknown };
  // The server's DETAIL often says why ("Hot standby mode is disabled." on a replica that takes no queries).
  const detail = typeof err?.detail === 'string' && err.detail.trim() ? ` (${err.detail.trim().replace(/\.$/, '')})` : '';
  const message = (typeof err?.message === 'string' ? err.message : String(e)) + detail;
  const state = typeof err?.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code) ? err.code : undefined;
  if (state === '57014' || /Query read timeout/i.test(message)) return new SqlError('sql_timeout', message, state);
  if (connecting || (state && (state.startsWith('08') || UNAVAILABLE_STATES.has(state))) || (!state && NETWORK.test(message + String(err?.code ?? '')))) {
    return new SqlError('sql_unavailable', message, state);
  }
  return new SqlError('sql_failed', message, state);
}
